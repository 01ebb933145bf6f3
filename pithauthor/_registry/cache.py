"""The local registry's cache of served documents: each paper's merged state and bundle, as the
bytes sent, kept until a new event for that paper is stored.

Merging re-checks every event, so building a state costs time in proportion to the paper's
events, and anyone may post events: without this cache a busy paper would slow every reader
without bound. An entry is tagged with the paper's event version (`RegistryStore.
events_version`, read *before* the events it was built from), so an entry can only be older
than the store, never newer, and a read that finds another version rebuilds.
"""

from __future__ import annotations

import hashlib
import threading
from collections import OrderedDict
from typing import NamedTuple

Key = tuple[str, str]  # (record body, "state" | "bundle")


class Encoded(NamedTuple):
    """A document as sent, and its entity tag (a hash of those bytes), for `If-None-Match`."""

    body: bytes
    etag: str

    @classmethod
    def of(cls, body: bytes) -> Encoded:
        return cls(body, '"' + hashlib.sha256(body).hexdigest()[:32] + '"')


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
