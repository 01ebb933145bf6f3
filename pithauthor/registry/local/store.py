"""The local registry's storage: its data folder (0700; its key lives there too), papers,
events and receipts in SQLite, the trusted-time sidecars of stored events, and the cache of the
documents it served (each paper's merged state and bundle, as the bytes sent), kept until a new
event or sidecar for that paper is stored.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import queue
import sqlite3
import threading
from collections import OrderedDict
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, BinaryIO, Literal, NamedTuple

from pithauthor.errors import ArxivIdError, DocumentError, PithNumberError, UnsafePermissions
from pithauthor.fs import replace_file
from pithauthor.protocol.canonical_json import canonical, dump_json, parse_stored
from pithauthor.protocol.checks.event import typed_author_event
from pithauthor.protocol.documents import AuthorEvent, CanonicalRecord, PaperSummary, Receipt
from pithauthor.protocol.ids import classify_reference
from pithauthor.protocol.timestamps import Sidecar, merge_sidecars, parse_sidecar, sidecar_json
from pithauthor.protocol.utc import utc_now


def ensure_private_dir(path: Path) -> Path:
    """Create `path` (mode 0700) or check that an existing one is not open to others."""
    path.mkdir(parents=True, exist_ok=True, mode=0o700)
    if os.name == "posix" and path.stat().st_mode & 0o077:
        raise UnsafePermissions(
            f"the registry data folder {path} is open to others; fix it with: chmod 700 {path}"
        )
    return path


# The local registry's cache of served documents: each paper's merged state and bundle, as the
# bytes sent, kept until a new event for that paper is stored.
#
# Merging re-checks every event, so building a state costs time in proportion to the paper's
# events, and anyone may post events: without this cache a busy paper would slow every reader
# without bound. An entry is tagged with the paper's event version (`RegistryStore.
# events_version`, read *before* the events it was built from), so an entry can only be older
# than the store, never newer, and a read that finds another version rebuilds.

Key = tuple[str, str]  # (record body, "state" | "bundle")


Stamp = tuple[int, int, int, int]  # a file's (st_ino, st_size, st_mtime_ns, st_ctime_ns)


def _stamp(st: os.stat_result) -> Stamp:
    return st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns


class KeptFile(NamedTuple):
    """A state document kept in the data folder (`RegistryStore.saved_document`), open, with
    the stamp it had when it was opened."""

    file: BinaryIO
    stamp: Stamp

    def read(self) -> bytes | None:
        """Its bytes, when the file kept its stamp while they were read (any write through
        the file system changes its ctime, which no call can set back); else None."""
        data = os.pread(self.file.fileno(), self.stamp[1], 0)
        if len(data) != self.stamp[1] or _stamp(os.fstat(self.file.fileno())) != self.stamp:
            return None
        return data


class Encoded(NamedTuple):
    """A document as sent (its parts, in order: a merged state is a few large segments,
    never copied into one text), and its entity tag (a hash of those bytes), for
    `If-None-Match`."""

    parts: tuple[bytes, ...]
    etag: str

    @classmethod
    def of(cls, body: bytes) -> Encoded:
        return cls((body,), '"' + hashlib.sha256(body).hexdigest()[:32] + '"')

    @property
    def size(self) -> int:
        return sum(map(len, self.parts))


class DocumentCache:
    """Encoded documents by (body, kind), each with the event version it was built at; at most
    `limit` entries, the least recently read dropped first (a bundle can be megabytes)."""

    def __init__(self, limit: int = 64) -> None:
        self._limit = limit
        self._entries: OrderedDict[Key, tuple[int, Encoded]] = OrderedDict()
        self._lock = threading.Lock()  # the pool's workers read and fill it at once

    def get(self, key: Key, version: int) -> Encoded | None:
        """The cached document of `key` when they were built at `version`, else None."""
        with self._lock:
            entry = self._entries.get(key)
            if entry is None or entry[0] != version:
                return None
            self._entries.move_to_end(key)
            return entry[1]

    def put(self, key: Key, version: int, doc: Encoded) -> None:
        with self._lock:
            old = self._entries.get(key)
            if old is not None and old[0] > version:
                return  # a slower reader built an older state: keep the newer one
            self._entries[key] = (version, doc)
            self._entries.move_to_end(key)
            while len(self._entries) > self._limit:
                self._entries.popitem(last=False)


# SQLite storage of the local registry: records, and author events deduplicated by event_id.

DB_FILE = "registry.sqlite3"


SCHEMA = """
CREATE TABLE IF NOT EXISTS records (
    body TEXT PRIMARY KEY,
    pith_number TEXT NOT NULL UNIQUE,
    arxiv_id TEXT NOT NULL,
    canonical_sha256 TEXT NOT NULL,
    canonical_record TEXT NOT NULL,
    receipt TEXT NOT NULL,
    upstream_receipt TEXT,
    created_at TEXT NOT NULL,
    paper TEXT
);
CREATE INDEX IF NOT EXISTS records_arxiv ON records(arxiv_id);
CREATE TABLE IF NOT EXISTS events (
    event_id TEXT PRIMARY KEY,
    body TEXT NOT NULL REFERENCES records(body),
    event_type TEXT NOT NULL,
    raw TEXT NOT NULL,
    received_at TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS events_body ON events(body);
CREATE TABLE IF NOT EXISTS state_heads (
    body TEXT PRIMARY KEY,
    version INTEGER NOT NULL,
    valid_count INTEGER NOT NULL,
    last TEXT NOT NULL,
    awaited TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS state_pieces (
    body TEXT NOT NULL,
    seq INTEGER NOT NULL,
    part TEXT NOT NULL,
    event_id TEXT NOT NULL,
    served BLOB NOT NULL,
    canon BLOB,
    said TEXT NOT NULL,
    place TEXT NOT NULL,
    PRIMARY KEY (body, seq)
);
CREATE INDEX IF NOT EXISTS state_pieces_event ON state_pieces(body, event_id);
DROP TABLE IF EXISTS state_documents;
CREATE TABLE IF NOT EXISTS state_files (
    body TEXT PRIMARY KEY,
    version INTEGER NOT NULL,
    event_count INTEGER NOT NULL,
    state_sha256 TEXT NOT NULL,
    file_sha256 TEXT NOT NULL,
    ino INTEGER NOT NULL,
    size INTEGER NOT NULL,
    mtime_ns INTEGER NOT NULL,
    ctime_ns INTEGER NOT NULL,
    mac BLOB NOT NULL
);
CREATE TABLE IF NOT EXISTS trusted_time (
    event_id TEXT PRIMARY KEY REFERENCES events(event_id),
    body TEXT NOT NULL REFERENCES records(body),
    sidecar TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS trusted_time_body ON trusted_time(body);
CREATE TABLE IF NOT EXISTS held (
    event_id TEXT PRIMARY KEY,
    body TEXT NOT NULL REFERENCES records(body),
    raw TEXT NOT NULL,
    received_at TEXT NOT NULL
);
"""


@dataclass(frozen=True)
class StoredRecord:
    """One paper the registry knows."""

    body: str
    pith_number: str
    arxiv_id: str
    canonical_sha256: str
    canonical_record: CanonicalRecord
    receipt: Receipt
    upstream_receipt: Receipt | None
    created_at: str
    paper: PaperSummary | None = None  # what the record displays (title, authors); unsigned


Insert = Literal["new", "repeat"]


class SavedState(NamedTuple):
    """A merged state kept in the store (`RegistryStore.saved_state`): the event version it
    holds, its valid_event_count, the merge order key of its last event, the ids corrections
    wait for, and its pieces (`StateBuilder.pieces`)."""

    version: int
    valid_count: int
    last: tuple[str, str]
    awaited: list[str]
    pieces: list[tuple[str, str, bytes, bytes, str, str]]


class SavedDocument(NamedTuple):
    """What the store keeps of a merged state document written to a file at shutdown
    (`RegistryStore.save_document`): the events it covers (the store's event version and its
    count of the paper's events), its state_sha256, the SHA-256 of the file's bytes and the
    file's stamp when it was written, and a MAC of all of it by the registry's key
    (`LiveStates`)."""

    version: int
    event_count: int
    state_sha256: str
    file_sha256: str
    stamp: Stamp
    mac: bytes


class _Pending:
    """One event waiting for the group commit, and its outcome."""

    __slots__ = ("body", "done", "error", "event_id", "event_type", "raw", "received", "result")

    def __init__(self, body: str, event: AuthorEvent, received: str) -> None:
        self.body = body
        self.event_id = event["event_id"]
        self.event_type = event["event_type"]
        self.raw = canonical(event).decode("utf-8")
        self.received = received
        self.result: Insert = "repeat"
        self.error: BaseException | None = None
        self.done = threading.Event()


def _private_db(data_dir: Path) -> Path:
    """The database path, its folder 0700 and its files (with SQLite's -wal/-shm, which take
    the database's mode) 0600."""
    path = ensure_private_dir(data_dir) / DB_FILE
    os.close(os.open(path, os.O_RDWR | os.O_CREAT, 0o600))
    if os.name == "posix":
        for name in (DB_FILE, DB_FILE + "-wal", DB_FILE + "-shm"):
            file = data_dir / name
            if file.exists() and file.stat().st_mode & 0o077:
                os.chmod(file, 0o600)  # made by an older pithauthor
    return path


class RegistryStore:
    """Records and events in one SQLite file (WAL, fully synced); one connection per thread.

    Events are written by one writer thread in group commits: every event that arrives while a
    commit is on disk goes into the next transaction, so parallel clients share one fsync. An
    answer is given only after the commit holding the event is durable.
    """

    MAX_GROUP = 256  # one transaction's events at most: a flood of POSTs is answered in waves

    def __init__(self, data_dir: Path) -> None:
        self.path = _private_db(data_dir)
        self._local = threading.local()
        # every connection any thread opened, so `close` can close them all: a server's worker
        # threads end, or stay parked, without closing theirs (a test process starting hundreds
        # of registries ran out of file descriptors)
        self._opened: list[sqlite3.Connection] = []
        self._opened_lock = threading.Lock()
        self._queue: queue.Queue[_Pending | None] = queue.Queue()
        self._writer: threading.Thread | None = None
        self._writer_lock = threading.Lock()
        self._by_body: dict[str, StoredRecord] = {}  # records never change once stored
        with self._conn() as conn:
            conn.executescript(SCHEMA)
            columns = {row[1] for row in conn.execute("PRAGMA table_info(records)")}
            if "paper" not in columns:  # a registry folder from before records displayed one
                conn.execute("ALTER TABLE records ADD COLUMN paper TEXT")

    def _connect(self) -> sqlite3.Connection:
        """A new connection for the calling thread, remembered for `close`. Each is used by
        the thread that opened it only; `check_same_thread` is off so `close` may close it."""
        conn = sqlite3.connect(self.path, timeout=30, isolation_level=None, check_same_thread=False)
        with self._opened_lock:
            self._opened.append(conn)
        return conn

    def _conn(self) -> sqlite3.Connection:
        conn: sqlite3.Connection | None = getattr(self._local, "conn", None)
        if conn is None:
            conn = self._connect()
            conn.execute("PRAGMA journal_mode=WAL")
            conn.execute("PRAGMA synchronous=FULL")
            conn.execute("PRAGMA busy_timeout=30000")
            self._local.conn = conn
        return conn

    def add_record(self, rec: StoredRecord) -> bool:
        """Store a record; False when its number was already there (kept unchanged)."""
        cur = self._conn().execute(
            "INSERT INTO records (body, pith_number, arxiv_id, canonical_sha256, "
            "canonical_record, receipt, upstream_receipt, created_at, paper) "
            "VALUES (?,?,?,?,?,?,?,?,?) ON CONFLICT(body) DO NOTHING",
            (
                rec.body,
                rec.pith_number,
                rec.arxiv_id,
                rec.canonical_sha256,
                dump_json(rec.canonical_record),
                dump_json(rec.receipt),
                dump_json(rec.upstream_receipt) if rec.upstream_receipt else None,
                rec.created_at,
                dump_json(rec.paper) if rec.paper else None,
            ),
        )
        return cur.rowcount == 1

    def find(self, ref: str) -> StoredRecord | None:
        """A record by body or number, unique alias prefix (8/12/16), or arXiv id: whatever
        `classify_reference` (the one rule) makes of `ref`. Records of several versions of one
        arXiv id coexist: `IDvN` is that version's, a bare `ID` the latest version's."""
        cached = self._by_body.get(ref.strip().upper())
        if cached is not None:  # every POST names its record by body
            return cached
        try:
            found = classify_reference(ref)
        except (ArxivIdError, PithNumberError):
            return None
        conn = self._conn()
        if found.number is not None:
            rows = conn.execute("SELECT * FROM records WHERE body = ?", (found.number.body,))
        elif found.alias is not None:
            prefix = found.alias.prefix
            rows = conn.execute(
                "SELECT * FROM records WHERE substr(body, 1, ?) = ?", (len(prefix), prefix)
            )
        else:
            assert found.arxiv is not None
            rows = conn.execute("SELECT * FROM records WHERE arxiv_id = ?", (found.arxiv.id,))
            return _version_of([_record(r) for r in rows.fetchall()], found.arxiv.version)
        matches = rows.fetchall()
        if len(matches) != 1:
            return None
        rec = _record(matches[0])
        number = found.number
        if number is not None and number.year is not None and number.full != rec.pith_number:
            return None  # pith:YEAR:BODY of another year names no record here
        # only a body is cached: it names one record for good, while an alias prefix or a bare
        # arXiv id may name another (or none, ambiguous) once more records are stored
        if number is not None:
            self._by_body[rec.body] = rec
        return rec

    def records(self) -> list[StoredRecord]:
        rows = self._conn().execute("SELECT * FROM records ORDER BY body").fetchall()
        return [_record(r) for r in rows]

    def insert_event(self, body: str, event: AuthorEvent, received_at: str) -> Insert:
        """Store a checked event once, in canonical form: `new`, or `repeat` when its event_id is
        already stored (the stored copy stays). Call only with an event `checked_author_event`
        passed: then one event_id is one signed content (the id is its hash, and no unknown field
        rides along), and a second copy can differ only by another valid signature of the same
        key, which only the author can make.

        Returns when the transaction holding it is on disk."""
        item = _Pending(body, event, received_at)
        self._ensure_writer()
        self._queue.put(item)
        item.done.wait()
        if item.error is not None:
            raise item.error
        return item.result

    def insert_events(self, body: str, events: Iterable[AuthorEvent], received_at: str) -> int:
        """Store many checked events of `body` in one transaction (a bulk import: a mirror
        filled from a dump, the benchmarks' 100,000-event paper); returns how many were new.
        The same rules as `insert_event`, which a server uses (its answers wait for the
        group commit holding each event)."""
        rows = [
            (e["event_id"], body, e["event_type"], canonical(e).decode("utf-8"), received_at)
            for e in events
        ]
        conn = self._conn()
        before = conn.total_changes
        conn.execute("BEGIN IMMEDIATE")
        try:
            conn.executemany(
                "INSERT INTO events VALUES (?,?,?,?,?) ON CONFLICT(event_id) DO NOTHING", rows
            )
            conn.execute("COMMIT")
        except BaseException:
            conn.execute("ROLLBACK")
            raise
        return conn.total_changes - before

    def _ensure_writer(self) -> None:
        with self._writer_lock:
            if self._writer is None or not self._writer.is_alive():
                self._writer = threading.Thread(
                    target=self._write_loop, name="pith-registry-writer", daemon=True
                )
                self._writer.start()

    def _write_loop(self) -> None:
        while True:
            first = self._queue.get()
            if first is None:  # `close`: every event queued before it was committed
                return
            group = [first]
            while len(group) < self.MAX_GROUP:
                try:
                    item = self._queue.get_nowait()
                except queue.Empty:
                    break
                if item is None:
                    self._queue.put(None)  # seen after this group is committed
                    break
                group.append(item)
            try:
                self._commit(group)
            except BaseException as exc:  # every waiter hears of it; nothing half-written
                for item in group:
                    item.error = exc
            for item in group:
                item.done.set()

    def _commit(self, group: list[_Pending]) -> None:
        conn = self._conn()
        conn.execute("BEGIN IMMEDIATE")
        try:
            for item in group:
                cur = conn.execute(
                    "INSERT INTO events VALUES (?,?,?,?,?) ON CONFLICT(event_id) DO NOTHING",
                    (item.event_id, item.body, item.event_type, item.raw, item.received),
                )
                item.result = "new" if cur.rowcount == 1 else "repeat"
            conn.execute("COMMIT")
        except BaseException:
            conn.execute("ROLLBACK")
            raise

    def events(self, body: str) -> list[AuthorEvent]:
        """The events of a record (each checked in full when it was stored: its shape is read
        again, not its signature)."""
        rows = (
            self._conn()
            .execute("SELECT raw FROM events WHERE body = ? ORDER BY event_id", (body,))
            .fetchall()
        )
        return [_stored_event(r[0]) for r in rows]

    def events_after(self, body: str, rowid: int = 0) -> list[tuple[int, str, AuthorEvent]]:
        """(rowid, canonical text, event) of the events of `body` stored after `rowid` (0: all),
        in the order stored: what a merged state kept up to date has not seen yet
        (`events_version` is the rowid of the last one)."""
        rows = (
            self._conn()
            .execute(
                "SELECT rowid, raw FROM events WHERE body = ? AND rowid > ? ORDER BY rowid",
                (body, rowid),
            )
            .fetchall()
        )
        return [(int(r[0]), str(r[1]), _stored_event(r[1])) for r in rows]

    # --- merged states kept (registry/local/states.py) --------------------------------------
    #
    # A paper's merged state as the pieces `StateBuilder.pieces` gives (an event of `current`
    # with its event_id, an equivocation, an applied id...), in order (`seq`), and the event
    # version they hold: a restarted registry serves them without merging. Only a cache: when
    # its version is not the store's, the server merges again; so it is written without
    # waiting for the disk (synchronous=NORMAL, on a connection of its own).

    def _state_conn(self) -> sqlite3.Connection:
        conn: sqlite3.Connection | None = getattr(self._local, "state_conn", None)
        if conn is None:
            conn = self._connect()
            conn.execute("PRAGMA synchronous=NORMAL")
            conn.execute("PRAGMA busy_timeout=30000")
            self._local.state_conn = conn
        return conn

    def has_saved_state(self, body: str) -> bool:
        """Whether a state is kept for `body` (without reading its pieces)."""
        row = (
            self._state_conn()
            .execute("SELECT 1 FROM state_heads WHERE body = ?", (body,))
            .fetchone()
        )
        return row is not None

    def saved_state(self, body: str) -> SavedState | None:
        """The state kept for `body` (`save_state`), or None."""
        conn = self._state_conn()
        head = conn.execute(
            "SELECT version, valid_count, last, awaited FROM state_heads WHERE body = ?", (body,)
        ).fetchone()
        if head is None:
            return None
        rows = conn.execute(
            "SELECT part, event_id, served, coalesce(canon, served), said, place "
            "FROM state_pieces WHERE body = ? ORDER BY seq",
            (body,),
        ).fetchall()
        # the places sorted here, stably: SQLite's sorter would copy every (large) row
        rows.sort(key=lambda row: row[5])
        last = _stored_json(head[2])
        awaited = _stored_json(head[3])
        return SavedState(int(head[0]), int(head[1]), (last[0], last[1]), awaited, rows)

    def save_state(
        self,
        body: str,
        head: SavedState,
        changes: Iterable[tuple[str, str, str, bytes, bytes, str, str]],
        *,
        whole: bool = False,
    ) -> None:
        """Apply `changes` (`StateBuilder.log`: ("put", part, event_id, served, canonical,
        slot) or ("drop", part, event_id, ...)) to the state kept for `body`, now at `head`
        (its `pieces` are not read); `whole`: they are every piece, replacing what was kept."""
        conn = self._state_conn()
        conn.execute("BEGIN IMMEDIATE")
        try:
            if whole:
                conn.execute("DELETE FROM state_pieces WHERE body = ?", (body,))
            row = conn.execute(
                "SELECT coalesce(max(seq), 0) FROM state_pieces WHERE body = ?", (body,)
            ).fetchone()
            seq = int(row[0])
            puts = []
            for how, part, eid, served, canon, said, place in changes:
                if how == "drop":
                    conn.execute(
                        "DELETE FROM state_pieces WHERE body = ? AND event_id = ? AND part = ?",
                        (body, eid, part),
                    )
                    continue
                seq += 1
                puts.append(
                    (
                        body,
                        seq,
                        part,
                        eid,
                        served,
                        None if canon == served else canon,
                        said,
                        place,
                    )
                )
            conn.executemany("INSERT INTO state_pieces VALUES (?,?,?,?,?,?,?,?)", puts)
            conn.execute(
                "INSERT INTO state_heads VALUES (?,?,?,?,?) ON CONFLICT(body) DO UPDATE SET "
                "version = excluded.version, valid_count = excluded.valid_count, "
                "last = excluded.last, awaited = excluded.awaited",
                (
                    body,
                    head.version,
                    head.valid_count,
                    dump_json(list(head.last)),
                    dump_json(list(head.awaited)),
                ),
            )
            conn.execute("COMMIT")
        except BaseException:
            conn.execute("ROLLBACK")
            raise

    # A paper's last state document is kept at shutdown as a file of the data folder
    # (states/BODY.json, 0600), with a row saying what it covers and the file's stamp. A
    # restarted registry reads it while the stamp is the one written, before and after the
    # read: no hash (a MAC over the 98 MB of a 100,000-event state, read from a blob, was
    # 0.15 s of its first read; the read alone is 0.05 s); a file of another stamp (the folder
    # copied or restored) is hashed again and served only when its bytes are the ones written.

    def document_path(self, body: str) -> Path:
        """Where the state document of `body` is kept (`save_document`)."""
        if not body.isascii() or not body.isalnum():  # a record's body: base32 letters
            raise ValueError(f"not a record body: {body!r}")
        return self.path.parent / "states" / f"{body}.json"

    def write_document(self, body: str, parts: Iterable[bytes]) -> tuple[Stamp, str]:
        """Write a state document's bytes to its file (atomically, synced: its row, written
        after, must never name bytes a crash lost); returns its stamp and their SHA-256."""
        path = self.document_path(body)
        ensure_private_dir(path.parent)
        chunks = list(parts)
        digest = hashlib.sha256()
        for chunk in chunks:
            digest.update(chunk)
        replace_file(path, list(chunks))
        return _stamp(path.stat()), digest.hexdigest()

    def save_document(self, body: str, saved: SavedDocument) -> None:
        """Keep `saved` as what the store knows of the state document of `body`, written by
        `write_document` (a cache like `save_state`'s pieces: written without waiting for the
        disk)."""
        self._state_conn().execute(
            "INSERT OR REPLACE INTO state_files VALUES (?,?,?,?,?,?,?,?,?,?)",
            (body, *saved[:4], *saved.stamp, saved.mac),
        )

    def saved_document(self, body: str) -> tuple[SavedDocument, KeptFile | None] | None:
        """What is kept of the state document of `body` (`save_document`), and its file open
        with the stamp it has now (None when there is none); None when nothing is kept."""
        row = (
            self._state_conn()
            .execute(
                "SELECT version, event_count, state_sha256, file_sha256, ino, size, mtime_ns, "
                "ctime_ns, mac FROM state_files WHERE body = ?",
                (body,),
            )
            .fetchone()
        )
        if row is None:
            return None
        stamp = (int(row[4]), int(row[5]), int(row[6]), int(row[7]))
        saved = SavedDocument(
            int(row[0]), int(row[1]), str(row[2]), str(row[3]), stamp, bytes(row[8])
        )
        try:
            file = open(self.document_path(body), "rb", buffering=0)  # noqa: SIM115 (kept open)
        except OSError:
            return saved, None
        return saved, KeptFile(file, _stamp(os.fstat(file.fileno())))

    @staticmethod
    def file_sha256(kept: KeptFile) -> str:
        """The SHA-256 of a kept file's bytes (read from its start, in pieces)."""
        digest = hashlib.sha256()
        offset = 0
        while chunk := os.pread(kept.file.fileno(), 1 << 20, offset):
            digest.update(chunk)
            offset += len(chunk)
        return digest.hexdigest()

    def drop_document(self, body: str) -> None:
        """Forget the state document kept for `body` (stale, or not what was kept)."""
        self._state_conn().execute("DELETE FROM state_files WHERE body = ?", (body,))
        with contextlib.suppress(OSError, ValueError):
            self.document_path(body).unlink()

    def events_span(self, body: str) -> tuple[int, int]:
        """(`events_version`, how many events `body` has): what a kept document must cover.
        Both from the covering index `events_body`."""
        row = (
            self._conn()
            .execute("SELECT coalesce(max(rowid), 0), count(*) FROM events WHERE body = ?", (body,))
            .fetchone()
        )
        return int(row[0]), int(row[1])

    def events_version(self, body: str) -> int:
        """A number that changes whenever an event of `body` is stored: the highest rowid of its
        events (0 for none). Events are never deleted or changed, and SQLite gives each new row
        a rowid above every existing one, so it only grows; the covering index `events_body`
        answers it without reading the events. Read by any process sharing the database."""
        row = (
            self._conn()
            .execute("SELECT coalesce(max(rowid), 0) FROM events WHERE body = ?", (body,))
            .fetchone()
        )
        return int(row[0])

    def event(self, event_id: str) -> AuthorEvent | None:
        """The stored event with this id, of any record; None when there is none."""
        row = (
            self._conn()
            .execute("SELECT raw FROM events WHERE event_id = ?", (event_id,))
            .fetchone()
        )
        return _stored_event(row[0]) if row else None

    # --- trusted time of stored events (docs/protocol.md "Trusted time", travelling) --------

    def keep_time(self, event_id: str, sidecar: Sidecar) -> tuple[str, bool] | None:
        """Merge a checked sidecar into the one kept for the stored event `event_id`
        (`merge_sidecars`: a complete OpenTimestamps proof is never replaced by a pending one).
        Returns (the paper's body, whether what is kept changed), or None when no such event is
        stored. A change rewrites the row, so its rowid grows (`time_version`)."""
        conn = self._conn()
        conn.execute("BEGIN IMMEDIATE")  # read, merge and write as one: two POSTs do not race
        try:
            row = conn.execute("SELECT body FROM events WHERE event_id = ?", (event_id,)).fetchone()
            if row is None:
                conn.execute("ROLLBACK")
                return None
            body = str(row[0])
            old = conn.execute(
                "SELECT sidecar FROM trusted_time WHERE event_id = ?", (event_id,)
            ).fetchone()
            kept = sidecar if old is None else merge_sidecars([_stored_sidecar(old[0]), sidecar])
            text = sidecar_json(kept)
            changed = old is None or old[0] != text
            if changed:
                conn.execute("DELETE FROM trusted_time WHERE event_id = ?", (event_id,))
                conn.execute("INSERT INTO trusted_time VALUES (?,?,?)", (event_id, body, text))
            conn.execute("COMMIT")
        except BaseException:
            conn.execute("ROLLBACK")
            raise
        return body, changed

    def sidecars(self, body: str) -> list[Sidecar]:
        """The trusted-time sidecars kept for the events of `body`, by event id."""
        rows = self._conn().execute(
            "SELECT sidecar FROM trusted_time WHERE body = ? ORDER BY event_id", (body,)
        )
        return [_stored_sidecar(r[0]) for r in rows.fetchall()]

    def time_version(self, body: str) -> int:
        """A number that grows whenever a sidecar of `body` changes (the highest rowid of its
        rows: a change deletes and inserts the row), 0 for none."""
        row = (
            self._conn()
            .execute("SELECT coalesce(max(rowid), 0) FROM trusted_time WHERE body = ?", (body,))
            .fetchone()
        )
        return int(row[0])

    # --- held for moderation (docs/registry.md, "Moderation mode") -------------------------

    def hold_event(self, body: str, event: AuthorEvent, received_at: str) -> None:
        """Keep a checked event aside for moderation (once: a held event sent again stays as
        first held). It is in no bundle or state until `approve` stores it."""
        self._conn().execute(
            "INSERT INTO held VALUES (?,?,?,?) ON CONFLICT(event_id) DO NOTHING",
            (event["event_id"], body, canonical(event).decode("utf-8"), received_at),
        )

    def held(self) -> list[tuple[str, str]]:
        """(event_id, body) of every held event, oldest first."""
        rows = self._conn().execute(
            "SELECT event_id, body FROM held ORDER BY received_at, event_id"
        )
        return [(str(e), str(b)) for e, b in rows.fetchall()]

    def approve(self, event_ids: Iterable[str] | None = None) -> int:
        """Store held events (all, or those named) as received now, as a signed-in author's
        confirmation would; returns how many. Any process sharing the folder may do it: a
        running server's next state lists them (`events_version` reads the database)."""
        wanted = None if event_ids is None else set(event_ids)
        rows = self._conn().execute("SELECT event_id, body, raw FROM held").fetchall()
        done = 0
        for eid, body, raw in rows:
            if wanted is not None and eid not in wanted:
                continue
            self.insert_event(body, _stored_event(raw), utc_now())
            self._conn().execute("DELETE FROM held WHERE event_id = ?", (eid,))
            done += 1
        return done

    def event_count(self) -> int:
        return int(self._conn().execute("SELECT count(*) FROM events").fetchone()[0])

    def close(self) -> None:
        """Stop the writer (after the events queued before) and close every connection any
        thread opened. For a server's shutdown, once no request is being served."""
        with self._writer_lock:
            writer, self._writer = self._writer, None
        if writer is not None and writer.is_alive():
            self._queue.put(None)
            writer.join(30)
        with self._opened_lock:
            opened, self._opened = self._opened, []
        for conn in opened:
            conn.close()
        for name in ("conn", "state_conn"):
            setattr(self._local, name, None)


def _stored_sidecar(text: str) -> Sidecar:
    """A sidecar the store wrote (checked strictly when it came in)."""
    return parse_sidecar(_stored_json(text))


def record_version(rec: StoredRecord) -> int | None:
    """The arXiv version a record is of (its canonical `source.version`)."""
    version = rec.canonical_record["source"].get("version")
    return version if isinstance(version, int) and not isinstance(version, bool) else None


def _version_of(records: list[StoredRecord], version: int | None) -> StoredRecord | None:
    """Of the records of one arXiv id (each version is its own record, and they coexist): the
    one of `version`, or without one the latest, as pith.science resolves an unversioned id.
    None when there is none, or when two records claim that version (ambiguous)."""
    versions = [(record_version(r), r) for r in records]
    if version is None:
        known = [v for v, _ in versions if v is not None]
        if not known:
            return records[0] if len(records) == 1 else None
        version = max(known)
    chosen = [r for v, r in versions if v == version]
    return chosen[0] if len(chosen) == 1 else None


def _record(row: tuple[Any, ...]) -> StoredRecord:
    return StoredRecord(
        body=row[0],
        pith_number=row[1],
        arxiv_id=row[2],
        canonical_sha256=row[3],
        canonical_record=_stored_json(row[4]),
        receipt=_stored_json(row[5]),
        upstream_receipt=_stored_json(row[6]) if row[6] else None,
        created_at=row[7],
        paper=_stored_json(row[8]) if row[8] else None,
    )


def _stored_event(text: str) -> AuthorEvent:
    event = typed_author_event(_stored_json(text))
    if event is None:
        raise DocumentError("the registry database holds an event that is not a signed event")
    return event


def _stored_json(text: str) -> Any:
    """A JSON column, read by the one strict reader (a file edited by hand gets one clear error)."""
    return parse_stored(
        text, lambda exc: DocumentError(f"the registry database holds a corrupt JSON value: {exc}")
    )
