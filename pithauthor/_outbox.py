"""The outbox: every signed event, stored durably before any network I/O (SQLite, WAL).

One row per (event_id, registry): an event is bound, when it is stored, to the registry it is
for (`registry_binding`: the `--registry` given, else the default), and only that registry's
answer changes the row. The same event stored for two registries is two rows. A row is in one
of three states:

    pending   stored, not yet accepted by its registry
    accepted  its registry answered 200/201; the answer is kept
    rejected  its registry answered 4xx about the event itself; the reason is kept

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
open, counting the rows it has); 3 is this one.
"""

from __future__ import annotations

import contextlib
import json
import os
import secrets
import socket
import sqlite3
import threading
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any, Literal, TypedDict

from pithauthor._atomic import TEMP_PREFIX, append_lines, replace_file
from pithauthor._core.author_event import checked_author_event, typed_author_event
from pithauthor._core.canonical import canonical
from pithauthor._core.documents import AuthorEvent
from pithauthor._core.strict_json import JSONFault, dump_json, parse_json
from pithauthor._core.utc import utc_now
from pithauthor._paths import private_dir
from pithauthor.client import registry_binding
from pithauthor.errors import EventError, InputError, OutboxDamaged

State = Literal["pending", "accepted", "rejected"]
STATES: tuple[State, ...] = ("pending", "accepted", "rejected")
DB_NAME = "outbox.sqlite3"
JOURNAL_NAME = "outbox.journal.jsonl"
SCHEMA_VERSION = 3
COLUMNS = (
    "event_id",
    "registry",
    "event_type",
    "subject",
    "body",
    "state",
    "stored_at",
    "updated_at",
    "attempts",
    "answer",
    "reason",
    "lease_owner",
    "lease_expires",
)
SCHEMA = """
CREATE TABLE outbox (
    event_id TEXT NOT NULL,
    registry TEXT NOT NULL,
    event_type TEXT NOT NULL,
    subject TEXT NOT NULL,
    body TEXT NOT NULL,
    state TEXT NOT NULL CHECK (state IN ('pending', 'accepted', 'rejected')),
    stored_at TEXT NOT NULL,
    updated_at TEXT NOT NULL,
    attempts INTEGER NOT NULL DEFAULT 0,
    answer TEXT,
    reason TEXT,
    lease_owner TEXT,
    lease_expires REAL,
    PRIMARY KEY (event_id, registry)
);
CREATE INDEX outbox_state ON outbox(state, registry);
"""
# one row: the live events per the journal (stored minus dropped) and the journal's size then
COUNT_SCHEMA = """
CREATE TABLE outbox_count (
    id INTEGER PRIMARY KEY CHECK (id = 1),
    rows INTEGER NOT NULL,
    journal_bytes INTEGER NOT NULL
)
"""
_END_LEASE = "lease_owner=NULL, lease_expires=NULL"
_SELECT = f"SELECT {', '.join(COLUMNS)} FROM outbox"

Note = Callable[[str], None]

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


def default_path() -> Path:
    return private_dir("outbox") / DB_NAME


def journal_path(db: Path) -> Path:
    """The journal beside the outbox file `db`."""
    return db.with_name(JOURNAL_NAME) if db.name == DB_NAME else db.with_name(db.name + ".jsonl")


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
        now = stored_at or _now()
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
        where, args = _where(registry=registry)
        with self._lock:
            sql = f"SELECT state, count(*) FROM outbox{where} GROUP BY state"
            rows = self._conn.execute(sql, args)
            found = dict(rows.fetchall())
        return {s: int(found.get(s, 0)) for s in STATES}

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
            "AND state='pending'",
            (dump_json(answer), _now(), int(attempted), event_id, registry),
        )
        if changed:
            line: dict[str, object] = {"op": "accepted", "event_id": event_id, "registry": registry}
            _append_journal(self.journal, [line], durable=False)
        return changed

    def mark_rejected(
        self, event_id: str, registry: str, reason: str, answer: Any, *, attempted: bool = False
    ) -> bool:
        """Record `registry`'s refusal of the row bound to it (as `mark_accepted`)."""
        registry = registry_binding(registry)
        return self._changed(
            "UPDATE outbox SET state='rejected', answer=?, reason=?, updated_at=?, "
            f"{_END_LEASE}, attempts = attempts + ? WHERE event_id=? AND registry=? "
            "AND state='pending'",
            (dump_json(answer), reason, _now(), int(attempted), event_id, registry),
        )

    def retry(self, event_ids: Iterable[str] | None = None, registry: str | None = None) -> int:
        """Rejected rows back to pending (all of them, or those named; for one registry)."""
        now = _now()
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


# --- opening: the checks, the schema, the migration -------------------------------------------


