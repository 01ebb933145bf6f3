"""The local registry against clients that attack it: slow bodies and idle floods do
not lock honest clients out, a token is checked before any body is read, and the framing rules
of RFC 9112 leave no room for request smuggling. Real server, real loopback sockets."""

from __future__ import annotations

import json
import socket
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from support.examples_budget import examples
from support.registry import SUBJECT, TestSigner, citations, start_server

from pithauthor.registry.local.pool import Limits, client_group
from pithauthor.registry.local.server import RegistryServer

ACTION = f"/pith/{SUBJECT.pith_number.body}/action/citation_signature"
# long enough that no stalled client is dropped while a test looks; small worker pool
PATIENT = Limits(workers=4, header_timeout=20, body_timeout=20, idle_timeout=20)


@pytest.fixture
def server(tmp_path: Path) -> Iterator[RegistryServer]:
    srv = start_server(tmp_path / "reg", limits=PATIENT)
    try:
        yield srv
    finally:
        srv.stop()


@pytest.fixture(scope="module")
def shared_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RegistryServer]:
    """One server for all the examples Hypothesis draws (none of them stores anything)."""
    srv = start_server(tmp_path_factory.mktemp("shared") / "reg", limits=PATIENT)
    try:
        yield srv
    finally:
        srv.stop()


def _connect(srv: RegistryServer, source: str | None = None) -> socket.socket:
    host, port = srv.server_address[:2]
    bind = (source, 0) if source else None
    return socket.create_connection((str(host), int(port)), timeout=5, source_address=bind)


def _answer(
    sock: socket.socket, pending: bytearray | None = None
) -> tuple[int, dict[str, str], bytes]:
    """Read one whole answer from `sock`: (status, headers, body); fails on silence. Bytes
    read past it (the next pipelined answer) are kept in `pending` for the next call."""
    data = pending if pending is not None else bytearray()
    while b"\r\n\r\n" not in data:
        chunk = sock.recv(65536)
        assert chunk, f"closed without an answer (got {bytes(data)!r})"
        data += chunk
    end = data.index(b"\r\n\r\n") + 4
    lines = bytes(data[: end - 4]).decode("latin-1").split("\r\n")
    headers = {k.strip().lower(): v.strip() for k, _, v in (h.partition(":") for h in lines[1:])}
    length = int(headers.get("content-length", "0"))
    while len(data) < end + length:
        chunk = sock.recv(65536)
        assert chunk, "closed in the middle of the answer's body"
        data += chunk
    body = bytes(data[end : end + length])
    del data[: end + length]
    return int(lines[0].split()[1]), headers, body


def _closed(sock: socket.socket) -> bool:
    """Whether the server closed the connection (after its answer)."""
    sock.settimeout(3)
    try:
        return sock.recv(1) == b""
    except ConnectionResetError:
        return True


def _signed_post(event: dict[str, object], extra: str = "") -> bytes:
    body = json.dumps(event).encode()
    head = (
        f"POST {ACTION} HTTP/1.1\r\nHost: x\r\nContent-Length: {len(body)}\r\n"
        f"Idempotency-Key: {event['event_id']}\r\n{extra}\r\n"
    )
    return head.encode() + body


def _stored(srv: RegistryServer) -> int:
    return len(srv.store.events(SUBJECT.pith_number.body))


# --- slow clients -------------------------------------------------------------------------------


def _slow_bodies(srv: RegistryServer, count: int) -> list[socket.socket]:
    """`count` POSTs that declare 64 KiB and send one byte of it."""
    held = []
    for _ in range(count):
        sock = _connect(srv)
        sock.sendall(_post_head("Content-Length: 65536\r\n", b"{"))
        held.append(sock)
    return held


