"""The outbox's files: the SQLite database checked, created and migrated, and the
append-only journal beside it, from which `recover` rebuilds a lost or damaged database.

Two tables hold the events (since schema 5; schema 6 adds `trusted_time`, the proofs of their
time, below). `outbox` is the working set: the rows still pending or
rejected, which commands list, send and count. `ledger` holds the rows their registry accepted
(moved there, in the same transaction that records the answer): what `pith papers`, `pith
withdraw` and `--replace` need, read only through its indexes (by signer, type and subject; by
subject; by citing paper; by event id), never as a whole. Every row carries, as columns, what
commands select on (the signer's fingerprint and key id, the citing paper of a citation), read
from the event once when it is stored, so no command parses every stored event. A ledger row
whose body was dropped (`pith outbox drop --accepted`) keeps its id and those columns.
"""

from __future__ import annotations

import contextlib
import json
import os
import sqlite3
from collections.abc import Callable, Mapping
from pathlib import Path

from pithauthor.errors import OutboxDamaged
from pithauthor.fs import TEMP_PREFIX, append_lines, private_dir, replace_file
from pithauthor.protocol.canonical_json import b64encode, parse_json
from pithauthor.registry.client import registry_binding

DB_NAME = "outbox.sqlite3"


JOURNAL_NAME = "outbox.journal.jsonl"


SCHEMA_VERSION = 8


# the schema that brought the ledger (and the `said` columns): checks of an older file differ
LEDGER_VERSION = 5


# the schema that brought the ledger's count (`LEDGER_COUNT_STATEMENTS`)
COUNTED_VERSION = 7


# the schema that brought the mark of events still lacking a proof of time (`UNTIMED_STATEMENTS`)
UNTIMED_VERSION = 8


# a file up to this size gets SQLite's whole quick_check on every open (about 1 ms per MiB);
# a larger one gets it on its working set (table `outbox`, its count): the ledger's pages are
# then checked where they are read (every event read back is checked in full before use)
FULL_CHECK_BYTES = 8 << 20


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
    "signer",
    "key_id",
    "citing",
)


# what commands select on, read from the event when it is stored (module docstring)
SAID = ("signer", "key_id", "citing")


LEDGER_COLUMNS = (
    "event_id",
    "registry",
    "event_type",
    "subject",
    "body",
    "stored_at",
    "updated_at",
    "attempts",
    "answer",
    "signer",
    "key_id",
    "citing",
)


SCHEMA = """
CREATE TABLE outbox (
    event_id TEXT NOT NULL,
    registry TEXT NOT NULL,
    event_type TEXT NOT NULL,
    subject TEXT NOT NULL,
    body TEXT NOT NULL,
    state TEXT NOT NULL CHECK (state IN ('pending', 'accepted', 'rejected', 'held')),
    stored_at TEXT NOT NULL,
    updated_at TEXT NOT NULL,
    attempts INTEGER NOT NULL DEFAULT 0,
    answer TEXT,
    reason TEXT,
    lease_owner TEXT,
    lease_expires REAL,
    signer TEXT,
    key_id TEXT,
    citing TEXT,
    PRIMARY KEY (event_id, registry)
);
CREATE INDEX outbox_state ON outbox(state, registry);
"""


# the indexes of `said` columns and the ledger (schema 5; module docstring)
LEDGER_SCHEMA = """
CREATE INDEX outbox_said ON outbox(signer, event_type, subject);
CREATE INDEX outbox_subject ON outbox(subject);
CREATE INDEX outbox_citing ON outbox(citing) WHERE citing IS NOT NULL;
CREATE TABLE ledger (
    event_id TEXT NOT NULL,
    registry TEXT NOT NULL,
    event_type TEXT NOT NULL,
    subject TEXT NOT NULL,
    body TEXT,
    stored_at TEXT NOT NULL,
    updated_at TEXT NOT NULL,
    attempts INTEGER NOT NULL DEFAULT 0,
    answer TEXT,
    signer TEXT,
    key_id TEXT,
    citing TEXT,
    PRIMARY KEY (event_id, registry)
);
CREATE INDEX ledger_said ON ledger(signer, event_type, subject);
CREATE INDEX ledger_subject ON ledger(subject);
CREATE INDEX ledger_citing ON ledger(citing) WHERE citing IS NOT NULL;
CREATE INDEX ledger_kept ON ledger(registry) WHERE body IS NOT NULL;
"""


