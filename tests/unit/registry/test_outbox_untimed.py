"""The outbox's mark of the accepted events still lacking a proof of time (table `untimed`,
schema 8): whatever happens to the events and their proofs, the look for such events answers
what the tables themselves answer (the anti-join over every stored event it replaced, kept here
as the specification); its queries search, never scan, the history (the ledger and the proofs);
a version-7 file is marked once on open."""

from __future__ import annotations

import random
import sqlite3
from pathlib import Path
from typing import Any

import pytest
from support.registry import citations, drop_untimed_mark

from pithauthor.registry import journal
from pithauthor.registry.client import registry_binding
from pithauthor.registry.journal import SCHEMA_VERSION
from pithauthor.registry.outbox import Outbox
from pithauthor.registry.recovery import recover

# What the tables say lacks time, asked of them directly: every stored event (working set, or
# ledger with its body) newest first, with no token (?1) or no complete proof (?2).
_FROM_THE_TABLES = """
SELECT event_id FROM (SELECT event_id, stored_at FROM outbox UNION ALL
    SELECT event_id, stored_at FROM ledger WHERE body IS NOT NULL) e
WHERE (?1 AND NOT EXISTS (SELECT 1 FROM trusted_time t WHERE t.event_id = e.event_id
        AND t.kind = 'rfc3161'))
   OR (?2 AND NOT EXISTS (SELECT 1 FROM trusted_time t WHERE t.event_id = e.event_id
        AND t.kind = 'ots' AND t.complete = 1))
GROUP BY event_id ORDER BY max(stored_at) DESC, event_id
"""


def _db(home: Path) -> Path:
    return home / "outbox" / "outbox.sqlite3"


def _from_the_tables(db: Path, tokens: bool, proofs: bool) -> list[str]:
    with sqlite3.connect(db) as conn:
        return [r[0] for r in conn.execute(_FROM_THE_TABLES, (tokens, proofs))]


def _assert_mark_agrees(home: Path) -> None:
    db = _db(home)
    with Outbox() as outbox:
        for tokens, proofs in ((True, False), (False, True), (True, True)):
            want = _from_the_tables(db, tokens, proofs)
            got = outbox.needing_time(tokens=tokens, proofs=proofs, limit=10_000)
            assert [e["event_id"] for e in got] == want, (tokens, proofs)
            short = outbox.needing_time(tokens=tokens, proofs=proofs, limit=3)
            assert [e["event_id"] for e in short] == want[:3]
        assert outbox.untimed() == len(_from_the_tables(db, True, False))


def _step(outbox: Outbox, rng: random.Random, events: list[dict[str, Any]], t: int) -> None:
    """One thing an author's outbox lives through, chosen by `rng`."""
    home = registry_binding(None)
    other = "http://127.0.0.1:10"  # never contacted
    event = rng.choice(events)
    eid = event["event_id"]
    op = rng.randrange(9)
    if op == 0:
        outbox.store([event], stored_at=f"2026-12-01T10:{t // 60:02d}:{t % 60:02d}Z")
    elif op == 1:
        outbox.store([event], other, stored_at=f"2026-12-01T11:{t // 60:02d}:{t % 60:02d}Z")
    elif op == 2:
        outbox.store_time(eid, "rfc3161", rng.choice(("https://a.test/", "https://b.test/")), b"t")
    elif op == 3:
        outbox.store_time(eid, "ots", "https://cal.test", b"pending")
    elif op == 4:
        outbox.store_time(eid, "ots", "https://cal.test", b"done", complete=True)
    elif op == 5:
        outbox.mark_accepted(eid, rng.choice((home, other)), None)  # into the ledger
    elif op == 6:
        outbox.forget([eid])  # an accepted event's body dropped
    elif op == 7:
        outbox.drop([eid], rng.choice((home, other, None)))
    else:
        outbox.retry([eid])


@pytest.mark.parametrize("seed", range(4))
def test_the_mark_answers_what_the_tables_answer_through_stores_proofs_moves_and_drops(
    isolated_home: Path, seed: int
) -> None:
    rng = random.Random(seed)
    events = citations(12)
    for t in range(160):
        with Outbox() as outbox:
            _step(outbox, rng, events, t)
        if t % 20 == 19:
            _assert_mark_agrees(isolated_home)
    # and when the file is rebuilt from its journal (each proof replayed after its event)
    _db(isolated_home).write_bytes(b"\0" * 4096)
    recover()
    _assert_mark_agrees(isolated_home)
    with Outbox() as outbox:
        assert outbox.needing_time(tokens=True, proofs=True), "the sequence left nothing lacking"


