"""The outbox: every signed event, stored durably before any network I/O (SQLite, WAL).

One row per event_id (UNIQUE), in one of three states:

    pending   stored, not yet accepted by a registry
    accepted  a registry answered 200/201; its answer and URL are kept
    rejected  a registry answered 4xx about the event itself; the reason is kept

Several `pith submit` processes may share one outbox: a process sends an event only after it has
*claimed* it, one atomic `UPDATE ... WHERE state='pending' AND (no lease OR lease expired)` that
writes its owner (`host:pid:random`) and an expiry. Recording an answer ends the lease; so does
`release`. A lease that expired, or whose owner is a dead process on this machine, can be taken
over, so a killed `pith submit` loses nothing.

The file is `<PITH_HOME>/outbox/outbox.sqlite3` (folder 0700, file 0600). Storing events is a
fully synced transaction (synchronous=FULL); state changes are synced lazily (WAL, NORMAL): a
process crash loses nothing, and a power cut can at worst turn an `accepted` back into `pending`,
which only re-sends an event the registry already has (it answers 200, never a second copy).
"""

from __future__ import annotations

import os
import secrets
import socket
import sqlite3
import threading
import time
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any, Literal, TypedDict

from pithauthor._core.author_event import checked_author_event, typed_author_event
from pithauthor._core.canonical import canonical
from pithauthor._core.documents import AuthorEvent
from pithauthor._core.strict_json import JSONFault, dump_json, parse_json
from pithauthor._core.utc import utc_now
from pithauthor._paths import private_dir
from pithauthor.errors import EventError

State = Literal["pending", "accepted", "rejected"]
STATES: tuple[State, ...] = ("pending", "accepted", "rejected")
DB_NAME = "outbox.sqlite3"
SCHEMA = """
CREATE TABLE IF NOT EXISTS outbox (
    event_id TEXT PRIMARY KEY,
    event_type TEXT NOT NULL,
    subject TEXT NOT NULL,
    body TEXT NOT NULL,
    state TEXT NOT NULL CHECK (state IN ('pending', 'accepted', 'rejected')),
    stored_at TEXT NOT NULL,
    updated_at TEXT NOT NULL,
    attempts INTEGER NOT NULL DEFAULT 0,
    registry TEXT,
    answer TEXT,
    reason TEXT,
    lease_owner TEXT,
    lease_expires REAL
);
CREATE INDEX IF NOT EXISTS outbox_state ON outbox(state);
"""
LEASE_COLUMNS = (("lease_owner", "TEXT"), ("lease_expires", "REAL"))
_END_LEASE = "lease_owner=NULL, lease_expires=NULL"


_now = utc_now


class OutboxRow(TypedDict):
    """One entry without its event (`pith outbox list --json`)."""

    event_id: str
    event_type: str
    subject: str
    state: State
    stored_at: str
    updated_at: str
    attempts: int
    registry: str | None
    reason: str | None


@dataclass(frozen=True)
class OutboxEntry:
    """One stored event and where it stands; `event` is read again (its shape, not its
    signature: it was checked in full when stored) when it is first used."""

    event_id: str
    event_type: str
    subject: str
    stored: object = field(repr=False)  # the event as stored, parsed
    state: State
    stored_at: str
    updated_at: str
    attempts: int
    registry: str | None
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
    """A lease owner name for this process: `host:pid:random`."""
    return f"{socket.gethostname()}:{os.getpid()}:{secrets.token_hex(4)}"


def _owner_is_dead(owner: str) -> bool:
    """True when `owner` names a process on this machine that no longer runs."""
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


def default_path() -> Path:
    return private_dir("outbox") / DB_NAME


