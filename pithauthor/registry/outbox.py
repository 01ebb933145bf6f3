"""The outbox: every signed event, stored durably before any network I/O (SQLite, WAL).

One row per (event_id, registry): an event is bound, when it is stored, to the registry it is
for (`registry_binding`: the `--registry` given, else the default), and only that registry's
answer changes the row. The same event stored for two registries is two rows. A row is in one
of four states:

    pending   stored, not yet accepted by its registry
    accepted  its registry answered 200/201 (or, once held, its merged state lists the event);
              the answer is kept
    rejected  its registry answered 4xx about the event itself; the reason is kept
    held      its registry took it and holds it for moderation (202, or a status naming a hold:
              docs/protocol.md); it is never sent again, and becomes accepted when the paper's
              merged state lists it (`pith submit` looks)

Several `pith submit` processes may share one outbox: a process sends a row only after it has
*claimed* it, one atomic `UPDATE ... WHERE state='pending' AND (no lease OR lease expired)` that
writes its owner (`host:pid:random`) and an expiry. Recording an answer ends the lease; so does
`release`. A lease that expired, or whose owner is a dead process on this machine, can be taken
over, so a killed `pith submit` loses nothing.

An accepted row leaves the working set: it moves, with the answer, into the ledger
(`pithauthor.registry.journal`), where commands find it through indexes (what a key said of a
paper, what was signed about or by a paper, an event by its id) and count it without reading
it. What every command costs then stays flat however long the author's history grows.
`pith outbox drop --accepted` drops the events of the ledger, never their ids and labels.

The file is `<PITH_HOME>/outbox/outbox.sqlite3` (folder 0700, file 0600). Storing events is a
fully synced transaction (synchronous=FULL); state changes are synced lazily (WAL, NORMAL): a
process crash loses nothing, and a power cut can at worst turn an `accepted` back into `pending`,
which only re-sends an event the registry already has (it answers 200, never a second copy).

The outbox checks itself when it is opened (SQLite's `quick_check`, its schema version in
`PRAGMA user_version`, its tables, and its rows against the journal's count): a damaged file is
`OutboxDamaged` (exit 2, one line naming the file), never an empty outbox in place of lost rows.
Every stored row (and every drop, and every proof of trusted time kept) is also appended to a
journal beside it, `outbox.journal.jsonl` (0600), from which `recover` rebuilds a damaged
outbox.

The journal's count. The table `outbox_count` holds, in the same transaction as every store and
drop, the number of rows the journal says are live (stored minus dropped) and the journal's size
after those lines. Opening compares it with `count(*)` (one index scan, no journal read): rows
deleted with the tables intact (`DELETE FROM outbox`) are damage. The ledger's rows that keep
their event are counted by the database itself (`ledger_count`, moved by triggers with every row,
whoever writes the file): a large file's open reads that count instead of an index of every
accepted event (`journal.LEDGER_COUNT_STATEMENTS`). A process killed between its
journal append and its commit leaves journal lines past the recorded size (or, after later
writes, lines the count never took in): the count only moves when the rows do, so that is no
damage, and `recover` would bring those events back as pending (they were signed and shown).
A journal shorter than the recorded size (truncated) is written again from the rows.

Schema versions: 0 is an outbox of pithauthor before rows named their registry (migrated once,
on open: its pending rows are bound to the default registry); 2 had no `outbox_count` (added on
open, counting the rows it has); 3 had no state `held` (its table is rebuilt on open: SQLite
cannot widen a CHECK in place); 4 had no ledger (its accepted rows move there on open, each
event read once); 5 had no `trusted_time` (the table is added on open, empty); 6 had no
`ledger_count` (added on open, counting the ledger once); 7 had no `untimed`, the mark of the
events still lacking a proof of time (added on open, marking the events once); 8 is this one.
"""

from __future__ import annotations

import os
import sqlite3
import threading
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from functools import cached_property, lru_cache
from pathlib import Path
from typing import Any, Literal, TypedDict

from pithauthor.errors import EventError
from pithauthor.fs import pith_home
from pithauthor.protocol.canonical_json import canonical, dump_json, parse_stored
from pithauthor.protocol.checks.event import checked_author_event, vouched_text
from pithauthor.protocol.documents import AuthorEvent
from pithauthor.protocol.timestamps import Sidecar, build_sidecar
from pithauthor.protocol.utc import utc_now
from pithauthor.registry.client import registry_binding
from pithauthor.registry.journal import (
    LEDGER_COLUMNS,
    OUTBOX_DIR,
    append_journal,
    count_rows,
    damaged,
    default_path,
    export_journal_if_missing,
    forget_line,
    journal_path,
    migrate,
    open_checked,
    said_columns,
    stored_lines,
    time_line,
)

State = Literal["pending", "accepted", "rejected", "held"]


STATES: tuple[State, ...] = ("pending", "accepted", "rejected", "held")


_END_LEASE = "lease_owner=NULL, lease_expires=NULL"
# event ids asked per query (twice each: working set and ledger), under SQLite's oldest limit
# of 999 bound parameters
_IN_CHUNK = 400


# Where SQLite keeps a store's statement journals: in memory. Each INSERT into the working set
# fires the tally's trigger, so SQLite journals the pages that statement changes (to undo it
# alone, within the transaction), which past 64 KiB spill to a temporary file; from then on
# every insert wrote its pages there, one 4 KiB pwrite each (about 330 for 300 events, and
# 5,000 events stored in 290 ms of CPU against 200 ms with the journals in memory). Each
# journal is emptied when its statement ends, so memory does not grow with the events (the
# same peak for 5,000); and it is never what makes the store durable: the transaction
# commits whole (WAL, synchronous=FULL) or rolls back whole. Only for the store's
# transaction: another query's large sort may still spill to a file.
_STORE_TEMP = "MEMORY"