# The proofs of trusted time of stored events (schema 6; docs/protocol.md "Trusted time"): one
# row per event, kind ('rfc3161' token or 'ots' proof) and source (the authority's or calendar's
# URL). Beside the events, never in them: a proof is fetched after the event is stored, and an
# OpenTimestamps proof is replaced when it is upgraded (`complete` then 1). Each proof kept is
# also a journal line (`op: time`, `Outbox.store_time`) that `recover` replays: a token lost
# with the file could only be fetched again with a later time.
TRUSTED_TIME_SCHEMA = """
CREATE TABLE IF NOT EXISTS trusted_time (
    event_id TEXT NOT NULL,
    kind TEXT NOT NULL CHECK (kind IN ('rfc3161', 'ots')),
    source TEXT NOT NULL,
    proof BLOB NOT NULL,
    complete INTEGER NOT NULL DEFAULT 0,
    updated_at TEXT NOT NULL,
    PRIMARY KEY (event_id, kind, source)
)
"""


# What `pith papers` shows, kept by the database itself as rows come, go and change state: how
# many rows of each (paper, key, registry, type, state), and the newest change. A command then
# reads a row per paper and role, never the rows themselves (schema 5).
def _tally(table: str, sign: str, row: str, state: str) -> str:
    return (
        f"INSERT INTO tally VALUES ({row}.subject, COALESCE({row}.key_id, ''), {row}.registry, "
        f"{row}.event_type, {state}, {sign}1, {row}.updated_at) "
        "ON CONFLICT DO UPDATE SET n = n + excluded.n, last = max(last, excluded.last);"
    )


TALLY_STATEMENTS = (
    """CREATE TABLE tally (
    subject TEXT NOT NULL,
    key_id TEXT NOT NULL,
    registry TEXT NOT NULL,
    event_type TEXT NOT NULL,
    state TEXT NOT NULL,
    n INTEGER NOT NULL,
    last TEXT NOT NULL,
    PRIMARY KEY (subject, key_id, registry, event_type, state)
)""",
    "CREATE TRIGGER outbox_in AFTER INSERT ON outbox BEGIN "
    + _tally("outbox", "", "NEW", "NEW.state")
    + " END",
    "CREATE TRIGGER outbox_out AFTER DELETE ON outbox BEGIN "
    + _tally("outbox", "-", "OLD", "OLD.state")
    + " END",
    "CREATE TRIGGER outbox_moved AFTER UPDATE OF state ON outbox BEGIN "
    + _tally("outbox", "-", "OLD", "OLD.state")
    + _tally("outbox", "", "NEW", "NEW.state")
    + " END",
    "CREATE TRIGGER ledger_in AFTER INSERT ON ledger BEGIN "
    + _tally("ledger", "", "NEW", "'accepted'")
    + " END",
    "CREATE TRIGGER ledger_out AFTER DELETE ON ledger BEGIN "
    + _tally("ledger", "-", "OLD", "'accepted'")
    + " END",
    # what was there before the triggers (a migration): counted once
    "INSERT INTO tally SELECT subject, COALESCE(key_id, ''), registry, event_type, state, "
    "count(*), max(updated_at) FROM outbox GROUP BY 1, 2, 3, 4, 5",
    "INSERT INTO tally SELECT subject, COALESCE(key_id, ''), registry, event_type, 'accepted', "
    "count(*), max(updated_at) FROM ledger GROUP BY 1, 2, 3, 4 ON CONFLICT DO NOTHING",
)


