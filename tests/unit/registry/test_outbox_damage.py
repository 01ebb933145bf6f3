"""A damaged outbox is said (one line naming the file, exit 2), never read as an empty one, and
`pith outbox recover` rebuilds it from its journal without bringing back what was dropped."""

from __future__ import annotations

import json
import os
import sqlite3
from collections.abc import Callable
from pathlib import Path

import pytest
from support.cli import RunPith, assert_one_line_error
from support.registry import TestSigner, citations, drop_untimed_mark

from pithauthor.errors import EventError, OutboxDamaged
from pithauthor.registry import journal
from pithauthor.registry.journal import COLUMNS, SAID, SCHEMA, SCHEMA_VERSION
from pithauthor.registry.outbox import Outbox
from pithauthor.registry.submit import store_in_outbox

SIDES = ("-wal", "-shm")
LOCAL = "http://127.0.0.1:9"  # never contacted: these tests end before any request


def _db(home: Path) -> Path:
    return home / "outbox" / "outbox.sqlite3"


def _random_bytes(db: Path) -> None:
    db.write_bytes(os.urandom(db.stat().st_size))


def _truncated(db: Path) -> None:
    with open(db, "r+b") as handle:
        handle.truncate(db.stat().st_size // 2)


def _folder(db: Path) -> None:
    db.unlink()
    db.mkdir()


def _tables_dropped(db: Path) -> None:
    with sqlite3.connect(db) as conn:
        conn.execute("DROP TABLE outbox")


def _emptied(db: Path) -> None:
    db.write_bytes(b"")


def _deleted(db: Path) -> None:
    db.unlink()


DAMAGE: dict[str, Callable[[Path], None]] = {
    "random bytes": _random_bytes,
    "truncated": _truncated,
    "a folder in its place": _folder,
    "tables dropped": _tables_dropped,
    "emptied": _emptied,
    "deleted, journal kept": _deleted,
}


def _fill(home: Path) -> list[str]:
    """Five rows for two registries, one of them accepted; the file checkpointed (no WAL)."""
    a, b = citations(3, TestSigner()), citations(2, TestSigner())
    store_in_outbox(a, LOCAL)
    store_in_outbox(b)
    with Outbox() as outbox:
        assert outbox.mark_accepted(a[0]["event_id"], LOCAL, {"status": "accepted"})
        outbox._conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    return sorted(e["event_id"] for e in a + b)


@pytest.mark.parametrize("damage", list(DAMAGE))
def test_a_damaged_outbox_is_one_line_exit_2_naming_the_file(
    isolated_home: Path, pith: RunPith, damage: str
) -> None:
    _fill(isolated_home)
    db = _db(isolated_home)
    DAMAGE[damage](db)
    for command in (["submit"], ["outbox", "list"], ["outbox", "drop", "--accepted"]):
        result = pith(*command)
        assert_one_line_error(result, 2)
        assert str(db) in result.stderr and "pith outbox recover" in result.stderr
        assert "0 pending" not in result.stdout + result.stderr  # never an empty outbox


@pytest.mark.parametrize("damage", list(DAMAGE))
def test_recover_rebuilds_every_event_and_keeps_the_damaged_file(
    isolated_home: Path, pith: RunPith, damage: str
) -> None:
    ids = _fill(isolated_home)
    with Outbox() as outbox:  # as if stored an hour ago
        for table in ("outbox", "ledger"):  # the working set and the accepted row
            outbox._conn.execute(f"UPDATE {table} SET stored_at='2026-11-30T09:00:00Z'")
    dates = {"2026-11-30T09:00:00Z"}
    (isolated_home / "outbox" / "outbox.journal.jsonl").unlink()  # rewritten with that date
    Outbox().close()
    db = _db(isolated_home)
    DAMAGE[damage](db)
    result = pith("outbox", "recover")
    assert result.returncode == 0, result.stderr
    assert "1 event(s) accepted as before, 0 held for moderation, 4 pending" in result.stderr
    listed = json.loads(pith("outbox", "list", "--all", "--json").stdout)
    assert sorted(r["event_id"] for r in listed) == ids
    assert {r["registry"] for r in listed} == {LOCAL, "https://pith.science"}
    states = {r["event_id"]: r["state"] for r in listed}
    assert sorted(states.values()) == ["accepted"] + ["pending"] * 4  # as they were
    assert {r["stored_at"] for r in listed} == dates  # the dates first stored are kept
    kept = [
        p
        for p in db.parent.glob("outbox.sqlite3.damaged-*")
        if not p.name.endswith(("-wal", "-shm"))
    ]
    assert len(kept) == (0 if damage == "deleted, journal kept" else 1)


def test_a_dropped_event_is_not_brought_back_by_recovery(
    isolated_home: Path, pith: RunPith
) -> None:
    ids = _fill(isolated_home)
    with Outbox() as outbox:
        (accepted,) = [e.event_id for e in outbox.entries("accepted")]
    pending = next(i for i in ids if i != accepted)
    assert pith("outbox", "drop", pending, accepted, "--yes").returncode == 0
    _random_bytes(_db(isolated_home))
    assert pith("outbox", "recover").returncode == 0
    with Outbox() as outbox:
        assert sorted(e.event_id for e in outbox.entries()) == [i for i in ids if i != pending]
        # the accepted one dropped is back in the ledger as it was left: its id, no body
        kept = outbox.get(accepted)
        assert kept is not None and kept.state == "accepted" and kept.stored is None
        assert outbox.counts() == {"pending": 3, "accepted": 1, "rejected": 0}


def test_a_torn_last_journal_line_is_skipped_and_said(isolated_home: Path, pith: RunPith) -> None:
    ids = _fill(isolated_home)
    journal = isolated_home / "outbox" / "outbox.journal.jsonl"
    with open(journal, "a", encoding="utf-8") as handle:
        handle.write('{"op":"store","registry":"http://127.0.0.1:9","ev')  # a crash mid-write
    _emptied(_db(isolated_home))
    result = pith("outbox", "recover")
    assert result.returncode == 0, result.stderr
    assert "skipped 1 journal line(s)" in result.stderr
    with Outbox() as outbox:
        assert sorted(e.event_id for e in outbox.entries()) == ids
    store_in_outbox(citations(1, TestSigner()), LOCAL)  # the journal takes new lines again
    with Outbox() as outbox:
        assert outbox.counts() == {"pending": 5, "accepted": 1, "rejected": 0}


def test_recover_refuses_a_healthy_outbox_and_a_missing_journal(
    isolated_home: Path, pith: RunPith
) -> None:
    _fill(isolated_home)
    healthy = pith("outbox", "recover")
    assert_one_line_error(healthy, 2)
    assert "healthy" in healthy.stderr
    (isolated_home / "outbox" / "outbox.journal.jsonl").unlink()
    _emptied(_db(isolated_home))
    lost = pith("outbox", "recover")
    assert_one_line_error(lost, 2)
    assert "journal" in lost.stderr and "missing" in lost.stderr


def test_an_outbox_of_a_newer_schema_is_refused_not_rewritten(isolated_home: Path) -> None:
    _fill(isolated_home)
    db = _db(isolated_home)
    with sqlite3.connect(db) as conn:
        conn.execute(f"PRAGMA user_version={SCHEMA_VERSION + 1}")
    before = db.read_bytes()
    with pytest.raises(OutboxDamaged, match="newer pithauthor"):
        Outbox()
    assert db.read_bytes() == before


def test_a_healthy_outbox_without_a_journal_gets_one_with_every_row(isolated_home: Path) -> None:
    ids = _fill(isolated_home)
    journal = isolated_home / "outbox" / "outbox.journal.jsonl"
    journal.unlink()
    Outbox().close()
    assert journal.stat().st_mode & 0o777 == 0o600
    lines = [json.loads(x) for x in journal.read_text("utf-8").splitlines()]
    assert sorted(x["event"]["event_id"] for x in lines if x["op"] == "store") == ids
    assert len([x for x in lines if x["op"] == "accepted"]) == 1  # its state too


def test_a_new_outbox_is_never_an_empty_file(isolated_home: Path) -> None:
    # the schema is written into a temp file that is then linked in: an empty outbox file is
    # always damage, so "emptied" can be told apart from "new"
    Outbox().close()
    db = _db(isolated_home)
    assert db.stat().st_size > 0
    with sqlite3.connect(db) as conn:
        assert conn.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION
    assert [p.name for p in db.parent.iterdir() if p.name.startswith(".tmp-")] == []


def _rows_deleted(db: Path, where: str = "") -> None:
    with sqlite3.connect(db) as conn:
        conn.execute(f"DELETE FROM outbox{where}")
        if not where:  # every row: the ledger's (the accepted one) too
            conn.execute("DELETE FROM ledger")


def _as_version_4(conn: sqlite3.Connection) -> None:
    """The file as pithauthor made it before the ledger (schema 4): accepted rows in the one
    table, no `said` columns, no ledger, no tally."""
    for index in ("outbox_said", "outbox_subject", "outbox_citing"):
        conn.execute(f"DROP INDEX {index}")
    for trigger in ("outbox_in", "outbox_out", "outbox_moved"):
        conn.execute(f"DROP TRIGGER {trigger}")
    conn.execute("DROP TABLE tally")
    conn.execute("DROP TABLE ledger_count")  # its triggers go with the ledger
    drop_untimed_mark(conn)
    ledger = (
        "event_id, registry, event_type, subject, body, stored_at, updated_at, attempts, answer"
    )
    conn.execute(f"INSERT INTO outbox ({ledger}, state) SELECT {ledger}, 'accepted' FROM ledger")
    conn.execute("DROP TABLE ledger")
    for column in ("signer", "key_id", "citing"):
        conn.execute(f"ALTER TABLE outbox DROP COLUMN {column}")
    conn.execute("PRAGMA user_version=4")


def _as_version_3(conn: sqlite3.Connection) -> None:
    """Version 4's file, with the table as version 3 made it: its CHECK admits no `held`."""
    _as_version_4(conn)
    old = ", ".join(c for c in COLUMNS if c not in SAID)
    conn.executescript(
        "ALTER TABLE outbox RENAME TO v4; DROP INDEX outbox_state;"
        + SCHEMA.replace(", 'held'", "")
        + f"; INSERT INTO outbox ({old}) SELECT {old} FROM v4; DROP TABLE v4;"
        " PRAGMA user_version=3;"
    )


@pytest.mark.parametrize("where", ["", " WHERE state='pending'"], ids=["all rows", "some rows"])
def test_rows_deleted_with_the_tables_intact_are_damage_not_0_pending(
    isolated_home: Path, pith: RunPith, where: str
) -> None:
    ids = _fill(isolated_home)
    db = _db(isolated_home)
    _rows_deleted(db, where)
    for command in (["submit"], ["outbox", "list"]):
        result = pith(*command)
        assert_one_line_error(result, 2)
        assert str(db) in result.stderr and "pith outbox recover" in result.stderr
        assert "missing" in result.stderr
    assert pith("outbox", "recover").returncode == 0
    with Outbox() as outbox:
        assert sorted(e.event_id for e in outbox.entries()) == ids
        assert outbox.counts() == {"pending": 4, "accepted": 1, "rejected": 0}


def test_rows_deleted_and_the_journal_deleted_too_say_the_journal_is_missing(
    isolated_home: Path, pith: RunPith
) -> None:
    _fill(isolated_home)
    db = _db(isolated_home)
    _rows_deleted(db)
    (isolated_home / "outbox" / "outbox.journal.jsonl").unlink()
    result = pith("outbox", "list")
    assert_one_line_error(result, 2)
    assert str(db) in result.stderr and "journal" in result.stderr
    assert "missing too" in result.stderr and "0 pending" not in result.stdout


def test_the_row_count_deleted_too_is_damage(isolated_home: Path) -> None:
    _fill(isolated_home)
    db = _db(isolated_home)
    with sqlite3.connect(db) as conn:
        conn.execute("DELETE FROM outbox")
        conn.execute("DROP TABLE outbox_count")
    with pytest.raises(OutboxDamaged, match="row count"):
        Outbox()


def _large(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Every outbox opened as a large one (past FULL_CHECK_BYTES), its statements recorded."""
    said: list[str] = []
    connect = journal._connect

    def traced(path: Path) -> sqlite3.Connection:
        conn = connect(path)
        conn.set_trace_callback(said.append)
        return conn

    monkeypatch.setattr(journal, "FULL_CHECK_BYTES", 0)
    monkeypatch.setattr(journal, "_connect", traced)
    return said


def _ledger_count(db: Path) -> tuple[int, int]:
    """(the ledger's kept count, its rows that keep their event, counted one by one)."""
    with sqlite3.connect(db) as conn:
        kept = conn.execute("SELECT n FROM ledger_count").fetchone()[0]
        rows = conn.execute("SELECT count(*) FROM ledger WHERE body IS NOT NULL").fetchone()[0]
    return kept, rows


def test_a_large_outbox_opens_without_reading_its_ledger_and_follows_every_change(
    isolated_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    ids = _fill(isolated_home)
    db = _db(isolated_home)
    said = _large(monkeypatch)
    with Outbox() as outbox:
        opened = list(said)
        pending = [e.event_id for e in outbox.working() if e.state == "pending"]
        steps = [
            lambda: outbox.mark_accepted(pending[0], LOCAL, None),
            lambda: outbox.mark_accepted(pending[1], LOCAL, None),
            lambda: outbox.forget([pending[0]]),  # its body dropped, its id kept
            lambda: outbox.store(citations(2, TestSigner()), LOCAL),
            lambda: outbox.drop([pending[2]]),
            lambda: outbox.forget(None),
        ]
        for step in steps:
            step()
            kept, rows = _ledger_count(db)
            assert kept == rows
            with Outbox():  # and it opens, its count against the journal's
                pass
    # the open counted the working set and took the ledger's count: no index of the ledger read
    assert opened and not [sql for sql in opened if "FROM ledger " in f"{sql} "], opened
    assert any("ledger_count" in sql for sql in opened)
    assert len(ids) == 5


@pytest.mark.parametrize(
    "tamper",
    [
        "DELETE FROM ledger",
        "UPDATE ledger SET body=NULL",
        "DELETE FROM outbox WHERE state='pending'",
    ],
)
def test_rows_deleted_by_hand_from_a_large_outbox_are_still_damage(
    isolated_home: Path, monkeypatch: pytest.MonkeyPatch, tamper: str
) -> None:
    # the ledger's count moves with every row, whoever deletes it: the rows gone are found
    _fill(isolated_home)
    with sqlite3.connect(_db(isolated_home)) as conn:
        conn.execute(tamper)
    _large(monkeypatch)
    with pytest.raises(OutboxDamaged, match="stored events are missing"):
        Outbox()


@pytest.mark.parametrize("large", [False, True], ids=["small", "large"])
@pytest.mark.parametrize(
    ("tamper", "why"),
    [
        ("UPDATE ledger_count SET n = n + 1", "count says 2|holds 6 rows where 5"),
        ("DELETE FROM ledger_count", "ledger_count\\) is empty"),
        ("DROP TABLE ledger_count", "ledger_count"),  # a large file's quick_check says it
    ],
)
def test_a_ledger_count_that_is_wrong_or_gone_is_damage(
    isolated_home: Path, monkeypatch: pytest.MonkeyPatch, large: bool, tamper: str, why: str
) -> None:
    _fill(isolated_home)
    with sqlite3.connect(_db(isolated_home)) as conn:
        conn.execute(tamper)
    if large:
        _large(monkeypatch)
    with pytest.raises(OutboxDamaged, match=why):
        Outbox()


def test_an_outbox_of_version_6_gets_its_ledger_count_once(
    isolated_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    ids = _fill(isolated_home)
    db = _db(isolated_home)
    with sqlite3.connect(db) as conn:  # as pithauthor made it before the ledger's count
        conn.execute("DROP TABLE ledger_count")
        for trigger in ("in", "out", "body"):
            conn.execute(f"DROP TRIGGER ledger_count_{trigger}")
        drop_untimed_mark(conn)
        conn.execute("PRAGMA user_version=6")
    with Outbox() as outbox:  # checked as a version-6 file (its ledger counted), then migrated
        assert sorted(e.event_id for e in outbox.entries()) == ids
    with sqlite3.connect(db) as conn:
        assert conn.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION
        conn.execute("DELETE FROM ledger")
    assert _ledger_count(db) == (0, 0)
    _large(monkeypatch)
    with pytest.raises(OutboxDamaged, match="1 of its 5 stored events are missing"):
        Outbox()


def test_a_crash_between_the_journal_and_the_commit_is_not_damage(isolated_home: Path) -> None:
    # the journal is written before the commit: a process killed in between (simulated by a
    # commit that never returns) leaves journal lines for rows the outbox never had
    ids = _fill(isolated_home)
    journal = isolated_home / "outbox" / "outbox.journal.jsonl"
    with Outbox() as outbox:
        before = journal.stat().st_size

        class Killed(BaseException):
            pass

        real = outbox._conn

        class Dying:
            def execute(self, sql: str, *args: object) -> object:
                if sql == "COMMIT":
                    raise Killed
                return real.execute(sql, *args)

            def executemany(self, sql: str, *args: object) -> object:
                return real.executemany(sql, *args)

        outbox._conn = Dying()  # type: ignore[assignment]
        with pytest.raises(Killed):
            outbox.store(citations(2, TestSigner()), LOCAL)
        outbox._conn = real
    assert journal.stat().st_size > before  # the journal holds the two uncommitted events
    with Outbox() as outbox:  # it opens, says what it holds, and stays so after more work
        assert sum(outbox.counts().values()) == 5
        outbox.store(citations(1, TestSigner()))
        # a pending one (dropping the accepted one keeps its id: the ledger)
        outbox.drop([next(i for i in ids if outbox.get(i).state == "pending")])  # type: ignore[union-attr]
    with Outbox() as outbox:
        assert sum(outbox.counts().values()) == 5


def test_an_outbox_of_version_2_is_counted_once_then_guarded(isolated_home: Path) -> None:
    ids = _fill(isolated_home)
    db = _db(isolated_home)
    with sqlite3.connect(db) as conn:  # as pithauthor made it before outbox_count
        _as_version_4(conn)
        conn.execute("DROP TABLE outbox_count")
        conn.execute("PRAGMA user_version=2")
    with Outbox() as outbox:
        assert sorted(e.event_id for e in outbox.entries()) == ids
    with sqlite3.connect(db) as conn:
        assert conn.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION
        for table in ("outbox", "ledger"):  # wherever it is now
            conn.execute(f"DELETE FROM {table} WHERE event_id=?", (ids[0],))
    with pytest.raises(OutboxDamaged, match="1 of its 5 stored events are missing"):
        Outbox()


def test_a_truncated_journal_is_written_again_from_the_rows(
    isolated_home: Path, pith: RunPith
) -> None:
    ids = _fill(isolated_home)
    journal = isolated_home / "outbox" / "outbox.journal.jsonl"
    with open(journal, "r+b") as handle:
        handle.truncate(journal.stat().st_size // 2)
    Outbox().close()  # healthy rows: the journal is rebuilt from them
    _random_bytes(_db(isolated_home))
    assert pith("outbox", "recover").returncode == 0
    with Outbox() as outbox:
        assert sorted(e.event_id for e in outbox.entries()) == ids


def test_rows_deleted_and_the_journal_cut_short_say_both(
    isolated_home: Path, pith: RunPith
) -> None:
    _fill(isolated_home)
    db = _db(isolated_home)
    _rows_deleted(db)
    journal = isolated_home / "outbox" / "outbox.journal.jsonl"
    size = journal.stat().st_size
    with open(journal, "r+b") as handle:
        handle.truncate(size // 2)
    result = pith("outbox", "list")
    assert_one_line_error(result, 2)
    assert str(db) in result.stderr and "pith outbox recover" in result.stderr
    assert (
        f"5 of its 5 stored events are missing, and its journal is cut short ({size // 2} of"
        in (result.stderr)
    )


def test_an_outbox_of_version_4_moves_its_accepted_rows_to_the_ledger_once(
    isolated_home: Path,
) -> None:
    ids = _fill(isolated_home)
    db = _db(isolated_home)
    with sqlite3.connect(db) as conn:
        _as_version_4(conn)
        assert conn.execute("SELECT count(*) FROM outbox").fetchone()[0] == 5
    with Outbox() as outbox:
        assert sorted(e.event_id for e in outbox.entries()) == ids
        assert outbox.counts() == {"pending": 4, "accepted": 1, "rejected": 0}
        assert len(outbox.working()) == 4  # the accepted row left the working set
        (accepted,) = outbox.entries("accepted")
        # its labels were read from the event once, by the migration
        said, ids_only = outbox.said(
            accepted.event["signer"]["public_key_fingerprint"], accepted.event_type,
            accepted.subject,
        )  # fmt: skip
        assert ids_only == []
        # the three citations that key signed of that paper (one accepted, two pending)
        assert accepted.event_id in [e["event_id"] for e in said] and len(said) == 3
    with sqlite3.connect(db) as conn:
        assert conn.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION
        conn.execute("DELETE FROM ledger")
    with pytest.raises(OutboxDamaged, match="1 of its 5 stored events are missing"):
        Outbox()


HOSTILE_LINES = {
    "200,000 deep": "[" * 200_000 + "]" * 200_000,
    "200,000 deep inside an event": '{"op":"store","registry":"http://127.0.0.1:9",'
    '"stored_at":"2026-11-30T09:00:00Z","event":' + '{"a":' * 200_000 + "1" + "}" * 200_001,
    "huge (2 MiB)": '{"op":"store","pad":"' + "x" * (2 << 20) + '"}',
    "torn": '{"op":"store","registry":"http://127.0.0.1:9","ev',
    "not an event": '{"op":"store","registry":"http://127.0.0.1:9","stored_at":"x","event":[1]}',
    "not an object": '"store"',
    "not UTF-8": '{"op":"\udcff"}',
    "an event that does not verify": "FORGED",
}


def test_recover_skips_and_counts_every_hostile_line_and_rebuilds_the_rest(
    isolated_home: Path, pith: RunPith
) -> None:
    """A journal with hostile lines between its good ones: each is one skipped
    line, every good line around them is rebuilt, and no line stops the recovery."""
    ids = _fill(isolated_home)
    journal = isolated_home / "outbox" / "outbox.journal.jsonl"
    good = journal.read_bytes().splitlines(keepends=True)
    event = json.loads(good[0])
    event["event"]["payload"] = {"forged": True}  # signed no more
    forged = json.dumps({**event, "registry": "http://127.0.0.1:8"}).encode() + b"\n"
    bad = [
        forged if text == "FORGED" else text.encode("utf-8", "surrogateescape") + b"\n"
        for text in HOSTILE_LINES.values()
    ]
    mixed = [good[0], *bad[:4], *good[1:3], *bad[4:], *good[3:]]
    journal.write_bytes(b"".join(mixed))
    _emptied(_db(isolated_home))
    result = pith("outbox", "recover")
    assert result.returncode == 0, result.stderr
    assert f"skipped {len(HOSTILE_LINES)} journal line(s)" in result.stderr
    assert "bug" not in result.stderr and "Traceback" not in result.stderr
    with Outbox() as outbox:
        assert sorted(e.event_id for e in outbox.entries()) == ids


def test_an_outbox_of_version_3_takes_held_rows_after_its_table_is_rebuilt(
    isolated_home: Path,
) -> None:
    """Version 3's CHECK admitted three states: the table is rebuilt once (rows, states and
    answers kept, the journal's count still matching), and then a row can be held."""
    _fill(isolated_home)  # one row accepted, four pending
    with Outbox() as outbox:
        held = outbox.entries("pending", LOCAL)[0].event_id
    db = _db(isolated_home)
    with sqlite3.connect(db) as conn:  # the table as version 3 made it
        _as_version_3(conn)
        with pytest.raises(sqlite3.IntegrityError):
            conn.execute("UPDATE outbox SET state='held' WHERE event_id=?", (held,))
    with Outbox() as outbox:
        assert outbox.counts() == {"pending": 4, "accepted": 1, "rejected": 0}
        assert outbox.mark_held(held, LOCAL, {"status": "held_for_moderation"})
        assert outbox.counts() == {"pending": 3, "accepted": 1, "rejected": 0, "held": 1}
    with sqlite3.connect(db) as conn:
        assert conn.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION


def test_a_recovered_outbox_keeps_held_rows_held(isolated_home: Path, pith: RunPith) -> None:
    """A held row is never sent again, also after a recovery: the journal says it was held."""
    _fill(isolated_home)
    with Outbox() as outbox:
        held = outbox.entries("pending", LOCAL)[0].event_id
        assert outbox.mark_held(held, LOCAL, {"status": "held_for_moderation"})
    _random_bytes(_db(isolated_home))
    recovered = pith("outbox", "recover")
    assert recovered.returncode == 0, recovered.stderr
    assert "1 event(s) accepted as before, 1 held for moderation, 3 pending" in recovered.stderr
    with Outbox() as outbox:
        assert {e.event_id: e.state for e in outbox.entries()}[held] == "held"


def test_a_damaged_event_body_is_journalled_as_it_is_and_read_as_one_error(
    isolated_home: Path,
) -> None:
    # the outbox opens (one damaged row must not lock the author out of the others); the
    # journal written for it keeps the row's text as it is, which recovery skips as unreadable;
    # the row itself, when read, is the outbox's one-line EventError (`parse_stored`)
    good, bad = citations(2, TestSigner())
    store_in_outbox([good, bad], LOCAL)
    with sqlite3.connect(_db(isolated_home)) as conn:
        conn.execute(
            "UPDATE outbox SET body = '{\"a\": NaN' WHERE event_id = ?", (bad["event_id"],)
        )
    journal = isolated_home / "outbox" / "outbox.journal.jsonl"
    journal.unlink()
    with Outbox() as outbox:
        stored = outbox.get(bad["event_id"])
        assert stored is not None
        with pytest.raises(EventError, match=r"^the outbox holds a damaged entry \(NaN is not"):
            stored.event  # noqa: B018 - the property is what is tested
    damaged = [x for x in journal.read_text("utf-8").splitlines() if x.endswith('{"a": NaN}')]
    assert len(damaged) == 1 and damaged[0].startswith('{"op":"store"')
