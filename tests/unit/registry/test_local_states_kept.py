"""What the local registry keeps of a paper's merged state: a POST adds its event to
the state at once (the next read only writes it), and the document written last is kept at
shutdown, served by a restarted registry without building anything, but only while the
store's events are those it covers, its MAC holds and its file is the one written: a stale or
tampered one is rebuilt."""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
from pathlib import Path
from typing import Any

import httpx
import pytest
from support.registry import SUBJECT, T0, TestSigner, start_server

from pithauthor.errors import DocumentError
from pithauthor.protocol.canonical_json import canonical, parse_json
from pithauthor.protocol.checks.merge import StateBuilder
from pithauthor.protocol.ids import PithNumber
from pithauthor.registry.local.answers import state_document
from pithauthor.registry.local.server import RegistryServer
from pithauthor.registry.local.states import served_text
from pithauthor.registry.local.store import DB_FILE, RegistryStore
from pithauthor.sign import sign_citation

BODY = SUBJECT.pith_number.body


def _cites(n: int, when: str = T0, start: int = 0) -> list[dict[str, Any]]:
    """`n` citations of SUBJECT signed in one second, each by another citing paper (each its
    own slot), as a store gives them back."""
    signer = TestSigner(b"k" * 32)
    return [
        parse_json(
            canonical(
                sign_citation(
                    signer,
                    SUBJECT,
                    PithNumber.from_digest(f"{i:04x}" * 16, 2024),
                    "cites",
                    created_at=when,
                )
            )
        )
        for i in range(start, start + n)
    ]


def _post(client: httpx.Client, event: dict[str, Any]) -> None:
    answer = client.post(
        f"/pith/{BODY}/action/{event['event_type']}",
        json=event,
        headers={"Idempotency-Key": event["event_id"]},
    )
    assert answer.status_code == 201, answer.text


def _served(server: RegistryServer) -> bytes:
    """The state served, checked to be byte for byte a full merge of the stored events."""
    rec = server.store.find(BODY)
    assert rec is not None
    full = state_document(rec, server.key, server.store.events(BODY), stored=True)
    answer = httpx.get(f"{server.url}/pith/{BODY}/state.json", timeout=60)
    assert answer.status_code == 200
    assert answer.content == served_text(full).encode("utf-8")
    return answer.content


def _restarted(data: Path) -> RegistryServer:
    server = RegistryServer(data)
    server.states.KEEP_BYTES = 0  # these states are small: kept whatever their size
    server.start()
    return server


def _kept_state(data: Path) -> Path:
    """A registry folder whose paper has a state with events, read once, then shut down (the
    document kept whatever its size)."""
    server = start_server(data)
    server.states.KEEP_BYTES = 0
    try:
        with httpx.Client(base_url=server.url) as client:
            for event in _cites(5):
                _post(client, event)
        _served(server)
    finally:
        server.stop()
    return data


