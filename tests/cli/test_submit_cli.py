"""The commands end to end: `pith registry serve/add`, `pith submit`, `pith fetch`, and the
`submit_events` seam that `--submit` uses."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from support.cli import RunPith
from support.paths import FIXTURES
from support.registry import (
    REAL_NUMBER,
    TestSigner,
    attestation,
    citations,
    manifest_file,
    replication,
    start_server,
)

from pithauthor.registry.submit import submit_events


def test_registry_add_accepts_metadata_and_a_real_record(tmp_path: Path, pith: RunPith) -> None:
    data = tmp_path / "reg"
    added = pith(
        "registry", "add", str(FIXTURES / "record-2302.12445v2.json"), "--data", str(data), "--json"
    )
    assert added.returncode == 0, added.stderr
    assert json.loads(added.stdout) == [
        {
            "file": str(FIXTURES / "record-2302.12445v2.json"),
            "pith_number": REAL_NUMBER,
            "new": True,
        }
    ]
    again = pith("registry", "add", "--examples", "--data", str(data), "--json")
    rows = json.loads(again.stdout)
    assert {r["pith_number"]: r["new"] for r in rows}[REAL_NUMBER] is False
    assert len(rows) == 3


def test_registry_add_refuses_a_tampered_record(tmp_path: Path, pith: RunPith) -> None:
    doc = json.loads((FIXTURES / "record-2302.12445v2.json").read_text("utf-8"))
    doc["receipt"]["signature_b64"] = doc["receipt"]["signature_b64"][::-1]
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(doc), "utf-8")
    result = pith("registry", "add", str(bad), "--data", str(tmp_path / "reg"))
    assert result.returncode == 1
    assert "does not verify" in result.stderr


def test_serve_prints_its_url_and_answers(tmp_path: Path) -> None:
    proc = subprocess.Popen(
        [
            *(sys.executable, "-m", "pithauthor", "registry", "serve", "--port", "0"),
            *("--examples", "--data", str(tmp_path / "reg")),
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=os.environ,
    )
    try:
        assert proc.stdout is not None
        url = proc.stdout.readline().strip()
        assert url.startswith("http://127.0.0.1:")
        import httpx

        assert httpx.get(url + "/pith/2302.12445").json()["pith_number"] == REAL_NUMBER
    finally:
        proc.terminate()
        assert proc.wait(10) == 0


def test_submit_then_fetch_a_state_that_pith_verify_accepts(tmp_path: Path, pith: RunPith) -> None:
    server = start_server(tmp_path / "reg")
    try:
        manifest = manifest_file(server.url, tmp_path / "reg", tmp_path / "m.json")
        signer = TestSigner()
        events = [attestation(signer), replication(signer), *citations(5, signer)]
        batch = tmp_path / "events.jsonl"
        batch.write_text("\n".join(json.dumps(e) for e in events), "utf-8")
        env = {"PITH_REGISTRY": server.url, "PITH_TRUST": str(manifest)}
        sent = pith("submit", str(batch), "--json", env=env)
        assert sent.returncode == 0, sent.stderr
        assert len(json.loads(sent.stdout)["accepted"]) == len(events)
        assert "submitting" not in sent.stderr  # no progress bar off a terminal
        out = tmp_path / "state.json"
        fetched = pith("fetch", "2302.12445", "--what", "state", "-o", str(out), env=env)
        assert fetched.returncode == 0, fetched.stderr
        state = json.loads(out.read_text("utf-8"))
        assert state["valid_event_count"] == len(events) + 1
        verified = pith("verify", str(out), "--trust-manifest", str(manifest))
        assert verified.returncode == 0, verified.stdout + verified.stderr
        resent = pith("submit", str(batch), "--json", env=env)
        assert json.loads(resent.stdout)["accepted"] == []  # nothing pending any more
    finally:
        server.stop()


def test_trust_local_registry_warns(tmp_path: Path, pith: RunPith) -> None:
    server = start_server(tmp_path / "reg")
    try:
        result = pith(
            "fetch",
            "NFG5PAOX",
            "--what",
            "number",
            "--registry",
            server.url,
            "--trust-local-registry",
        )
        assert result.returncode == 0, result.stderr
        assert result.stdout.strip() == REAL_NUMBER
        assert "pith: warning: trusting the local registry" in result.stderr
    finally:
        server.stop()


def test_submit_events_stores_then_sends(tmp_path: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    server = start_server(tmp_path / "reg")
    try:
        manifest = manifest_file(server.url, tmp_path / "reg", tmp_path / "m.json")
        monkeypatch.setenv("PITH_TRUST", str(manifest))
        events = citations(4)
        result = submit_events(events, registry=server.url, parallel=2)
        assert result.ok and sorted(result.accepted) == sorted(e["event_id"] for e in events)
        assert server.store.event_count() == 4
    finally:
        server.stop()