class Outbox:
    """The outbox database; safe to share between threads and between processes."""

    def __init__(self, path: Path | None = None) -> None:
        self.path = path or default_path()
        self._lock = threading.Lock()
        if not self.path.exists():
            fd = os.open(self.path, os.O_WRONLY | os.O_CREAT, 0o600)
            os.close(fd)
        self._conn = sqlite3.connect(
            self.path, timeout=30, isolation_level=None, check_same_thread=False
        )
        self._conn.execute("PRAGMA journal_mode=WAL")
        self._conn.execute("PRAGMA synchronous=NORMAL")
        self._conn.execute("PRAGMA busy_timeout=30000")
        self._conn.executescript(SCHEMA)
        have = {row[1] for row in self._conn.execute("PRAGMA table_info(outbox)")}
        for name, kind in LEASE_COLUMNS:  # an outbox made by an older pithauthor
            if name not in have:
                self._conn.execute(f"ALTER TABLE outbox ADD COLUMN {name} {kind}")

    def close(self) -> None:
        with self._lock:
            self._conn.close()

    def __enter__(self) -> Outbox:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def store(self, events: Iterable[Mapping[str, Any]]) -> tuple[int, int]:
        """Store events atomically (all or none); returns (new, already there)."""
        rows = [_row(e) for e in events]
        now = _now()
        new = 0
        with self._lock:
            self._conn.execute("PRAGMA synchronous=FULL")  # the events themselves: on disk
            self._conn.execute("BEGIN IMMEDIATE")
            try:
                for eid, etype, subject, body in rows:
                    cur = self._conn.execute(
                        "INSERT INTO outbox (event_id, event_type, subject, body, state, "
                        "stored_at, updated_at) VALUES (?,?,?,?,'pending',?,?) "
                        "ON CONFLICT(event_id) DO NOTHING",
                        (eid, etype, subject, body, now, now),
                    )
                    new += cur.rowcount
                self._conn.execute("COMMIT")
            except BaseException:
                self._conn.execute("ROLLBACK")
                raise
            finally:
                self._conn.execute("PRAGMA synchronous=NORMAL")
        return new, len(rows) - new

    def entries(self, state: State | None = None) -> list[OutboxEntry]:
        sql = "SELECT * FROM outbox"
        args: tuple[str, ...] = ()
        if state is not None:
            sql += " WHERE state = ?"
            args = (state,)
        with self._lock:
            rows = self._conn.execute(sql + " ORDER BY stored_at, event_id", args).fetchall()
        return [_entry(r) for r in rows]

    def get(self, event_id: str) -> OutboxEntry | None:
        with self._lock:
            row = self._conn.execute(
                "SELECT * FROM outbox WHERE event_id = ?", (event_id,)
            ).fetchone()
        return _entry(row) if row else None

    def counts(self) -> dict[str, int]:
        with self._lock:
            rows = self._conn.execute("SELECT state, count(*) FROM outbox GROUP BY state")
            found = dict(rows.fetchall())
        return {s: int(found.get(s, 0)) for s in STATES}

    def claim(self, event_id: str, owner: str, seconds: float) -> bool:
        """Take the lease on a pending event for `seconds`; False if it is not pending or
        another live owner holds it."""
        now = time.time()
        with self._lock:
            cur = self._conn.execute(
                "UPDATE outbox SET lease_owner=?, lease_expires=? WHERE event_id=? AND "
                "state='pending' AND (lease_owner IS NULL OR lease_owner=? OR lease_expires<?)",
                (owner, now + seconds, event_id, owner, now),
            )
            if cur.rowcount == 1:
                return True
            row = self._conn.execute(
                "SELECT lease_owner FROM outbox WHERE event_id=? AND state='pending'", (event_id,)
            ).fetchone()
            if row is None or row[0] is None or not _owner_is_dead(row[0]):
                return False
            cur = self._conn.execute(  # its owner died: take over, unless someone just did
                "UPDATE outbox SET lease_owner=?, lease_expires=? WHERE event_id=? AND "
                "state='pending' AND lease_owner=?",
                (owner, now + seconds, event_id, row[0]),
            )
            return cur.rowcount == 1

    def release(self, event_id: str, owner: str) -> None:
        """End `owner`'s lease on `event_id` (no-op if it holds none)."""
        self._update(
            f"UPDATE outbox SET {_END_LEASE} WHERE event_id=? AND lease_owner=?", (event_id, owner)
        )

    def leased_elsewhere(self, owner: str) -> list[str]:
        """Pending events another owner holds a live lease on."""
        with self._lock:
            rows = self._conn.execute(
                "SELECT event_id FROM outbox WHERE state='pending' AND lease_owner IS NOT NULL "
                "AND lease_owner<>? AND lease_expires>=? ORDER BY event_id",
                (owner, time.time()),
            ).fetchall()
        return [r[0] for r in rows]

    def attempt(self, event_id: str) -> None:
        self._update("UPDATE outbox SET attempts = attempts + 1 WHERE event_id = ?", (event_id,))

    def mark_accepted(
        self, event_id: str, registry: str, answer: Any, *, attempted: bool = False
    ) -> None:
        """Record the registry's acceptance (`attempted`: and count the attempt, in the same
        statement: one write per event instead of two)."""
        self._update(
            f"UPDATE outbox SET state='accepted', registry=?, answer=?, reason=NULL, {_END_LEASE}, "
            "updated_at=?, attempts = attempts + ? WHERE event_id=?",
            (registry, dump_json(answer), _now(), int(attempted), event_id),
        )

    def mark_rejected(
        self, event_id: str, registry: str, reason: str, answer: Any, *, attempted: bool = False
    ) -> None:
        self._update(
            "UPDATE outbox SET state='rejected', registry=?, answer=?, reason=?, updated_at=?, "
            f"{_END_LEASE}, attempts = attempts + ? WHERE event_id=? AND state='pending'",
            (registry, dump_json(answer), reason, _now(), int(attempted), event_id),
        )

    def retry(self, event_ids: Iterable[str] | None = None) -> int:
        """Rejected events back to pending (all of them, or those named)."""
        return self._set_pending("rejected", event_ids)

    def drop(self, event_ids: Iterable[str]) -> int:
        """Delete the named events; returns how many were there."""
        ids = list(event_ids)
        with self._lock:
            n = 0
            for eid in ids:
                n += self._conn.execute("DELETE FROM outbox WHERE event_id = ?", (eid,)).rowcount
        return n

    def drop_state(self, state: State) -> int:
        with self._lock:
            return self._conn.execute("DELETE FROM outbox WHERE state = ?", (state,)).rowcount

    def _set_pending(self, from_state: str, event_ids: Iterable[str] | None) -> int:
        now = _now()
        with self._lock:
            if event_ids is None:
                return self._conn.execute(
                    "UPDATE outbox SET state='pending', reason=NULL, updated_at=? WHERE state=?",
                    (now, from_state),
                ).rowcount
            n = 0
            for eid in event_ids:
                n += self._conn.execute(
                    "UPDATE outbox SET state='pending', reason=NULL, updated_at=? "
                    "WHERE state=? AND event_id=?",
                    (now, from_state, eid),
                ).rowcount
            return n

    def _update(self, sql: str, args: tuple[Any, ...]) -> None:
        with self._lock:
            self._conn.execute(sql, args)


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
        canonical(checked).decode("utf-8"),
    )


def _entry(row: tuple[Any, ...]) -> OutboxEntry:
    return OutboxEntry(
        event_id=row[0],
        event_type=row[1],
        subject=row[2],
        stored=_column(row[3]),
        state=row[4],
        stored_at=row[5],
        updated_at=row[6],
        attempts=row[7],
        registry=row[8],
        answer=_column(row[9]) if row[9] else None,
        reason=row[10],
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


def held_events(registry: str, path: Path | None = None) -> list[AuthorEvent]:
    """Every event the outbox holds for `registry`, whatever its state (what was said there,
    sent or not). Rows not bound to a registry yet count for every registry."""
    if not (path or default_path()).exists():
        return []
    with Outbox(path) as outbox:
        return [e.event for e in outbox.entries() if e.registry in (None, registry)]