# one entry's columns, from either table (`_entry` reads them in this order)
_FIELDS = (
    "event_id, event_type, subject, body, {state}, stored_at, updated_at, attempts, "
    "registry, answer, {reason}"
)
_WORKING = f"SELECT {_FIELDS.format(state='state', reason='reason')} FROM outbox"
_LEDGER = f"SELECT {_FIELDS.format(state=repr('accepted'), reason='NULL')} FROM ledger"


Note = Callable[[str], None]


#: The kinds of proof of time the outbox keeps (table `trusted_time`).
TimeKind = Literal["rfc3161", "ots"]


class OutboxRow(TypedDict):
    """One entry without its event (`pith outbox list --json`)."""

    event_id: str
    event_type: str
    subject: str
    state: State
    stored_at: str
    updated_at: str
    attempts: int
    registry: str
    reason: str | None


@dataclass(frozen=True)
class OutboxEntry:
    """One stored event, the registry it is for, and where it stands there; `event` is read
    again and checked in full (its signature too) when first used: what is sent or signed
    over is checked where it is used. `stored` is None for an accepted event whose body was
    dropped (`pith outbox drop --accepted`): its id and labels are kept."""

    event_id: str
    event_type: str
    subject: str
    stored: str | None = field(repr=False)  # the event's canonical text, as stored
    state: State
    stored_at: str
    updated_at: str
    attempts: int
    registry: str
    answer: object  # what the registry answered, as it answered it
    reason: str | None

    @cached_property
    def event(self) -> AuthorEvent:
        return _stored_event(None if self.stored is None else _column(str(self.stored)))

    def summary(self) -> OutboxRow:
        """The entry without the event body (for `pith outbox list --json`)."""
        return {
            "event_id": self.event_id,
            "event_type": self.event_type,
            "subject": self.subject,
            "state": self.state,
            "stored_at": self.stored_at,
            "updated_at": self.updated_at,
            "attempts": self.attempts,
            "registry": self.registry,
            "reason": self.reason,
        }


def new_lease_owner() -> str:
    """A lease owner name for this process: `host:pid:random`. The host and pid let another
    process on this machine see that the owner died (`_owner_is_dead`); the random part keeps
    two submissions of one long-lived process (two `submit_pending` calls) apart."""
    # os.urandom(4).hex() is what secrets.token_hex(4) returns (`secrets` loads random, base64
    # and hmac: a module every command that opens the outbox paid for)
    return f"{_host()}:{os.getpid()}:{os.urandom(4).hex()}"


def _host() -> str:
    """This machine's host name: the node name of uname(2), which is what gethostname(2)
    returns on the POSIX systems pith runs on (`socket`, with selectors and array, was about
    2 ms of every command that opens the outbox, for this one call)."""
    return os.uname().nodename


def _owner_is_dead(owner: str) -> bool:
    """True when `owner` names a process on this machine that no longer runs. An owner on
    another host (an outbox on a shared folder) is never judged dead: only its lease's expiry
    frees its rows, since its pid means nothing here."""
    parts = owner.rsplit(":", 2)
    if len(parts) != 3 or parts[0] != _host() or not parts[1].isdigit():
        return False
    try:
        os.kill(int(parts[1]), 0)
    except ProcessLookupError:
        return True
    except OSError:  # it exists, owned by someone else
        return False
    return False


