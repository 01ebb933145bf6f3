"""The local registry's HTTP front: where one HTTP/1.1 request ends, decided from its head alone
(RFC 9112, pure), and the waiting room and worker pool that read each request in full, within
limits, before a handler sees it.
"""

from __future__ import annotations

import contextlib
import email.message
import http.client
import io
import ipaddress
import logging
import queue
import re
import selectors
import socket
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

# Where one HTTP/1.1 request ends (RFC 9112), decided from its head alone: pure, no I/O.
#
# The local registry's waiting room reads every byte of a request before a worker sees it, so it
# must know where the request ends. It asks `head_size` (where the head ends) and `body_length`
# (how long the body is), and the worker parses the same bytes with the same parser
# (`http.client.parse_headers`, as `http.server` does) and asks `body_length` again. One function
# for both sides: the two can never disagree about where the next request starts, which is what
# request smuggling needs.
#
# Framing the registry refuses (400, and the connection is closed), per RFC 9112 section 6:
# `Transfer-Encoding` in any form (it is not implemented, and with `Content-Length` beside it a
# proxy and this server could split the stream differently), more than one `Content-Length`, a
# `Content-Length` that is not only ASCII digits (`int()` would take `+10`, `1_0`, `\f10`), a
# header line that is not `name: value` (`Content-Length : 5` would be silently ignored by the
# parser), a folded header line, a control character inside a line of the head (a bare CR:
# `check_head_bytes`), and a body on a GET.

MAX_LINE = 65536


"""A longer request line is 414, a longer header line 431 (as `http.server` and `http.client`)."""


MAX_HEADERS = 100


"""More header lines are 431 (`http.client`'s limit)."""


MAX_HEAD = MAX_LINE + 16384


"""A head (request line and headers) still unfinished at this size is 414/431 at once."""


TOO_LARGE = -1


"""`head_size`'s answer when the head is over the limits (the worker answers 414/431)."""


_DIGITS = re.compile(r"[0-9]+")


_OWS = " \t"  # the optional white space RFC 9110 allows around a field value


class FramingError(Exception):
    """A request whose length cannot be trusted: answered 400, connection closed."""


@dataclass(frozen=True)
class Head:
    """A parsed request head: `method` is None when the request line is not `METHOD PATH
    HTTP/x.y` (the worker's own parse answers it)."""

    method: str | None
    path: str
    headers: email.message.Message


def request_words(line: bytes) -> list[str]:
    """The words of a request line, split exactly as `http.server` splits them."""
    return str(line, "iso-8859-1").rstrip("\r\n").split()


def head_size(buf: bytes | bytearray) -> int | None:
    """The length of the request head at the start of `buf` (request line, header lines, the
    empty line), None while it is incomplete, TOO_LARGE when it is over the limits. An HTTP/0.9
    request line (two words) has no headers: its head is that line."""
    end = buf.find(b"\n", 0, MAX_LINE)
    if end < 0:
        return None if len(buf) < MAX_LINE else TOO_LARGE
    pos = end + 1
    if len(request_words(bytes(buf[:pos]))) == 2:
        return pos
    for _ in range(MAX_HEADERS + 1):
        end = buf.find(b"\n", pos, pos + MAX_LINE)
        if end < 0:
            unfinished = len(buf) - pos >= MAX_LINE or len(buf) >= MAX_HEAD
            return TOO_LARGE if unfinished else None
        line = buf[pos : end + 1]
        pos = end + 1
        if line in (b"\r\n", b"\n"):
            return pos if pos <= MAX_HEAD else TOO_LARGE
    return TOO_LARGE


# Any control character but HTAB inside a line of the head: a bare CR above all, which the
# header parser (`email`) takes for a line break where a proxy sees one header value going on
# (RFC 9112 section 2.2: invalid; a recipient may refuse it). Line ends (LF, CRLF) are not in it.
# Any control character but HTAB, CR and LF, searched over the whole head at once; a CR is
# allowed only as the CR of a CRLF (LF, or CRLF, ends every line of a head `head_size` measured).
# Two passes in C: half the time of one regex with a look-ahead for the CR.
_CONTROL = re.compile(rb"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")


def check_head_bytes(head: bytes) -> None:
    """FramingError when a line of the request head (as `head_size` measured it) holds a
    control character other than HTAB: each line may end in LF or CRLF, nothing else."""
    if _CONTROL.search(head) or head.count(b"\r") != head.count(b"\r\n"):
        raise FramingError("a control character (a bare CR?) inside a header line")


