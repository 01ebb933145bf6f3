"""Events belong to the registry they were signed for: two real local registries at once, each
gets only its own events whatever `--registry` the submit names; an older outbox is migrated
once and says so."""

from __future__ import annotations

import json
import re
import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from support.cli import RunPith
from support.registry import REAL_NUMBER, TestSigner, citations, start_server

from pithauthor.registry.local.server import RegistryServer
from pithauthor.registry.outbox import Outbox
from pithauthor.registry.submit import store_in_outbox

BODY = REAL_NUMBER.rsplit(":", 1)[1]


@pytest.fixture
def two(tmp_path: Path) -> Iterator[tuple[RegistryServer, RegistryServer]]:
    a, b = start_server(tmp_path / "a"), start_server(tmp_path / "b")
    try:
        yield a, b
    finally:
        a.stop()
        b.stop()


def _held(server: RegistryServer) -> set[str]:
    return {e["event_id"] for e in server.store.events(BODY)}


def _ids(events: list[dict[str, Any]]) -> set[str]:
    return {e["event_id"] for e in events}


def _rows() -> dict[tuple[str, str], str]:
    with Outbox() as outbox:
        return {(e.event_id, e.registry): e.state for e in outbox.entries()}


def test_submit_with_a_registry_sends_only_its_own_events_and_marks_no_other(
    two: tuple[RegistryServer, RegistryServer], pith: RunPith
) -> None:
    a, b = two
    for_a, for_b = citations(3, TestSigner()), citations(2, TestSigner())
    default = citations(2, TestSigner())  # signed for the default registry (pith.science)
    store_in_outbox(for_a, a.url)
    store_in_outbox(for_b, b.url)
    store_in_outbox(default)
    # a dry run against A: A gets A's events only; B's and the default's stay pending, untried
    dry = pith("submit", "--registry", a.url, "--trust-local-registry", "--json")
    assert dry.returncode == 0, dry.stderr
    assert set(json.loads(dry.stdout)["accepted"]) == _ids(for_a)
    assert f"sending 3 event(s) to {a.url}" in dry.stderr
    assert "not sent now: 2 event(s) to" in dry.stderr
    assert _held(a) == _ids(for_a) and _held(b) == set()
    rows = _rows()
    assert {rows[(i, b.url)] for i in _ids(for_b)} == {"pending"}
    assert {rows[(i, "https://pith.science")] for i in _ids(default)} == {"pending"}
    with Outbox() as outbox:
        assert {e.attempts for e in outbox.entries("pending")} == {0}
    # the same again against B: B's only
    sent = pith("submit", "--registry", b.url, "--trust-local-registry", "--json")
    assert sent.returncode == 0, sent.stderr
    assert set(json.loads(sent.stdout)["accepted"]) == _ids(for_b)
    assert _held(a) == _ids(for_a) and _held(b) == _ids(for_b)
    assert {rows[(i, "https://pith.science")] for i in _ids(default)} == {"pending"}


def test_submit_without_a_registry_sends_each_event_to_its_own(
    two: tuple[RegistryServer, RegistryServer], pith: RunPith
) -> None:
    a, b = two
    for_a, for_b = citations(2, TestSigner()), citations(3, TestSigner())
    store_in_outbox(for_a, a.url)
    store_in_outbox(for_b, b.url)
    result = pith("submit", "--trust-local-registry", "--json")
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout)
    assert report["ok"] and set(report["accepted"]) == _ids(for_a) | _ids(for_b)
    assert {r["registry"]: len(r["accepted"]) for r in report["registries"]} == {a.url: 2, b.url: 3}
    assert _held(a) == _ids(for_a) and _held(b) == _ids(for_b)  # never the other's
    line = result.stderr.split("sending ", 1)[1].splitlines()[0]  # said before any request
    counts = {url: int(n) for n, url in re.findall(r"(\d+) (?:event\(s\) )?to (\S+?)(?:,|$)", line)}
    assert counts == {a.url: 2, b.url: 3}, line


def test_a_file_submitted_to_two_registries_is_one_row_for_each(
    two: tuple[RegistryServer, RegistryServer], pith: RunPith, tmp_path: Path
) -> None:
    a, b = two
    events = citations(2, TestSigner())
    batch = tmp_path / "events.jsonl"
    batch.write_text("\n".join(json.dumps(e) for e in events), "utf-8")
    for server in (a, b):  # a dry run on A, then the same file for B
        run = pith("submit", str(batch), "--registry", server.url, "--trust-local-registry")
        assert run.returncode == 0, run.stderr
        assert f"stored 2 new event(s) in the outbox for {server.url}" in run.stderr
    assert _held(a) == _held(b) == _ids(events)
    assert set(_rows().values()) == {"accepted"} and len(_rows()) == 4


