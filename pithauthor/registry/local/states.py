"""The local registry's merged states, kept up to date event by event (issue 39).

A paper's merged state used to be built on its first read: every stored event read, merged and
serialised, about 10 s for a paper of 100,000 events. Now each paper's state is a
`StateBuilder` (pithauthor.protocol.checks.merge) that takes the events stored since it last
looked, one by one, on the paper's next read (a POST only stores its event: placing one dated
among the paper's events costs in proportion to the part it joins, which a POST must not pay),
and writing the state is joining the texts it keeps and hashing them.

A builder reads what it has not seen from the store by rowid (`RegistryStore.events_after`), so
it also takes events another process stored (`pith registry approve`). When it declines an
event (one dated before events it has merged, a correction that makes an earlier invalid event
valid: `StateBuilder`), the paper is merged again in full, once.
"""

from __future__ import annotations

import gc
import json
import threading
from collections.abc import Sequence
from typing import TypedDict

from pithauthor.protocol.checks.merge import Encode, StateBuilder, already_checked
from pithauthor.protocol.documents import CanonicalRecord, RecordCreated, SourceAlias
from pithauthor.registry.local.answers import LocalKey, record_created, source_aliases
from pithauthor.registry.local.store import RegistryStore, SavedState, StoredRecord


class RecordArgs(TypedDict):
    """What a `StateBuilder` takes of the paper's record, whatever events it starts from."""

    pith_number: str
    canonical_record: CanonicalRecord
    record_created: RecordCreated
    source_aliases: Sequence[SourceAlias]
    encode: Encode


def served_text(doc: object) -> str:
    """A document as the server sends it (before UTF-8): compact JSON, keys as they are."""
    return json.dumps(doc, ensure_ascii=False, separators=(",", ":"))


class LiveStates:
    """Each paper's `StateBuilder` with the store's event version (the rowid of the last event
    it holds), kept for the life of the server."""

    def __init__(self, store: RegistryStore, key: LocalKey) -> None:
        self._store = store
        self._key = key
        self._entries: dict[str, tuple[int, StateBuilder]] = {}
        self._locks: dict[str, threading.Lock] = {}
        self._locks_lock = threading.Lock()
        #: how many full merges were made (tests: an incremental update makes none)
        self.full_merges = 0

    def _lock(self, body: str) -> threading.Lock:
        with self._locks_lock:
            return self._locks.setdefault(body, threading.Lock())

    def document(self, rec: StoredRecord) -> tuple[int, bytes, str]:
        """The state of `rec` as served, the event version it holds, and its state_sha256."""
        with self._lock(rec.body):
            version, builder = self._caught_up(rec)
            body, sha = builder.document()
            return version, body, sha

    def update(self, rec: StoredRecord) -> None:
        """Take the events stored since the last look (the server's reads do this through
        `document`; a caller that wants the work done before a read calls this)."""
        with self._lock(rec.body):
            self._caught_up(rec)

    def _record_args(self, rec: StoredRecord) -> RecordArgs:
        return {
            "pith_number": rec.pith_number,
            "canonical_record": rec.canonical_record,
            "record_created": record_created(rec, self._key),
            "source_aliases": source_aliases(rec),
            "encode": served_text,
        }

    def _caught_up(self, rec: StoredRecord) -> tuple[int, StateBuilder]:
        entry = self._entries.get(rec.body) or self._restored(rec)
        if entry is None:
            return self._build(rec)
        version, builder = entry
        start = version
        for rowid, text, event in self._store.events_after(rec.body, version):
            if not builder.add(event, text, checked=True):
                return self._build(rec)  # rare: see StateBuilder (a full merge, once)
            version = rowid
        if version != start:  # kept in the store too: a restart merges nothing again
            self._store.save_state(rec.body, _head(version, builder), builder.log)
            builder.log.clear()
        self._entries[rec.body] = (version, builder)
        return version, builder

    def _restored(self, rec: StoredRecord) -> tuple[int, StateBuilder] | None:
        """The state kept in the store by an earlier run (`RegistryStore.saved_state`): served
        as it is, and going on with plain statements (a correction merges it in full, once)."""
        saved = self._store.saved_state(rec.body)
        if saved is None:
            return None
        builder = StateBuilder.restored(
            **self._record_args(rec),
            pieces=saved.pieces,
            valid_count=saved.valid_count,
            last=saved.last,
            awaited=saved.awaited,
        )
        self._entries[rec.body] = (saved.version, builder)
        return saved.version, builder

    def _build(self, rec: StoredRecord) -> tuple[int, StateBuilder]:
        """The paper merged in full from every stored event (each checked when it was stored:
        `already_checked`, the signatures are not verified again), and kept in the store."""
        # A big paper's builder holds millions of objects for good (its events, the fold):
        # the cycle collector would walk them all again and again, while they are made and
        # at every later collection (seconds each at 100,000 events, the POSTs that followed
        # waited on it). Made with it paused, then moved out of its reach (`gc.freeze`: it
        # still frees what refcounts free; `unfreeze` first, so an older builder dropped is
        # collected as usual).
        gc.unfreeze()
        gc.disable()
        try:
            rows = self._store.events_after(rec.body)
            events = [e for _, _, e in rows]
            builder = StateBuilder(
                **self._record_args(rec),
                events=events,
                texts={e["event_id"]: text for _, text, e in rows},
                checked=already_checked(events),
            )
            del events
            version = rows[-1][0] if rows else 0
            del rows
        finally:
            gc.enable()
        gc.freeze()
        whole = (("put", *piece) for piece in builder.pieces())
        self._store.save_state(rec.body, _head(version, builder), whole, whole=True)
        self._entries[rec.body] = (version, builder)
        self.full_merges += 1
        return version, builder


def _head(version: int, builder: StateBuilder) -> SavedState:
    """What the store keeps beside a builder's pieces."""
    return SavedState(version, builder.valid_count, builder.last, builder.awaited, [])