class Outbox:
    """The outbox database; safe to share between threads and between processes.

    `note` hears the one line a migration of an older outbox says."""

    def __init__(self, path: Path | None = None, *, note: Note | None = None) -> None:
        self.path = path or default_path()
        self.journal = journal_path(self.path)
        self._lock = threading.Lock()
        self._conn = open_checked(self.path, self.journal)
        try:
            migrated = migrate(self._conn, self.path)
            export_journal_if_missing(self._conn, self.journal)
        except BaseException:
            self._conn.close()
            raise
        if migrated and note is not None:
            n, where = migrated
            note(
                f"outbox: {n} pending event(s) stored before events named their registry "
                f"are now bound to {where}"
            )

    @classmethod
    def existing(cls) -> Outbox | None:
        """The outbox of this PITH_HOME, opened (and checked) as `Outbox()` opens it, when its
        folder was ever made; None, and nothing made, when not: there is then no outbox file
        and no journal, and `Outbox()` would only create an empty outbox to read nothing from
        (for a command that only reads it: a first `pith status` made one, about 20 ms of CPU
        for a new home)."""
        folder = pith_home() / OUTBOX_DIR  # the home checked, as `private_dir` checks it
        if not folder.exists() and not folder.is_symlink():
            return None
        return cls()

    def close(self) -> None:
        with self._lock:
            self._conn.close()

    def __enter__(self) -> Outbox:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def store(
        self,
        events: Iterable[Mapping[str, Any]],
        registry: str | None = None,
        *,
        stored_at: str | None = None,
    ) -> tuple[int, int]:
        """Store events for `registry` (default: the default registry) atomically, all or
        none, each also appended to the journal; returns (new, already there for it: in the
        working set or the ledger). `stored_at` (default: now) is for `recover`, which keeps
        the date first stored. An event this process just signed (`vouched_text`) is stored as
        signed; any other is checked in full first."""
        rows = [_row(e) for e in events]
        where = registry_binding(registry)
        now = stored_at or utc_now()
        fresh: list[str] = []
        with self._lock:
            self._conn.execute("PRAGMA synchronous=FULL")  # the events themselves: on disk
            self._conn.execute(f"PRAGMA temp_store={_STORE_TEMP}")  # see there
            self._conn.execute("BEGIN IMMEDIATE")
            try:
                # which are there already (working set, or ledger with its body), asked in a
                # few queries inside this transaction; the rest inserted in one executemany
                # (one INSERT each cost about 30 us of statement overhead: 9 ms for 300)
                there = self._stored_ids([row[0] for row in rows], where)
                new_rows = []
                stored_line = stored_lines(where, now)
                for eid, etype, subject, body, said in rows:
                    if eid in there:
                        continue
                    there.add(eid)  # the same event twice in `events`: stored once
                    new_rows.append((eid, where, etype, subject, body, now, now, *said))
                    fresh.append(stored_line(body))
                self._conn.executemany(
                    "INSERT INTO outbox (event_id, registry, event_type, subject, body, "
                    "state, stored_at, updated_at, signer, key_id, citing) "
                    "VALUES (?,?,?,?,?,'pending',?,?,?,?,?)",
                    new_rows,
                )
                # the journal before the commit: a row the outbox has is always in it
                count_rows(self._conn, len(fresh), append_journal(self.journal, list(fresh)))
                self._conn.execute("COMMIT")
            except BaseException:
                self._conn.execute("ROLLBACK")
                raise
            finally:
                self._conn.execute("PRAGMA synchronous=NORMAL")
                self._conn.execute("PRAGMA temp_store=DEFAULT")
        return len(fresh), len(rows) - len(fresh)

    def _stored_ids(self, event_ids: list[str], where: str) -> set[str]:
        """Of `event_ids`, those stored for the registry `where`: in the working set, or in
        the ledger with their body (a row whose body was dropped takes the event again). The
        caller holds the lock, inside its transaction."""
        found: set[str] = set()
        wanted = list(dict.fromkeys(event_ids))
        for start in range(0, len(wanted), _IN_CHUNK):
            chunk = wanted[start : start + _IN_CHUNK]
            marks = ",".join("?" * len(chunk))
            rows = self._conn.execute(
                f"SELECT event_id FROM outbox WHERE registry=? AND event_id IN ({marks}) "
                f"UNION SELECT event_id FROM ledger WHERE registry=? AND body IS NOT NULL "
                f"AND event_id IN ({marks})",
                (where, *chunk, where, *chunk),
            ).fetchall()
            found.update(r[0] for r in rows)
        return found

    def entries(self, state: State | None = None, registry: str | None = None) -> list[OutboxEntry]:
        """The rows (in one `state`, for one `registry` when given), oldest first. Without a
        state: the working set and the whole ledger (`working` is the cheap question)."""
        if state == "accepted":
            return self._select(_LEDGER, registry=registry)
        if state is not None:
            return self._select(_WORKING, state=state, registry=registry)
        return self._select(_WORKING, _LEDGER, registry=registry)

    def working(self, registry: str | None = None) -> list[OutboxEntry]:
        """The working set: the rows still pending or rejected (`pith outbox list`), oldest
        first; the accepted ones are in the ledger (`entries("accepted")`, `counts`)."""
        return self._select(_WORKING, registry=registry)

    def registries(self, state: State | None = None) -> list[str]:
        """The registries rows are bound to (those with a row in `state`), sorted."""
        tables = ("ledger",) if state == "accepted" else ("outbox", "ledger")
        if state not in (None, "accepted"):
            tables = ("outbox",)
        clause, args = _where(state=state if state != "accepted" else None)
        union = " UNION ".join(f"SELECT DISTINCT registry FROM {t}{clause}" for t in tables)
        with self._lock:
            rows = self._conn.execute(f"{union} ORDER BY registry", args * len(tables))
            return [r[0] for r in rows.fetchall()]

    def get(self, event_id: str, registry: str | None = None) -> OutboxEntry | None:
        """The row of `event_id` for `registry`; without one, its first row for any."""
        found = self._select(_WORKING, _LEDGER, event_id=event_id, registry=registry)
        return found[0] if found else None

    def counts(self, registry: str | None = None) -> dict[str, int]:
        """Rows per state (for one registry), counted by the database (no row is read):
        pending, accepted and rejected always, `held` only when there are some (most
        registries never hold anything).

        The working set is counted on its index; the accepted rows are summed from the tally
        the database keeps (`journal.TALLY_STATEMENTS`, a row per paper and role): counting
        the ledger itself scanned an index of every accepted event (13-18 ms at 100,000, twice
        per `pith submit`), a cost that grew with the author's history."""
        clause, args = _where(registry=registry)
        accepted = (" AND" if clause else " WHERE") + " state='accepted'"
        with self._lock:
            found = dict(
                self._conn.execute(
                    f"SELECT state, count(*) FROM outbox{clause} GROUP BY state", args
                ).fetchall()
            )
            # the tally's accepted rows are the ledger's and any the working set still has
            found["accepted"] = self._conn.execute(
                f"SELECT coalesce(sum(n), 0) FROM tally{clause}{accepted}", args
            ).fetchone()[0]
        return {s: int(found.get(s, 0)) for s in STATES if s != "held" or found.get(s)}

    # --- what a command can repeat or correct, found through indexes ---------------------------

    def said(
        self, fingerprint: str, event_type: str, subject: str, registry: str | None = None
    ) -> tuple[list[AuthorEvent], list[str]]:
        """What the key `fingerprint` signed of `event_type` about `subject` (for `registry`,
        default all), working set and ledger: the events, each checked in full as it is read,
        and the ids of those whose bodies were dropped (`forget`)."""
        rows = self.said_texts(fingerprint, event_type, subject, registry)
        events = [stored_event(body) for _, body in rows if body is not None]
        return events, [eid for eid, body in rows if body is None]

    def said_texts(
        self, fingerprint: str, event_type: str, subject: str, registry: str | None = None
    ) -> list[tuple[str, str | None]]:
        """The rows `said` reads, not read yet: (event id, stored text, or None for a body
        dropped), in the order `said` gives them. Unchecked: what a caller takes from a text
        as a statement it reads with `stored_event` (checked in full); the texts only tell
        it which of them a decision can depend on (`Statements.standing`)."""
        clause = " WHERE signer=? AND event_type=? AND subject=?"
        args: tuple[str, ...] = (fingerprint, event_type, subject)
        if registry is not None:
            clause, args = clause + " AND registry=?", (*args, _bound(registry))
        sql = (
            f"SELECT event_id, body FROM outbox{clause} "
            f"UNION ALL SELECT event_id, body FROM ledger{clause}"
        )
        with self._lock:
            return [(str(eid), body) for eid, body in self._read(sql, args * 2)]

    def holds(
        self, fingerprint: str, event_type: str, subject: str, registry: str | None = None
    ) -> bool:
        """True when `said` would find anything, an id kept without its body too (one index
        look-up, nothing read)."""
        clause = " WHERE signer=? AND event_type=? AND subject=?"
        args: tuple[str, ...] = (fingerprint, event_type, subject)
        if registry is not None:
            clause, args = clause + " AND registry=?", (*args, _bound(registry))
        sql = (
            f"SELECT EXISTS (SELECT 1 FROM outbox{clause}) OR EXISTS (SELECT 1 FROM ledger{clause})"
        )
        with self._lock:
            return bool(self._read(sql, args * 2)[0][0])

    def holding(
        self,
        fingerprint: str,
        event_type: str,
        subjects: Iterable[str],
        registry: str | None = None,
    ) -> set[str]:
        """Of `subjects`, those `holds` would say yes to: a batch of look-ups in a few
        statements (a bibliography's papers at once), in proportion to the batch only."""
        wanted, found = list(dict.fromkeys(subjects)), set[str]()
        for i in range(0, len(wanted), 500):  # SQLite's parameters per statement stay few
            chunk = wanted[i : i + 500]
            clause = (
                f" WHERE signer=? AND event_type=? AND subject IN ({','.join('?' * len(chunk))})"
            )
            args: tuple[str, ...] = (fingerprint, event_type, *chunk)
            if registry is not None:
                clause, args = clause + " AND registry=?", (*args, _bound(registry))
            sql = f"SELECT subject FROM outbox{clause} UNION SELECT subject FROM ledger{clause}"
            with self._lock:
                found.update(r[0] for r in self._read(sql, args * 2))
        return found

    def starting(self, prefix: str, registry: str | None = None) -> list[OutboxEntry]:
        """The rows whose event id starts with `prefix` (a range of the primary key)."""
        # `sha256:` ids are lower-case hex: every id with the prefix sorts in [prefix, prefix~)
        cond = "event_id >= ? AND event_id < ?"
        args: tuple[str, ...] = (prefix, prefix + "~")
        if registry is not None:
            cond, args = cond + " AND registry=?", (*args, registry_binding(registry))
        sql = f"{_WORKING} WHERE {cond} UNION ALL {_LEDGER} WHERE {cond}"
        with self._lock:
            return [_entry(r) for r in self._read(sql, args * 2)]

    def about(self, number: str) -> list[OutboxEntry]:
        """The rows of events about the paper `number`, or citations made by it (its page)."""
        parts = [
            f"{table} WHERE {column}=?"
            for table in (_WORKING, _LEDGER)
            for column in ("subject", "citing")
        ]
        with self._lock:
            # no row is in two parts: a citation never cites its own citing paper
            rows = self._read(" UNION ALL ".join(parts) + " ORDER BY 6, 1, 9", (number,) * 4)
        return [_entry(r) for r in rows]

    def tally(self) -> list[tuple[str, str | None, str, str, str, int, str]]:
        """(subject, key id, registry, event type, state, rows, newest change) for every
        group of rows, as the database keeps them (`journal.TALLY_STATEMENTS`: `pith
        papers` reads a row per paper and role, never the events)."""
        with self._lock:
            rows = self._read("SELECT * FROM tally WHERE n > 0 ORDER BY last, subject", ())
        return [(s, k or None, r, t, state, n, last) for s, k, r, t, state, n, last in rows]

    # --- leases and answers --------------------------------------------------------------------

    def claim(self, event_id: str, owner: str, seconds: float, *, registry: str) -> bool:
        """Take the lease on a pending row for `seconds`; False if it is not pending or
        another live owner holds it.

        Why one conditional UPDATE: SQLite runs it atomically, so of two processes claiming
        the same row at once exactly one sees `rowcount == 1` and sends the event: an event is
        POSTed by one process, never by two (the Idempotency-Key would make a second POST
        harmless, but it would still count as a second attempt). The owner's own lease may be
        taken again (`lease_owner=?`): a pass that waits for others re-claims what it holds.
        Wall-clock time (not monotonic): leases are compared across processes."""
        now = time.time()
        registry = registry_binding(registry)
        with self._lock:
            cur = self._conn.execute(
                "UPDATE outbox SET lease_owner=?, lease_expires=? WHERE event_id=? AND "
                "registry=? AND state='pending' AND "
                "(lease_owner IS NULL OR lease_owner=? OR lease_expires<?)",
                (owner, now + seconds, event_id, registry, owner, now),
            )
            if cur.rowcount == 1:
                return True
            row = self._conn.execute(
                "SELECT lease_owner FROM outbox WHERE event_id=? AND registry=? AND "
                "state='pending'",
                (event_id, registry),
            ).fetchone()
            if row is None or row[0] is None or not _owner_is_dead(row[0]):
                return False
            # a live lease, but its owner died (a killed `pith submit`): waiting out the lease
            # would keep the event for up to LEASE_SECONDS; take over, unless someone just did
            # (the UPDATE names the dead owner, so only one taker wins)
            cur = self._conn.execute(
                "UPDATE outbox SET lease_owner=?, lease_expires=? WHERE event_id=? AND "
                "registry=? AND state='pending' AND lease_owner=?",
                (owner, now + seconds, event_id, registry, row[0]),
            )
            return cur.rowcount == 1

    def release(self, event_id: str, owner: str, *, registry: str) -> None:
        """End `owner`'s lease on the row (no-op if it holds none): a pass that could not get
        an answer hands the row back at once, so that another process need not wait out the
        lease to send it."""
        self._update(
            f"UPDATE outbox SET {_END_LEASE} WHERE event_id=? AND registry=? AND lease_owner=?",
            (event_id, registry_binding(registry), owner),
        )

    def leased_elsewhere(self, owner: str, registry: str | None = None) -> list[str]:
        """Pending events (for `registry`) another owner holds a live lease on."""
        where, args = _where(state="pending", registry=registry)
        with self._lock:
            rows = self._conn.execute(
                f"SELECT event_id FROM outbox{where} AND lease_owner IS NOT NULL "
                "AND lease_owner<>? AND lease_expires>=? ORDER BY event_id",
                (*args, owner, time.time()),
            ).fetchall()
        return [r[0] for r in rows]

    def attempt(self, event_id: str, registry: str) -> None:
        self._update(
            "UPDATE outbox SET attempts = attempts + 1 WHERE event_id=? AND registry=?",
            (event_id, registry_binding(registry)),
        )

    def mark_accepted(
        self, event_id: str, registry: str, answer: Any, *, attempted: bool = False
    ) -> bool:
        """Record `registry`'s acceptance of the row bound to it (`attempted`: and count the
        attempt, in the same transaction): the row moves out of the working set into the
        ledger. A row for another registry is never touched: returns False when there is no
        pending (or held) row of `event_id` for `registry`.

        The journal hears of it too, not synced (like the database's state changes): a
        recovery then keeps it accepted, and at worst, after a power cut, sends it again."""
        registry = registry_binding(registry)
        kept = [c for c in LEDGER_COLUMNS if c not in ("answer", "updated_at", "attempts")]
        moved = ", ".join(kept)
        with self._lock:
            self._conn.execute("BEGIN IMMEDIATE")
            try:
                # a ledger row whose body was dropped (the same event sent again) gets it back;
                # a row held for moderation is accepted once the registry's state lists it
                changed = self._conn.execute(
                    f"INSERT INTO ledger ({moved}, answer, updated_at, attempts) "
                    f"SELECT {moved}, ?, ?, attempts + ? FROM outbox WHERE event_id=? "
                    "AND registry=? AND state IN ('pending', 'held') ON CONFLICT(event_id, "
                    "registry) DO UPDATE SET body=excluded.body, answer=excluded.answer, "
                    "updated_at=excluded.updated_at, attempts=excluded.attempts",
                    (dump_json(answer), utc_now(), int(attempted), event_id, registry),
                ).rowcount
                self._conn.execute(
                    "DELETE FROM outbox WHERE event_id=? AND registry=? "
                    "AND state IN ('pending', 'held')",
                    (event_id, registry),
                )
                self._conn.execute("COMMIT")
            except BaseException:
                self._conn.execute("ROLLBACK")
                raise
        if changed:
            line: dict[str, object] = {"op": "accepted", "event_id": event_id, "registry": registry}
            append_journal(self.journal, [line], durable=False)
        return changed > 0

    def mark_held(
        self, event_id: str, registry: str, answer: Any, *, attempted: bool = False
    ) -> bool:
        """Record that `registry` holds the pending row bound to it for moderation (as
        `mark_accepted`): it is never sent again. Journalled like an acceptance, so that a
        recovery does not send it again either."""
        registry = registry_binding(registry)
        changed = self._changed(
            f"UPDATE outbox SET state='held', answer=?, reason=NULL, {_END_LEASE}, "
            "updated_at=?, attempts = attempts + ? WHERE event_id=? AND registry=? "
            "AND state='pending'",
            (dump_json(answer), utc_now(), int(attempted), event_id, registry),
        )
        if changed:
            line: dict[str, object] = {"op": "held", "event_id": event_id, "registry": registry}
            append_journal(self.journal, [line], durable=False)
        return changed

    def mark_rejected(
        self, event_id: str, registry: str, reason: str, answer: Any, *, attempted: bool = False
    ) -> bool:
        """Record `registry`'s refusal of the row bound to it (as `mark_accepted`). Not
        journalled: a recovery brings the row back as pending, and the registry refuses it
        again, so nothing but one more attempt is lost."""
        registry = registry_binding(registry)
        return self._changed(
            "UPDATE outbox SET state='rejected', answer=?, reason=?, updated_at=?, "
            f"{_END_LEASE}, attempts = attempts + ? WHERE event_id=? AND registry=? "
            "AND state='pending'",
            (dump_json(answer), reason, utc_now(), int(attempted), event_id, registry),
        )

    def retry(self, event_ids: Iterable[str] | None = None, registry: str | None = None) -> int:
        """Rejected rows back to pending (all of them, or those named; for one registry)."""
        now = utc_now()
        ids: list[str | None] = list(event_ids) if event_ids is not None else [None]
        n = 0
        with self._lock:
            for eid in ids:
                where, args = _where(state="rejected", event_id=eid, registry=registry)
                n += self._conn.execute(
                    f"UPDATE outbox SET state='pending', reason=NULL, updated_at=?{where}",
                    (now, *args),
                ).rowcount
        return n

    def drop(self, event_ids: Iterable[str], registry: str | None = None) -> int:
        """Delete the named events' rows (for one registry, or all); returns how many. An
        accepted one keeps its id and labels in the ledger (`forget`)."""
        ids = list(event_ids)
        n = self._delete([(eid, None) for eid in ids], registry)
        return n + self.forget(ids, registry)

    def drop_state(self, state: State, registry: str | None = None) -> int:
        """Delete every row in `state` (for one registry, or all); returns how many. The
        accepted ones keep their ids and labels in the ledger (`forget`)."""
        if state == "accepted":
            return self.forget(None, registry)
        return self._delete([(None, state)], registry)

    def forget(self, event_ids: Iterable[str] | None, registry: str | None = None) -> int:
        """Drop the events of accepted rows (those named, or all; for one registry, or all),
        keeping their ids and labels (the ledger `pith papers` counts, and the ids `pith
        withdraw` and `--replace` name); returns how many. Journalled first, as a drop is."""
        ids: list[str | None] = list(event_ids) if event_ids is not None else [None]
        columns = ", ".join(LEDGER_COLUMNS)
        n = 0
        with self._lock:
            self._conn.execute("BEGIN IMMEDIATE")
            try:
                lines: list[dict[str, object]] = []
                for eid in ids:
                    clause, args = _where(event_id=eid, registry=registry)
                    clause += (" AND" if clause else " WHERE") + " body IS NOT NULL"
                    rows = self._conn.execute(f"SELECT {columns} FROM ledger{clause}", args)
                    lines += [forget_line(dict(zip(LEDGER_COLUMNS, r, strict=True))) for r in rows]
                    n += self._conn.execute(
                        f"UPDATE ledger SET body=NULL, answer=NULL{clause}", args
                    ).rowcount
                count_rows(self._conn, -n, append_journal(self.journal, list(lines)))
                self._conn.execute("COMMIT")
            except BaseException:
                self._conn.execute("ROLLBACK")
                raise
        return n

    def dropping(
        self, event_ids: Iterable[str], states: Iterable[str], registry: str | None = None
    ) -> dict[str, int]:
        """How many rows in each state `drop(event_ids)` and `drop_state` of each of `states`
        would touch (for one registry, or all): counted, nothing changed."""
        ids, wanted = list(dict.fromkeys(event_ids)), set(states)
        found = {s: n for s, n in self.counts(registry).items() if s in wanted}
        for eid in ids:
            for entry in self._select(_WORKING, _LEDGER, event_id=eid, registry=registry):
                if entry.state not in wanted and (entry.state != "accepted" or entry.stored):
                    found[entry.state] = found.get(entry.state, 0) + 1
        if "accepted" in found:  # only bodies are dropped there: those already gone are not
            clause, args = _where(registry=registry)
            clause += (" AND" if clause else " WHERE") + " body IS NULL"
            with self._lock:
                gone = self._read(f"SELECT count(*) FROM ledger{clause}", args)[0][0]
            found["accepted"] -= int(gone)
        return {s: n for s, n in found.items() if n}

    def restore_ids(self, rows: Iterable[Mapping[str, Any]]) -> int:
        """Put back ledger rows kept without their events (`forget` lines of the journal,
        for `recover`); each one's journal line is written again. Returns how many."""
        wanted = [c for c in LEDGER_COLUMNS if c not in ("body", "answer", "attempts")]
        rows = [r for r in rows if all(isinstance(r.get(c), str) for c in wanted[:6])]
        with self._lock:
            self._conn.execute("BEGIN IMMEDIATE")
            try:
                for row in rows:
                    self._conn.execute(
                        f"INSERT OR IGNORE INTO ledger ({', '.join(wanted)}) "
                        f"VALUES ({', '.join('?' * len(wanted))})",
                        tuple(row.get(c) for c in wanted),
                    )
                count_rows(
                    self._conn, 0, append_journal(self.journal, [forget_line(r) for r in rows])
                )
                self._conn.execute("COMMIT")
            except BaseException:
                self._conn.execute("ROLLBACK")
                raise
        return len(rows)

    def _delete(self, which: list[tuple[str | None, State | None]], registry: str | None) -> int:
        """Delete rows of the working set, journalling each first (so a recovery never brings
        one back)."""
        n = 0
        with self._lock:
            self._conn.execute("BEGIN IMMEDIATE")
            try:
                gone: list[tuple[str, str]] = []
                for eid, state in which:
                    where, args = _where(state=state, event_id=eid, registry=registry)
                    gone += self._conn.execute(
                        f"SELECT event_id, registry FROM outbox{where}", args
                    ).fetchall()
                    n += self._conn.execute(f"DELETE FROM outbox{where}", args).rowcount
                lines: list[dict[str, object]] = [
                    {"op": "drop", "event_id": e, "registry": r} for e, r in gone
                ]
                count_rows(self._conn, -n, append_journal(self.journal, list(lines)))
                self._conn.execute("COMMIT")
            except BaseException:
                self._conn.execute("ROLLBACK")
                raise
        return n

    # --- trusted time (docs/protocol.md "Trusted time") -------------------------------------

    def store_time(
        self, event_id: str, kind: TimeKind, source: str, proof: bytes, *, complete: bool = False
    ) -> None:
        """Keep a proof of `event_id`'s time from `source` (a token: `rfc3161`; an
        OpenTimestamps proof: `ots`), replacing that source's earlier one unless the earlier
        one is complete and this one is not (an upgrade never goes back to pending).

        Journalled (`op: time`), so that `recover` brings the proof back: a token fetched
        again would be dated later, and a retired key's claim binds only by an earlier one."""
        with self._lock:
            changed = self._conn.execute(
                "INSERT INTO trusted_time (event_id, kind, source, proof, complete, updated_at) "
                "VALUES (?,?,?,?,?,?) ON CONFLICT(event_id, kind, source) DO UPDATE SET "
                "proof=excluded.proof, complete=excluded.complete, "
                "updated_at=excluded.updated_at WHERE excluded.complete >= complete",
                (event_id, kind, source, proof, int(complete), utc_now()),
            ).rowcount
        if changed:
            line = time_line(event_id, kind, source, proof, complete)
            append_journal(self.journal, [line], durable=False)

    def sidecar(self, event_id: str) -> Sidecar | None:
        """The proofs kept of `event_id`'s time as its sidecar; None when there are none."""
        return self.sidecars([event_id]).get(event_id)

    def sidecars(self, event_ids: Iterable[str] | None = None) -> dict[str, Sidecar]:
        """The sidecars of `event_ids` (of every event with a proof, when None), by id."""
        ids = None if event_ids is None else list(dict.fromkeys(event_ids))
        sql = "SELECT event_id, kind, source, proof, complete FROM trusted_time"
        rows: list[Any] = []
        if ids is None:
            rows = self._read(sql, ())
        else:
            for start in range(0, len(ids), 500):  # SQLite's bound-variable limit
                chunk = ids[start : start + 500]
                where = f" WHERE event_id IN ({','.join('?' * len(chunk))})"
                rows += self._read(sql + where, tuple(chunk))
        tokens: dict[str, list[tuple[str, bytes]]] = {}
        proofs: dict[str, list[tuple[str, bytes, bool]]] = {}
        for eid, kind, source, proof, complete in rows:
            if kind == "rfc3161":
                tokens.setdefault(eid, []).append((source, bytes(proof)))
            else:
                proofs.setdefault(eid, []).append((source, bytes(proof), bool(complete)))
        return {
            eid: build_sidecar(eid, tokens.get(eid, ()), proofs.get(eid, ()))
            for eid in sorted({*tokens, *proofs})
        }

    def untimed(self) -> int:
        """How many stored events (their body kept) have no time-stamp token (`pith doctor`),
        counted by the database: the working set's asked, the ledger's from its mark
        (journal.UNTIMED_STATEMENTS)."""
        sql = (
            "SELECT count(*) FROM (SELECT event_id FROM outbox o WHERE NOT EXISTS (SELECT 1 "
            "FROM trusted_time t WHERE t.event_id = o.event_id AND t.kind = 'rfc3161') "
            "UNION SELECT event_id FROM untimed WHERE token = 1)"
        )
        return int(self._read(sql, ())[0][0])

    def needing_time(self, *, tokens: bool, proofs: bool, limit: int = 200) -> list[AuthorEvent]:
        """Stored events (newest first, at most `limit`) that have no token yet (`tokens`), or
        no OpenTimestamps proof or only pending ones (`proofs`): what `pith submit` and
        `pith timestamp` fetch. Events whose body was dropped are skipped.

        The working set (small: what is being sent) is asked directly; the ledger through the
        database's mark of its events lacking either (journal.UNTIMED_STATEMENTS), newest first
        through an index of each lack: the cost follows the working set and `limit`, not the
        history (the ledger asked directly was an anti-join over every accepted event, 0.22 s
        of CPU at 100,000, on every `pith submit`). The newest `limit` of each source are
        enough: an event among the newest `limit` overall is among the newest `limit` of the
        table holding its newest row."""
        lacks = {
            "token": "NOT EXISTS (SELECT 1 FROM trusted_time t WHERE t.event_id = o.event_id "
            "AND t.kind = 'rfc3161')",
            "proof": "NOT EXISTS (SELECT 1 FROM trusted_time t WHERE t.event_id = o.event_id "
            "AND t.kind = 'ots' AND t.complete = 1)",
        }
        wants = [w for w, asked in (("token", tokens), ("proof", proofs)) if asked]
        if not wants:
            return []
        working = (
            "SELECT * FROM (SELECT event_id, max(stored_at) AS at FROM outbox o WHERE "
            f"{' OR '.join(lacks[w] for w in wants)} GROUP BY event_id "
            "ORDER BY at DESC, event_id LIMIT ?)"
        )
        # each lack of the ledger's mark newest first through its own index (stopping at
        # `limit`); an event lacking both is one row of the mark
        marked = [
            f"SELECT * FROM (SELECT event_id, stored_at FROM untimed WHERE {w} = 1 "
            "ORDER BY stored_at DESC, event_id LIMIT ?)"
            for w in wants
        ]
        sql = (
            f"SELECT event_id, max(at) AS newest FROM ({' UNION ALL '.join([working, *marked])}) "
            "GROUP BY event_id ORDER BY newest DESC, event_id LIMIT ?"
        )
        ids = [eid for eid, _ in self._read(sql, (limit, *(limit for _ in wants), limit))]
        bodies: dict[str, str] = {}
        for start in range(0, len(ids), 500):  # SQLite's bound-variable limit
            chunk = ids[start : start + 500]
            among = f"event_id IN ({','.join('?' * len(chunk))})"
            rows = self._read(
                f"SELECT event_id, body FROM outbox WHERE {among} UNION ALL "
                f"SELECT event_id, body FROM ledger WHERE body IS NOT NULL AND {among}",
                (*chunk, *chunk),
            )
            bodies.update((eid, str(body)) for eid, body in rows)
        # an event whose body another process dropped meanwhile is skipped, as a dropped one is
        return [_stored_event(_column(bodies[eid])) for eid in ids if eid in bodies]

    def _select(
        self,
        *tables: str,
        state: str | None = None,
        event_id: str | None = None,
        registry: str | None = None,
    ) -> list[OutboxEntry]:
        """The entries of `tables` (`_WORKING`, `_LEDGER`) meeting the conditions, oldest
        first."""
        clause, args = _where(state=state, event_id=event_id, registry=registry)
        sql = " UNION ALL ".join(f"{t}{clause}" for t in tables)
        with self._lock:
            rows = self._read(f"{sql} ORDER BY 6, 1, 9", args * len(tables))
        return [_entry(r) for r in rows]

    def _read(self, sql: str, args: tuple[Any, ...]) -> list[Any]:
        """Rows of a query (under the lock): a page of the ledger that a large outbox's open
        did not check (journal.FULL_CHECK_BYTES) and that cannot be read is damage."""
        try:
            return self._conn.execute(sql, args).fetchall()
        except sqlite3.DatabaseError as exc:
            raise damaged(self.path, str(exc)) from None

    def _update(self, sql: str, args: tuple[Any, ...]) -> None:
        self._changed(sql, args)

    def _changed(self, sql: str, args: tuple[Any, ...]) -> bool:
        with self._lock:
            return self._conn.execute(sql, args).rowcount > 0