@pytest.mark.parametrize("slow", [16, 64])
def test_slow_bodies_hold_no_worker_an_honest_get_and_post_are_answered_at_once(
    server: RegistryServer, slow: int
) -> None:
    held = _slow_bodies(server, slow)  # 4 to 16 times the workers
    try:
        time.sleep(0.3)
        for sock in held:  # they keep trickling while the honest client is served
            sock.sendall(b" ")
        started = time.monotonic()
        answer = httpx.get(server.url + "/pith-mirrors.json", timeout=5)
        took = time.monotonic() - started
        assert answer.status_code == 200
        assert took < 1.0, f"an honest GET waited {took:.2f} s behind {slow} slow bodies"
        (event,) = citations(1, TestSigner())
        started = time.monotonic()
        with _connect(server) as sock:
            sock.sendall(_signed_post(event))
            status, _, _ = _answer(sock)
        assert status == 201 and time.monotonic() - started < 1.0
        assert server.pool.open_connections >= slow  # the slow ones are still there
    finally:
        for sock in held:
            sock.close()


def test_a_body_that_never_ends_is_dropped_after_the_body_limit(tmp_path: Path) -> None:
    srv = start_server(tmp_path / "reg", limits=Limits(body_timeout=0.5, idle_timeout=5))
    try:
        (sock,) = _slow_bodies(srv, 1)
        started = time.monotonic()
        assert _closed(sock)
        assert 0.4 < time.monotonic() - started < 2.5
        sock.close()
    finally:
        srv.stop()


def test_the_token_is_checked_before_any_body_is_read(tmp_path: Path) -> None:
    srv = start_server(tmp_path / "reg", token="right-token", limits=PATIENT)
    try:
        for auth, want in (("", 401), ("Authorization: Bearer wrong\r\n", 403)):
            with _connect(srv) as sock:
                sock.sendall(
                    f"POST {ACTION} HTTP/1.1\r\nHost: x\r\nContent-Length: 65536\r\n{auth}\r\n"
                    "{".encode()
                )
                started = time.monotonic()
                status, _, body = _answer(sock)  # no byte of the body was needed
                assert (status, time.monotonic() - started < 1.0) == (want, True)
                assert "error" in json.loads(body)
                assert _closed(sock)
        (event,) = citations(1, TestSigner())
        with _connect(srv) as sock:  # the right token: the body is read, the event stored
            sock.sendall(_signed_post(event, "Authorization: Bearer right-token\r\n"))
            assert _answer(sock)[0] == 201
    finally:
        srv.stop()


def test_a_body_too_large_is_refused_before_it_is_sent(server: RegistryServer) -> None:
    with _connect(server) as sock:
        sock.sendall(f"POST {ACTION} HTTP/1.1\r\nHost: x\r\nContent-Length: 65537\r\n\r\n".encode())
        assert _answer(sock)[0] == 413
        assert _closed(sock)


def test_expect_100_continue_gets_its_interim_answer_then_the_event_is_taken(
    server: RegistryServer,
) -> None:
    (event,) = citations(1, TestSigner())
    raw = _signed_post(event, "Expect: 100-continue\r\n")
    head, _, body = raw.partition(b"\r\n\r\n")
    with _connect(server) as sock:
        sock.sendall(head + b"\r\n\r\n")
        assert sock.recv(100) == b"HTTP/1.1 100 Continue\r\n\r\n"
        sock.sendall(body)
        assert _answer(sock)[0] == 201
    assert _stored(server) == 1


# --- connection caps ----------------------------------------------------------------------------


def test_520_idle_connections_from_one_address_leave_another_address_served(
    tmp_path: Path,
) -> None:
    """Default caps: 512 connections in all, 128 from one address."""
    srv = start_server(tmp_path / "reg", limits=Limits(idle_timeout=20))
    held: list[socket.socket] = []
    try:
        held = [_connect(srv) for _ in range(520)]
        deadline = time.monotonic() + 5
        while srv.pool.open_connections < Limits().max_per_address and time.monotonic() < deadline:
            time.sleep(0.05)
        assert srv.pool.open_connections == Limits().max_per_address
        with _connect(srv) as sock:  # one more from the flooding address: refused
            sock.sendall(b"GET /pith-mirrors.json HTTP/1.1\r\nHost: x\r\n\r\n")
            status, headers, _ = _answer(sock)
            assert (status, headers.get("retry-after")) == (503, "1")
        started = time.monotonic()
        with _connect(srv, source="127.0.0.2") as sock:  # another address: served
            sock.sendall(b"GET /pith-mirrors.json HTTP/1.1\r\nHost: x\r\n\r\n")
            assert _answer(sock)[0] == 200
        assert time.monotonic() - started < 1.0
    finally:
        for sock in held:
            sock.close()
        srv.stop()