# How many ledger rows keep their event, kept by the database itself in the same statement as
# every row that comes, goes or loses its body (schema 7), whoever writes the file: opening a
# large outbox compares it, and the working set's count, with the journal's count
# (`_check_count`) instead of counting the ledger, which read an index of every accepted event
# on every open (about 10 ms at 100,000 events, twice for most commands). A row deleted by hand
# moves it too, so it is still found; a small file's ledger is counted as well and must agree.
LEDGER_COUNT_STATEMENTS = (
    "CREATE TABLE ledger_count (id INTEGER PRIMARY KEY CHECK (id = 1), n INTEGER NOT NULL)",
    "INSERT INTO ledger_count (id, n) SELECT 1, count(*) FROM ledger WHERE body IS NOT NULL",
    "CREATE TRIGGER ledger_count_in AFTER INSERT ON ledger WHEN NEW.body IS NOT NULL "
    "BEGIN UPDATE ledger_count SET n = n + 1; END",
    "CREATE TRIGGER ledger_count_out AFTER DELETE ON ledger WHEN OLD.body IS NOT NULL "
    "BEGIN UPDATE ledger_count SET n = n - 1; END",
    "CREATE TRIGGER ledger_count_body AFTER UPDATE OF body ON ledger "
    "BEGIN UPDATE ledger_count SET n = n + (NEW.body IS NOT NULL) - (OLD.body IS NOT NULL); END",
)


def _mark_untimed(event: str) -> str:
    """The statements (of a trigger) that set `event`'s row of `untimed` from the tables: a
    row while the ledger holds the event with its body and it lacks a token (`token` 1) or a
    complete OpenTimestamps proof (`proof` 1); none otherwise. Each lookup is on a primary
    key's first column, so its cost does not grow with the outbox."""
    return (
        f"DELETE FROM untimed WHERE event_id = {event}; "
        "INSERT INTO untimed (event_id, stored_at, token, proof) "
        f"SELECT {event}, at, token, proof FROM (SELECT "
        f"(SELECT max(stored_at) FROM ledger WHERE event_id = {event} AND body IS NOT NULL) "
        f"AS at, NOT EXISTS (SELECT 1 FROM trusted_time WHERE event_id = {event} "
        "AND kind = 'rfc3161') AS token, "
        f"NOT EXISTS (SELECT 1 FROM trusted_time WHERE event_id = {event} "
        "AND kind = 'ots' AND complete = 1) AS proof) "
        "WHERE at IS NOT NULL AND (token OR proof);"
    )


# an updated row: the event it was, and the one it is (the same, unless edited by hand)
_BOTH = ("OLD.event_id", "NEW.event_id")


