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
shutdown the last state document written, as a file of the data folder with a row giving the
events it covers, the file's stamp and the SHA-256 of its bytes, under a MAC by the registry's
key (`RegistryStore.save_document`). A restarted registry serves that file as it is on the
first read (read, not hashed), only while the store's events are still those it covers, the MAC
holds and the file's stamp is the one written, before and after the read (a file of another
stamp is hashed and must be the bytes written); else it is dropped and the state is built from
the pieces.
"""

from __future__ import annotations

import gc
import hashlib
import hmac
import json
import threading
from collections.abc import Sequence
from typing import TypedDict

from pithauthor.errors import UnsafePermissions
from pithauthor.protocol.checks.merge import Encode, StateBuilder, already_checked
from pithauthor.protocol.documents import CanonicalRecord, RecordCreated, SourceAlias
from pithauthor.registry.local.answers import LocalKey, record_created, source_aliases
from pithauthor.registry.local.store import (
    KeptFile,
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
        # the last document written of each paper (version, its parts, state_sha256), for
        # `close` to keep; a paper is left out while what is kept is that one
        self._written: dict[str, tuple[int, list[bytes], str]] = {}
        self._stale: set[str] = set()  # a builder declined an event: the next read builds
        #: how many full merges were made (tests: an incremental update makes none)
        self.full_merges = 0
        #: how many first reads were served from the document kept at shutdown (tests)
        self.kept_documents_served = 0

    def _lock(self, body: str) -> threading.Lock:
        with self._locks_lock:
            return self._locks.setdefault(body, threading.Lock())

    def document(self, rec: StoredRecord) -> tuple[int, tuple[bytes, ...], str]:
        """The event version the state of `rec` holds, the state as served (in parts, in
        order: `StateBuilder.document_parts`, or the file kept at shutdown), and its
        state_sha256."""
        with self._lock(rec.body):
            if rec.body not in self._entries:
                kept = self._kept_document(rec)
                if kept is not None:
                    return kept
            version, builder = self._caught_up(rec)
            self._stale.discard(rec.body)
            self._save(rec.body, version, builder)
            # the document written before is no longer served: its memory goes first
            self._written.pop(rec.body, None)
            parts, sha = builder.document_parts()
            if sum(map(len, parts)) >= self.KEEP_BYTES:
                self._written[rec.body] = (version, parts, sha)
            return version, tuple(parts), sha

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
        for body, (version, parts, sha) in list(self._written.items()):
            with self._lock(body):
                if self._store.events_version(body) != version:
                    continue  # stored after it was written: it would be dropped anyway
                count = self._store.events_span(body)[1]
                try:
                    stamp, file_sha = self._store.write_document(body, parts)
                except (OSError, UnsafePermissions):  # a cache: the next start builds it
                    continue
                saved = SavedDocument(version, count, sha, file_sha, stamp, b"")
                self._store.save_document(body, saved._replace(mac=self._mac(body, saved)))
                del self._written[body]

    def _mac(self, body: str, saved: SavedDocument) -> bytes:
        """HMAC-SHA256 of what is kept of a document (what it covers, the SHA-256 of its
        bytes, its file's stamp), by a key derived from the registry's own: a row changed
        in the database by anything but this registry is not trusted."""
        key = hashlib.sha256(b"pithauthor-local-state-document\0" + self._key.seed).digest()
        fields = (body, saved.version, saved.event_count, saved.state_sha256, saved.file_sha256)
        text = "\0".join(map(str, (*fields, *saved.stamp)))
        return hmac.new(key, text.encode(), "sha256").digest()

    def _kept_document(self, rec: StoredRecord) -> tuple[int, tuple[bytes, ...], str] | None:
        """The document kept at shutdown, when it is the state of the events stored now (the
        same last rowid and count of the paper's events), its row's MAC holds and its file is
        the one written: the same stamp, or else the same bytes (hashed again, and the new
        stamp kept). Otherwise it is dropped, and None."""
        found = self._store.saved_document(rec.body)
        if found is None:
            return None
        saved, file = found
        doc = None
        if file is not None:
            with file.file:
                if self._intact(rec.body, saved, file):
                    doc = file.read()  # None: written to while it was read
        if doc is None:
            self._store.drop_document(rec.body)
            return None
        self.kept_documents_served += 1
        return saved.version, (doc,), saved.state_sha256

    def _intact(self, body: str, saved: SavedDocument, file: KeptFile) -> bool:
        if (saved.version, saved.event_count) != self._store.events_span(body):
            return False  # events stored behind it (another process): stale
        if not hmac.compare_digest(saved.mac, self._mac(body, saved)):
            return False
        if file.stamp == saved.stamp:
            return True
        # another stamp: the folder was copied or restored, or the file written to; its
        # bytes are hashed, and it is served only when they are the ones written
        if file.stamp[1] != saved.stamp[1] or self._store.file_sha256(file) != saved.file_sha256:
            return False
        again = saved._replace(stamp=file.stamp)
        self._store.save_document(body, again._replace(mac=self._mac(body, again)))
        return True

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
            # its texts joined now (in the POST that restores it, which reads them all anyway),
            # so the next read only joins what came after and hashes
            builder.join_pending()
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
