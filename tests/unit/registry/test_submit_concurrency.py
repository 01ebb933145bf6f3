"""Several `pith submit` processes on one outbox share the work: each event is POSTed by exactly
one of them (a lease in the outbox), and an event whose sender died is taken over."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import threading
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from support.registry import TestSigner, citations, manifest_file, start_server

from pithauthor.registry.client import RegistryClient
from pithauthor.registry.credentials import default_trust
from pithauthor.registry.local.server import FaultPlan, RegistryServer
from pithauthor.registry.outbox import Outbox
from pithauthor.registry.submit import store_in_outbox, submit_pending

# One process alone takes EVENTS * 0.3 s / 2: long enough for the others to start and overlap
# it even when `pith` starts slowly on a loaded machine (with 24, a full make test-all on 2
# busy cores failed it once; it passed alone and beside CPU hogs, so the likeliest cause is a
# first process that finished before the others began).
EVENTS = 48
PROCESSES = 3


def _count_posts(server: RegistryServer) -> Counter[str]:
    """Count, per event_id, the POSTs that reached the registry's store (new or repeat)."""
    counts: Counter[str] = Counter()
    lock = threading.Lock()
    real = server.store.insert_event

    def counting(body: str, event: Any, received_at: str) -> Any:
        with lock:
            counts[str(event["event_id"])] += 1
        return real(body, event, received_at)

    server.store.insert_event = counting  # type: ignore[method-assign]
    return counts


def _submit_process(env: dict[str, str]) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "pithauthor", "submit", "--json", "--parallel", "2"],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


@pytest.mark.slow
def test_concurrent_submit_processes_send_each_event_exactly_once(tmp_path: Path) -> None:
    # every POST takes 0.3 s on the server, so one process alone would need ~7 s: the
    # processes overlap, and without leases each would POST every event
    """Slow: several submit processes against a registry taking 0.3 s per POST."""
    server = start_server(tmp_path / "reg", faults=FaultPlan(every=0, delay_seconds=0.3))
    counts = _count_posts(server)
    try:
        events = citations(EVENTS, TestSigner())
        store_in_outbox(events, server.url)
        manifest = manifest_file(server.url, tmp_path / "reg", tmp_path / "m.json")
        env = {**os.environ, "PITH_REGISTRY": server.url, "PITH_TRUST": str(manifest)}
        procs = [_submit_process(env) for _ in range(PROCESSES)]
        results = []
        for proc in procs:
            out, err = proc.communicate(timeout=240)
            assert proc.returncode == 0, (proc.returncode, err)
            results.append(json.loads(out))
    finally:
        server.stop()
    ids = {e["event_id"] for e in events}
    assert set(counts) == ids
    assert max(counts.values()) == 1, {k: v for k, v in counts.items() if v > 1}
    accepted = [eid for r in results for eid in r["accepted"]]
    assert sorted(accepted) == sorted(ids)  # every event accepted once, by one process
    senders = [r for r in results if r["accepted"]]
    assert len(senders) >= 2, "the processes did not overlap; the test proved nothing"
    for r in results:  # each process saw what it found pending answered: by itself or another
        assert r["pending"] == [] and r["ok"] is True
        assert set(r["accepted"]).isdisjoint(r["elsewhere"])
        assert set(r["accepted"]) | set(r["elsewhere"]) <= ids
    with Outbox() as outbox:
        assert outbox.counts() == {"pending": 0, "accepted": EVENTS, "rejected": 0}
    print(f"posts per process: {[len(r['accepted']) for r in results]}")


def _dead_pid() -> int:
    proc = subprocess.Popen([sys.executable, "-c", "pass"])
    proc.wait()
    return proc.pid