# The accepted events (the ledger's, with their body) still lacking a proof of time, kept by
# the database itself as those events and their proofs come, go and change (schema 8). `pith
# submit` and `pith timestamp` fetch what the newest stored events lack
# (`Outbox.needing_time`), `pith doctor` counts them (`Outbox.untimed`): the working set is
# asked directly (it is what is being sent, and stays small), the ledger through this mark.
# Asking the ledger itself was an anti-join over every accepted event on every `pith submit`
# with trusted time set (0.22 s of CPU at 100,000 events, a command otherwise about 0.2 s);
# the mark holds only the events that lack something, read newest first through an index of
# each lack. The triggers set an event's row from the tables each time one of its ledger rows
# or proofs changes, so the mark is the same function of the tables however they were written
# (`mark_accepted`, `recover`'s replay, a migration, or a hand edit); storing an event in the
# working set (what `pith cite` does per citation) touches no mark.
UNTIMED_STATEMENTS = (
    "CREATE TABLE untimed (event_id TEXT PRIMARY KEY, stored_at TEXT NOT NULL, "
    "token INTEGER NOT NULL, proof INTEGER NOT NULL) WITHOUT ROWID",
    "CREATE INDEX untimed_token ON untimed(stored_at DESC, event_id) WHERE token = 1",
    "CREATE INDEX untimed_proof ON untimed(stored_at DESC, event_id) WHERE proof = 1",
    # what was there before the triggers (a migration): marked once
    "INSERT INTO untimed (event_id, stored_at, token, proof) SELECT * FROM (SELECT event_id, "
    "max(stored_at), NOT EXISTS (SELECT 1 FROM trusted_time t WHERE t.event_id = e.event_id "
    "AND t.kind = 'rfc3161') AS token, NOT EXISTS (SELECT 1 FROM trusted_time t "
    "WHERE t.event_id = e.event_id AND t.kind = 'ots' AND t.complete = 1) AS proof FROM "
    "ledger e WHERE body IS NOT NULL GROUP BY event_id) WHERE token OR proof",
    *(
        f"CREATE TRIGGER untimed_{name} AFTER {when} BEGIN "
        + "".join(_mark_untimed(row) for row in rows)
        + " END"
        for name, when, rows in (
            ("ledger_in", "INSERT ON ledger", ("NEW.event_id",)),
            ("ledger_out", "DELETE ON ledger", ("OLD.event_id",)),
            ("ledger_set", "UPDATE OF event_id, stored_at, body ON ledger", _BOTH),
            ("time_in", "INSERT ON trusted_time", ("NEW.event_id",)),
            ("time_set", "UPDATE ON trusted_time", _BOTH),
            ("time_out", "DELETE ON trusted_time", ("OLD.event_id",)),
        )
    ),
)


# one row: the live events per the journal (stored minus dropped) and the journal's size then
COUNT_SCHEMA = """
CREATE TABLE outbox_count (
    id INTEGER PRIMARY KEY CHECK (id = 1),
    rows INTEGER NOT NULL,
    journal_bytes INTEGER NOT NULL
)
"""


OUTBOX_DIR = "outbox"
"""The outbox's folder in PITH_HOME (its file and its journal)."""


def default_path() -> Path:
    return private_dir(OUTBOX_DIR) / DB_NAME


def journal_path(db: Path) -> Path:
    """The journal beside the outbox file `db`."""
    return db.with_name(JOURNAL_NAME) if db.name == DB_NAME else db.with_name(db.name + ".jsonl")


# --- opening: the checks, the schema, the migration -------------------------------------------


def damaged(path: Path, why: str) -> OutboxDamaged:
    """The one error of a damaged outbox file: what is wrong, and how to recover."""
    journal = journal_path(path)
    how = (
        f"rebuild it from its journal with: pith outbox recover ({journal})"
        if journal.is_file()
        else f"move it aside; its journal {journal} is missing too"
    )
    return OutboxDamaged(f"the outbox {path} is damaged ({why}); {how}")


def _connect(path: Path) -> sqlite3.Connection:
    # autocommit (isolation_level=None): the outbox writes its own BEGIN IMMEDIATE ... COMMIT,
    # so a store takes the write lock up front instead of upgrading a read lock (which can fail
    # with "database is locked" between two processes); one connection serves every thread,
    # under the Outbox's own lock
    return sqlite3.connect(path, timeout=30, isolation_level=None, check_same_thread=False)


def open_checked(path: Path, journal: Path) -> sqlite3.Connection:
    """The connection to a healthy outbox file (created when there is none and nothing was
    ever journalled); else OutboxDamaged."""
    if path.is_dir():
        raise damaged(path, "a folder is in its place")
    if not path.exists() and not path.is_symlink():
        if journal.is_file() and journal.stat().st_size > 0:
            raise damaged(path, "the file is missing, but its journal holds events")
        _create(path)
    elif not path.is_file():
        raise damaged(path, "not a regular file")
    elif path.stat().st_size == 0:  # never left empty: it is created whole, then linked
        raise damaged(path, "the file is empty")
    conn = _connect(path)
    try:
        _check(conn, path)
        # WAL: readers (`pith outbox list`) never block a `pith submit` that records answers
        conn.execute("PRAGMA journal_mode=WAL")
        conn.execute("PRAGMA synchronous=NORMAL")
        conn.execute("PRAGMA busy_timeout=30000")
    except sqlite3.DatabaseError as exc:
        conn.close()
        raise damaged(path, str(exc)) from None
    except BaseException:
        conn.close()
        raise
    return conn


