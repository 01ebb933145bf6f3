"""The record cache's binding of a verified record to its bytes (`RecordCache.checked_record`):
a record that passed `check_record` under a trust is read back unchecked only while
its stored text has the same SHA-256 and the trust is the same; a changed or tampered record,
or another trust, is checked in full again (and refused when it fails)."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from support.paths import load_fixture
from support.registry import REAL_NUMBER

from pithauthor.protocol.checks.record import checked_record
from pithauthor.protocol.verdict import Trust
from pithauthor.registry.client import RecordCache
from pithauthor.registry.credentials import default_trust

BASE = "http://127.0.0.1:8787"
BODY = REAL_NUMBER.rsplit(":", 1)[1]


@pytest.fixture
def cache(tmp_path: Path) -> Iterator[RecordCache]:
    c = RecordCache(tmp_path / "records.sqlite3")
    yield c
    c.close()


@pytest.fixture
def checks(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The pith numbers of the records `check_record` ran on through the cache (a spy that
    calls the real check)."""
    seen: list[str] = []

    def counting(doc: Any, trust: Trust) -> Any:
        seen.append(str(doc.get("pith_number")))
        return checked_record(doc, trust)

    monkeypatch.setattr("pithauthor.registry.client.checked_record", counting)
    return seen


def _rewrite(path: Path, text: str) -> None:
    """Replace the stored text of the record, as a damaged or edited cache file would hold it."""
    with sqlite3.connect(path) as db:
        db.execute("UPDATE records SET doc = ? WHERE body = ?", (text, BODY))


def _stored(path: Path) -> str:
    with sqlite3.connect(path) as db:
        return str(db.execute("SELECT doc FROM records WHERE body = ?", (BODY,)).fetchone()[0])


def test_a_record_stored_as_verified_is_read_back_without_a_second_check(
    cache: RecordCache, checks: list[str]
) -> None:
    trust = default_trust()
    cache.put_record(BASE, BODY, load_fixture("record-2302.12445v2.json"), trust)
    for _ in range(3):
        record = cache.checked_record(BASE, BODY, trust)
        assert record is not None and record["pith_number"] == REAL_NUMBER
    assert checks == []


def test_a_record_stored_without_a_trust_is_checked_once_then_bound(
    cache: RecordCache, checks: list[str]
) -> None:
    trust = default_trust()
    cache.put_record(BASE, BODY, load_fixture("record-2302.12445v2.json"))
    assert cache.checked_record(BASE, BODY, trust) is not None
    assert cache.checked_record(BASE, BODY, trust) is not None
    assert checks == [REAL_NUMBER]


def test_a_tampered_cached_record_is_checked_again_and_refused(
    tmp_path: Path, cache: RecordCache, checks: list[str]
) -> None:
    trust = default_trust()
    cache.put_record(BASE, BODY, load_fixture("record-2302.12445v2.json"), trust)
    title = "DeAR: Accelerating Distributed Deep Learning with Fine-Grained All-Reduce Pipelining"
    text = _stored(tmp_path / "records.sqlite3")
    assert title in text
    _rewrite(tmp_path / "records.sqlite3", text.replace(title, "A title nobody signed"))
    assert cache.checked_record(BASE, BODY, trust) is None
    assert checks == [REAL_NUMBER]
    # and a refused record stays refused: it is not bound
    assert cache.checked_record(BASE, BODY, trust) is None
    assert checks == [REAL_NUMBER, REAL_NUMBER]


def test_changed_bytes_of_a_good_record_are_checked_in_full_again(
    tmp_path: Path, cache: RecordCache, checks: list[str]
) -> None:
    trust = default_trust()
    cache.put_record(BASE, BODY, load_fixture("record-2302.12445v2.json"), trust)
    text = _stored(tmp_path / "records.sqlite3")
    _rewrite(tmp_path / "records.sqlite3", text + "\n")  # the same document, other bytes
    assert cache.checked_record(BASE, BODY, trust) is not None
    assert cache.checked_record(BASE, BODY, trust) is not None
    assert checks == [REAL_NUMBER]  # checked once, then bound to the new bytes


def test_a_damaged_cached_record_is_a_miss(tmp_path: Path, cache: RecordCache) -> None:
    trust = default_trust()
    cache.put_record(BASE, BODY, load_fixture("record-2302.12445v2.json"), trust)
    _rewrite(tmp_path / "records.sqlite3", _stored(tmp_path / "records.sqlite3")[:-20])
    assert cache.checked_record(BASE, BODY, trust) is None