def test_an_answer_from_another_registry_never_changes_a_row(tmp_path: Path) -> None:
    (event,) = citations(1, TestSigner())
    store_in_outbox([event], "http://127.0.0.1:8787")
    with Outbox() as outbox:
        eid = event["event_id"]
        assert not outbox.mark_accepted(eid, "http://127.0.0.1:8788", {"status": "accepted"})
        assert not outbox.mark_rejected(eid, "https://pith.science", "no", None)
        assert not outbox.claim(eid, "a:1:x", 60, registry="http://127.0.0.1:8788")
        assert outbox.mark_accepted(eid, "HTTP://127.0.0.1:8787/", {"status": "accepted"})
        assert outbox.counts() == {"pending": 0, "accepted": 1, "rejected": 0}


V0_SCHEMA = (
    "CREATE TABLE outbox (event_id TEXT PRIMARY KEY, event_type TEXT NOT NULL, subject TEXT "
    "NOT NULL, body TEXT NOT NULL, state TEXT NOT NULL CHECK (state IN ('pending', 'accepted', "
    "'rejected')), stored_at TEXT NOT NULL, updated_at TEXT NOT NULL, attempts INTEGER NOT NULL "
    "DEFAULT 0, registry TEXT, answer TEXT, reason TEXT, lease_owner TEXT, lease_expires REAL);"
    "CREATE INDEX outbox_state ON outbox(state);"
)


def _v0_outbox(home: Path, pending: list[dict[str, Any]], accepted: dict[str, Any]) -> None:
    """An outbox as pithauthor wrote it before rows named their registry."""
    folder = home / "outbox"
    folder.mkdir(parents=True, mode=0o700)
    home.chmod(0o700)
    with sqlite3.connect(folder / "outbox.sqlite3") as conn:
        conn.executescript(V0_SCHEMA)
        for event, state, registry in [(e, "pending", None) for e in pending] + [
            (accepted, "accepted", "http://127.0.0.1:8787")
        ]:
            conn.execute(
                "INSERT INTO outbox (event_id, event_type, subject, body, state, stored_at, "
                "updated_at, registry, answer) VALUES (?,?,?,?,?,?,?,?,?)",
                (
                    event["event_id"],
                    event["event_type"],
                    event["subject_pith_number"],
                    json.dumps(event),
                    state,
                    "2026-11-30T10:00:00Z",
                    "2026-11-30T10:00:00Z",
                    registry,
                    '{"status":"accepted"}' if registry else None,
                ),
            )
    (folder / "outbox.sqlite3").chmod(0o600)


def test_an_older_outbox_is_migrated_once_and_says_so(isolated_home: Path, pith: RunPith) -> None:
    *pending, accepted = citations(3, TestSigner())
    _v0_outbox(isolated_home, pending, accepted)
    first = pith("outbox", "list", "--all", "--json")
    assert first.returncode == 0, first.stderr
    said = [line for line in first.stderr.splitlines() if "bound to" in line]
    assert said == [
        "outbox: 2 pending event(s) stored before events named their registry are now bound "
        "to https://pith.science"
    ]
    rows = {r["event_id"]: (r["state"], r["registry"]) for r in json.loads(first.stdout)}
    assert rows == {
        pending[0]["event_id"]: ("pending", "https://pith.science"),
        pending[1]["event_id"]: ("pending", "https://pith.science"),
        accepted["event_id"]: ("accepted", "http://127.0.0.1:8787"),  # it was accepted there
    }
    again = pith("outbox", "list")
    assert again.returncode == 0 and "bound to" not in again.stderr  # once only
    assert "2026-11-30  https://pith.science" in again.stdout  # the date and registry shown


def test_outbox_list_shows_the_title_of_a_locally_known_record(
    isolated_home: Path, pith: RunPith
) -> None:
    from support.paths import load_fixture

    from pithauthor.registry.client import RecordCache

    store_in_outbox(citations(1, TestSigner()), "http://127.0.0.1:8787")
    title = "DeAR: Accelerating Distributed Deep Learning with Fine-Grained All-Reduce Pipelining"
    assert pith("outbox", "list").stdout.count(title) == 0  # nothing cached: the number
    cache = RecordCache()
    cache.put_record("http://127.0.0.1:8787", BODY, load_fixture("record-2302.12445v2.json"))
    cache.close()
    listed = pith("outbox", "list")
    assert title in listed.stdout, listed.stdout
    as_json = json.loads(pith("outbox", "list", "--all", "--json").stdout)
    assert as_json[0]["title"] == title