def _check(conn: sqlite3.Connection, path: Path) -> None:
    """SQLite's quick_check, the schema version, the tables, and the rows against the
    journal's count (raises OutboxDamaged)."""
    conn.execute("PRAGMA busy_timeout=30000")
    version = conn.execute("PRAGMA user_version").fetchone()[0]
    # quick_check, not integrity_check: it runs on every open (no index cross-check); of a
    # large file, only the working set (FULL_CHECK_BYTES): what every open costs stays flat
    # however long the ledger grows; three problems at most, as many as one line can name
    large = version >= SCHEMA_VERSION and path.stat().st_size > FULL_CHECK_BYTES
    if not large:
        checks = ["PRAGMA quick_check(3)"]
    else:
        tables = ("outbox", "outbox_count", "ledger_count")
        checks = [f"PRAGMA quick_check({t})" for t in tables]
    problems = [r[0] for sql in checks for r in conn.execute(sql).fetchmany(3) if r[0] != "ok"]
    if problems:
        raise damaged(path, "; ".join(str(p) for p in problems[:3]))
    if version > SCHEMA_VERSION:
        raise OutboxDamaged(
            f"the outbox {path} has schema version {version}, made by a newer pithauthor "
            f"(this one reads up to {SCHEMA_VERSION}); upgrade pithauthor"
        )
    have = {r[1] for r in conn.execute("PRAGMA table_info(outbox)")}
    if not have:
        raise damaged(path, "it holds no outbox table")
    if version >= LEDGER_VERSION:
        want = set(COLUMNS)
    elif version >= 2:
        want = set(COLUMNS) - set(SAID)
    else:
        want = {"event_id", "subject", "body", "state"}
    if not want <= have:
        raise damaged(path, f"its outbox table lacks {', '.join(sorted(want - have))}")
    if version >= LEDGER_VERSION and not list(conn.execute("PRAGMA table_info(ledger)")):
        raise damaged(path, "it holds no ledger table")
    if version >= COUNTED_VERSION and not list(conn.execute("PRAGMA table_info(trusted_time)")):
        raise damaged(path, "it holds no trusted_time table")
    if version >= UNTIMED_VERSION and not list(conn.execute("PRAGMA table_info(untimed)")):
        raise damaged(path, "its mark of events lacking a proof of time (table untimed) is missing")
    if version >= 3:  # a version-3 to -6 file is checked before it is migrated
        _check_count(
            conn,
            path,
            ledger=version >= LEDGER_VERSION,
            counted=version >= COUNTED_VERSION,
            large=large,
        )