def test_a_record_verified_under_one_trust_is_checked_again_under_another(
    cache: RecordCache, checks: list[str]
) -> None:
    cache.put_record(BASE, BODY, load_fixture("record-2302.12445v2.json"), default_trust())
    assert cache.checked_record(BASE, BODY, Trust()) is None  # no key: its receipt fails
    assert checks == [REAL_NUMBER]


def test_the_same_keys_read_from_another_source_keep_the_binding_another_origin_does_not(
    cache: RecordCache, checks: list[str]
) -> None:
    # `--trust-manifest FILE` and `--trust-local-registry` trust the same key from two sources:
    # the source is only named in a verdict, and a stored record is read back without one
    trust = default_trust()
    cache.put_record(BASE, BODY, load_fixture("record-2302.12445v2.json"), trust)
    elsewhere = Trust({k: key._replace(source="a saved manifest") for k, key in trust.keys.items()})
    assert elsewhere != trust
    assert cache.checked_record(BASE, BODY, elsewhere) is not None
    assert checks == []
    # a key's origin decides where its records may link: another one is checked again
    moved = Trust({k: key._replace(base_url="http://127.0.0.1:9") for k, key in trust.keys.items()})
    cache.checked_record(BASE, BODY, moved)
    assert checks == [REAL_NUMBER]


def test_storing_a_record_again_unbinds_the_old_check(
    tmp_path: Path, cache: RecordCache, checks: list[str]
) -> None:
    trust = default_trust()
    good = load_fixture("record-2302.12445v2.json")
    cache.put_record(BASE, BODY, good, trust)
    bad = load_fixture("record-2302.12445v2.json")
    bad["paper"]["title"] = "A title the canonical record does not hash to"
    cache.put_record(BASE, BODY, bad)  # stored without the caller's word that it passed
    with sqlite3.connect(tmp_path / "records.sqlite3") as db:
        assert db.execute("SELECT count(*) FROM record_checks").fetchone()[0] == 0
    assert cache.checked_record(BASE, BODY, trust) is None
    assert checks == [REAL_NUMBER]


def test_forgetting_a_record_forgets_its_check(
    tmp_path: Path, cache: RecordCache, checks: list[str]
) -> None:
    trust = default_trust()
    cache.put_record(BASE, BODY, load_fixture("record-2302.12445v2.json"), trust)
    cache.forget_record(BASE, BODY)
    assert cache.checked_record(BASE, BODY, trust) is None
    with sqlite3.connect(tmp_path / "records.sqlite3") as db:
        assert db.execute("SELECT count(*) FROM record_checks").fetchone()[0] == 0


def test_pith_cite_refuses_a_tampered_cached_record_and_fetches_it_again(
    tmp_path: Path, isolated_home: Path, cite_registry: dict[str, Any], cite_author: str, pith: Any
) -> None:
    """End to end: a warm cache whose record was edited on disk (a title the receipt does not
    cover) is checked again, refused, and replaced by the registry's genuine record; the edit
    is shown nowhere."""
    from support.cite import run_cite

    bib = tmp_path / "one.bib"
    bib.write_text("@misc{b, title={B}, eprint={2101.99903}, archivePrefix={arXiv}}\n", "utf-8")
    first = run_cite(pith, cite_registry, str(bib), "--out", str(tmp_path / "a.jsonl"))
    assert first.returncode == 0, first.stderr
    assert "Example paper 2101.99903" in first.stderr
    db = isolated_home / "cache" / "records.sqlite3"
    with sqlite3.connect(db) as con:
        rows = con.execute("SELECT registry, body, doc FROM records").fetchall()
        assert any("Example paper 2101.99903" in doc for _, _, doc in rows)
        for registry, body, doc in rows:
            forged = doc.replace("Example paper", "Forged paper")
            con.execute(
                "UPDATE records SET doc = ? WHERE registry = ? AND body = ?",
                (forged, registry, body),
            )
    second = run_cite(pith, cite_registry, str(bib), "--out", str(tmp_path / "b.jsonl"))
    assert second.returncode == 0, second.stderr
    assert "Forged" not in second.stderr + second.stdout
    assert "Example paper 2101.99903" in second.stderr
    # (used unchecked, the edited record shows "(no title)": its title no longer hashes to
    # its canonical record; and it stays in the cache)
    with sqlite3.connect(db) as con:
        assert all("Forged" not in doc for (doc,) in con.execute("SELECT doc FROM records"))
