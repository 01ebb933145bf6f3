"""`pith status` shows the record page's checklist, rows 1 to 5, and calls rows 1 and 2 done only
when it checked their proofs: on the local registry, before and after an author claims the paper,
a citation and a replication arrive, `pith anchor` stamps the record on a loopback
OpenTimestamps calendar and `pith archive` has a loopback Internet Archive capture its PDF.

Then what a registry's word alone is worth: a second machine, which never checked the archive
copy, says row 2 is claimed and not checked (row 1 it still proves offline: the anchor ships its
block header); an anchor whose proof reaches another hash, which the registry takes (it judges
no proof), leaves row 1 not done."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from support.cli import RunPith, StartRegistry
from support.ots_calendar import TEST_FLOOR, TEST_HEIGHT, Calendar, ots_calendar
from support.registry import TestSigner, anchor_event
from support.wayback import Wayback, wayback

from pithauthor.errors import EXIT_PENDING

DEAR = "2302.12445"
BODY = "NFG5PAOXQUVIWDX5F7YSYYL7EW"
CITING = "2101.99901"  # an example paper of the local registry
ROWS = ["timestamp", "archive_copy", "author_claims", "citations", "replications"]


@pytest.fixture
def calendar(monkeypatch: pytest.MonkeyPatch) -> Iterator[Calendar]:
    with ots_calendar() as running:
        monkeypatch.setenv("PITH_OTS_CALENDARS", running.url)
        monkeypatch.setenv("PITH_BTC_HEADERS", running.url)
        monkeypatch.setattr("pithauthor.timestamps.anchor.FLOOR", TEST_FLOOR)
        yield running


@pytest.fixture
def archive(monkeypatch: pytest.MonkeyPatch) -> Iterator[Wayback]:
    with wayback(f"{DEAR}v2") as server:
        monkeypatch.setenv("PITH_WAYBACK_URL", server.url)
        monkeypatch.setenv("PITH_ARXIV_PDF", f"{server.url}/pdf")
        yield server  # anonymous: no archive.org keys


def _checklist(pith: RunPith, url: str) -> list[dict[str, Any]]:
    shown = pith("status", DEAR, "--registry", url, "--trust-local-registry", "--json")
    assert shown.returncode == 0, shown.stderr
    rows: list[dict[str, Any]] = json.loads(shown.stdout)["checklist"]
    assert [r["row"] for r in rows] == [1, 2, 3, 4, 5]
    assert [r["item"] for r in rows] == ROWS  # the record page's order
    return rows


def _done(rows: list[dict[str, Any]]) -> list[bool]:
    return [r["done"] for r in rows]


def test_status_shows_rows_one_to_five_with_the_anchor_and_the_archive_copy_proven(
    pith: RunPith,
    cite_author: str,
    calendar: Calendar,
    archive: Wayback,
    local_registry: StartRegistry,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    server = local_registry(tmp_path / "registry")
    on = ("--registry", server.url, "--trust-local-registry")
    before = _checklist(pith, server.url)
    assert _done(before) == [False] * 5
    assert [r["label"] for r in before[:2]] == ["not anchored", "not stored"]

    steps: list[tuple[str, ...]] = [
        ("claim", DEAR, "--position", "6", "--submit", "--yes", *on),
        ("cite", "--from", CITING, "--to", DEAR, "--relationship", "uses_method",
         "--submit", "--yes", *on),
        ("replicate", DEAR, "--kind", "replication", "--outcome", "reproduced",
         "--summary", "Re-ran it", "--artifact", "https://example.org/log.txt",
         "--sha256", "ab" * 32, "--submit", "--yes", *on),
        ("archive", DEAR, "--poll", "0", "--submit", "--yes", *on),
    ]  # fmt: skip
    for args in steps:
        done = pith(*args)
        assert done.returncode == 0, (args, done.stderr)
    assert pith("anchor", DEAR, *on).returncode == EXIT_PENDING  # stamped, not in a block yet
    pending = _checklist(pith, server.url)
    assert _done(pending) == [False, True, True, True, True]  # nothing anchored while pending
    calendar.mine()
    anchored = pith("anchor", DEAR, "--submit", "--yes", *on)
    assert anchored.returncode == 0, anchored.stderr

    after = _checklist(pith, server.url)
    assert _done(after) == [True] * 5
    anchor_row, archive_row = after[0], after[1]
    assert (anchor_row["proven"], archive_row["proven"]) == (True, True)
    assert anchor_row["label"] == "anchored (proven)"
    assert f"bitcoin block {TEST_HEIGHT}" in anchor_row["detail"]
    assert archive_row["label"] == "stored (proven)"
    assert archive_row["detail"].startswith("archived: ")
    assert [r["count"] for r in after] == [1, 1, 1, 1, 1]

    text = pith("status", DEAR, *on)
    assert text.returncode == 0, text.stderr
    assert "  1 Bitcoin timestamp done: anchored (proven); " in text.stdout, text.stdout
    assert "  2 archive copy      done: stored (proven); archived: " in text.stdout, text.stdout
    assert "  5 replications      done: replicated" in text.stdout, text.stdout

    # another machine: the same registry, none of this machine's archive checks
    monkeypatch.setenv("PITH_HOME", str(tmp_path / "second-machine"))
    elsewhere = _checklist(pith, server.url)
    assert _done(elsewhere) == [True, False, True, True, True]
    assert elsewhere[1]["label"] == "archive copy claimed by the registry, not checked"
    assert elsewhere[1]["proven"] is False and "not checked" in elsewhere[1]["detail"]


def test_an_anchor_whose_proof_reaches_another_hash_leaves_row_one_not_done(
    pith: RunPith,
    calendar: Calendar,
    local_registry: StartRegistry,
    tmp_path: Path,
) -> None:
    # the registry takes any well-signed anchor: it judges no proof, `pith status` does
    server = local_registry(tmp_path / "registry")
    forged = anchor_event(TestSigner(), b"not a proof of anything")
    action = f"{server.url}/pith/{BODY}/action/timestamp_anchor"
    posted = httpx.post(action, json=forged, headers={"Idempotency-Key": forged["event_id"]})
    assert posted.status_code == 201, posted.text
    rows = _checklist(pith, server.url)
    assert rows[0]["count"] == 1 and rows[0]["done"] is False and rows[0]["proven"] is False
    assert rows[0]["label"] == "anchor claimed by the registry, not checked"
    assert rows[0]["detail"].startswith("not proven: ")
