"""The subject kept beside a verified record (`RecordCache.checked_subjects`): made once from
the record, then taken back without parsing the record again only while the record's stored
bytes are the ones that passed under the same trust and the kept row is whole; a changed,
tampered or differently trusted record is checked as `checked_record` checks it, and a
damaged kept subject is made again from its record."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from support.paths import load_fixture
from support.registry import REAL_NUMBER

from pithauthor.protocol.checks.record import checked_record
from pithauthor.protocol.subject import Subject
from pithauthor.protocol.verdict import Trust
from pithauthor.registry.client import RecordCache
from pithauthor.registry.credentials import default_trust

BASE = "http://127.0.0.1:8787"
BODY = REAL_NUMBER.rsplit(":", 1)[1]
FIXTURE = "record-2302.12445v2.json"


@pytest.fixture
def cache(tmp_path: Path) -> Iterator[RecordCache]:
    c = RecordCache(tmp_path / "records.sqlite3")
    yield c
    c.close()


@pytest.fixture
def made(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The numbers of the records a subject was made from, and of those `check_record` ran
    on, in order ("made ..." / "checked ..."; spies that call the real functions)."""
    seen: list[str] = []
    real = Subject.from_document

    def making(doc: Any) -> Subject:
        seen.append(f"made {doc.get('pith_number')}")
        return real(doc)

    def checking(doc: Any, trust: Trust) -> Any:
        seen.append(f"checked {doc.get('pith_number')}")
        return checked_record(doc, trust)

    monkeypatch.setattr(Subject, "from_document", staticmethod(making))
    monkeypatch.setattr("pithauthor.registry.client.checked_record", checking)
    return seen


def _subjects(cache: RecordCache, trust: Trust) -> list[tuple[str, str, Any]]:
    return list(cache.checked_subjects(BASE, [BODY, BODY, "NOSUCHBODY"], trust))


def _edit(path: Path, table: str, column: str, change: Any) -> None:
    """Change a stored column of the record's row, as a damaged or edited cache file would."""
    with sqlite3.connect(path) as db:
        (text,) = db.execute(f"SELECT {column} FROM {table} WHERE body = ?", (BODY,)).fetchone()
        db.execute(f"UPDATE {table} SET {column} = ? WHERE body = ?", (change(text), BODY))


def test_a_subject_is_made_once_then_taken_back_as_made(
    cache: RecordCache, made: list[str]
) -> None:
    trust = default_trust()
    record = load_fixture(FIXTURE)
    expected = Subject.from_document(record)
    made.clear()
    cache.put_record(BASE, BODY, record, trust)
    first = _subjects(cache, trust)
    assert made == [f"made {REAL_NUMBER}"]  # from the record, unchecked (it passed when stored)
    second = _subjects(cache, trust)
    assert made == [f"made {REAL_NUMBER}"]  # taken back: not made again
    for found in (first, second):
        assert [(b, s) for b, s, _ in found] == [(BODY, REAL_NUMBER)]
        subject = found[0][2]
        assert isinstance(subject, Subject) and subject == expected
        assert (subject.title, subject.authors) == (expected.title, expected.authors)
        assert expected.title and expected.authors  # compared, not both empty


def test_a_kept_subject_is_not_taken_for_a_changed_or_tampered_record(
    tmp_path: Path, cache: RecordCache, made: list[str]
) -> None:
    trust = default_trust()
    cache.put_record(BASE, BODY, load_fixture(FIXTURE), trust)
    _subjects(cache, trust)
    made.clear()
    title = "DeAR: Accelerating Distributed Deep Learning"
    _edit(tmp_path / "records.sqlite3", "records", "doc", lambda t: t.replace(title, "Forged"))
    assert _subjects(cache, trust) == []  # checked in full, and refused
    assert made == [f"checked {REAL_NUMBER}"]


def test_a_kept_subject_is_not_taken_under_another_trust(
    cache: RecordCache, made: list[str]
) -> None:
    cache.put_record(BASE, BODY, load_fixture(FIXTURE), default_trust())
    _subjects(cache, default_trust())
    made.clear()
    assert _subjects(cache, Trust()) == []  # no key: its receipt fails
    assert made == [f"checked {REAL_NUMBER}"]


def test_other_bytes_of_a_good_record_make_the_subject_again(
    tmp_path: Path, cache: RecordCache, made: list[str]
) -> None:
    trust = default_trust()
    cache.put_record(BASE, BODY, load_fixture(FIXTURE), trust)
    _subjects(cache, trust)
    made.clear()
    _edit(tmp_path / "records.sqlite3", "records", "doc", lambda t: t + "\n")
    assert [s for _, _, s in _subjects(cache, trust)] == [
        Subject.from_document(load_fixture(FIXTURE))
    ]
    assert made[:2] == [f"checked {REAL_NUMBER}", f"made {REAL_NUMBER}"]
    made.clear()
    _subjects(cache, trust)
    assert made == []  # kept anew for the new bytes


@pytest.mark.parametrize(
    "damage",
    [
        lambda t: t.replace("DeAR", "Forged"),  # the row's hash no longer covers it
        lambda t: t[:-5],
        lambda t: "[]",
    ],
    ids=["edited", "cut", "empty"],
)
def test_a_damaged_kept_subject_is_made_again_from_its_record(
    tmp_path: Path, cache: RecordCache, made: list[str], damage: Any
) -> None:
    trust = default_trust()
    cache.put_record(BASE, BODY, load_fixture(FIXTURE), trust)
    expected = _subjects(cache, trust)
    made.clear()
    _edit(tmp_path / "records.sqlite3", "record_subjects", "subject", damage)
    again = _subjects(cache, trust)
    assert made == [f"made {REAL_NUMBER}"]
    assert again[0][2].title == expected[0][2].title and "Forged" not in str(again)


def test_forgetting_a_record_forgets_its_subject(tmp_path: Path, cache: RecordCache) -> None:
    trust = default_trust()
    cache.put_record(BASE, BODY, load_fixture(FIXTURE), trust)
    _subjects(cache, trust)
    cache.forget_record(BASE, BODY)
    assert _subjects(cache, trust) == []
    with sqlite3.connect(tmp_path / "records.sqlite3") as db:
        assert db.execute("SELECT count(*) FROM record_subjects").fetchone()[0] == 0