def _opened(srv: RegistryServer, count: int) -> None:
    deadline = time.monotonic() + 5
    while srv.pool.open_connections != count and time.monotonic() < deadline:
        time.sleep(0.02)
    assert srv.pool.open_connections == count


def test_idle_connections_spread_over_loopback_addresses_leave_a_new_client_served(
    tmp_path: Path,
) -> None:
    """Before: 127.0.0.2-6 each stay under the per-address cap and together fill every
    slot; the next client (127.0.0.1) was refused 503. Now the connection idle the longest
    makes room for it, and the total stays at the cap."""
    limits = Limits(max_connections=20, max_per_address=5, idle_timeout=20)
    srv = start_server(tmp_path / "reg", limits=limits)
    held: list[socket.socket] = []
    try:
        for last in range(2, 7):  # 5 addresses x 5 = 25 connections > 20
            held += [_connect(srv, source=f"127.0.0.{last}") for _ in range(5)]
            _opened(srv, min(len(held), 20))
        started = time.monotonic()
        with _connect(srv, source="127.0.0.1") as sock:
            sock.sendall(b"GET /pith-mirrors.json HTTP/1.1\r\nHost: x\r\n\r\n")
            assert _answer(sock)[0] == 200
        assert time.monotonic() - started < 1.0
        assert srv.pool.open_connections <= 20
        assert _closed(held[0])  # the oldest idle one made room
        with _connect(srv, source="127.0.0.6") as sock:  # the per-address cap still holds
            sock.sendall(b"GET /pith-mirrors.json HTTP/1.1\r\nHost: x\r\n\r\n")
            assert _answer(sock)[0] == 503
    finally:
        for sock in held:
            sock.close()
        srv.stop()


def test_when_no_connection_is_idle_a_new_one_gets_503(tmp_path: Path) -> None:
    """The cap still caps: connections with a request under way are never closed for room."""
    limits = Limits(max_connections=4, max_per_address=8, header_timeout=20, idle_timeout=20)
    srv = start_server(tmp_path / "reg", limits=limits)
    held: list[socket.socket] = []
    try:
        for _ in range(4):
            sock = _connect(srv)
            sock.sendall(b"GET /pith-mirrors.json HTTP/1.1\r\n")  # a head under way
            held.append(sock)
        _opened(srv, 4)
        time.sleep(0.3)  # their first bytes are in the waiting room's buffers
        with _connect(srv) as sock:
            sock.sendall(b"GET /pith-mirrors.json HTTP/1.1\r\nHost: x\r\n\r\n")
            assert _answer(sock)[0] == 503
        for sock in held:
            sock.sendall(b"Host: x\r\n\r\n")
            assert _answer(sock)[0] == 200
    finally:
        for sock in held:
            sock.close()
        srv.stop()


# --- framing (RFC 9112 section 6) ---------------------------------------------------------------


def _post_head(headers: str, body: bytes = b"") -> bytes:
    return f"POST {ACTION} HTTP/1.1\r\nHost: x\r\n{headers}\r\n".encode() + body


SMUGGLED_EVENT = citations(1, TestSigner(b"\x07" * 32))[0]
INNER = _signed_post(SMUGGLED_EVENT)
CHUNKED = b"0\r\n\r\n" + INNER  # an empty chunked body, then a hidden request