def _check_count(
    conn: sqlite3.Connection,
    path: Path,
    *,
    ledger: bool = True,
    counted: bool = True,
    large: bool = False,
) -> None:
    """The rows the outbox has (working set and ledger rows that keep their event) against
    those the journal says are live (kept in `outbox_count` by every store and drop): rows
    deleted with the tables intact are damage, never an outbox with fewer events.

    The working set is counted; the ledger's rows too (on its partial index `ledger_kept`)
    unless the file is `large`, where its `ledger_count` is taken (`LEDGER_COUNT_STATEMENTS`):
    what every open costs stays flat however long the ledger grows. Where both are read they
    must agree."""
    if not list(conn.execute("PRAGMA table_info(outbox_count)")):
        raise damaged(path, "its row count (table outbox_count) is missing")
    if counted and not list(conn.execute("PRAGMA table_info(ledger_count)")):
        raise damaged(path, "its count of the ledger (table ledger_count) is missing")
    # one statement: one snapshot, even while another process stores
    direct = "(SELECT count(*) FROM ledger WHERE body IS NOT NULL)" if ledger else "0"
    found = conn.execute(
        f"SELECT (SELECT count(*) FROM outbox), {'NULL' if large and counted else direct}, "
        f"{'(SELECT n FROM ledger_count WHERE id = 1)' if counted else 'NULL'}, rows, "
        "journal_bytes FROM outbox_count WHERE id = 1"
    ).fetchone()
    if found is None:
        raise damaged(path, "its row count (table outbox_count) is empty")
    working, in_ledger, kept, want, recorded = found
    if counted and kept is None:
        raise damaged(path, "its count of the ledger (table ledger_count) is empty")
    if in_ledger is not None and kept is not None and in_ledger != kept:
        raise damaged(path, f"its ledger holds {in_ledger} events where its count says {kept}")
    have = working + (in_ledger if in_ledger is not None else kept)
    if have < want:
        journal = journal_path(path)
        size = journal.stat().st_size if journal.is_file() else recorded
        # a recovery can only bring back what the journal still holds: say when it lost lines
        cut = (
            f", and its journal is cut short ({size} of {recorded} bytes)"
            if size < recorded
            else ""
        )
        raise damaged(path, f"{want - have} of its {want} stored events are missing{cut}")
    if have > want:
        raise damaged(path, f"it holds {have} rows where {want} events were stored")


def _create(path: Path) -> None:
    """A new, empty outbox: built whole in a temp file, then linked into place, so that an
    outbox file that exists always holds the schema (an empty file is damage)."""
    tmp = path.with_name(f"{TEMP_PREFIX}{os.urandom(8).hex()}")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    os.close(fd)
    try:
        conn = _connect(tmp)
        try:
            conn.executescript(";".join((SCHEMA, COUNT_SCHEMA, LEDGER_SCHEMA, TRUSTED_TIME_SCHEMA)))
            for statement in (*TALLY_STATEMENTS, *LEDGER_COUNT_STATEMENTS, *UNTIMED_STATEMENTS):
                conn.execute(statement)
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


def migrate(conn: sqlite3.Connection, path: Path) -> tuple[int, str] | None:
    """Bring a version-0 outbox (rows keyed by event_id alone, pending ones naming no
    registry), a version-2 one (no `outbox_count`), a version-3 one (no state `held`), a
    version-4 one (no ledger, no `said` columns), a version-5 one (no `trusted_time`), a
    version-6 one (no `ledger_count`) or a version-7 one (no `untimed`) to this schema, once:
    returns (rows bound, the registry) when it bound any."""
    # the version is read again under the write lock: two processes opening an old outbox at
    # once both see it old here, and only the first may migrate it
    if conn.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION:
        return None
    default = registry_binding(None)
    conn.execute("BEGIN IMMEDIATE")
    try:
        if conn.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION:
            conn.execute("ROLLBACK")  # another process migrated it meanwhile
            return None
        version = conn.execute("PRAGMA user_version").fetchone()[0]
        # before version 2 the table is rebuilt with the registry column; version 3's is
        # rebuilt only to admit the state 'held' (SQLite cannot change a CHECK in place)
        unbound = _bind_registries(conn, default) if version < 4 else 0
        if version < 3:
            # what it holds now is all that can be counted: the count starts from it
            journal = journal_path(path)
            size = journal.stat().st_size if journal.is_file() else 0
            conn.execute(COUNT_SCHEMA)
            conn.execute(
                "INSERT INTO outbox_count (id, rows, journal_bytes) "
                "SELECT 1, count(*), ? FROM outbox",
                (size,),
            )
        if version < LEDGER_VERSION:
            _add_ledger(conn)
        conn.execute(TRUSTED_TIME_SCHEMA)
        if version < COUNTED_VERSION:
            for statement in LEDGER_COUNT_STATEMENTS:
                conn.execute(statement)
        if version < UNTIMED_VERSION:
            for statement in UNTIMED_STATEMENTS:
                conn.execute(statement)
        conn.execute(f"PRAGMA user_version={SCHEMA_VERSION}")
        conn.execute("COMMIT")
    except sqlite3.DatabaseError as exc:
        conn.execute("ROLLBACK")
        raise damaged(path, f"it could not be migrated: {exc}") from None
    except BaseException:
        conn.execute("ROLLBACK")
        raise
    return (unbound, default) if unbound else None


