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

The file is `<PITH_HOME>/outbox/outbox.sqlite3` (folder 0700, file 0600). Storing events is a
fully synced transaction (synchronous=FULL); state changes are synced lazily (WAL, NORMAL): a
process crash loses nothing, and a power cut can at worst turn an `accepted` back into `pending`,
which only re-sends an event the registry already has (it answers 200, never a second copy).

The outbox checks itself when it is opened (SQLite's `quick_check`, its schema version in
`PRAGMA user_version`, its tables, and its rows against the journal's count): a damaged file is
`OutboxDamaged` (exit 2, one line naming the file), never an empty outbox in place of lost rows.
Every stored row (and every drop) is also appended to a journal beside it,
`outbox.journal.jsonl` (0600), from which `recover` rebuilds a damaged outbox.

The journal's count. The table `outbox_count` holds, in the same transaction as every store and
drop, the number of rows the journal says are live (stored minus dropped) and the journal's size
after those lines. Opening compares it with `count(*)` (one index scan, no journal read): rows
deleted with the tables intact (`DELETE FROM outbox`) are damage. A process killed between its
journal append and its commit leaves journal lines past the recorded size (or, after later
writes, lines the count never took in): the count only moves when the rows do, so that is no
damage, and `recover` would bring those events back as pending (they were signed and shown).
A journal shorter than the recorded size (truncated) is written again from the rows.

Schema versions: 0 is an outbox of pithauthor before rows named their registry (migrated once,
on open: its pending rows are bound to the default registry); 2 had no `outbox_count` (added on
open, counting the rows it has); 3 had no state `held` (its table is rebuilt on open: SQLite
cannot widen a CHECK in place); 4 is this one.
"""

from __future__ import annotations

import os
import secrets
import socket
import threading
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any, Literal, TypedDict

from pithauthor.errors import EventError
from pithauthor.protocol.canonical_json import JSONFault, canonical, dump_json, parse_json
from pithauthor.protocol.checks.event import checked_author_event, typed_author_event
from pithauthor.protocol.documents import AuthorEvent
from pithauthor.protocol.text import utc_now
from pithauthor.registry.client import registry_binding
from pithauthor.registry.journal import (
    COLUMNS,
    _append_journal,
    _count,
    _export_journal_if_missing,
    _migrate,
    _open_checked,
    _stored_line,
    default_path,
    journal_path,
)

State = Literal["pending", "accepted", "rejected", "held"]


STATES: tuple[State, ...] = ("pending", "accepted", "rejected", "held")


_END_LEASE = "lease_owner=NULL, lease_expires=NULL"


_SELECT = f"SELECT {', '.join(COLUMNS)} FROM outbox"


Note = Callable[[str], None]


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
    again (its shape, not its signature: it was checked in full when stored) when first used."""

    event_id: str
    event_type: str
    subject: str
    stored: object = field(repr=False)  # the event as stored, parsed
    state: State
    stored_at: str
    updated_at: str
    attempts: int
    registry: str
    answer: object  # what the registry answered, as it answered it
    reason: str | None

    @cached_property
    def event(self) -> AuthorEvent:
        return _stored_event(self.stored)

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
    return f"{socket.gethostname()}:{os.getpid()}:{secrets.token_hex(4)}"


def _owner_is_dead(owner: str) -> bool:
    """True when `owner` names a process on this machine that no longer runs. An owner on
    another host (an outbox on a shared folder) is never judged dead: only its lease's expiry
    frees its rows, since its pid means nothing here."""
    parts = owner.rsplit(":", 2)
    if len(parts) != 3 or parts[0] != socket.gethostname() or not parts[1].isdigit():
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
        self._conn = _open_checked(self.path, self.journal)
        try:
            migrated = _migrate(self._conn, self.path)
            _export_journal_if_missing(self._conn, self.journal)
        except BaseException:
            self._conn.close()
            raise
        if migrated and note is not None:
            n, where = migrated
            note(
                f"outbox: {n} pending event(s) stored before events named their registry "
                f"are now bound to {where}"
            )

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
        none, each also appended to the journal; returns (new, already there for it).
        `stored_at` (default: now) is for `recover`, which keeps the date first stored."""
        rows = [_row(e) for e in events]
        where = registry_binding(registry)
        now = stored_at or utc_now()
        fresh: list[dict[str, object]] = []
        with self._lock:
            self._conn.execute("PRAGMA synchronous=FULL")  # the events themselves: on disk
            self._conn.execute("BEGIN IMMEDIATE")
            try:
                for eid, etype, subject, body in rows:
                    cur = self._conn.execute(
                        "INSERT INTO outbox (event_id, registry, event_type, subject, body, "
                        "state, stored_at, updated_at) VALUES (?,?,?,?,?,'pending',?,?) "
                        "ON CONFLICT(event_id, registry) DO NOTHING",
                        (eid, where, etype, subject, body, now, now),
                    )
                    if cur.rowcount:
                        fresh.append(_stored_line(where, now, body))
                # the journal before the commit: a row the outbox has is always in it
                _count(self._conn, len(fresh), _append_journal(self.journal, fresh))
                self._conn.execute("COMMIT")
            except BaseException:
                self._conn.execute("ROLLBACK")
                raise
            finally:
                self._conn.execute("PRAGMA synchronous=NORMAL")
        return len(fresh), len(rows) - len(fresh)

    def entries(self, state: State | None = None, registry: str | None = None) -> list[OutboxEntry]:
        """The rows (in one `state`, for one `registry` when given), oldest first."""
        where, args = _where(state=state, registry=registry)
        with self._lock:
            rows = self._conn.execute(
                f"{_SELECT}{where} ORDER BY stored_at, event_id, registry", args
            ).fetchall()
        return [_entry(r) for r in rows]

    def registries(self, state: State | None = None) -> list[str]:
        """The registries rows are bound to (those with a row in `state`), sorted."""
        where, args = _where(state=state)
        with self._lock:
            rows = self._conn.execute(
                f"SELECT DISTINCT registry FROM outbox{where} ORDER BY registry", args
            ).fetchall()
        return [r[0] for r in rows]

    def get(self, event_id: str, registry: str | None = None) -> OutboxEntry | None:
        """The row of `event_id` for `registry`; without one, its first row for any."""
        where, args = _where(event_id=event_id, registry=registry)
        with self._lock:
            row = self._conn.execute(
                f"{_SELECT}{where} ORDER BY stored_at, registry", args
            ).fetchone()
        return _entry(row) if row else None

    def counts(self, registry: str | None = None) -> dict[str, int]:
        """Rows per state (for one registry): pending, accepted and rejected always, `held`
        only when there are some (most registries never hold anything)."""
        where, args = _where(registry=registry)
        with self._lock:
            sql = f"SELECT state, count(*) FROM outbox{where} GROUP BY state"
            rows = self._conn.execute(sql, args)
            found = dict(rows.fetchall())
        return {s: int(found.get(s, 0)) for s in STATES if s != "held" or found.get(s)}

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
        attempt, in the same statement). A row for another registry is never touched: returns
        False when there is no pending row of `event_id` for `registry`.

        The journal hears of it too, not synced (like the database's state changes): a
        recovery then keeps it accepted, and at worst, after a power cut, sends it again."""
        registry = registry_binding(registry)
        changed = self._changed(
            f"UPDATE outbox SET state='accepted', answer=?, reason=NULL, {_END_LEASE}, "
            "updated_at=?, attempts = attempts + ? WHERE event_id=? AND registry=? "
            "AND state IN ('pending', 'held')",
            (dump_json(answer), utc_now(), int(attempted), event_id, registry),
        )
        if changed:
            line: dict[str, object] = {"op": "accepted", "event_id": event_id, "registry": registry}
            _append_journal(self.journal, [line], durable=False)
        return changed

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
            _append_journal(self.journal, [line], durable=False)
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
        """Delete the named events' rows (for one registry, or all); returns how many."""
        return self._delete([(eid, None) for eid in event_ids], registry)

    def drop_state(self, state: State, registry: str | None = None) -> int:
        """Delete every row in `state` (for one registry, or all); returns how many."""
        return self._delete([(None, state)], registry)

    def _delete(self, which: list[tuple[str | None, State | None]], registry: str | None) -> int:
        """Delete rows, journalling each first (so a recovery never brings one back)."""
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
                _count(self._conn, -n, _append_journal(self.journal, lines))
                self._conn.execute("COMMIT")
            except BaseException:
                self._conn.execute("ROLLBACK")
                raise
        return n

    def _update(self, sql: str, args: tuple[Any, ...]) -> None:
        self._changed(sql, args)

    def _changed(self, sql: str, args: tuple[Any, ...]) -> bool:
        with self._lock:
            return self._conn.execute(sql, args).rowcount > 0


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


def _row(event: object) -> tuple[str, str, str, str]:
    report, checked = checked_author_event(event)
    if checked is None:
        names = ", ".join(c.name for c in report.failed)
        eid = event.get("event_id", "?") if isinstance(event, Mapping) else "?"
        raise EventError(f"event {eid} does not verify ({names}); nothing was stored")
    return (
        checked["event_id"],
        checked["event_type"],
        checked["subject_pith_number"],
        # canonical bytes, not the text given: every copy sent of one event_id is one string
        canonical(checked).decode("utf-8"),
    )


def _entry(row: tuple[Any, ...]) -> OutboxEntry:
    r = dict(zip(COLUMNS, row, strict=True))
    return OutboxEntry(
        event_id=r["event_id"],
        event_type=r["event_type"],
        subject=r["subject"],
        stored=_column(r["body"]),
        state=r["state"],
        stored_at=r["stored_at"],
        updated_at=r["updated_at"],
        attempts=r["attempts"],
        registry=r["registry"],
        answer=_column(r["answer"]) if r["answer"] else None,
        reason=r["reason"],
    )


def _stored_event(stored: object) -> AuthorEvent:
    event = typed_author_event(stored)
    if event is None:
        raise EventError("the outbox holds a damaged entry (not a signed event)")
    return event


def _column(text: str) -> Any:
    """A JSON column this module wrote, read by the one strict reader."""
    try:
        return parse_json(text)
    except JSONFault as exc:
        raise EventError(f"the outbox holds a damaged entry ({exc})") from None


def held_events(
    registry: str | None, path: Path | None = None, *, note: Note | None = None
) -> list[AuthorEvent]:
    """Every event the outbox holds for `registry` (default: the default registry), whatever
    its state: what was said there, sent or not (`pithauthor.registry.statements` reads it)."""
    if not (path or default_path()).exists():
        return []
    with Outbox(path, note=note) as outbox:
        return [e.event for e in outbox.entries(registry=registry_binding(registry))]