FRAMING = {
    "Transfer-Encoding: chunked": _post_head("Transfer-Encoding: chunked\r\n", CHUNKED),
    "Content-Length and Transfer-Encoding": _post_head(
        f"Content-Length: {len(CHUNKED)}\r\nTransfer-Encoding: chunked\r\n", CHUNKED
    ),
    "Transfer-Encoding: identity": _post_head(
        "Transfer-Encoding: identity\r\nContent-Length: 2\r\n", b"{}"
    ),
    "two equal Content-Length": _post_head("Content-Length: 2\r\nContent-Length: 2\r\n", b"{}"),
    "two different Content-Length": _post_head(
        "Content-Length: 2\r\nContent-Length: 7\r\n", b"{}" + INNER
    ),
    "a Content-Length list": _post_head("Content-Length: 2, 2\r\n", b"{}"),
    "Content-Length 1_0": _post_head("Content-Length: 1_0\r\n", b"{}" * 5),
    "Content-Length +10": _post_head("Content-Length: +10\r\n", b"{}" * 5),
    "Content-Length after a form feed": _post_head("Content-Length: \x0c10\r\n", b"{}" * 5),
    "Content-Length in hex": _post_head("Content-Length: 0x10\r\n", b"{}" * 8),
    "Content-Length -5": _post_head("Content-Length: -5\r\n"),
    "a space before the colon": _post_head("Content-Length : 2\r\n", b"{}"),
    "a folded header line": _post_head(" Content-Length: 2\r\n", b"{}"),
    "a folded first header line": b"POST / HTTP/1.1\r\n Content-Length: 2\r\n\r\n{}",
    "a GET with a body": b"GET /pith-mirrors.json HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\n\r\n"
    + b"GET /",
    # a bare CR inside a header value, which `email` takes for a line break: a proxy
    # sees one header `X-Note` and no body (INNER is its next request); the registry saw a
    # Content-Length, and stored INNER as this request's body
    "a bare CR inside a header value": _post_head(
        f"X-Note: a\rContent-Length: {len(INNER)}\r\n", INNER
    ),
    "a bare CR ending a header line": _post_head(
        f"Content-Length: {len(INNER)}\r\rX: y\r\n", INNER
    ),
    "a NUL inside a header value": _post_head("X-Note: a\x00b\r\nContent-Length: 2\r\n", b"{}"),
    "a vertical tab inside a header value": _post_head(
        "X-Note: a\x0bb\r\nContent-Length: 2\r\n", b"{}"
    ),
    "a DEL inside a header value": _post_head("X-Note: a\x7fb\r\nContent-Length: 2\r\n", b"{}"),
}


@pytest.mark.parametrize("name", list(FRAMING))
def test_framing_that_could_smuggle_is_400_and_the_connection_is_closed(
    server: RegistryServer, name: str
) -> None:
    with _connect(server) as sock:
        sock.sendall(FRAMING[name])
        status, _, body = _answer(sock)
        assert status == 400, body
        assert "error" in json.loads(body)
        assert _closed(sock)  # nothing after the head is read as a request
    assert _stored(server) == 0  # the hidden inner POST was not executed


def test_digits_with_white_space_around_them_are_a_valid_content_length(
    server: RegistryServer,
) -> None:
    """RFC 9110 allows optional white space around a field value: not a framing error."""
    (event,) = citations(1, TestSigner())
    raw = _signed_post(event).replace(b"Content-Length: ", b"Content-Length: \t ")
    with _connect(server) as sock:
        sock.sendall(raw)
        assert _answer(sock)[0] == 201


def test_http_0_9_gets_its_400_at_once(server: RegistryServer) -> None:
    with _connect(server) as sock:
        sock.sendall(b"GET /\r\n")
        started = time.monotonic()
        status, _, body = _answer(sock)
        assert status == 400 and "HTTP/0.9" in json.loads(body)["error"]
        assert time.monotonic() - started < 1.0  # not after the header time limit (20 s)
        assert _closed(sock)


def test_a_head_over_the_size_limit_is_431_without_waiting(server: RegistryServer) -> None:
    with _connect(server) as sock:  # 81 lines of 1 kB, no end of the head, then silence
        sock.sendall(b"GET / HTTP/1.1\r\n" + (b"X-A: " + b"a" * 1024 + b"\r\n") * 81)
        started = time.monotonic()
        assert _answer(sock)[0] == 431
        assert time.monotonic() - started < 1.0


def test_pipelined_requests_on_one_connection_are_each_answered(server: RegistryServer) -> None:
    (event,) = citations(1, TestSigner())
    get = b"GET /pith-mirrors.json HTTP/1.1\r\nHost: x\r\n\r\n"
    with _connect(server) as sock:
        sock.sendall(b"\r\n" + get + _signed_post(event) + get)  # sent at once
        pending = bytearray()
        statuses = [_answer(sock, pending)[0] for _ in range(3)]
    assert statuses == [200, 201, 200]