@lru_cache(maxsize=64)
def _bound(registry: str) -> str:
    """`registry_binding` of a registry given (a URL: no default to read), worked out once: a
    bibliography asks the outbox about hundreds of papers for one registry."""
    return registry_binding(registry)


def _where(
    *, state: str | None = None, event_id: str | None = None, registry: str | None = None
) -> tuple[str, tuple[str, ...]]:
    """` WHERE a=? AND b=?` for the conditions given (an empty string for none)."""
    conds = [(c, v) for c, v in (("state", state), ("event_id", event_id)) if v is not None]
    if registry is not None:
        conds.append(("registry", registry_binding(registry)))
    if not conds:
        return "", ()
    return " WHERE " + " AND ".join(f"{c}=?" for c, _ in conds), tuple(v for _, v in conds)


# --- rows -------------------------------------------------------------------------------------


def _row(event: object) -> tuple[str, str, str, str, tuple[str | None, str | None, str | None]]:
    """(id, type, subject, canonical text, `said` columns) of an event to store: one this
    process just signed (`vouched_text`: its text and the proof from one serialisation) as
    it is, any other checked in full first."""
    made = vouched_text(event)
    if made is not None:
        checked, text = made
    else:
        report, full = checked_author_event(event)
        if full is None:
            names = ", ".join(c.name for c in report.failed)
            eid = event.get("event_id", "?") if isinstance(event, Mapping) else "?"
            raise EventError(f"event {eid} does not verify ({names}); nothing was stored")
        # canonical bytes, not the text given: every copy sent of one event_id is one string
        checked, text = full, canonical(full).decode("utf-8")
    return (
        checked["event_id"],
        checked["event_type"],
        checked["subject_pith_number"],
        text,
        said_columns(checked),
    )


