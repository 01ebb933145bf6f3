"""An on-disk cache of registry answers for `pith cite`: verified records, and arXiv ids resolved.

`<PITH_HOME>/cache/records.sqlite3` (folder 0700). Records are content-addressed, so a cached
record never goes stale; it is verified again, with the trust of the moment, every time it is
read. An arXiv id's number can change (a new version is a new record), so resolutions are kept
for `ttl` seconds (one day by default).
"""

from __future__ import annotations

import json
import sqlite3
import threading
import time
from collections.abc import Mapping
from pathlib import Path

from pithauthor.fs import pith_home, private_dir
from pithauthor.protocol.canonical_json import JSONFault, parse_json
from pithauthor.protocol.documents import JSONObject

DB_NAME = "records.sqlite3"
DEFAULT_TTL = 24 * 3600
# keyed by registry too: one paper's record differs between registries (its receipt's key, the
# origin of its links), and an event is sent only where the record it used came from
SCHEMA = """
CREATE TABLE IF NOT EXISTS records (
    registry TEXT NOT NULL, body TEXT NOT NULL, doc TEXT NOT NULL,
    PRIMARY KEY (registry, body));
CREATE TABLE IF NOT EXISTS resolutions (
    registry TEXT NOT NULL, arxiv_id TEXT NOT NULL, pith_number TEXT NOT NULL,
    fetched_at REAL NOT NULL, PRIMARY KEY (registry, arxiv_id));
"""


class RecordCache:
    """Records by body and arXiv resolutions, per registry base URL; safe across threads."""

    def __init__(self, path: Path | None = None, *, ttl: float = DEFAULT_TTL) -> None:
        if path is None:
            path = private_dir("cache") / DB_NAME
        self.ttl = ttl
        self._lock = threading.Lock()
        self._db = sqlite3.connect(path, check_same_thread=False, isolation_level=None)
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.executescript(SCHEMA)
        path.chmod(0o600)  # SQLite creates its file under the umask (often 0644)

    @classmethod
    def existing(cls) -> RecordCache | None:
        """The cache of this PITH_HOME if it was ever written; None (and nothing made) if not."""
        path = pith_home() / "cache" / DB_NAME
        return cls(private_dir("cache") / DB_NAME) if path.is_file() else None

    def close(self) -> None:
        self._db.close()

    def record(self, registry: str, body: str) -> JSONObject | None:
        """The record stored for `body`, as stored: unchecked (verify it before use)."""
        with self._lock:
            row = self._db.execute(
                "SELECT doc FROM records WHERE registry = ? AND body = ?", (registry, body)
            ).fetchone()
        if row is None:
            return None
        try:
            doc = parse_json(row[0])
        except JSONFault:
            return None  # a damaged cache entry is a miss
        return doc if isinstance(doc, dict) else None

    def put_record(self, registry: str, body: str, doc: Mapping[str, object]) -> None:
        with self._lock:
            self._db.execute(
                "INSERT OR REPLACE INTO records VALUES (?, ?, ?)",
                (registry, body, json.dumps(doc, ensure_ascii=False)),
            )

    def resolution(self, registry: str, arxiv_id: str) -> str | None:
        """The number an arXiv id resolved to, if it was fetched less than `ttl` ago."""
        with self._lock:
            row = self._db.execute(
                "SELECT pith_number, fetched_at FROM resolutions WHERE registry = ? "
                "AND arxiv_id = ?",
                (registry, arxiv_id),
            ).fetchone()
        if row is None or time.time() - float(row[1]) > self.ttl:
            return None
        return str(row[0])

    def put_resolution(self, registry: str, arxiv_id: str, pith_number: str) -> None:
        with self._lock:
            self._db.execute(
                "INSERT OR REPLACE INTO resolutions VALUES (?, ?, ?, ?)",
                (registry, arxiv_id, pith_number, time.time()),
            )

    def forget_record(self, registry: str, body: str) -> None:
        with self._lock:
            self._db.execute(
                "DELETE FROM records WHERE registry = ? AND body = ?", (registry, body)
            )
