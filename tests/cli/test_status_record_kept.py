"""`pith status` checks a paper's record once per look, and keeps the verdict of a record that
passed, bound to the SHA-256 of the bytes the registry sent and to the trust it passed under: a
second look asks the registry for the record again and, when it sends the same bytes and the
trust is the same, does not check them again (the check is a function of the two). Any other
bytes, another trust or a damaged row: the record is checked in full again. A real local
registry over loopback."""

from __future__ import annotations

import json
import os
import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from support.cli import RunPith
from support.registry import SUBJECT, citations, start_server

from pithauthor.registry import client as client_module
from pithauthor.registry.local.server import RegistryServer


@pytest.fixture
def server(tmp_path: Path) -> Iterator[RegistryServer]:
    registry = start_server(tmp_path / "registry")
    for event in citations(3):
        registry.store.insert_event(SUBJECT.pith_number.body, event, event["created_at"])  # type: ignore[arg-type]
    try:
        yield registry
    finally:
        registry.stop()


def _cache() -> sqlite3.Connection:
    return sqlite3.connect(Path(os.environ["PITH_HOME"]) / "cache" / "records.sqlite3")


def _counting(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Every record the client checks from now on, by its Pith Number."""
    checked: list[str] = []
    real = client_module.checked_record

    def counted(doc: Any, trust: Any) -> Any:
        checked.append(doc["pith_number"])
        return real(doc, trust)

    monkeypatch.setattr(client_module, "checked_record", counted)
    return checked


def test_a_first_look_checks_the_record_once_and_a_second_not_again(
    server: RegistryServer, pith: RunPith, monkeypatch: pytest.MonkeyPatch
) -> None:
    where = ("--registry", server.url, "--trust-local-registry", "--json")
    checked = _counting(monkeypatch)
    first = pith("status", SUBJECT.pith_number.full, *where)
    assert first.returncode == 0, first.stderr
    page = json.loads(first.stdout)
    assert page["verified"]["record"]["ok"] and page["verified"]["record"]["passed"] > 0
    assert checked == [SUBJECT.pith_number.full]  # once: not again to say how it fared
    again = pith("status", SUBJECT.pith_number.full, *where)
    assert again.returncode == 0, again.stderr
    assert json.loads(again.stdout) == page  # the same verdict, shown from the one kept
    assert checked == [SUBJECT.pith_number.full]
    with _cache() as db:
        ((body, sha256),) = db.execute("SELECT body, doc_sha256 FROM record_verdicts").fetchall()
    assert body == SUBJECT.pith_number.body and len(sha256) == 64


def test_a_second_look_under_another_trust_checks_the_record_again(
    server: RegistryServer, pith: RunPith, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Without --trust-local-registry the record's key is not trusted: the kept verdict (of
    the same bytes, under the other trust) does not hide it."""
    first = pith(
        "status", SUBJECT.pith_number.full, "--registry", server.url, "--trust-local-registry"
    )
    assert first.returncode == 0, first.stderr
    checked = _counting(monkeypatch)
    refused = pith("status", SUBJECT.pith_number.full, "--registry", server.url)
    assert refused.returncode != 0 and "not trusted" in refused.stderr
    assert checked == [SUBJECT.pith_number.full]


# each column of a kept record verdict changed behind pith's back: the verdict is not used, and
# the record is checked in full again (the page is the true one); "bytes" stands for a registry
# that sends other bytes than those that passed
TAMPERED = {
    "verdict": "UPDATE record_verdicts SET verdict = "
    "REPLACE(verdict, '\"passed\": ', '\"passed\": 1')",
    "bytes": "UPDATE record_verdicts SET doc_sha256 = doc_sha256 || 'x'",
    "trust": "UPDATE record_verdicts SET trust = 'someone else'",
    "digest": "UPDATE record_verdicts SET sha256 = sha256 || 'x'",
}


@pytest.mark.parametrize("column", sorted(TAMPERED))
def test_a_tampered_kept_record_verdict_is_not_used_the_record_is_checked_again(
    server: RegistryServer, pith: RunPith, monkeypatch: pytest.MonkeyPatch, column: str
) -> None:
    where = ("--registry", server.url, "--trust-local-registry", "--json")
    first = pith("status", SUBJECT.pith_number.full, *where)
    assert first.returncode == 0, first.stderr
    with _cache() as db:
        assert db.execute(TAMPERED[column]).rowcount == 1
    checked = _counting(monkeypatch)
    again = pith("status", SUBJECT.pith_number.full, *where)
    assert again.returncode == 0, again.stderr
    assert checked == [SUBJECT.pith_number.full]  # checked in full again
    assert json.loads(again.stdout) == json.loads(first.stdout)
    third = pith("status", SUBJECT.pith_number.full, *where)  # kept anew, whole
    assert checked == [SUBJECT.pith_number.full]
    assert json.loads(third.stdout) == json.loads(first.stdout)