def _damaged(path: Path, why: str) -> OutboxDamaged:
    journal = journal_path(path)
    how = (
        f"rebuild it from its journal with: pith outbox recover ({journal})"
        if journal.is_file()
        else f"move it aside; its journal {journal} is missing too"
    )
    return OutboxDamaged(f"the outbox {path} is damaged ({why}); {how}")


def _connect(path: Path) -> sqlite3.Connection:
    return sqlite3.connect(path, timeout=30, isolation_level=None, check_same_thread=False)


def _open_checked(path: Path, journal: Path) -> sqlite3.Connection:
    """The connection to a healthy outbox file (created when there is none and nothing was
    ever journalled); else OutboxDamaged."""
    if path.is_dir():
        raise _damaged(path, "a folder is in its place")
    if not path.exists() and not path.is_symlink():
        if journal.is_file() and journal.stat().st_size > 0:
            raise _damaged(path, "the file is missing, but its journal holds events")
        _create(path)
    elif not path.is_file():
        raise _damaged(path, "not a regular file")
    elif path.stat().st_size == 0:  # never left empty: it is created whole, then linked
        raise _damaged(path, "the file is empty")
    conn = _connect(path)
    try:
        _check(conn, path)
        conn.execute("PRAGMA journal_mode=WAL")
        conn.execute("PRAGMA synchronous=NORMAL")
        conn.execute("PRAGMA busy_timeout=30000")
    except sqlite3.DatabaseError as exc:
        conn.close()
        raise _damaged(path, str(exc)) from None
    except BaseException:
        conn.close()
        raise
    return conn


def _check(conn: sqlite3.Connection, path: Path) -> None:
    """SQLite's quick_check, the schema version, the tables, and the rows against the
    journal's count (raises OutboxDamaged)."""
    conn.execute("PRAGMA busy_timeout=30000")
    problems = [r[0] for r in conn.execute("PRAGMA quick_check(3)").fetchall()]
    if problems != ["ok"]:
        raise _damaged(path, "; ".join(str(p) for p in problems))
    version = conn.execute("PRAGMA user_version").fetchone()[0]
    if version > SCHEMA_VERSION:
        raise OutboxDamaged(
            f"the outbox {path} has schema version {version}, made by a newer pithauthor "
            f"(this one reads up to {SCHEMA_VERSION}); upgrade pithauthor"
        )
    have = {r[1] for r in conn.execute("PRAGMA table_info(outbox)")}
    if not have:
        raise _damaged(path, "it holds no outbox table")
    want = set(COLUMNS) if version >= 2 else {"event_id", "subject", "body", "state"}
    if not want <= have:
        raise _damaged(path, f"its outbox table lacks {', '.join(sorted(want - have))}")
    if version == SCHEMA_VERSION:
        _check_count(conn, path)


def _check_count(conn: sqlite3.Connection, path: Path) -> None:
    """The rows the outbox has against those the journal says are live (kept in
    `outbox_count` by every store and drop): rows deleted with the tables intact are damage,
    never an outbox with fewer events."""
    if not list(conn.execute("PRAGMA table_info(outbox_count)")):
        raise _damaged(path, "its row count (table outbox_count) is missing")
    # one statement: one snapshot, even while another process stores
    found = conn.execute(
        "SELECT (SELECT count(*) FROM outbox), rows, journal_bytes FROM outbox_count WHERE id = 1"
    ).fetchone()
    if found is None:
        raise _damaged(path, "its row count (table outbox_count) is empty")
    have, want, recorded = found
    if have < want:
        journal = journal_path(path)
        size = journal.stat().st_size if journal.is_file() else recorded
        # a recovery can only bring back what the journal still holds: say when it lost lines
        cut = (
            f", and its journal is cut short ({size} of {recorded} bytes)"
            if size < recorded
            else ""
        )
        raise _damaged(path, f"{want - have} of its {want} stored events are missing{cut}")
    if have > want:
        raise _damaged(path, f"it holds {have} rows where {want} events were stored")


def _create(path: Path) -> None:
    """A new, empty outbox: built whole in a temp file, then linked into place, so that an
    outbox file that exists always holds the schema (an empty file is damage)."""
    tmp = path.with_name(f"{TEMP_PREFIX}{secrets.token_hex(8)}")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    os.close(fd)
    try:
        conn = _connect(tmp)
        try:
            conn.executescript(SCHEMA + ";" + COUNT_SCHEMA)
            conn.execute("INSERT INTO outbox_count (id, rows, journal_bytes) VALUES (1, 0, 0)")
            conn.execute(f"PRAGMA user_version={SCHEMA_VERSION}")
        finally:
            conn.close()
        with open(tmp, "rb+") as handle:
            os.fsync(handle.fileno())
        with contextlib.suppress(FileExistsError):  # another process made it first: use that
            os.link(tmp, path)
    finally:
        with contextlib.suppress(OSError):
            tmp.unlink()