def test_a_cached_title_that_is_not_the_records_own_is_not_shown(
    isolated_home: Path, pith: RunPith
) -> None:
    from support.paths import load_fixture

    from pithauthor.registry.client import RecordCache

    store_in_outbox(citations(1, TestSigner()), "http://127.0.0.1:8787")
    doc = load_fixture("record-2302.12445v2.json")
    doc["paper"]["title"] = "A title the canonical record does not hash to"
    cache = RecordCache()
    cache.put_record("http://127.0.0.1:8787", BODY, doc)
    cache.close()
    listed = pith("outbox", "list")
    assert "A title the canonical" not in listed.stdout and REAL_NUMBER in listed.stdout


def test_a_claim_signed_for_a_registry_is_sent_there_only(
    two: tuple[RegistryServer, RegistryServer], pith: RunPith, monkeypatch: pytest.MonkeyPatch
) -> None:
    from support.cli import use_fast_kdf

    from pithauthor.keys.author import generate

    a, b = two
    use_fast_kdf(monkeypatch)
    monkeypatch.setenv("PITH_PASSPHRASE", "registries test passphrase")
    generate("ex", backend="file", public_name="Example Author", note=lambda _: None)
    for server, paper in ((a, "2101.99901"), (b, "2101.99902")):
        opts = ["--registry", server.url, "--trust-local-registry"]
        signed = pith("claim", paper, "--position", "1", *opts)  # into the outbox, for it
        assert signed.returncode == 0, signed.stderr
        step = f"`pith submit --registry {server.url} --trust-local-registry` sends it to"
        assert f"{step} {server.url}" in signed.stderr
    with Outbox() as outbox:
        ids = {e.registry: e.event_id for e in outbox.entries("pending")}
    assert _rows() == {(ids[a.url], a.url): "pending", (ids[b.url], b.url): "pending"}
    sent = pith("submit", "--trust-local-registry")
    assert sent.returncode == 0, sent.stderr

    def claims(server: RegistryServer) -> set[str]:
        return {
            e["event_id"]
            for r in server.store.records()
            for e in server.store.events(r.body)
            if e["event_type"] == "author_attestation"
        }

    assert claims(a) == {ids[a.url]} and claims(b) == {ids[b.url]}
    assert set(_rows().values()) == {"accepted"}
    # --submit sends what was just signed to its registry, and leaves another's pending rows
    other = citations(1, TestSigner())
    store_in_outbox(other, b.url)
    optsa = ["--registry", a.url, "--trust-local-registry", "--submit", "--yes"]
    again = pith("claim", "2101.99902", "--position", "1", *optsa)
    assert again.returncode == 0, again.stderr
    assert len(claims(a)) == 2 and claims(b) == {ids[b.url]}
    assert _rows()[(other[0]["event_id"], b.url)] == "pending"
    assert other[0]["event_id"] not in _held(a) | _held(b)


def test_a_registry_that_is_down_does_not_stop_the_others(
    two: tuple[RegistryServer, RegistryServer], pith: RunPith
) -> None:
    from support.registry import free_port

    a, _ = two
    dead = f"http://127.0.0.1:{free_port()}"
    for_dead, for_a = citations(2, TestSigner()), citations(2, TestSigner())
    store_in_outbox(for_dead, dead)
    store_in_outbox(for_a, a.url)
    result = pith("submit", "--trust-local-registry", "--retries", "1", "--timeout", "2")
    assert result.returncode == 3  # the network error, said once
    assert result.stderr.count("pith: error:") == 1 and dead in result.stderr
    assert _held(a) == _ids(for_a)  # A was served all the same
    rows = _rows()
    assert {rows[(i, dead)] for i in _ids(for_dead)} == {"pending"}  # nothing lost
    assert {rows[(i, a.url)] for i in _ids(for_a)} == {"accepted"}


def test_the_pending_events_of_a_registry_given_up_can_be_dropped(pith: RunPith) -> None:
    gone, kept = citations(2, TestSigner()), citations(1, TestSigner())
    store_in_outbox(gone, "http://127.0.0.1:8787")
    store_in_outbox(kept)
    dropped = pith("outbox", "drop", "--pending", "--registry", "http://127.0.0.1:8787", "--yes")
    assert dropped.returncode == 0, dropped.stderr
    assert "dropped 2 event(s)" in dropped.stderr
    assert set(_rows()) == {(kept[0]["event_id"], "https://pith.science")}