def _bind_registries(conn: sqlite3.Connection, default: str) -> int:
    """The table rebuilt to this schema, inside the migration's transaction: from version 0,
    every row bound to a registry (`default` for those naming none); returns how many were
    bound so (none from version 2 or 3, whose rows all name theirs)."""
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


def _add_ledger(conn: sqlite3.Connection) -> None:
    """Version 4 to 5, inside the migration's transaction: the `said` columns (each stored
    event read once, now), the indexes and the ledger, and the accepted rows moved into it."""
    have = {r[1] for r in conn.execute("PRAGMA table_info(outbox)")}
    for column in SAID:
        if column not in have:
            conn.execute(f"ALTER TABLE outbox ADD COLUMN {column} TEXT")
    for rowid, body in conn.execute("SELECT rowid, body FROM outbox").fetchall():
        conn.execute(
            "UPDATE outbox SET signer=?, key_id=?, citing=? WHERE rowid=?",
            (*said_columns(body), rowid),
        )
    for statement in LEDGER_SCHEMA.split(";"):
        if statement.strip():
            conn.execute(statement)
    moved = ", ".join(LEDGER_COLUMNS)
    conn.execute(f"INSERT INTO ledger ({moved}) SELECT {moved} FROM outbox WHERE state='accepted'")
    conn.execute("DELETE FROM outbox WHERE state='accepted'")
    for statement in TALLY_STATEMENTS:
        conn.execute(statement)


def said_columns(body: object) -> tuple[str | None, str | None, str | None]:
    """What commands select a stored event by (`SAID`): its signer's fingerprint and key id,
    and the citing paper of a citation; None where the event (a dict, or its JSON text) has
    none. A label for finding rows, never a check: what is read back is checked in full."""
    event = body
    if isinstance(body, str):
        try:
            event = parse_json(body)
        except ValueError:
            return None, None, None
    if not isinstance(event, dict):
        return None, None, None
    signer, payload = event.get("signer"), event.get("payload")
    signer = signer if isinstance(signer, dict) else {}
    payload = payload if isinstance(payload, dict) else {}
    citing = payload.get("citing_pith_number")
    if event.get("event_type") != "citation_signature":
        citing = None
    return _text(signer.get("public_key_fingerprint")), _text(signer.get("key_id")), _text(citing)


def _text(value: object) -> str | None:
    return value if isinstance(value, str) else None


# --- the journal and recovery -----------------------------------------------------------------


Line = dict[str, object] | str  # a journal line, or its JSON text already written


def stored_line(registry: str, stored_at: str, body: str) -> str:
    """The journal's line for an event stored: its canonical text `body` as it is (never
    parsed again to be written out again)."""
    return stored_lines(registry, stored_at)(body)


def stored_lines(registry: str, stored_at: str) -> Callable[[str], str]:
    """`stored_line(registry, stored_at, body)` as a function of `body`, for the events one
    store writes with the same registry and date: the line's head written once (two
    `json.dumps` per event were a fifth of the lines' cost)."""
    head = (
        f'{{"op":"store","registry":{json.dumps(registry, ensure_ascii=False)},'
        f'"stored_at":{json.dumps(stored_at)},"event":'
    )
    return lambda body: f"{head}{body}}}"