def _migrate(conn: sqlite3.Connection, path: Path) -> tuple[int, str] | None:
    """Bring a version-0 outbox (rows keyed by event_id alone, pending ones naming no
    registry) or a version-2 one (no `outbox_count`) to this schema, once: returns (rows
    bound, the registry) when it bound any."""
    if conn.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION:
        return None
    default = registry_binding(None)
    conn.execute("BEGIN IMMEDIATE")
    try:
        if conn.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION:
            conn.execute("ROLLBACK")  # another process migrated it meanwhile
            return None
        if conn.execute("PRAGMA user_version").fetchone()[0] < 2:
            unbound = _bind_registries(conn, default)
        else:
            unbound = 0
        # what it holds now is all that can be counted: the count starts from it
        journal = journal_path(path)
        size = journal.stat().st_size if journal.is_file() else 0
        conn.execute(COUNT_SCHEMA)
        conn.execute(
            "INSERT INTO outbox_count (id, rows, journal_bytes) SELECT 1, count(*), ? FROM outbox",
            (size,),
        )
        conn.execute(f"PRAGMA user_version={SCHEMA_VERSION}")
        conn.execute("COMMIT")
    except sqlite3.DatabaseError as exc:
        conn.execute("ROLLBACK")
        raise _damaged(path, f"it could not be migrated: {exc}") from None
    except BaseException:
        conn.execute("ROLLBACK")
        raise
    return (unbound, default) if unbound else None


def _bind_registries(conn: sqlite3.Connection, default: str) -> int:
    """Version 0 to 2, inside the migration's transaction: every row bound to a registry
    (`default` for those naming none); returns how many were bound so."""
    have = {r[1] for r in conn.execute("PRAGMA table_info(outbox)")}
    unbound = int(conn.execute("SELECT count(*) FROM outbox WHERE registry IS NULL").fetchone()[0])
    conn.execute("ALTER TABLE outbox RENAME TO outbox_v0")
    conn.execute("DROP INDEX IF EXISTS outbox_state")
    # executescript would COMMIT first: the new table is made inside this transaction
    for statement in SCHEMA.split(";"):
        if statement.strip():
            conn.execute(statement)
    old = [c if c in have else "NULL" for c in COLUMNS]
    old[COLUMNS.index("registry")] = "COALESCE(registry, ?)"
    old[COLUMNS.index("attempts")] = "COALESCE(attempts, 0)" if "attempts" in have else "0"
    conn.execute(
        f"INSERT INTO outbox ({', '.join(COLUMNS)}) SELECT {', '.join(old)} FROM outbox_v0",
        (default,),
    )
    conn.execute("DROP TABLE outbox_v0")
    return unbound


# --- the journal and recovery -----------------------------------------------------------------


def _stored_line(registry: str, stored_at: str, body: str) -> dict[str, object]:
    return {"op": "store", "registry": registry, "stored_at": stored_at, "event": parse_json(body)}


def _append_journal(
    journal: Path, lines: list[dict[str, object]], *, durable: bool = True
) -> int | None:
    """Append whole lines in one write, then fsync (a torn last line is skipped on recovery);
    returns the journal's size then (None: nothing to write)."""
    if not lines:
        return None
    return append_lines(journal, _journal_text(lines).encode("utf-8"), durable=durable)


def _count(conn: sqlite3.Connection, rows: int, journal_bytes: int | None) -> None:
    """Move the journal's count by `rows`, inside the transaction that stores or drops them."""
    if journal_bytes is not None:
        conn.execute(
            "UPDATE outbox_count SET rows = rows + ?, journal_bytes = ? WHERE id = 1",
            (rows, journal_bytes),
        )


def _journal_text(lines: list[dict[str, object]]) -> str:
    """One compact JSON line per entry."""
    return "".join(json.dumps(x, ensure_ascii=False, separators=(",", ":")) + "\n" for x in lines)


def _journal_lost(conn: sqlite3.Connection, journal: Path) -> bool:
    """True when the journal is missing, or shorter than the outbox says it was (truncated)."""
    try:
        size = journal.stat().st_size
    except FileNotFoundError:
        return True
    recorded: int = conn.execute("SELECT journal_bytes FROM outbox_count").fetchone()[0]
    return size < recorded


def _export_journal_if_missing(conn: sqlite3.Connection, journal: Path) -> None:
    """Write the journal of a healthy outbox that has none (an older outbox, or a journal
    deleted or truncated): every row, in one atomic file, while no other process can store."""
    if not _journal_lost(conn, journal):
        return
    conn.execute("BEGIN IMMEDIATE")
    try:
        if _journal_lost(conn, journal):
            rows = conn.execute(
                "SELECT registry, stored_at, body, event_id, state FROM outbox "
                "ORDER BY stored_at, event_id"
            ).fetchall()
            lines = [_stored_line(r, t, b) for r, t, b, _, _ in rows]
            lines += [
                {"op": "accepted", "event_id": e, "registry": r}
                for r, _, _, e, state in rows
                if state == "accepted"
            ]
            text = _journal_text(lines)
            replace_file(journal, text, mode=0o600)
            size = len(text.encode("utf-8"))
            conn.execute("UPDATE outbox_count SET journal_bytes = ? WHERE id = 1", (size,))
    finally:
        conn.execute("COMMIT")


