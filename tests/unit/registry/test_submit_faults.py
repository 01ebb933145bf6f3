"""Exactly once, whatever fails: 500s, resets, stalls, a registry killed and restarted, and the
client killed with SIGKILL in mid-batch. Real sockets, a real registry, real SQLite."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import httpx
import pytest
from support.registry import (
    REAL_NUMBER,
    TestSigner,
    citations,
    free_port,
    manifest_file,
    spawn_server,
    start_server,
)

from pithauthor.net import RetryPolicy
from pithauthor.protocol.verdict import Trust
from pithauthor.registry.client import RegistryClient
from pithauthor.registry.local.server import FaultPlan
from pithauthor.registry.outbox import Outbox
from pithauthor.registry.submit import store_in_outbox, submit_pending
from pithauthor.verify import pinned_trust

FAST = RetryPolicy(max_attempts=12, base_delay=0.01, max_delay=0.2)


def client_for(url: str, *, timeout: float = 5.0, retry: RetryPolicy = FAST) -> RegistryClient:
    client = RegistryClient(url, trust=pinned_trust(), timeout=timeout, retry=retry)
    client.trust_local_registry()
    return client


def state_ids(url: str, trust: Trust) -> list[str]:
    with RegistryClient(url, trust=trust, retry=FAST) as client:
        state = client.state(REAL_NUMBER)
    return [e["event_id"] for e in state["current"]["citation_signatures"]]


def assert_exactly_once(url: str, trust: Trust, events: list[dict[str, Any]]) -> None:
    ids = state_ids(url, trust)
    assert sorted(ids) == sorted(e["event_id"] for e in events)
    assert len(ids) == len(set(ids))
    with Outbox() as outbox:
        assert outbox.counts() == {"pending": 0, "accepted": len(events), "rejected": 0}


@pytest.mark.parametrize("kind", ["500", "reset", "stall"])
def test_every_event_accepted_once_when_a_third_of_requests_fail(tmp_path: Path, kind: str) -> None:
    faults = FaultPlan(every=3, kinds=(kind,), stall_seconds=0.4)
    server = start_server(tmp_path / "reg", faults=faults)
    try:
        events = citations(30)
        store_in_outbox(events, server.url)
        with client_for(server.url, timeout=0.15) as client:
            result = submit_pending(client=client, parallel=4)
            trust = client.trust
        assert result.ok, result.as_dict()
        assert faults._count > 30  # faults were injected and retried
        if kind == "reset":  # stored, then the answer was lost: the retry found it there
            assert result.duplicates
        time.sleep(0.45 if kind == "stall" else 0)  # let stalled handlers finish
        assert_exactly_once(server.url, trust, events)
    finally:
        server.stop()


def test_a_501_is_not_retried_and_leaves_every_event_pending(tmp_path: Path) -> None:
    from pithauthor.errors import RegistryResponseError

    faults = FaultPlan(every=1, kinds=("501",))
    server = start_server(tmp_path / "reg", faults=faults)
    try:
        events = citations(3)
        store_in_outbox(events, server.url)
        with client_for(server.url) as client:
            result = submit_pending(client=client, parallel=1)
    finally:
        server.stop()
    assert isinstance(result.error, RegistryResponseError)
    assert "501" in str(result.error)
    assert faults._count == 1  # one POST: not retried, and the batch stopped
    with Outbox() as outbox:
        assert outbox.counts() == {"pending": 3, "accepted": 0, "rejected": 0}


def test_all_fault_kinds_mixed_with_parallel_submission(tmp_path: Path) -> None:
    faults = FaultPlan(every=3, stall_seconds=0.35)
    server = start_server(tmp_path / "reg", faults=faults)
    try:
        events = citations(45)
        store_in_outbox(events, server.url)
        with client_for(server.url, timeout=0.15) as client:
            result = submit_pending(client=client, parallel=8)
            trust = client.trust
        assert result.ok, result.as_dict()
        time.sleep(0.4)
        assert_exactly_once(server.url, trust, events)
    finally:
        server.stop()


@pytest.mark.slow
def test_registry_killed_in_mid_batch_and_restarted(tmp_path: Path) -> None:
    """Slow: a registry process killed and restarted during a 120-event batch."""
    data, port = tmp_path / "reg", free_port()
    proc = spawn_server(data, port, delay=0.02)
    url = f"http://127.0.0.1:{port}"
    events = citations(120)
    store_in_outbox(events, url)
    patient = RetryPolicy(max_attempts=40, base_delay=0.05, max_delay=0.4)
    client = client_for(url, retry=patient)
    outcome: dict[str, Any] = {}
    worker = threading.Thread(
        target=lambda: outcome.update(r=submit_pending(client=client, parallel=4))
    )
    worker.start()
    try:
        _wait_for_accepted(10)
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        with Outbox() as outbox:
            assert outbox.counts()["pending"] > 0  # killed in mid-batch
        time.sleep(0.5)
        proc = spawn_server(data, port, delay=0.0)
        worker.join(60)
        assert not worker.is_alive()
        assert outcome["r"].ok, outcome["r"].as_dict()
        assert_exactly_once(url, client.trust, events)
    finally:
        client.close()
        proc.kill()
        proc.wait()


@pytest.mark.slow
def test_client_killed_with_sigkill_in_mid_batch_then_run_again(tmp_path: Path) -> None:
    """Slow: a client process killed with SIGKILL in mid-batch, then run again."""
    data, port = tmp_path / "reg", free_port()
    proc = spawn_server(data, port, delay=0.03)
    url = f"http://127.0.0.1:{port}"
    try:
        manifest = manifest_file(url, data, tmp_path / "local-manifest.json")
        events = citations(150, TestSigner())
        batch = tmp_path / "events.jsonl"
        batch.write_text("".join(json.dumps(e) + "\n" for e in events), "utf-8")
        args = [sys.executable, "-m", "pithauthor", "submit", "--registry", url]
        args += ["--trust-manifest", str(manifest), "--parallel", "4", "--json"]
        first = subprocess.Popen(
            [*args, str(batch)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=os.environ
        )
        _wait_for_accepted(10)
        first.send_signal(signal.SIGKILL)
        first.wait()
        with Outbox() as outbox:
            counts = outbox.counts()
        assert counts["accepted"] < len(events)
        assert counts["pending"] + counts["accepted"] == len(events)
        second = subprocess.run(args, capture_output=True, text=True, env=os.environ, timeout=90)
        assert second.returncode == 0, second.stderr
        assert json.loads(second.stdout)["ok"] is True
        trust = pinned_trust().with_keys(
            Trust.from_manifest(json.loads(manifest.read_text()), local=True).keys.values()
        )
        assert_exactly_once(url, trust, events)
    finally:
        proc.kill()
        proc.wait()


def _wait_for_accepted(n: int, timeout: float = 30) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            with Outbox() as outbox:
                if outbox.counts()["accepted"] >= n:
                    return
        except Exception:  # the database may be mid-creation
            pass
        time.sleep(0.02)
    raise AssertionError(f"fewer than {n} events were accepted in {timeout} s")


def test_dead_network_is_one_error_and_the_outbox_stays_pending(tmp_path: Path) -> None:
    events = citations(3)
    url = f"http://127.0.0.1:{free_port()}"
    store_in_outbox(events, url)
    with RegistryClient(url, retry=RetryPolicy(max_attempts=2, base_delay=0.01)) as client:
        result = submit_pending(client=client)
    assert result.error is not None and "did not answer" in str(result.error)
    assert sorted(result.pending) == sorted(e["event_id"] for e in events)
    with pytest.raises(httpx.ConnectError):
        httpx.get(url)
