"""The outbox: durable, keyed by event_id, atomic, with pending/accepted/rejected states."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from support.cli import RunPith
from support.registry import TestSigner, citations

from pithauthor.errors import EventError
from pithauthor.registry.outbox import Outbox
from pithauthor.registry.submit import store_in_outbox


def test_storing_twice_keeps_one_row_per_event(isolated_home: Path) -> None:
    events = citations(3)
    store_in_outbox(events)
    store_in_outbox(events + citations(1))
    with Outbox() as outbox:
        assert outbox.counts() == {"pending": 4, "accepted": 0, "rejected": 0}
        assert outbox.get(events[0]["event_id"]).event == events[0]  # type: ignore[union-attr]


def test_a_batch_with_a_broken_event_stores_nothing(isolated_home: Path) -> None:
    events = citations(3)
    events[2]["payload"]["relationship"] = "supports"  # event_id no longer matches
    with pytest.raises(EventError, match="nothing was stored"):
        store_in_outbox(events)
    with Outbox() as outbox:
        assert outbox.counts()["pending"] == 0


def test_outbox_file_and_folder_are_private(isolated_home: Path) -> None:
    store_in_outbox(citations(1))
    path = isolated_home / "outbox" / "outbox.sqlite3"
    assert path.stat().st_mode & 0o777 == 0o600
    assert (isolated_home / "outbox").stat().st_mode & 0o777 == 0o700


def test_states_retry_and_drop(isolated_home: Path) -> None:
    a, b, c = citations(3, TestSigner())
    store_in_outbox([a, b, c], "http://127.0.0.1:1")
    with Outbox() as outbox:
        assert outbox.mark_accepted(a["event_id"], "http://127.0.0.1:1", {"status": "accepted"})
        assert outbox.mark_rejected(b["event_id"], "http://127.0.0.1:1", "bad", {"error": "x"})
        assert outbox.counts() == {"pending": 1, "accepted": 1, "rejected": 1}
        assert outbox.get(b["event_id"]).reason == "bad"  # type: ignore[union-attr]
        assert outbox.retry() == 1
        assert outbox.drop([c["event_id"], "sha256:nothing"]) == 1
        assert outbox.counts() == {"pending": 1, "accepted": 1, "rejected": 0}


def test_outbox_cli_lists_retries_and_drops(isolated_home: Path, pith: RunPith) -> None:
    events = citations(2)
    store_in_outbox(events, "http://127.0.0.1:1")
    with Outbox() as outbox:
        outbox.mark_rejected(events[0]["event_id"], "http://127.0.0.1:1", "no", None)
    listed = pith("outbox", "list", "--json")
    assert listed.returncode == 0, listed.stderr
    states = {e["event_id"]: e["state"] for e in json.loads(listed.stdout)}
    assert states == {events[0]["event_id"]: "rejected", events[1]["event_id"]: "pending"}
    assert pith("outbox", "retry").returncode == 0
    assert pith("outbox", "drop", events[1]["event_id"], "--yes").returncode == 0
    rows = json.loads(pith("outbox", "list", "--json").stdout)
    assert [(r["event_id"], r["state"]) for r in rows] == [(events[0]["event_id"], "pending")]


def test_outbox_is_shared_between_processes(isolated_home: Path) -> None:
    store_in_outbox(citations(1))
    pid = os.fork()
    if pid == 0:  # pragma: no cover - child
        try:
            store_in_outbox(citations(1))
        finally:
            os._exit(0)
    os.waitpid(pid, 0)
    with Outbox() as outbox:
        assert outbox.counts()["pending"] == 2


def test_outbox_retry_names_the_registry_each_event_goes_to(
    isolated_home: Path, pith: RunPith
) -> None:
    first, second = "http://127.0.0.1:1", "http://127.0.0.1:2"
    a, b = citations(2)
    store_in_outbox([a], first)
    store_in_outbox([b], second)
    with Outbox() as outbox:
        outbox.mark_rejected(a["event_id"], first, "no", None)
        outbox.mark_rejected(b["event_id"], second, "no", None)
    retried = pith("outbox", "retry", "--registry", second)
    assert retried.returncode == 0, retried.stderr
    assert "1 event(s) pending again" in retried.stderr
    assert f"next: `pith submit --registry {second}` sends them to {second}" in retried.stderr
    assert first not in retried.stderr  # its event is still rejected: nothing to send there
    every = pith("outbox", "retry")
    for url in (first, second):
        assert f"`pith submit --registry {url}`" in every.stderr
