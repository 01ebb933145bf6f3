"""`pith status` and `pith fetch` keep the state they verified, with its ETag, and revalidate it
(`If-None-Match`): a second look at an unchanged paper downloads and verifies nothing; a paper
that changed is fetched and verified again. A real local registry over loopback."""

from __future__ import annotations

import json
import os
import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from support.cli import RunPith
from support.registry import SUBJECT, TestSigner, citation, citations, start_server

from pithauthor.registry import client as client_module
from pithauthor.registry.local.server import RegistryServer
from pithauthor.registry.page import PAGE_BRIEF, PAGE_ROWS, PAGE_SUMMARY


@pytest.fixture
def server(tmp_path: Path) -> Iterator[RegistryServer]:
    registry = start_server(tmp_path / "registry")
    for event in citations(30):
        registry.store.insert_event(SUBJECT.pith_number.body, event, event["created_at"])  # type: ignore[arg-type]
    try:
        yield registry
    finally:
        registry.stop()


def _no_check(doc: Any, trust: Any) -> Any:
    raise AssertionError("verified again")


def test_a_second_status_of_an_unchanged_paper_verifies_nothing(
    server: RegistryServer, pith: RunPith, monkeypatch: pytest.MonkeyPatch
) -> None:
    where = ("--registry", server.url, "--trust-local-registry")
    first = pith("status", SUBJECT.pith_number.full, *where, "--json")
    assert first.returncode == 0, first.stderr
    page = json.loads(first.stdout)
    assert len(page["citations_received"]) == 30 and page["verified"]["state"]["ok"]
    with monkeypatch.context() as patched:
        patched.setattr(client_module, "checked_state", _no_check)
        again = pith("status", SUBJECT.pith_number.full, *where, "--json")
        assert again.returncode == 0, again.stderr
        assert json.loads(again.stdout) == page  # the same page, from the copy kept
        fetched = pith("fetch", SUBJECT.pith_number.full, "--what", "state", *where)
        assert fetched.returncode == 0, fetched.stderr
        assert len(json.loads(fetched.stdout)["current"]["citation_signatures"]) == 30
        # one more event: the state changed, so it is fetched and verified again
        late = citation(TestSigner(), 99)
        server.store.insert_event(SUBJECT.pith_number.body, late, late["created_at"])  # type: ignore[arg-type]
        changed = pith("status", SUBJECT.pith_number.full, *where)
        assert changed.returncode != 0 and "AssertionError" in changed.stderr
    after = pith("status", SUBJECT.pith_number.full, *where, "--json")
    assert len(json.loads(after.stdout)["citations_received"]) == 31


def _cache() -> sqlite3.Connection:
    return sqlite3.connect(Path(os.environ["PITH_HOME"]) / "cache" / "records.sqlite3")


# what each form of the page reads on a second look: the text page its first rows and counts,
# `--json` and `--all` every row
FORMS = {
    "text": ((), PAGE_BRIEF),
    "json": (("--json",), PAGE_SUMMARY),
    "all": (("--all",), PAGE_SUMMARY),
}


@pytest.mark.parametrize("form", sorted(FORMS))
def test_a_second_status_reads_the_kept_summary_not_the_state(
    server: RegistryServer, pith: RunPith, monkeypatch: pytest.MonkeyPatch, form: str
) -> None:
    where = ("--registry", server.url, "--trust-local-registry", *FORMS[form][0])
    first = pith("status", SUBJECT.pith_number.full, *where)
    assert first.returncode == 0, first.stderr
    with _cache() as db:  # each summary is bound to the state kept: its ETag and its hash
        ((etag, doc_sha256),) = db.execute("SELECT etag, sha256 FROM documents").fetchall()
        kept = db.execute("SELECT etag, doc_sha256, kind FROM summaries ORDER BY kind").fetchall()
        brief = db.execute("SELECT summary FROM summaries WHERE kind = ?", (PAGE_BRIEF,))
        (brief_summary,) = brief.fetchone()
    # whichever form looked first, both are kept: the other form's next look is a 304 too
    assert kept == sorted((etag, doc_sha256, kind) for kind in (PAGE_BRIEF, PAGE_SUMMARY))
    shown = json.loads(brief_summary)  # the text page's: ten of the 30 citations, all counted
    assert len(shown["citations_received"]) == PAGE_ROWS
    assert shown["counts"]["citation_signatures"] == 30 and shown["relationships"] == {"cites": 30}

    def no_state(*args: Any) -> Any:
        raise AssertionError("the kept state was read")

    read = []
    real = client_module.RecordCache.summary

    def summary(self: Any, registry: str, body: str, what: str, kind: str, trust: Any) -> Any:
        read.append(kind)
        return real(self, registry, body, what, kind, trust)

    with monkeypatch.context() as patched:
        patched.setattr(client_module, "checked_state", _no_check)
        patched.setattr(client_module.RecordCache, "document", no_state)
        patched.setattr(client_module.RecordCache, "summary", summary)
        again = pith("status", SUBJECT.pith_number.full, *where)
    assert again.returncode == 0, again.stderr
    assert again.stdout == first.stdout  # the same page, from the summary kept
    assert read == [FORMS[form][1]]  # that summary alone


# each column of a kept summary changed behind pith's back: the summary is not used, and the
# state is downloaded and verified in full again (the page is the true one)
TAMPERED = {
    "summary": "UPDATE summaries SET summary = CAST(REPLACE(CAST(summary AS TEXT), "
    "'\"cites\"', '\"refutes\"') AS BLOB)",
    "verdict": "UPDATE summaries SET verdict = REPLACE(verdict, '\"passed\": ', '\"passed\": 1')",
    "etag": "UPDATE summaries SET etag = etag || 'x'",
    "state hash": "UPDATE summaries SET doc_sha256 = (SELECT sha256 FROM documents) || 'x'",
    "trust": "UPDATE summaries SET trust = 'someone else'",
}


@pytest.mark.parametrize("form", sorted(FORMS))
@pytest.mark.parametrize("column", sorted(TAMPERED))
def test_a_tampered_kept_summary_is_not_used_the_state_is_verified_again(
    server: RegistryServer,
    pith: RunPith,
    monkeypatch: pytest.MonkeyPatch,
    column: str,
    form: str,
) -> None:
    where = ("--registry", server.url, "--trust-local-registry", *FORMS[form][0])
    first = pith("status", SUBJECT.pith_number.full, *where)
    assert first.returncode == 0, first.stderr
    with _cache() as db:  # the row this form reads
        assert db.execute(TAMPERED[column] + " WHERE kind = ?", (FORMS[form][1],)).rowcount == 1
    checks = []
    real = client_module.checked_state

    def counted(doc: Any, trust: Any) -> Any:
        checks.append(doc["pith_number"])
        return real(doc, trust)

    monkeypatch.setattr(client_module, "checked_state", counted)
    again = pith("status", SUBJECT.pith_number.full, *where)
    assert again.returncode == 0, again.stderr
    assert checks == [SUBJECT.pith_number.full]  # verified in full again
    assert again.stdout == first.stdout
    third = pith("status", SUBJECT.pith_number.full, *where)  # kept anew, whole
    assert checks == [SUBJECT.pith_number.full] and third.stdout == first.stdout
