"""Each POST is counted once in the outbox (in the same write that records the answer), the
registry still verifies every event it is sent, and its key seed never shows in a repr."""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
from support.registry import REAL_NUMBER, citations, start_server

from pithauthor.errors import EventRefused, NumberUnchecked
from pithauthor.net import RetryPolicy
from pithauthor.protocol.ids import PithNumber
from pithauthor.registry.access import RegistryAccess, RegistryOptions, check_number
from pithauthor.registry.client import RegistryClient
from pithauthor.registry.local.answers import load_or_create_key
from pithauthor.registry.outbox import Outbox
from pithauthor.registry.submit import store_in_outbox, submit_pending
from pithauthor.verify import pinned_trust

FAST = RetryPolicy(max_attempts=3, base_delay=0.01, max_delay=0.05)


def _submit(url: str, parallel: int = 4) -> object:
    with RegistryClient(url, trust=pinned_trust(), retry=FAST) as client:
        client.trust_local_registry()
        return submit_pending(client=client, parallel=parallel)


def test_every_accepted_event_counts_exactly_one_attempt(tmp_path: Path) -> None:
    events = citations(12)
    server = start_server(tmp_path / "reg")
    store_in_outbox(events, server.url)
    try:
        result = _submit(server.url)
    finally:
        server.stop()
    assert getattr(result, "ok", False)
    with Outbox() as outbox:
        entries = outbox.entries()
    assert sorted(e.event_id for e in entries) == sorted(e["event_id"] for e in events)
    assert {e.state for e in entries} == {"accepted"}
    assert [e.attempts for e in entries] == [1] * len(events)


def test_a_stored_copy_altered_on_disk_is_never_sent_and_the_registry_refuses_it_too(
    tmp_path: Path,
) -> None:
    bad, good = citations(2)
    server = start_server(tmp_path / "reg")
    store_in_outbox([bad, good], server.url)
    altered = {**bad, "created_at": "2026-11-29T12:00:01Z"}
    # the stored copy of `bad` is altered behind pith's back: what is read back is checked in
    # full before it is sent, so it is never sent, and it stays pending, unanswered
    with Outbox() as outbox:
        outbox._conn.execute(
            "UPDATE outbox SET body = ? WHERE event_id = ?",
            (json.dumps(altered), bad["event_id"]),
        )
    try:
        result = _submit(server.url, parallel=2)
        # and the registry verifies every event it is sent: that copy, posted, is refused
        with RegistryClient(server.url, trust=pinned_trust(), retry=FAST) as client:
            client.trust_local_registry()
            try:
                client.submit(altered)  # type: ignore[arg-type]
                refused_there = ""
            except EventRefused as exc:
                refused_there = str(exc)
        record = server.store.find(REAL_NUMBER.rsplit(":", 1)[1])
        assert record is not None
        stored = [e["event_id"] for e in server.store.events(record.body)]
    finally:
        server.stop()
    assert "damaged entry" in str(getattr(result, "error", ""))
    assert "422" in refused_there
    with Outbox() as outbox:
        kept, taken = outbox.get(bad["event_id"]), outbox.get(good["event_id"])
    assert kept is not None and kept.state == "pending" and kept.attempts == 0
    assert taken is not None and taken.state == "accepted" and taken.attempts == 1
    assert stored == [good["event_id"]]


def test_the_registry_key_seed_is_not_in_its_repr(tmp_path: Path) -> None:
    key = load_or_create_key(tmp_path / "reg")
    assert key.seed.hex() not in repr(key)
    assert key.key_id == load_or_create_key(tmp_path / "reg").key_id  # derived, and stable


def test_the_year_check_of_a_number_tries_a_failing_registry_twice_not_the_whole_budget(
    tmp_path: Path,
) -> None:
    """`check_number` refuses a number it could not check when the registry is away, and says
    --offline: an author offline must not wait out the command's six tries and their back-off
    to be told so."""
    asked: list[str] = []

    class Unavailable(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            asked.append(self.path)
            self.send_response(503)
            self.send_header("Retry-After", "0")
            self.send_header("Content-Length", "0")
            self.end_headers()

        def log_message(self, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Unavailable)
    threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True).start()
    try:
        url = f"http://127.0.0.1:{server.server_address[1]}"
        access = RegistryAccess(RegistryOptions(url, retries=6))
        answer = r"did not answer \(HTTP 503\) after 2"
        with pytest.raises(NumberUnchecked, match=answer) as refused:
            check_number(PithNumber.parse(REAL_NUMBER), access)
    finally:
        server.shutdown()
        server.server_close()
    assert refused.value.hint is not None and "--offline" in refused.value.hint
    assert len(asked) == 2, asked