def forget_line(row: Mapping[str, object]) -> dict[str, object]:
    """The journal's line for an accepted event whose body is dropped: its id and what the
    ledger keeps of it (`recover` brings the ledger row back, without the event)."""
    return {"op": "forget", **{c: row.get(c) for c in LEDGER_COLUMNS if c not in _NOT_KEPT}}


_NOT_KEPT = ("body", "answer", "attempts")


def time_line(
    event_id: str, kind: str, source: str, proof: bytes, complete: bool
) -> dict[str, object]:
    """The journal's line for a proof of trusted time kept (`recover` keeps it again)."""
    return {
        "op": "time",
        "event_id": event_id,
        "kind": kind,
        "source": source,
        "proof": b64encode(proof),
        "complete": complete,
    }


def append_journal(journal: Path, lines: list[Line], *, durable: bool = True) -> int | None:
    """Append whole lines in one write, then fsync (a torn last line is skipped on recovery);
    returns the journal's size then (None: nothing to write)."""
    if not lines:
        return None
    return append_lines(journal, _journal_text(lines).encode("utf-8"), durable=durable)


def count_rows(conn: sqlite3.Connection, rows: int, journal_bytes: int | None) -> None:
    """Move the journal's count by `rows`, inside the transaction that stores or drops them."""
    if journal_bytes is not None:
        conn.execute(
            "UPDATE outbox_count SET rows = rows + ?, journal_bytes = ? WHERE id = 1",
            (rows, journal_bytes),
        )


def _journal_text(lines: list[Line]) -> str:
    """One compact JSON line per entry."""
    return "".join(
        (x if isinstance(x, str) else json.dumps(x, ensure_ascii=False, separators=(",", ":")))
        + "\n"
        for x in lines
    )


def _journal_lost(conn: sqlite3.Connection, journal: Path) -> bool:
    """True when the journal is missing, or shorter than the outbox says it was (truncated)."""
    try:
        size = journal.stat().st_size
    except FileNotFoundError:
        return True
    recorded: int = conn.execute("SELECT journal_bytes FROM outbox_count").fetchone()[0]
    return size < recorded


def export_journal_if_missing(conn: sqlite3.Connection, journal: Path) -> None:
    """Write the journal of a healthy outbox that has none (an older outbox, or a journal
    deleted or truncated): every row, in one atomic file, while no other process can store."""
    if not _journal_lost(conn, journal):
        return
    conn.execute("BEGIN IMMEDIATE")
    try:
        if _journal_lost(conn, journal):
            ledger = ", ".join(LEDGER_COLUMNS)
            rows = conn.execute(
                "SELECT registry, stored_at, body, event_id, state FROM outbox UNION ALL "
                "SELECT registry, stored_at, body, event_id, 'accepted' FROM ledger "
                "WHERE body IS NOT NULL ORDER BY stored_at, event_id"
            ).fetchall()
            # accepted (and held) rows are journalled as such, so a recovery does not send
            # them again;
            # rejected ones are not (as in `Outbox.mark_rejected`)
            lines: list[Line] = [stored_line(r, t, b) for r, t, b, _, _ in rows]
            lines += [
                {"op": state, "event_id": e, "registry": r}
                for r, _, _, e, state in rows
                if state in ("accepted", "held")
            ]
            forgotten = conn.execute(f"SELECT {ledger} FROM ledger WHERE body IS NULL")
            lines += [forget_line(dict(zip(LEDGER_COLUMNS, r, strict=True))) for r in forgotten]
            proofs = conn.execute(
                "SELECT event_id, kind, source, proof, complete FROM trusted_time "
                "ORDER BY updated_at, event_id, kind, source"
            )
            lines += [time_line(e, k, s, bytes(p), bool(c)) for e, k, s, p, c in proofs]
            text = _journal_text(lines)
            replace_file(journal, text, mode=0o600)
            size = len(text.encode("utf-8"))
            conn.execute("UPDATE outbox_count SET journal_bytes = ? WHERE id = 1", (size,))
    finally:
        conn.execute("COMMIT")