@dataclass
class Recovered:
    """What `recover` did."""

    events: int  # rows rebuilt
    registries: dict[str, int]  # rows per registry
    accepted: int  # of them, rows the journal says their registry accepted (kept so)
    skipped: int  # journal lines that could not be read or do not verify
    moved_to: Path | None  # where the damaged file was put (None: there was none)


def recover(path: Path | None = None) -> Recovered:
    """Rebuild a damaged (or missing) outbox from its journal: the damaged file is moved
    aside (never deleted), and every journalled row not dropped since is stored again as
    pending. Sending them again is safe: a registry answers 200 for what it already has."""
    path = path or default_path()
    journal = journal_path(path)
    if path.is_file() and path.stat().st_size:
        try:
            Outbox(path).close()
        except OutboxDamaged:
            pass
        else:
            raise InputError(f"the outbox {path} is healthy; there is nothing to recover")
    if not journal.is_file():
        raise InputError(f"the outbox's journal {journal} is missing; nothing to recover from")
    rows, accepted, skipped = _replay(journal)
    moved = None
    if path.exists() or path.is_symlink():
        stamp = f"{time.strftime('%Y%m%dT%H%M%S')}-{secrets.token_hex(2)}"  # never overwrite one
        moved = path.with_name(f"{path.name}.damaged-{stamp}")
        os.replace(path, moved)
        for suffix in ("-wal", "-shm"):
            side = path.with_name(path.name + suffix)
            if side.exists():
                os.replace(side, moved.with_name(moved.name + suffix))
    # the new journal is written from the rows, so build the outbox beside the old journal
    old_journal = journal.with_name(f"{journal.name}.before-recovery-{secrets.token_hex(4)}")
    os.replace(journal, old_journal)
    counts: dict[str, int] = {}
    try:
        with Outbox(path) as outbox:
            for (registry, stored_at), events in _batches(rows).items():
                new, _ = outbox.store(events, registry, stored_at=stored_at)
                counts[registry] = counts.get(registry, 0) + new
            for event_id, registry in accepted:  # its answer is not journalled: null
                outbox.mark_accepted(event_id, registry, None)
    except BaseException:
        with contextlib.suppress(OSError):
            os.replace(old_journal, journal)
        raise
    old_journal.unlink()
    return Recovered(sum(counts.values()), counts, len(accepted), skipped, moved)


Row = tuple[dict[str, object], str]  # (the event, when it was first stored)


def _replay(journal: Path) -> tuple[dict[tuple[str, str], Row], set[tuple[str, str]], int]:
    """The rows the journal leaves: stored and not dropped since, keyed (event_id, registry);
    those of them accepted; and how many lines were skipped (torn, unreadable, or not a
    verifying event)."""
    rows: dict[tuple[str, str], Row] = {}
    accepted: set[tuple[str, str]] = set()
    skipped = 0
    with open(journal, encoding="utf-8", errors="replace") as handle:
        for line in handle:
            if not line.strip():
                continue
            try:
                item = json.loads(line)
                op, registry = item["op"], registry_binding(item["registry"])
                if op == "store":
                    event = item["event"]
                    rows[(event["event_id"], registry)] = (event, str(item["stored_at"]))
                elif op == "drop":
                    rows.pop((item["event_id"], registry), None)
                    accepted.discard((item["event_id"], registry))
                elif op == "accepted":
                    accepted.add((str(item["event_id"]), registry))
                else:
                    skipped += 1
            except (ValueError, KeyError, TypeError, AttributeError, InputError):
                skipped += 1
    good = {}
    for key, row in rows.items():
        if checked_author_event(row[0])[1] is None:
            skipped += 1
        else:
            good[key] = row
    return good, accepted & set(good), skipped


def _batches(rows: Mapping[tuple[str, str], Row]) -> dict[tuple[str, str], list[Any]]:
    """The events by (registry, date stored): one `store` each."""
    out: dict[tuple[str, str], list[Any]] = {}
    for (_, registry), (event, stored_at) in rows.items():
        out.setdefault((registry, stored_at), []).append(event)
    return out


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
    its state: what was said there, sent or not (`pithauthor.statements` reads it)."""
    if not (path or default_path()).exists():
        return []
    with Outbox(path, note=note) as outbox:
        return [e.event for e in outbox.entries(registry=registry_binding(registry))]
