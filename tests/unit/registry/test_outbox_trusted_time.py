"""The outbox keeps proofs of trusted time beside its events (table `trusted_time`, since schema 6):
read back as sidecars, an upgraded proof never replaced by a pending one, the events still
needing a proof found by the database, and a version-5 outbox given the table once."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from support.registry import citations, drop_untimed_mark

from pithauthor.registry.client import registry_binding
from pithauthor.registry.journal import SCHEMA_VERSION
from pithauthor.registry.outbox import Outbox
from pithauthor.registry.submit import store_in_outbox


def test_proofs_are_kept_per_source_and_read_back_as_the_events_sidecar(
    isolated_home: Path,
) -> None:
    a, b = citations(2)
    store_in_outbox([a, b])
    with Outbox() as outbox:
        assert outbox.sidecar(a["event_id"]) is None
        outbox.store_time(a["event_id"], "rfc3161", "https://tsa.test/", b"token")
        outbox.store_time(a["event_id"], "ots", "https://cal.test", b"done", complete=True)
        outbox.store_time(a["event_id"], "ots", "https://cal.test", b"pending")  # never back
        sidecar = outbox.sidecar(a["event_id"])
        assert sidecar is not None
        assert sidecar["rfc3161"] == [{"authority": "https://tsa.test/", "token": "dG9rZW4="}]
        assert sidecar["opentimestamps"] == [
            {"calendar": "https://cal.test", "proof": "ZG9uZQ==", "complete": True}
        ]
        assert list(outbox.sidecars()) == [a["event_id"]]


def test_the_events_still_needing_time_are_those_without_a_token_or_a_complete_proof(
    isolated_home: Path,
) -> None:
    a, b, c = citations(3)
    store_in_outbox([a, b, c])
    with Outbox() as outbox:
        outbox.store_time(a["event_id"], "rfc3161", "https://tsa.test/", b"t")
        outbox.store_time(b["event_id"], "ots", "https://cal.test", b"p")  # pending only
        outbox.store_time(c["event_id"], "ots", "https://cal.test", b"d", complete=True)
        need_token = {e["event_id"] for e in outbox.needing_time(tokens=True, proofs=False)}
        assert need_token == {b["event_id"], c["event_id"]}
        need_proof = {e["event_id"] for e in outbox.needing_time(tokens=False, proofs=True)}
        assert need_proof == {a["event_id"], b["event_id"]}
        assert outbox.needing_time(tokens=False, proofs=False) == []
        assert len(outbox.needing_time(tokens=True, proofs=True, limit=1)) == 1


def test_the_events_needing_time_come_newest_first_once_each_from_both_tables(
    isolated_home: Path,
) -> None:
    events = citations(5)
    ids = [e["event_id"] for e in events]
    other = "http://127.0.0.1:10"  # never contacted
    with Outbox() as outbox:
        for i, event in enumerate(events):  # one a second apart: the newest is the last
            outbox.store([event], stored_at=f"2026-12-01T10:00:0{i}Z")
        outbox.store([events[1]], other, stored_at="2026-12-01T10:00:09Z")  # newest, twice
        outbox.mark_accepted(ids[2], registry_binding(None), None)  # in the ledger
        outbox.mark_accepted(ids[3], registry_binding(None), None)
        outbox.forget([ids[3]])  # its body dropped: nothing to stamp
        found = [e["event_id"] for e in outbox.needing_time(tokens=True, proofs=True)]
        assert found == [ids[1], ids[4], ids[2], ids[0]]
        assert found[:2] == [
            e["event_id"] for e in outbox.needing_time(tokens=True, proofs=False, limit=2)
        ]
        assert all(e == events[ids.index(e["event_id"])] for e in outbox.needing_time(
            tokens=True, proofs=True))  # fmt: skip


def test_a_version_5_outbox_gets_the_trusted_time_table_once(isolated_home: Path) -> None:
    events = citations(2)
    store_in_outbox(events)
    db = isolated_home / "outbox" / "outbox.sqlite3"
    with sqlite3.connect(db) as conn:
        conn.execute("DROP TABLE trusted_time")
        conn.execute("DROP TABLE ledger_count")  # and what version 7 added
        for trigger in ("in", "out", "body"):
            conn.execute(f"DROP TRIGGER ledger_count_{trigger}")
        drop_untimed_mark(conn)  # and what version 8 added
        conn.execute("PRAGMA user_version=5")
    with Outbox() as outbox:
        assert len(outbox.working()) == 2
        outbox.store_time(events[0]["event_id"], "rfc3161", "https://tsa.test/", b"t")
    with sqlite3.connect(db) as conn:
        assert conn.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION == 8
        assert conn.execute("SELECT count(*) FROM trusted_time").fetchone()[0] == 1


def test_a_recovered_outbox_keeps_its_proofs_of_trusted_time(isolated_home: Path) -> None:
    """A token fetched again would be dated later: the journal keeps proofs, and `recover`
    brings them back (an upgraded proof as upgraded, a hostile `time` line skipped)."""
    from pithauthor.registry.recovery import recover

    a, b = citations(2)
    store_in_outbox([a, b])
    with Outbox() as outbox:
        outbox.store_time(a["event_id"], "rfc3161", "https://tsa.test/", b"token")
        outbox.store_time(a["event_id"], "ots", "https://cal.test", b"pending")
        outbox.store_time(a["event_id"], "ots", "https://cal.test", b"done", complete=True)
        before = outbox.sidecars()
    journal = isolated_home / "outbox" / "outbox.journal.jsonl"
    with open(journal, "a", encoding="utf-8") as handle:
        handle.write('{"op":"time","event_id":"sha256:nope","kind":"ots","source":"x",'
                     '"proof":"AA==","complete":true}\n')  # fmt: skip
    db = isolated_home / "outbox" / "outbox.sqlite3"
    db.write_bytes(b"\0" * db.stat().st_size)  # damaged
    done = recover()
    assert done.events == 2 and done.skipped == 1
    with Outbox() as outbox:
        assert outbox.sidecars() == before
        assert before[a["event_id"]]["opentimestamps"][0]["complete"] is True


def test_a_journal_written_again_from_the_outbox_holds_its_proofs(isolated_home: Path) -> None:
    from pithauthor.registry.recovery import recover

    (event,) = citations(1)
    store_in_outbox([event])
    with Outbox() as outbox:
        outbox.store_time(event["event_id"], "rfc3161", "https://tsa.test/", b"token")
        before = outbox.sidecars()
    journal = isolated_home / "outbox" / "outbox.journal.jsonl"
    journal.unlink()
    Outbox().close()  # the journal is written again from the rows
    assert '"op":"time"' in journal.read_text("utf-8")
    db = isolated_home / "outbox" / "outbox.sqlite3"
    db.unlink()
    recover()
    with Outbox() as outbox:
        assert outbox.sidecars() == before
