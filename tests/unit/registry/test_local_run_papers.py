"""The local registry displays a paper with its record, as pith.science does: title, authors,
categories, licence and date (`paper`, unsigned, the title checked against the record's
title_canon_sha256), so that previews and the author-list check of `pith claim` work against
it. Over real HTTP; an old registry folder (records without `paper`) is migrated on open."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from support.paths import FIXTURES
from support.registry import REAL_NUMBER, start_server

from pithauthor.protocol.checks.record import check_record
from pithauthor.protocol.subject import Subject
from pithauthor.protocol.verdict import Trust
from pithauthor.registry.local.run import add_paper
from pithauthor.registry.local.server import RegistryServer
from pithauthor.registry.local.store import DB_FILE
from pithauthor.verify import pinned_trust

BODY = REAL_NUMBER.rsplit(":", 1)[1]


@pytest.fixture
def server(tmp_path: Path) -> Iterator[RegistryServer]:
    srv = start_server(tmp_path / "reg")
    yield srv
    srv.stop()


def _record(srv: RegistryServer, ref: str) -> dict:  # type: ignore[type-arg]
    answer = httpx.get(f"{srv.url}/pith/{ref}")
    assert answer.status_code == 200, answer.text
    doc: dict = answer.json()  # type: ignore[type-arg]
    return doc


def _trust(srv: RegistryServer) -> Trust:
    manifest = httpx.get(srv.url + "/pith-mirrors.json").json()
    return pinned_trust().with_keys(Trust.from_manifest(manifest, local=True).keys.values())


def test_a_paper_added_from_arxivraw_is_displayed_with_its_title_and_authors(
    server: RegistryServer,
) -> None:
    record = _record(server, "2101.99901")
    paper = record["paper"]
    assert paper["title"] == "Example paper A: a synthetic record for the pithauthor demo"
    assert paper["authors_text"] == "Example Author, Another Example"
    assert (paper["primary_cat"], paper["cross_cats"]) == ("cs.DC", ["cs.LG"])
    report = check_record(record, _trust(server))
    assert report.ok
    assert [c.status for c in report.checks if c.name == "paper"] == ["passed"]
    subject = Subject.from_document(record)
    assert subject.authors == ("Example Author", "Another Example")


def test_a_paper_added_from_a_registry_record_keeps_that_record_s_display(
    tmp_path: Path,
) -> None:
    srv = RegistryServer(tmp_path / "reg")
    try:
        rec, _ = add_paper(srv.store, srv.key, FIXTURES / "record-2302.12445v2.json")
    finally:
        srv.server_close()
    upstream = json.loads((FIXTURES / "record-2302.12445v2.json").read_text("utf-8"))["paper"]
    assert rec.paper is not None
    assert rec.paper["title"] == upstream["title"]
    assert rec.paper["authors_text"] == upstream["authors_text"]


def test_a_registry_folder_from_before_paper_was_kept_opens_and_serves(tmp_path: Path) -> None:
    """The old table (no `paper` column) gains it; its records are served without one."""
    data = tmp_path / "reg"
    srv = start_server(data)
    srv.stop()
    db = sqlite3.connect(data / DB_FILE)
    db.execute("ALTER TABLE records DROP COLUMN paper")
    db.commit()
    db.close()
    again = start_server(data)  # adds the examples again: known, so kept as they were
    try:
        old = _record(again, BODY)
        assert "paper" not in old and old["pith_number"] == REAL_NUMBER
        assert check_record(old, _trust(again)).ok
    finally:
        again.stop()