def test_a_hand_edit_of_the_tables_moves_the_mark_as_the_outbox_would(
    isolated_home: Path,
) -> None:
    a, b = citations(2)
    with Outbox() as outbox:
        outbox.store([a, b])
        outbox.store_time(a["event_id"], "rfc3161", "https://a.test/", b"t")
    with sqlite3.connect(_db(isolated_home)) as conn:
        conn.execute("DELETE FROM trusted_time")  # a's token gone: it lacks one again
        conn.execute("UPDATE outbox SET stored_at = '2030-01-01T00:00:00Z' WHERE event_id = ?",
                     (a["event_id"],))  # fmt: skip
    _assert_mark_agrees(isolated_home)


def test_looking_for_events_lacking_time_searches_and_never_scans_the_history(
    isolated_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    events = citations(6)
    with Outbox() as outbox:
        outbox.store(events)
        for event in events[:5]:  # the history, in the ledger; one left in the working set
            outbox.mark_accepted(event["event_id"], registry_binding(None), None)
    said: list[str] = []
    connect = journal._connect

    def traced(path: Path) -> sqlite3.Connection:
        conn = connect(path)
        conn.set_trace_callback(said.append)
        return conn

    monkeypatch.setattr(journal, "_connect", traced)
    with Outbox() as outbox:
        opened = len(said)
        for tokens, proofs in ((True, False), (False, True), (True, True)):
            assert len(outbox.needing_time(tokens=tokens, proofs=proofs)) == 6
        assert outbox.untimed() == 6
        asked = [s for s in said[opened:] if s.lstrip().upper().startswith("SELECT")]
        assert len(asked) == 7
    with sqlite3.connect(_db(isolated_home)) as conn:  # the statements as run, values bound
        plans = [str(r[3]) for sql in asked for r in conn.execute("EXPLAIN QUERY PLAN " + sql)]
    # the working set (table `outbox`, what is being sent) may be read whole; the history never
    scans = [p for p in plans if p.startswith("SCAN") and ("ledger" in p or "trusted_time" in p)]
    assert not scans, scans
    assert not [p for p in plans if p.startswith("SCAN untimed") and "USING INDEX" not in p]
    assert any("untimed_token" in p for p in plans) and any("untimed_proof" in p for p in plans)


def test_a_version_7_outbox_is_marked_once_from_what_it_holds(isolated_home: Path) -> None:
    a, b, c = citations(3)
    with Outbox() as outbox:
        outbox.store([a, b, c])
        outbox.store_time(a["event_id"], "rfc3161", "https://a.test/", b"t")
        outbox.store_time(a["event_id"], "ots", "https://cal.test", b"d", complete=True)
        outbox.store_time(b["event_id"], "ots", "https://cal.test", b"p")
        for event in (a, b, c):  # accepted: the ledger's events are the ones marked
            outbox.mark_accepted(event["event_id"], registry_binding(None), None)
    db = _db(isolated_home)
    with sqlite3.connect(db) as conn:  # as pithauthor made it before the mark
        drop_untimed_mark(conn)
        conn.execute("PRAGMA user_version=7")
    _assert_mark_agrees(isolated_home)
    with sqlite3.connect(db) as conn:
        assert conn.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION == 8
        marked = dict(conn.execute("SELECT event_id, token + 2 * proof FROM untimed"))
    assert marked == {b["event_id"]: 3, c["event_id"]: 3}  # a has both; b a pending proof
    with Outbox() as outbox:  # and the triggers came with it
        outbox.store_time(c["event_id"], "rfc3161", "https://a.test/", b"t")
        assert [e["event_id"] for e in outbox.needing_time(tokens=True, proofs=False)] == [
            b["event_id"]
        ]


def test_an_outbox_of_this_version_without_its_mark_is_damage(isolated_home: Path) -> None:
    from pithauthor.errors import OutboxDamaged

    with Outbox() as outbox:
        outbox.store(citations(1))
    with sqlite3.connect(_db(isolated_home)) as conn:
        drop_untimed_mark(conn)
    with pytest.raises(OutboxDamaged, match="untimed"):
        Outbox()