def parse_head(head: bytes) -> Head:
    """The method, path and headers of a whole head (as `head_size` measured it)."""
    fp = io.BytesIO(head)
    words = request_words(fp.readline(MAX_LINE + 1))
    headers = http.client.parse_headers(fp)
    if len(words) != 3:
        return Head(None, "", headers)
    return Head(words[0], words[1], headers)


def body_length(method: str, headers: email.message.Message) -> int:
    """The length of the body that follows this head; FramingError when it cannot be trusted."""
    if headers.defects or headers.get_payload():
        # a line that is not `name: value` ends the parser's headers early: what follows it
        # (perhaps a Content-Length) would be read as neither header nor body
        raise FramingError("a header line is not 'name: value'")
    if any("\n" in str(value) for value in headers.values()):
        # obs-fold: RFC 9112 section 5.2 lets a server refuse it, and a proxy might read the
        # folded line as a header of its own
        raise FramingError("a header line is folded (starts with white space)")
    if headers.get_all("Transfer-Encoding"):
        raise FramingError("Transfer-Encoding is not supported: send the body with Content-Length")
    values = headers.get_all("Content-Length") or []
    if len(values) > 1:
        raise FramingError("more than one Content-Length header")
    if not values:
        return 0
    text = str(values[0]).strip(_OWS)
    if not _DIGITS.fullmatch(text):
        raise FramingError("Content-Length must be digits only")
    length = int(text)
    if length and method != "POST":
        raise FramingError(f"a {method} request has no body here")
    return length


# Connections of the local registry: a waiting room that reads every request, and a bounded
# pool of workers that only answer.
#
# A worker never waits for a client's request. One selector thread (the waiting room) holds every
# open connection and reads what arrives into that connection's buffer; after each read it asks
# `inspect` (the server's framing rules) whether the buffer starts with a whole request. Only
# then is the request, head and body, handed to one of at most `workers` threads, which parses
# it from memory and answers. So a client that sends its headers or its body one byte a second
# holds a buffer and a connection slot, never a thread: the others keep being answered.
# `inspect` can also say "answer now" after the head (a refused token, a bad length, a body too
# large): the body is then never read.
#
# Time limits, from the waiting room: `idle_timeout` with no request under way, `header_timeout`
# from a request's first byte to the end of its head, `body_timeout` from there to the end of its
# body; past one, the connection is closed. A connection beyond `max_per_address` from one client
# address (for IPv6, one /64 network) gets `503` (with `Retry-After: 1`) and is closed: one address
# cannot take every slot. One beyond `max_connections` in all closes the connection idle the
# longest (no request under way), and gets 503 only when none is idle: connections spread over
# many addresses cannot shut a new client out while they only sit there. After an answer, a
# kept-alive connection goes back to the waiting room with whatever it sent after its request (a
# pipelined request is inspected like any other).

log = logging.getLogger("pithauthor.registry.local")


Address = Any


_BUSY_BODY = b'{"error":"too many connections; try again soon"}'


_BUSY = (
    b"HTTP/1.1 503 Service Unavailable\r\nContent-Type: application/json; charset=utf-8\r\n"
    b"Content-Length: %d\r\nConnection: close\r\nRetry-After: 1\r\n\r\n%s"
) % (len(_BUSY_BODY), _BUSY_BODY)


_READ_SIZE = 65536


@dataclass(frozen=True)
class Limits:
    """Sizes and time limits (seconds) of the registry's connection handling."""

    workers: int = 16
    max_connections: int = 512
    max_per_address: int = 128
    header_timeout: float = 10.0
    body_timeout: float = 30.0
    idle_timeout: float = 30.0


@dataclass(frozen=True)
class Ready:
    """`inspect`'s answer: the first `size` buffered bytes are a request for a worker.
    `whole=False`: its head is over the size limits (the worker answers 414/431)."""

    size: int
    whole: bool = True


@dataclass(frozen=True)
class Waiting:
    """`inspect`'s answer: not yet. `need` (once the head is in): the request's whole size, so
    nothing is inspected again until that much has arrived; `interim` is sent once then
    (`100 Continue` to a client that waits for it before sending its body)."""

    need: int | None = None
    interim: bytes = b""


Inspect = Callable[[bytearray], "Ready | Waiting"]


Serve = Callable[[socket.socket, Address, bytes, bool], bool]


"""Answers one request (socket, address, its bytes, whole); True = keep the connection."""


