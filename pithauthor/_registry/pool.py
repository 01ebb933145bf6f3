"""Connections of the local registry: a waiting room and a bounded pool of workers.

An open connection with no request under way costs no thread: it waits in one selector thread
(the waiting room) and is closed after `idle_timeout`. A worker (at most `workers` of them) is
given a connection only once bytes of a request have arrived; it must receive the headers within
`header_timeout` and the body within `body_timeout`, else the connection is dropped. After an
answer a kept-alive connection goes back to the waiting room. Beyond `max_connections` open
connections a new one gets `503` and is closed. So stalled clients cannot hold the threads.
"""

from __future__ import annotations

import contextlib
import io
import logging
import queue
import selectors
import socket
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

log = logging.getLogger("pithauthor.registry")

Address = Any
Serve = Callable[[socket.socket, Address], bool]  # handles requests; True = keep the connection

_BUSY_BODY = b'{"error":"too many connections; try again soon"}'
_BUSY = (
    b"HTTP/1.1 503 Service Unavailable\r\nContent-Type: application/json; charset=utf-8\r\n"
    b"Content-Length: %d\r\nConnection: close\r\nRetry-After: 1\r\n\r\n%s"
) % (len(_BUSY_BODY), _BUSY_BODY)


@dataclass(frozen=True)
class Limits:
    """Time limits (seconds) and sizes of the registry's connection handling."""

    workers: int = 16
    max_connections: int = 512
    header_timeout: float = 10.0
    body_timeout: float = 30.0
    idle_timeout: float = 30.0


class TimedReader(io.RawIOBase):
    """A socket reader that refuses to wait past `deadline` (monotonic seconds); with `probe`
    set it does not wait at all (None: nothing has arrived)."""

    def __init__(self, sock: socket.socket) -> None:
        super().__init__()
        self.sock = sock
        self.deadline = time.monotonic()
        self.probe = False

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int | None:
        if self.probe:
            self.sock.settimeout(0)
            try:
                return self.sock.recv_into(buffer)
            except (BlockingIOError, InterruptedError):
                return None
        remaining = self.deadline - time.monotonic()
        if remaining <= 0:
            raise TimeoutError("the client took too long")
        self.sock.settimeout(remaining)
        return self.sock.recv_into(buffer)


class ConnectionPool:
    """The waiting room (one selector thread) and the workers; see the module docstring."""

    def __init__(self, limits: Limits, serve: Serve) -> None:
        self.limits = limits
        self._serve = serve
        self._workers = ThreadPoolExecutor(limits.workers, thread_name_prefix="pith-registry")
        self._selector = selectors.DefaultSelector()
        self._incoming: queue.SimpleQueue[tuple[socket.socket, Address]] = queue.SimpleQueue()
        self._wake_r, self._wake_w = socket.socketpair()
        self._wake_r.setblocking(False)
        self._selector.register(self._wake_r, selectors.EVENT_READ, None)
        self._open = 0
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
        """Take a new connection (refused with 503 when too many are open)."""
        with self._lock:
            full = self._open >= self.limits.max_connections or self._stopping.is_set()
            if not full:
                self._open += 1
        if full:
            with contextlib.suppress(OSError):
                sock.settimeout(0.5)
                sock.sendall(_BUSY)
            _close(sock)
            return
        self._park(sock, addr)

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

    def _park(self, sock: socket.socket, addr: Address) -> None:
        self._incoming.put((sock, addr))
        self._wake()

    def _wake(self) -> None:
        with contextlib.suppress(OSError):
            self._wake_w.send(b"\0")

    def _drop(self, sock: socket.socket) -> None:
        _close(sock)
        with self._lock:
            self._open -= 1

    def _wait_loop(self) -> None:
        since: dict[socket.socket, tuple[float, Address]] = {}
        while not self._stopping.is_set():
            while True:
                try:
                    sock, addr = self._incoming.get_nowait()
                except queue.Empty:
                    break
                since[sock] = (time.monotonic(), addr)
                self._selector.register(sock, selectors.EVENT_READ, addr)
            for key, _ in self._selector.select(timeout=0.1):
                if key.fileobj is self._wake_r:
                    with contextlib.suppress(OSError):
                        self._wake_r.recv(4096)
                    continue
                sock = key.fileobj  # type: ignore[assignment]
                self._selector.unregister(sock)
                since.pop(sock, None)
                self._workers.submit(self._run, sock, key.data)
            cutoff = time.monotonic() - self.limits.idle_timeout
            for sock in [s for s, (t, _) in since.items() if t < cutoff]:
                self._selector.unregister(sock)
                del since[sock]
                self._drop(sock)
        for sock in list(since):
            self._selector.unregister(sock)
            self._drop(sock)
        while True:
            try:
                sock, _ = self._incoming.get_nowait()
            except queue.Empty:
                break
            self._drop(sock)

    def _run(self, sock: socket.socket, addr: Address) -> None:
        keep = False
        try:
            keep = self._serve(sock, addr)
        except Exception as exc:  # the handler answers its own errors; this is a last guard
            log.error("connection from %s failed: %s", addr, type(exc).__name__)
        if keep and not self._stopping.is_set():
            self._park(sock, addr)
        else:
            self._drop(sock)


def _close(sock: socket.socket) -> None:
    with contextlib.suppress(OSError):
        sock.shutdown(socket.SHUT_RDWR)
    with contextlib.suppress(OSError):
        sock.close()