def test_each_post_adds_its_event_to_a_read_state_so_the_next_read_adds_none(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    added: list[str] = []
    add = StateBuilder.add

    def counted(self: StateBuilder, event: object, *args: Any, **kw: Any) -> bool:
        added.append(str(event.get("event_id")) if isinstance(event, dict) else "")
        return add(self, event, *args, **kw)

    monkeypatch.setattr(StateBuilder, "add", counted)
    server = start_server(tmp_path / "reg")
    try:
        _served(server)
        # one second's batch in reverse: each but the first dated before the last one taken
        batch = sorted(_cites(20), key=lambda e: e["event_id"], reverse=True)
        with httpx.Client(base_url=server.url) as client:
            for event in batch:
                _post(client, event)
        assert sorted(added) == sorted(e["event_id"] for e in batch)  # each by its POST
        before = len(added)
        state = json.loads(_served(server))
        assert len(added) == before  # the read wrote the state: nothing left to add
        assert len(state["current"]["citation_signatures"]) == 20
        assert server.states.full_merges == 1  # the first read only
    finally:
        server.stop()


def test_a_restarted_registry_serves_the_document_kept_at_shutdown_without_building(
    tmp_path: Path,
) -> None:
    data = _kept_state(tmp_path / "reg")
    again = _restarted(data)
    try:
        before = _served(again)
        assert again.states.kept_documents_served == 1
        assert again.states.full_merges == 0
        with httpx.Client(base_url=again.url) as client:  # and goes on from the pieces kept
            for event in _cites(3, "2026-11-29T12:30:00Z", start=100):
                _post(client, event)
        assert _served(again) != before
        assert again.states.full_merges == 0
    finally:
        again.stop()


def test_a_kept_document_that_events_stored_behind_it_made_stale_is_rebuilt(
    tmp_path: Path,
) -> None:
    data = _kept_state(tmp_path / "reg")
    store = RegistryStore(data)  # another process (`pith registry approve`, an import)
    later = _cites(1, "2026-11-29T12:40:00Z", start=200)[0]
    store.insert_event(BODY, later, T0)  # type: ignore[arg-type]
    store.close()
    again = _restarted(data)
    try:
        state = json.loads(_served(again))
        assert again.states.kept_documents_served == 0
        assert later["event_id"] in state["applied_event_ids"]
    finally:
        again.stop()


@pytest.mark.parametrize("how", ["bytes", "bytes, times set back", "gone", "coverage"])
def test_a_tampered_kept_document_is_rebuilt_never_served(tmp_path: Path, how: str) -> None:
    data = _kept_state(tmp_path / "reg")
    kept = RegistryStore(data).document_path(BODY)
    doc = kept.read_bytes()
    if how.startswith("bytes"):  # the document says something else, still valid JSON
        forged = doc.replace(b'"cites"', b'"CITES"', 1)
        assert forged != doc and len(forged) == len(doc)
        before = kept.stat()
        with open(kept, "r+b") as file:  # in place: the same inode and size
            file.write(forged)
        if "set back" in how:  # its mtime as written (its ctime no call can set back)
            os.utime(kept, ns=(before.st_atime_ns, before.st_mtime_ns))
    elif how == "gone":
        kept.unlink()
    else:  # an event stored behind it, and the coverage made to match the store again
        store = RegistryStore(data)
        store.insert_event(BODY, _cites(1, "2026-11-29T12:40:00Z", 300)[0], T0)  # type: ignore[arg-type]
        now, n = store.events_span(BODY)
        store.close()
        db = sqlite3.connect(data / DB_FILE)
        version, count = db.execute(
            "SELECT version, event_count FROM state_files WHERE body = ?", (BODY,)
        ).fetchone()
        assert (now, n) != (version, count)
        db.execute(
            "UPDATE state_files SET version = ?, event_count = ? WHERE body = ?", (now, n, BODY)
        )
        db.commit()
        db.close()
    again = _restarted(data)
    try:
        _served(again)  # the full merge's bytes, not the kept ones
        assert again.states.kept_documents_served == 0
    finally:
        again.stop()
    assert RegistryStore(data).saved_document(BODY) is not None  # kept anew at shutdown


def test_a_kept_document_in_a_copied_folder_is_hashed_again_and_then_served(
    tmp_path: Path,
) -> None:
    # a copy (a backup restored) has other inodes and times: the file's bytes are hashed, and
    # served when they are the ones written; the new stamp is kept, so the next start does not
    # hash them again
    data = _kept_state(tmp_path / "reg")
    copy = tmp_path / "copy"
    shutil.copytree(data, copy)
    store = RegistryStore(copy)
    found = store.saved_document(BODY)
    assert found is not None and found[1] is not None
    assert found[1].stamp != found[0].stamp
    found[1].file.close()
    store.close()
    again = _restarted(copy)
    try:
        _served(again)
        assert again.states.kept_documents_served == 1
    finally:
        again.stop()
    store = RegistryStore(copy)
    found = store.saved_document(BODY)
    assert found is not None and found[1] is not None
    assert found[1].stamp == found[0].stamp
    found[1].file.close()
    store.close()


def test_a_kept_document_written_to_after_it_was_checked_is_not_read(tmp_path: Path) -> None:
    # the stamp is asked again after the bytes are read: a write between the check and the
    # end of the read (its ctime moves) gives no bytes, and the state is built instead
    data = _kept_state(tmp_path / "reg")
    store = RegistryStore(data)
    found = store.saved_document(BODY)
    assert found is not None and found[1] is not None
    saved, kept = found
    assert kept.stamp == saved.stamp
    with open(store.document_path(BODY), "r+b") as file:  # in place, the same size
        file.write(b" ")
    assert kept.read() is None
    kept.file.close()
    store.close()


def test_a_document_that_cannot_be_kept_leaves_the_shutdown_whole_and_is_built_again(
    tmp_path: Path,
) -> None:
    data = tmp_path / "reg"
    server = start_server(data)
    server.states.KEEP_BYTES = 0
    try:
        with httpx.Client(base_url=server.url) as client:
            for event in _cites(3):
                _post(client, event)
        before = _served(server)
        (data / "states").write_bytes(b"")  # where its folder goes: the file cannot be written
    finally:
        server.stop()
    assert RegistryStore(data).saved_document(BODY) is None
    again = _restarted(data)
    try:
        assert _served(again) == before  # from the pieces kept
        assert again.states.kept_documents_served == 0
        assert again.states.full_merges == 0
    finally:
        again.stop()


def test_a_damaged_kept_state_head_is_one_line_naming_the_database(tmp_path: Path) -> None:
    # before `parse_stored`, its JSON columns were read bare: a JSONFault out of the store
    data = _kept_state(tmp_path / "reg")
    with sqlite3.connect(data / DB_FILE) as db:
        assert db.execute("UPDATE state_heads SET last = '[1,' WHERE body = ?", (BODY,)).rowcount
    store = RegistryStore(data)
    try:
        with pytest.raises(DocumentError, match=r"^the registry database holds a corrupt JSON"):
            store.saved_state(BODY)
    finally:
        store.close()