def test_leases_of_a_dead_or_expired_sender_are_taken_over_a_live_one_is_left(
    tmp_path: Path,
) -> None:
    server = start_server(tmp_path / "reg")
    counts = _count_posts(server)
    try:
        dead, expired, live = citations(3, TestSigner())
        store_in_outbox([dead, expired, live], server.url)
        host = socket.gethostname()
        with Outbox() as outbox:
            url = server.url
            assert outbox.claim(dead["event_id"], f"{host}:{_dead_pid()}:aa", 600, registry=url)
            assert outbox.claim(expired["event_id"], "elsewhere:1:bb", -1, registry=url)
            assert outbox.claim(live["event_id"], f"{host}:{os.getpid()}:cc", 600, registry=url)
            assert not outbox.claim(live["event_id"], f"{host}:{os.getpid()}:dd", 600, registry=url)
        manifest = manifest_file(server.url, tmp_path / "reg", tmp_path / "m.json")
        trust = default_trust([manifest])
        with RegistryClient(server.url, trust=trust) as client:
            result = submit_pending(client=client, lease_seconds=0.5)
    finally:
        server.stop()
    assert sorted(result.accepted) == sorted([dead["event_id"], expired["event_id"]])
    assert result.pending == [live["event_id"]] and not result.ok
    assert counts[live["event_id"]] == 0
    assert counts[dead["event_id"]] == counts[expired["event_id"]] == 1
    with Outbox() as outbox:
        # still its own
        assert outbox.claim(live["event_id"], f"{host}:{os.getpid()}:cc", 600, registry=url)


def test_an_outbox_made_before_leases_is_upgraded_in_place(tmp_path: Path) -> None:
    import sqlite3

    path = tmp_path / "old.sqlite3"
    with sqlite3.connect(path) as conn:
        conn.executescript(
            "CREATE TABLE outbox (event_id TEXT PRIMARY KEY, event_type TEXT NOT NULL, "
            "subject TEXT NOT NULL, body TEXT NOT NULL, state TEXT NOT NULL, stored_at TEXT "
            "NOT NULL, updated_at TEXT NOT NULL, attempts INTEGER NOT NULL DEFAULT 0, "
            "registry TEXT, answer TEXT, reason TEXT);"
        )
    (event,) = citations(1, TestSigner())
    with Outbox(path) as outbox:
        url = "http://127.0.0.1:1"
        outbox.store([event], url)
        assert outbox.claim(event["event_id"], "a:1:x", 60, registry=url)
        assert not outbox.claim(event["event_id"], "b:2:y", 60, registry=url)
        outbox.release(event["event_id"], "a:1:x", registry=url)
        assert outbox.claim(event["event_id"], "b:2:y", 60, registry=url)
        assert [e.event_id for e in outbox.entries("pending")] == [event["event_id"]]


@pytest.mark.slow
def test_a_killed_submit_loses_nothing_and_its_leases_are_taken_over_at_once(
    tmp_path: Path,
) -> None:
    """Slow: a submit process killed with SIGKILL, then another one."""
    import signal
    import sqlite3
    import time

    server = start_server(tmp_path / "reg", faults=FaultPlan(every=0, delay_seconds=0.5))
    counts = _count_posts(server)
    try:
        events = citations(4, TestSigner())
        store_in_outbox(events, server.url)
        manifest = manifest_file(server.url, tmp_path / "reg", tmp_path / "m.json")
        env = {**os.environ, "PITH_REGISTRY": server.url, "PITH_TRUST": str(manifest)}
        proc = _submit_process(env)
        db = Path(os.environ["PITH_HOME"]) / "outbox" / "outbox.sqlite3"
        deadline = time.monotonic() + 60
        leased = 0
        while not leased and time.monotonic() < deadline and proc.poll() is None:
            with sqlite3.connect(db, timeout=30) as conn:
                row = conn.execute("SELECT count(*) FROM outbox WHERE lease_owner IS NOT NULL")
                leased = row.fetchone()[0]
            time.sleep(0.05)
        assert leased, "the first pith submit never claimed an event"
        proc.send_signal(signal.SIGKILL)
        proc.communicate(timeout=30)
        started = time.monotonic()
        with RegistryClient(server.url, trust=default_trust([manifest])) as client:
            result = submit_pending(client=client)  # lease time 10 minutes: no waiting for it
        took = time.monotonic() - started
    finally:
        server.stop()
    assert result.ok and result.pending == [], result.as_dict()
    assert took < 30
    with Outbox() as outbox:
        assert outbox.counts() == {"pending": 0, "accepted": 4, "rejected": 0}
    assert set(counts) == {e["event_id"] for e in events}
    # an event whose POST was under way when the process died may be POSTed twice; the
    # registry stores it once (the second answer is 200, "already there")
    assert sum(1 for n in counts.values() if n > 1) <= 2
