"""`pith submit` against a hostile registry on a real loopback socket: a proxy that passes reads
to the project's registry and answers each POST its own way. No answer but an acceptance of the
event marks it accepted; nothing is lost; the token never leaves the registry's origin."""

from __future__ import annotations

import contextlib
import json
import sys
import threading
import time
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import httpx
import pytest
from support.registry import citations, start_server

import pithauthor.net
from pithauthor.errors import NetworkError, RegistryResponseError
from pithauthor.net import RegistryHttp, RetryPolicy
from pithauthor.registry.client import RegistryClient
from pithauthor.registry.local.server import RegistryServer
from pithauthor.registry.outbox import Outbox
from pithauthor.registry.submit import store_in_outbox, submit_pending
from pithauthor.verify import pinned_trust

Answer = Callable[[str, str], tuple[int, dict[str, str], bytes]]
"""(event_id, other server's URL) -> (status, headers, body) for one POST."""


class Recorder(BaseHTTPRequestHandler):
    """Another origin: records every request it gets (a redirect target)."""

    seen: list[tuple[str, str | None]]

    def do_POST(self) -> None:
        self.seen.append((self.path, self.headers.get("Authorization")))
        self.send_response(201)
        self.end_headers()

    do_GET = do_POST

    def log_message(self, *args: Any) -> None:
        pass


class _QuietServer(ThreadingHTTPServer):
    """A client that hangs up mid-answer is what these tests make happen: its handler's
    BrokenPipe must not print a traceback on stderr, where a later test of this worker would
    read it as its own."""

    def handle_error(self, request: Any, client_address: Any) -> None:
        if not isinstance(sys.exc_info()[1], (BrokenPipeError, ConnectionResetError)):
            super().handle_error(request, client_address)


def _serve(handler: type[BaseHTTPRequestHandler]) -> tuple[ThreadingHTTPServer, str]:
    httpd = _QuietServer(("127.0.0.1", 0), handler)
    # polled every 50 ms, not 0.5 s: `shutdown` waits for the next poll, twice per test
    threading.Thread(target=httpd.serve_forever, args=(0.05,), daemon=True).start()
    return httpd, f"http://127.0.0.1:{httpd.server_address[1]}"


@pytest.fixture
def real(tmp_path: Path) -> Iterator[RegistryServer]:
    srv = start_server(tmp_path / "reg")
    yield srv
    srv.stop()


def _hostile(real: RegistryServer, answer: Answer, other: str) -> ThreadingHTTPServer:
    class Proxy(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            # the real registry's links (and manifest) name itself: here they name this proxy
            mine = f"http://127.0.0.1:{self.server.server_address[1]}"
            got = httpx.get(real.url + self.path)
            body = got.content.replace(real.url.encode(), mine.encode())
            self._send(got.status_code, {"Content-Type": "application/json"}, body)

        def do_POST(self) -> None:
            self.rfile.read(int(self.headers["Content-Length"]))
            status, headers, body = answer(self.headers["Idempotency-Key"], other)
            self._send(status, headers, body)

        def _send(self, status: int, headers: dict[str, str], body: bytes) -> None:
            self.send_response(status)
            for name, value in {**headers, "Content-Length": str(len(body))}.items():
                self.send_header(name, value)
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args: Any) -> None:
            pass

    return _serve(Proxy)[0]


def _json(status: int, doc: object, **headers: str) -> tuple[int, dict[str, str], bytes]:
    return status, {"Content-Type": "application/json", **headers}, json.dumps(doc).encode()


ANSWERS: dict[str, Answer] = {
    "307 to another origin": lambda eid, other: _json(
        307, {"event_id": eid}, Location=other + "/steal"
    ),
    "302 with the event's id": lambda eid, other: _json(302, {"event_id": eid}, Location=other),
    # a 202 holds the event for moderation (tests/cli/test_held_cli.py), but not another one
    "202 for another event": lambda eid, _: _json(202, {"event_id": "sha256:" + "0" * 64}),
    "200 with a list": lambda eid, _: _json(200, [eid]),
    "200 with a string": lambda eid, _: _json(200, "accepted"),
    "200 saying rejected": lambda eid, _: _json(200, {"event_id": eid, "status": "rejected"}),
    "200 with an error": lambda eid, _: _json(200, {"event_id": eid, "error": "moderation"}),
}


@pytest.mark.parametrize("name", list(ANSWERS))
def test_an_answer_that_is_not_the_events_acceptance_leaves_it_pending(
    real: RegistryServer, name: str
) -> None:
    Recorder.seen = []
    recorder, other = _serve(Recorder)
    hostile = _hostile(real, ANSWERS[name], other)
    url = f"http://127.0.0.1:{hostile.server_address[1]}"
    try:
        store_in_outbox(citations(2), url)
        with RegistryClient(url, trust=pinned_trust(), token="secret-token") as client:
            client.http.retry = RetryPolicy(max_attempts=1, base_delay=0.0)
            client.trust_local_registry()
            result = submit_pending(client=client)
    finally:
        hostile.shutdown()
        recorder.shutdown()
    assert isinstance(result.error, RegistryResponseError)
    assert "link leaves" not in str(result.error)  # the answer was refused, not the link
    assert result.accepted == [] and result.rejected == {}
    with Outbox() as outbox:
        assert outbox.counts() == {"pending": 2, "accepted": 0, "rejected": 0}
    assert Recorder.seen == []  # nothing, and so no token, went to the other origin


class Trickle(BaseHTTPRequestHandler):
    """A slow-loris answer: valid JSON, one byte every 0.1 s, for about 6 s."""

    def do_GET(self) -> None:
        body = b'{"x": "' + b"a" * 50 + b'"}'
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        for byte in body:
            try:
                self.wfile.write(bytes([byte]))
                self.wfile.flush()
            except OSError:
                return  # the client gave up, as it should: stop trickling now, not in 6 s
            time.sleep(0.1)

    def log_message(self, *args: Any) -> None:
        pass


class Flood(BaseHTTPRequestHandler):
    """A gigantic answer: 2 MiB of JSON, then more."""

    def do_GET(self) -> None:
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.end_headers()
        with contextlib.suppress(OSError):  # the client hangs up, as it should
            self.wfile.write(b'{"x": "' + b"a" * 2**21 + b'"}')

    def log_message(self, *args: Any) -> None:
        pass


def test_a_trickling_answer_is_a_time_out_not_a_hang() -> None:
    httpd, url = _serve(Trickle)
    http = RegistryHttp(url, timeout=1.0, retry=RetryPolicy(max_attempts=1))
    try:
        with pytest.raises(NetworkError, match="timed out"):
            http.get_json("/record")
    finally:
        http.close()
        httpd.shutdown()


def test_an_answer_beyond_the_limit_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(pithauthor.net, "MAX_ANSWER_BYTES", 2**20)
    httpd, url = _serve(Flood)
    http = RegistryHttp(url, retry=RetryPolicy(max_attempts=1))
    try:
        with pytest.raises(RegistryResponseError, match="more than 1 MiB"):
            http.get_json("/record")
    finally:
        http.close()
        httpd.shutdown()
