"""`net.exchange`, the one request to a service that is not the registry (a calendar, a block
explorer, a timestamp authority), against a loopback server: statuses returned as they are,
the retry loop for 5xx, no redirect followed, the answer capped, no proxy from the environment."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from pithauthor.errors import InputError, NetworkError
from pithauthor.net import exchange


class _Server:
    def __init__(self) -> None:
        self.answers: list[tuple[int, dict[str, str], bytes]] = []
        self.seen: list[tuple[str, str, bytes]] = []
        self.url = ""


@pytest.fixture
def server() -> Iterator[_Server]:
    state = _Server()

    class Handler(BaseHTTPRequestHandler):
        def _reply(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            state.seen.append((self.command, self.path, self.rfile.read(length)))
            status, headers, body = state.answers.pop(0) if state.answers else (200, {}, b"ok")
            self.send_response(status)
            for name, value in headers.items():
                self.send_header(name, value)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        do_GET = do_POST = _reply

        def log_message(self, format: str, *args: object) -> None:
            pass

    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    state.url = f"http://127.0.0.1:{httpd.server_address[1]}"
    thread = threading.Thread(target=httpd.serve_forever, args=(0.05,), daemon=True)
    thread.start()
    try:
        yield state
    finally:
        httpd.shutdown()
        httpd.server_close()


def test_a_post_is_sent_and_any_final_status_returned(server: _Server) -> None:
    server.answers = [(404, {}, b"Pending confirmation in Bitcoin blockchain")]
    answer = exchange("POST", server.url + "/digest", what="the calendar", content=b"\x01" * 32)
    assert (answer.status, answer.body) == (404, b"Pending confirmation in Bitcoin blockchain")
    assert server.seen == [("POST", "/digest", b"\x01" * 32)]


def test_a_passing_fault_is_retried(server: _Server, no_backoff: None) -> None:
    server.answers = [(502, {}, b""), (200, {}, b"proof")]
    assert exchange("GET", server.url + "/t", what="the calendar").body == b"proof"
    assert len(server.seen) == 2


def test_a_redirect_is_not_followed(server: _Server) -> None:
    server.answers = [(302, {"Location": "http://127.0.0.1:9/elsewhere"}, b"")]
    with pytest.raises(NetworkError, match="the calendar answered 302 \\(a redirect"):
        exchange("GET", server.url + "/t", what="the calendar")
    assert len(server.seen) == 1


def test_an_answer_over_the_cap_is_refused(server: _Server) -> None:
    server.answers = [(200, {}, b"x" * 2000)]
    with pytest.raises(NetworkError, match="answered more than 1000 bytes"):
        exchange("GET", server.url + "/t", what="the calendar", limit=1000)


def test_no_proxy_from_the_environment_is_used(
    server: _Server, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HTTP_PROXY", "http://127.0.0.1:9")
    monkeypatch.setenv("ALL_PROXY", "http://127.0.0.1:9")
    monkeypatch.delenv("NO_PROXY", raising=False)
    assert exchange("GET", server.url + "/t", what="the calendar").status == 200


def test_a_url_outside_the_policy_is_refused_before_any_request() -> None:
    with pytest.raises(InputError, match="the calendar"):
        exchange("GET", "http://calendar.example/t", what="the calendar")
