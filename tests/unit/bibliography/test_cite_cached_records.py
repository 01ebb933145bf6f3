"""What the record cache answers for a bibliography is taken in the calling thread, in a few
queries, before any request (a warm 300-entry `pith cite` spent more CPU handing 300
SQLite reads to 8 threads, one statement each, than on the reads). Against the local registry
on loopback."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

import pytest
from support.cite import EXTRA_IDS, REAL_BIB_IDS

from pithauthor.bibliography.cite import RegistryResolver, resolve_identifiers
from pithauthor.protocol.ids import ArxivId, PithNumber
from pithauthor.protocol.subject import Subject
from pithauthor.registry.access import connect
from pithauthor.registry.client import RecordCache

IDS = [ArxivId.parse(a) for a in EXTRA_IDS + REAL_BIB_IDS]


def _resolve(cite_registry: dict[str, Any], cache_path: Path) -> dict[str, Subject | str]:
    client = connect(cite_registry["url"], [cite_registry["manifest"]])
    cache = RecordCache(cache_path)
    try:
        return resolve_identifiers(IDS, RegistryResolver(client, cache))
    finally:
        cache.close()
        client.close()


def _asked(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The identifiers `RegistryResolver.subject` (the registry's way) was asked for."""
    asked: list[str] = []
    real = RegistryResolver.subject

    def spy(self: RegistryResolver, identifier: ArxivId | PithNumber) -> Subject:
        asked.append(str(identifier))
        return real(self, identifier)

    monkeypatch.setattr(RegistryResolver, "subject", spy)
    return asked


def test_a_warm_cache_answers_every_entry_without_asking_the_registry(
    tmp_path: Path, cite_registry: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    asked = _asked(monkeypatch)
    cache_path = tmp_path / "records.sqlite3"
    cold = _resolve(cite_registry, cache_path)
    assert sorted(asked) == sorted(str(i) for i in IDS)  # the first run asks for each
    assert all(isinstance(s, Subject) for s in cold.values())
    asked.clear()
    cite_registry["server"].stop()  # any request now fails: none may be made
    warm = _resolve(cite_registry, cache_path)
    assert asked == []
    assert warm == cold


def test_the_cached_records_are_read_in_two_queries_not_two_per_entry(
    tmp_path: Path, cite_registry: dict[str, Any]
) -> None:
    cache_path = tmp_path / "records.sqlite3"
    _resolve(cite_registry, cache_path)
    client = connect(cite_registry["url"], [cite_registry["manifest"]])
    cache = RecordCache(cache_path)
    statements: list[str] = []
    cache._db.set_trace_callback(statements.append)  # every statement SQLite runs
    try:
        found = dict(RegistryResolver(client, cache).cached_records(IDS))
    finally:
        cache.close()
        client.close()
    assert sorted(found) == sorted(str(i) for i in IDS)
    selects = [s for s in statements if s.lstrip().upper().startswith("SELECT")]
    assert len(selects) == 2, selects


def test_a_cached_record_that_no_longer_verifies_is_asked_of_the_registry(
    tmp_path: Path, cite_registry: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    cache_path = tmp_path / "records.sqlite3"
    cold = _resolve(cite_registry, cache_path)
    tampered = cold[EXTRA_IDS[0]]
    assert isinstance(tampered, Subject)
    with sqlite3.connect(cache_path) as db:  # its canonical record changed: the receipt fails
        (doc,) = db.execute(
            "SELECT doc FROM records WHERE body = ?", (tampered.pith_number.body,)
        ).fetchone()
        changed = doc.replace('"version": 1', '"version": 7', 1)
        assert changed != doc
        db.execute(
            "UPDATE records SET doc = ? WHERE body = ?", (changed, tampered.pith_number.body)
        )
    asked = _asked(monkeypatch)
    warm = _resolve(cite_registry, cache_path)
    assert asked == [EXTRA_IDS[0]]  # that one only, fetched again and verified
    assert warm == cold


def test_more_entries_than_one_query_holds_are_read_in_chunks(
    tmp_path: Path, cite_registry: dict[str, Any]
) -> None:
    """1,200 identifiers the cache does not hold beside the six it does: each found once."""
    cache_path = tmp_path / "records.sqlite3"
    _resolve(cite_registry, cache_path)
    unknown = [ArxivId.parse(f"2102.{i:05d}") for i in range(1200)]
    client = connect(cite_registry["url"], [cite_registry["manifest"]])
    cache = RecordCache(cache_path)
    try:
        found = dict(RegistryResolver(client, cache).cached_records([*unknown, *IDS, *IDS]))
    finally:
        cache.close()
        client.close()
    assert sorted(found) == sorted(str(i) for i in IDS)