def _entry(row: tuple[Any, ...]) -> OutboxEntry:
    """An entry from a row of `_WORKING` or `_LEDGER` (its event is parsed when first used)."""
    eid, etype, subject, body, state, stored_at, updated_at, attempts, where, answer, why = row
    return OutboxEntry(
        event_id=eid,
        event_type=etype,
        subject=subject,
        stored=body,
        state=state,
        stored_at=stored_at,
        updated_at=updated_at,
        attempts=attempts,
        registry=where,
        answer=_column(answer) if answer else None,
        reason=why,
    )


def stored_event(text: str) -> AuthorEvent:
    """A stored text (`Outbox.said_texts`) read as `said` reads it: by the one strict reader,
    then checked in full (its signature too); `EventError` for a damaged one."""
    return _stored_event(_column(text))


def _stored_event(stored: object) -> AuthorEvent:
    """A stored event read back, checked in full (its signature too) before any use: the file
    may have changed since it was stored."""
    if stored is None:
        raise EventError(
            "the outbox kept only the id of this accepted event (pith outbox drop --accepted "
            "dropped its body); the registry's merged state holds it"
        )
    event = checked_author_event(stored)[1]
    if event is None:
        raise EventError("the outbox holds a damaged entry (not a signed event)")
    return event


def _column(text: str) -> Any:
    """A JSON column this module wrote, read by the one strict reader."""
    return parse_stored(text, lambda exc: EventError(f"the outbox holds a damaged entry ({exc})"))