def test_links_use_the_servers_base_url_never_the_host_header(tmp_path: Path) -> None:
    srv = start_server(tmp_path / "reg", base_url="https://mirror.example/")
    try:
        body = SUBJECT.pith_number.body
        evil = {"Host": "evil.example"}
        record = httpx.get(f"{srv.url}/pith/{body}", headers=evil).json()
        manifest = httpx.get(f"{srv.url}/pith-mirrors.json", headers=evil).text
        actions = record["agent_actions"]["actions"]
        assert actions["sign_citation"] == (
            f"https://mirror.example/pith/{body}/action/citation_signature"
        )
        assert "evil" not in json.dumps(record) + manifest
    finally:
        srv.stop()


@pytest.mark.parametrize(
    ("address", "group"),
    [
        (("127.0.0.1", 5000), "127.0.0.1"),
        (("::ffff:192.0.2.7", 5000, 0, 0), "192.0.2.7"),
        (("2001:db8:1:2:aaaa::1", 5000, 0, 0), "2001:db8:1:2::/64"),
        (("2001:db8:1:2:ffff::9", 5001, 0, 0), "2001:db8:1:2::/64"),
        (("fe80::1%eth0", 5000, 0, 2), "fe80::/64"),
    ],
)
def test_an_ipv6_network_of_64_shares_one_connection_cap(address: tuple, group: str) -> None:
    """An IPv6 user holds a whole /64: its addresses count as one client."""
    assert client_group(address) == group


# --- framing, drawn at random: the server and a strict reader never disagree -----------------

_MARKER = b"GET /pith-mirrors.json HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"
_NAMES = [
    "Content-Length",
    "content-length",
    "CONTENT-LENGTH",
    "Content-Length ",
    " Content-Length",
]
# all of these say 2 to int(); only the first five are 2 to RFC 9112 (digits, white space around)
_LENGTHS = ["2", " 2", "02", "2 ", "\t2", "+2", "2, 2", "1_0", "0x2", "2.0", "\u0662", "\x0c2"]
_CODINGS = ["chunked", "identity", " chunked", "Chunked", "gzip, chunked"]
_TE_NAMES = ["Transfer-Encoding", "transfer-encoding", "Transfer-Encoding "]


def _strict_length(fields: list[tuple[str, str]]) -> int | None:
    """The body length a strict RFC 9112 reader finds (one Content-Length of digits and no
    Transfer-Encoding), or None where it refuses the request."""
    if len(fields) != 1 or fields[0][0].lower() != "content-length":
        return None  # no length, two, a coding, or a name with white space in or around it
    value = fields[0][1].strip(" \t")
    return int(value) if value.isascii() and value.isdigit() else None


@st.composite
def _framings(draw: st.DrawFn) -> tuple[bytes, int | None]:
    """A POST head with some length and coding fields, its 2-byte body `{}`, then a GET; and
    the body length a strict reader finds there."""
    fields = draw(
        st.lists(
            st.one_of(
                st.tuples(st.sampled_from(_NAMES), st.sampled_from(_LENGTHS)),
                st.tuples(st.sampled_from(_TE_NAMES), st.sampled_from(_CODINGS)),
            ),
            min_size=1,
            max_size=3,
        )
    )
    eol = draw(st.sampled_from(["\r\n", "\n"]))
    head = f"POST {ACTION} HTTP/1.1{eol}Host: x{eol}"
    head += "".join(f"{name}: {value}{eol}" for name, value in fields) + eol
    return head.encode() + b"{}" + _MARKER, _strict_length(fields)


@settings(max_examples=examples(300), deadline=None)
@given(case=_framings())
def test_random_framing_is_refused_or_read_exactly_as_a_strict_reader_would(
    shared_server: RegistryServer, case: tuple[bytes, int | None]
) -> None:
    raw, length = case
    assert length in (None, 2)  # every valid length drawn is the body's
    with _connect(shared_server) as sock:
        sock.sendall(raw)
        pending = bytearray()
        status, _, body = _answer(sock, pending)
        if length is None:
            assert status == 400, (raw, body)  # refused, and nothing after the head is read
            assert _closed(sock)
            return
        assert status == 400 and b"Idempotency-Key" in body  # the POST, read with its body
        status, _, body = _answer(sock, pending)  # then the GET right after it, once
        assert status == 200 and b"mirrors" in body
