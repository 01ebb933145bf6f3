"""The local registry's merged states, kept up to date event by event.

A paper's merged state used to be built on its first read: every stored event read, merged and
serialised, about 10 s for a paper of 100,000 events. Now each paper's state is a
`StateBuilder` (pithauthor.protocol.checks.merge) that takes each event a POST stores, at a
cost that does not grow with the paper (one dated among the paper's events is appended to its
part, and the part sorted once when the state is next written), and writing the state is
joining the texts it keeps and hashing them.

A builder reads what it has not seen from the store by rowid (`RegistryStore.events_after`), so
it also takes events another process stored (`pith registry approve`). When it declines an
event (one dated before events it has merged in a slot already used, a correction that makes an
earlier invalid event valid: `StateBuilder`), the paper is merged again in full, once, on its
next read (never in a POST).

What is kept in the store: the builder's pieces (`RegistryStore.save_state`, written when the
state is read and at shutdown), from which a restarted registry goes on without merging; and at
shutdown the last state document written, with the events it covers and a MAC by the
registry's key (`RegistryStore.save_document`), which a restarted registry serves as it is on
the first read, only while the store's events are still those it covers and the MAC holds
(else it is dropped and the state is built from the pieces).
"""

from __future__ import annotations

import gc
import hashlib
import hmac
import json
import threading
from collections.abc import Sequence
from typing import TypedDict

from pithauthor.protocol.checks.merge import Encode, StateBuilder, already_checked
from pithauthor.protocol.documents import CanonicalRecord, RecordCreated, SourceAlias
from pithauthor.registry.local.answers import LocalKey, record_created, source_aliases
from pithauthor.registry.local.store import (
    RegistryStore,
    SavedDocument,
    SavedState,
    StoredRecord,
)


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

    #: changes a POST leaves in a builder's log before they are written to the store
    FLUSH = 1000
    #: the smallest document kept at shutdown (a smaller state is built from its pieces in
    #: little time, and holding every paper's last document in memory would not be free)
    KEEP_BYTES = 1 << 20

    def __init__(self, store: RegistryStore, key: LocalKey) -> None:
        self._store = store
        self._key = key
        self._entries: dict[str, tuple[int, StateBuilder]] = {}
        self._locks: dict[str, threading.Lock] = {}
        self._locks_lock = threading.Lock()
        # the last document written of each paper (version, bytes, state_sha256), for
        # `close` to keep; a paper is left out while what is kept is that one
        self._written: dict[str, tuple[int, bytes, str]] = {}
        self._stale: set[str] = set()  # a builder declined an event: the next read builds
        #: how many full merges were made (tests: an incremental update makes none)
        self.full_merges = 0
        #: how many first reads were served from the document kept at shutdown (tests)
        self.kept_documents_served = 0

    def _lock(self, body: str) -> threading.Lock:
        with self._locks_lock:
            return self._locks.setdefault(body, threading.Lock())

    def document(self, rec: StoredRecord) -> tuple[int, bytes, str]:
        """The state of `rec` as served, the event version it holds, and its state_sha256."""
        with self._lock(rec.body):
            if rec.body not in self._entries:
                kept = self._kept_document(rec)
                if kept is not None:
                    return kept
            version, builder = self._caught_up(rec)
            self._stale.discard(rec.body)
            self._save(rec.body, version, builder)
            body, sha = builder.document()
            if len(body) >= self.KEEP_BYTES:
                self._written[rec.body] = (version, body, sha)
            return version, body, sha

    def update(self, rec: StoredRecord) -> None:
        """Take the events stored since the last look: what a POST calls after storing its
        event. Only for a paper whose state is held (in memory, or as pieces kept in the
        store): a paper nobody read is built on its first read. An event the builder declines
        is left to that read too (a full merge is never made in a POST)."""
        with self._lock(rec.body):
            if rec.body in self._stale:
                return
            entry = self._entries.get(rec.body) or self._restored(rec)
            if entry is None:
                return
            version, builder = entry
            for rowid, text, event in self._store.events_after(rec.body, version):
                if not builder.add(event, text, checked=True):
                    # the next read goes on from what the store keeps, and merges in full
                    self._entries.pop(rec.body, None)
                    self._stale.add(rec.body)
                    return
                version = rowid
            self._entries[rec.body] = (version, builder)
            if len(builder.log) >= self.FLUSH:
                self._save(rec.body, version, builder)

    def close(self) -> None:
        """Write what is not kept yet (a server's shutdown): each builder's changes, and the
        last document written of each paper, for a restarted registry's first read."""
        for body, (version, builder) in list(self._entries.items()):
            with self._lock(body):
                self._save(body, version, builder)
        for body, (version, doc, sha) in list(self._written.items()):
            with self._lock(body):
                if self._store.events_version(body) != version:
                    continue  # stored after it was written: it would be dropped anyway
                count = self._store.events_span(body)[1]
                mac = self._mac(body, version, count, sha, doc)
                self._store.save_document(body, SavedDocument(version, count, sha, mac, doc))
                del self._written[body]

    def _mac(self, body: str, version: int, count: int, sha: str, doc: bytes) -> bytes:
        """HMAC-SHA256 of a kept document and what it covers, by a key derived from the
        registry's own: a document changed in the database by anything but this registry
        is not served."""
        key = hashlib.sha256(b"pithauthor-local-state-document\0" + self._key.seed).digest()
        mac = hmac.new(key, f"{body}\0{version}\0{count}\0{sha}\0".encode(), "sha256")
        mac.update(doc)
        return mac.digest()

    def _kept_document(self, rec: StoredRecord) -> tuple[int, bytes, str] | None:
        """The document kept at shutdown, when it is the state of the events stored now (the
        same last rowid and count of the paper's events) and its MAC holds; otherwise it is
        dropped, and None."""
        kept = self._store.saved_document(rec.body)
        if kept is None:
            return None
        version, count = self._store.events_span(rec.body)
        if (kept.version, kept.event_count) != (version, count) or not hmac.compare_digest(
            kept.mac, self._mac(rec.body, version, count, kept.state_sha256, kept.doc)
        ):
            self._store.drop_document(rec.body)
            return None
        self.kept_documents_served += 1
        return version, kept.doc, kept.state_sha256

    def _save(self, body: str, version: int, builder: StateBuilder) -> None:
        """Write the builder's changes to the pieces the store keeps (a cache: a crash before
        loses only work that the events in the store let a restart do again)."""
        if builder.log:
            self._store.save_state(body, _head(version, builder), builder.log)
            builder.log.clear()

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
        for rowid, text, event in self._store.events_after(rec.body, version):
            if not builder.add(event, text, checked=True):
                return self._build(rec)  # rare: see StateBuilder (a full merge, once)
            version = rowid
        self._entries[rec.body] = (version, builder)
        return version, builder

    def _restored(self, rec: StoredRecord) -> tuple[int, StateBuilder] | None:
        """The state kept in the store by an earlier run (`RegistryStore.saved_state`): served
        as it is, and going on with plain statements (a correction merges it in full, once)."""
        if not self._store.has_saved_state(rec.body):  # a paper never read: asked by POSTs
            return None
        # as in `_build`: the 200,000 pieces of a big paper made with the cycle collector
        # paused, then moved out of its reach
        gc.unfreeze()
        gc.disable()
        try:
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
            version = saved.version
            del saved
        finally:
            gc.enable()
        gc.freeze()
        self._entries[rec.body] = (version, builder)
        return version, builder

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