@dataclass(eq=False)
class _Connection:
    sock: socket.socket
    addr: Address
    host: str
    buf: bytearray = field(default_factory=bytearray)
    deadline: float = 0.0
    need: int | None = None  # the request's size once its head is in (None: head under way)
    interim_sent: bool = False
    new: bool = False  # just accepted: it may be over `max_connections` (`_make_room`)


class ConnectionPool:
    """The waiting room (one selector thread) and the workers; see the module docstring."""

    def __init__(self, limits: Limits, inspect: Inspect, serve: Serve) -> None:
        self.limits = limits
        self._inspect = inspect
        self._serve = serve
        self._workers = ThreadPoolExecutor(limits.workers, thread_name_prefix="pith-registry")
        self._selector = selectors.DefaultSelector()
        # A selector is not thread-safe: only the waiting-room thread registers sockets. New and
        # kept-alive connections come to it through `_incoming`, and a byte on this socket pair
        # wakes its `select` to take them at once.
        self._incoming: queue.SimpleQueue[_Connection] = queue.SimpleQueue()
        self._wake_r, self._wake_w = socket.socketpair()
        self._wake_r.setblocking(False)
        self._selector.register(self._wake_r, selectors.EVENT_READ, None)
        self._open = 0
        self._per_host: dict[str, int] = {}
        self._waiting: set[_Connection] = set()  # only the waiting-room thread touches it
        self._lock = threading.Lock()
        self._stopping = threading.Event()
        self._thread = threading.Thread(target=self._wait_loop, name="pith-registry-wait")
        self._thread.daemon = True
        self._thread.start()

    @property
    def open_connections(self) -> int:
        with self._lock:
            return self._open

    def add(self, sock: socket.socket, addr: Address) -> None:
        """Take a new connection (refused with 503 when too many are open, in all or from its
        address)."""
        host = client_group(addr)
        with self._lock:
            full = (
                self._per_host.get(host, 0) >= self.limits.max_per_address
                or self._stopping.is_set()
            )
            if not full:
                # past `max_connections` in all, it is taken all the same: the waiting room
                # makes room by closing the connection idle the longest (`_make_room`), and
                # answers 503 only when none is idle
                self._open += 1
                self._per_host[host] = self._per_host.get(host, 0) + 1
        if full:
            _busy(sock)
            return
        self._park(_Connection(sock, addr, host, new=True))

    def stop(self) -> None:
        """Close every waiting connection and let the workers finish."""
        if self._stopping.is_set():
            return
        self._stopping.set()
        self._wake()
        self._thread.join(5)
        self._workers.shutdown(wait=True, cancel_futures=True)
        for sock in (self._wake_r, self._wake_w):
            _close(sock)

    # --- inside ------------------------------------------------------------------------------

    def _park(self, conn: _Connection) -> None:
        self._incoming.put(conn)
        self._wake()

    def _wake(self) -> None:
        with contextlib.suppress(OSError):
            self._wake_w.send(b"\0")

    def _drop(self, conn: _Connection) -> None:
        _close(conn.sock)
        with self._lock:
            self._open -= 1
            left = self._per_host[conn.host] - 1
            if left:
                self._per_host[conn.host] = left
            else:
                del self._per_host[conn.host]

    def _wait_loop(self) -> None:
        while not self._stopping.is_set():
            while True:
                try:
                    conn = self._incoming.get_nowait()
                except queue.Empty:
                    break
                if conn.new and not self._make_room():
                    _busy(conn.sock)
                    self._drop(conn)
                    continue
                conn.new = False
                conn.sock.setblocking(False)
                conn.need, conn.interim_sent = None, False
                conn.deadline = time.monotonic() + self.limits.idle_timeout
                self._waiting.add(conn)
                self._selector.register(conn.sock, selectors.EVENT_READ, conn)
                if conn.buf:  # sent after its last request: perhaps a whole request already
                    conn.deadline = time.monotonic() + self.limits.header_timeout
                    self._advance(conn)
            # a short timeout: the deadlines below are checked even when nothing arrives
            for key, _ in self._selector.select(timeout=0.1):
                if key.fileobj is self._wake_r:
                    with contextlib.suppress(OSError):
                        self._wake_r.recv(4096)
                    continue
                conn = key.data
                if self._receive(conn):
                    self._advance(conn)
            now = time.monotonic()
            for conn in [c for c in self._waiting if c.deadline < now]:
                self._leave(conn)
                self._drop(conn)
        for conn in list(self._waiting):
            self._leave(conn)
            self._drop(conn)
        while True:
            try:
                conn = self._incoming.get_nowait()
            except queue.Empty:
                break
            self._drop(conn)
        self._selector.close()  # its epoll descriptor: a process runs many registries in tests

    def _make_room(self) -> bool:
        """Bring the open connections back to `max_connections` by closing the ones idle the
        longest (open, no request under way: a server may close those at any time, RFC 9112
        section 9.8); False when too many stay open, all busy. Many addresses (127.0.0.2-6,
        or a botnet) can then fill the slots with idle connections, and an honest new client
        is still served: its connection is the newest, the flood's the oldest."""
        while True:
            with self._lock:
                if self._open <= self.limits.max_connections:
                    return True
            idle = [c for c in self._waiting if not c.buf and c.need is None]
            if not idle:
                return False
            oldest = min(idle, key=lambda c: c.deadline)  # the same idle limit for every one
            self._leave(oldest)
            self._drop(oldest)

    def _leave(self, conn: _Connection) -> None:
        """Out of the waiting room (to a worker, or to be closed)."""
        self._selector.unregister(conn.sock)
        self._waiting.discard(conn)

    def _receive(self, conn: _Connection) -> bool:
        """Read what has arrived into the buffer; False (and closed) when the client left."""
        try:
            chunk = conn.sock.recv(_READ_SIZE)
        except (BlockingIOError, InterruptedError):
            return False
        except OSError:
            chunk = b""
        if not chunk:
            self._leave(conn)
            self._drop(conn)
            return False
        if not conn.buf:  # a request starts: the head's time limit, not the idle one
            conn.deadline = time.monotonic() + self.limits.header_timeout
        conn.buf += chunk
        return True

    def _advance(self, conn: _Connection) -> None:
        """Hand the connection to a worker if its buffer starts with a whole request, else
        note how much is still needed."""
        if conn.need is not None and len(conn.buf) < conn.need:
            return  # the body is under way: no need to look at the head again
        try:
            verdict = self._inspect(conn.buf)
        except Exception as exc:  # a bug in the framing rules must not stop the waiting room
            log.error("inspecting a request from %s failed: %s", conn.addr, type(exc).__name__)
            self._leave(conn)
            self._drop(conn)
            return
        if isinstance(verdict, Waiting):
            if verdict.need is not None and conn.need is None:
                conn.need = verdict.need  # the head is in: now the body's time limit
                conn.deadline = time.monotonic() + self.limits.body_timeout
            if verdict.interim and not conn.interim_sent:
                conn.interim_sent = True
                with contextlib.suppress(OSError):
                    conn.sock.send(verdict.interim)
            return
        # out of the selector before a worker has it: two threads never read one socket
        self._leave(conn)
        data = bytes(conn.buf[: verdict.size])
        del conn.buf[: verdict.size]
        self._workers.submit(self._run, conn, data, verdict.whole)

    def _run(self, conn: _Connection, data: bytes, whole: bool) -> None:
        keep = False
        try:
            conn.sock.settimeout(self.limits.body_timeout)  # for writing the answer
            keep = self._serve(conn.sock, conn.addr, data, whole)
        except Exception as exc:  # the handler answers its own errors; this is a last guard
            log.error("connection from %s failed: %s", conn.addr, type(exc).__name__)
        if keep and not self._stopping.is_set():
            self._park(conn)
        else:
            self._drop(conn)


def client_group(addr: Address) -> str:
    """Whose share of the connections a client address counts against: the IPv4 address (an
    IPv4-mapped IPv6 one too), or the IPv6 /64 network, which one user usually holds whole."""
    text = str(addr[0]) if isinstance(addr, tuple) and addr else str(addr)
    try:
        ip = ipaddress.ip_address(text.split("%", 1)[0])  # without an IPv6 zone (%eth0)
    except ValueError:  # not an IP address (a Unix socket): one group per name
        return text
    if isinstance(ip, ipaddress.IPv6Address):
        if ip.ipv4_mapped is not None:
            return str(ip.ipv4_mapped)
        return str(ipaddress.ip_network(f"{ip}/64", strict=False))
    return str(ip)


def _busy(sock: socket.socket) -> None:
    """Answer 503 (Retry-After: 1) on a new connection and close it."""
    with contextlib.suppress(OSError):
        sock.settimeout(0.5)  # a new connection's send buffer is empty: no wait
        sock.sendall(_BUSY)
    _close(sock)


def _close(sock: socket.socket) -> None:
    with contextlib.suppress(OSError):
        sock.shutdown(socket.SHUT_RDWR)
    with contextlib.suppress(OSError):
        sock.close()
