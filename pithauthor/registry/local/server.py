"""The local registry's HTTP server (stdlib `ThreadingHTTPServer`, HTTP/1.1 keep-alive).

    GET  /pith-mirrors.json                       its manifest (local key, labelled local)
    GET  /api/pith-number/resolve?arxiv=ID        {pith_number, canonical_sha256, record_url}
    GET  /pith/{ref}  (also /pith/{ref}.json)      the record, with agent_actions to itself
    GET  /pith/{ref}/bundle.json | /state.json     bundle, merged state
    POST /pith/{ref}/action/{event_type}           a signed author event (201 new, 200 repeat)
    POST /pith/{ref}/action/trusted_time           a trusted-time sidecar of a stored event

A POST body is read with the strict JSON reader and must be exactly a valid author event; the
store keeps the canonical bytes of the checked event, never the bytes that were sent. What can
be refused from the head alone (framing, size, route, token: `RegistryServer.refusal`) is
refused before any byte of the body is read.

`{ref}` is a body, a unique 8/12/16-character alias, or an arXiv id. Every request gets an
answer: errors are JSON `{"error": ..., "failed_checks": [...]}` (4xx for bad input, 500 only
for a bug, logged without the request's content). Connections wait in one selector thread that
reads whole requests, then a bounded pool of workers answers them; the same module says where a
request ends (`pithauthor.registry.local.pool`). Links in the documents use the server's base
URL, never the request's `Host`. `FaultPlan` is for tests only: it makes some requests fail
(500, connection reset after the event was stored, or a stall past the client's timeout).

Moderation (`moderate=True`, `pith registry serve --moderate`; DESIGN, docs/registry.md): like
pith.science's forms, a submission not made by a signed-in author (no bearer token) is held for
moderation: checked as any POST, kept aside in the store's `held` table, answered
`202 {"status": "held_for_moderation", "event_id": ...}` (again 202 when sent again), and absent
from the bundle and state until it is approved (`approve`, `pith registry approve`), as the
author signing in would confirm it. With a token set, a POST that carries it is accepted at once.

Trusted time (DESIGN, docs/protocol.md "Trusted time", "Proofs that travel"): a sidecar posted
to `action/trusted_time` is read strictly (`parse_sidecar`) and merged into what is kept for its
event, which must be stored already, under this paper; the event and its id are never touched.
The bundle and the state list the paper's sidecars in `trusted_time`, outside what the state's
hash covers. Proofs are not checked here (a reader checks them against its own pinned
authorities and headers); a sidecar adds no statement, so moderation does not hold it.
"""

from __future__ import annotations

import email.message
import hmac
import io
import socket
import struct
import threading
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, HTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

from pithauthor.fs import MAX_JSON_BYTES
from pithauthor.protocol.canonical_json import JSONFault, parse_json
from pithauthor.protocol.checks.event import checked_author_event
from pithauthor.protocol.documents import (
    ActionAnswer,
    AuthorEvent,
    ErrorAnswer,
    HeldAnswer,
    TimeAnswer,
)
from pithauthor.protocol.subject import link_faults, link_of
from pithauthor.protocol.timestamps import TIME_ACTION, SidecarFault, parse_sidecar
from pithauthor.protocol.utc import utc_now
from pithauthor.registry.local import answers
from pithauthor.registry.local import pool as framing
from pithauthor.registry.local.pool import ConnectionPool, Limits, Ready, Waiting, log
from pithauthor.registry.local.states import LiveStates, served_text
from pithauthor.registry.local.store import (
    DocumentCache,
    Encoded,
    RegistryStore,
    StoredRecord,
)

MAX_BODY = 64 * 1024
EVENT_TYPES = frozenset(answers.ACTIONS.values())


@dataclass
class FaultPlan:
    """Test-only faults: every `every`-th POST gets the next of `kinds`, in turn."""

    every: int = 3
    kinds: tuple[str, ...] = ("500", "reset", "stall")
    stall_seconds: float = 2.0
    delay_seconds: float = 0.0
    _count: int = 0
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def next_fault(self) -> str | None:
        with self._lock:
            self._count += 1
            n = self._count
        if self.delay_seconds:
            time.sleep(self.delay_seconds)
        if not self.kinds or self.every <= 0 or n % self.every:
            return None
        return self.kinds[(n // self.every - 1) % len(self.kinds)]


class HTTPFailure(Exception):
    """An answer other than 2xx, with a JSON body."""

    def __init__(self, status: int, error: str, failed_checks: list[str] | None = None) -> None:
        super().__init__(error)
        self.status = status
        self.body: ErrorAnswer = {"error": error}
        if failed_checks is not None:
            self.body["failed_checks"] = failed_checks


class _Reset(Exception):
    """Drop the connection with a TCP reset (fault injection)."""


class _HeadTooLarge(Exception):
    """The waiting room handed over a head that is over the size limits."""


class _Request(io.BytesIO):
    """A worker's `rfile`: the bytes of one request, all read by the waiting room. Reading past
    them never waits for the client; past an unfinished head it raises _HeadTooLarge."""

    def __init__(self, data: bytes, whole: bool) -> None:
        super().__init__(data)
        self.whole = whole

    def readline(self, size: int | None = -1) -> bytes:
        line = super().readline(size)
        if not line and not self.whole:
            raise _HeadTooLarge
        return line


_CONTINUE = b"HTTP/1.1 100 Continue\r\n\r\n"


class RegistryServer(HTTPServer):
    """A local registry bound to (host, port); `port=0` picks a free port. `limits`: workers,
    connection caps and time limits (see `pithauthor.registry.local.pool`). `base_url`: what links
    in its documents start with (default: the address it listens on)."""

    allow_reuse_address = True
    request_queue_size = 128  # the listen backlog: bursts of connections are accepted, not lost

    def __init__(
        self,
        data_dir: Path,
        host: str = "127.0.0.1",
        port: int = 0,
        *,
        token: str | None = None,
        faults: FaultPlan | None = None,
        limits: Limits | None = None,
        base_url: str | None = None,
        moderate: bool = False,
    ) -> None:
        self.key = answers.load_or_create_key(data_dir)
        self.moderate = moderate
        self.store = RegistryStore(data_dir)
        self.documents = DocumentCache()
        self.states = LiveStates(self.store, self.key)  # kept up to date by each POST
        self.token = token
        self.faults = faults
        self.limits = limits or Limits()
        # the class is never called from here: process_request hands connections to the pool
        super().__init__((host, port), BaseHTTPRequestHandler)
        self.base_url = (base_url or self.url).rstrip("/")
        self.pool = ConnectionPool(self.limits, self._inspect, self._serve_connection)

    def process_request(self, request: Any, client_address: Any) -> None:
        """Hand the new connection to the pool (never a thread of its own)."""
        self.pool.add(request, client_address)

    def _serve_connection(self, sock: socket.socket, addr: Any, data: bytes, whole: bool) -> bool:
        return _Handler(sock, addr, self, data, whole).keep

    def _inspect(self, buf: bytearray) -> Ready | Waiting:
        """For the waiting room: does `buf` start with a whole request? A request the head
        alone refuses is handed over without its body, which is then never read. Empty lines
        before a request are dropped from `buf` (RFC 9112 section 2.2)."""
        while buf[:1] == b"\n" or buf[:2] == b"\r\n":
            del buf[: 1 if buf[:1] == b"\n" else 2]
        size = framing.head_size(buf)
        if size is None or not buf:
            return Waiting()
        if size == framing.TOO_LARGE:
            return Ready(len(buf), whole=False)
        try:
            framing.check_head_bytes(bytes(buf[:size]))
        except framing.FramingError:
            return Ready(size)  # the worker answers 400 from the same bytes, and closes
        head = framing.parse_head(bytes(buf[:size]))
        if head.method != "POST":
            return Ready(size)  # a GET, or an error the worker answers: no body either way
        try:
            length = framing.body_length(head.method, head.headers)
        except framing.FramingError:
            return Ready(size)
        if not length or self.refusal(head.path, head.headers, length) is not None:
            return Ready(size)
        if len(buf) >= size + length:
            return Ready(size + length)
        expect = str(head.headers.get("Expect", "")).lower() == "100-continue"
        return Waiting(need=size + length, interim=_CONTINUE if expect else b"")

    def refusal(self, path: str, headers: email.message.Message, length: int) -> HTTPFailure | None:
        """Why a POST with this head is refused before its body is read (None: it is not)."""
        if length > MAX_BODY:
            return HTTPFailure(413, f"the body must be at most {MAX_BODY} bytes")
        parts = [p for p in urlsplit(path).path.split("/") if p]
        if len(parts) != 4 or parts[0] != "pith" or parts[2] != "action":
            return HTTPFailure(404, "POST to /pith/{body}/action/{event_type}")
        if parts[3] not in EVENT_TYPES and parts[3] != TIME_ACTION:
            return HTTPFailure(404, f"this registry takes no {parts[3]!r} events")
        if self.token is None:
            return None
        got = str(headers.get("Authorization", ""))  # compared in constant time: no timing oracle
        if not got and self.moderate:
            return None  # not signed in: held for moderation (`_post`)
        if not got.startswith("Bearer "):
            return HTTPFailure(401, "this registry wants sign-in (a bearer token)")
        if not hmac.compare_digest(got[7:].strip().encode(), self.token.encode()):
            return HTTPFailure(403, "the token is not accepted")
        return None

    def signed_in(self, headers: email.message.Message) -> bool:
        """True when the request carries this registry's token (`refusal` refused a wrong
        one already)."""
        return self.token is not None and bool(headers.get("Authorization"))

    def approve(self, event_id: str | None = None) -> int:
        """Take held events in (all, or the one named), as an author signing in would confirm
        them: stored, then in the paper's bundle and state. Returns how many."""
        return self.store.approve(None if event_id is None else [event_id])

    def server_close(self) -> None:
        super().server_close()
        if hasattr(self, "pool"):
            self.pool.stop()
        if hasattr(self, "states"):  # what a restarted registry serves without building
            self.states.close()
        if hasattr(self, "store"):  # its writer and every thread's connection
            self.store.close()

    @property
    def url(self) -> str:
        host, port = self.server_address[:2]
        text = host.decode() if isinstance(host, bytes) else str(host)
        shown = f"[{text}]" if ":" in text else text
        return f"http://{shown}:{port}"

    def start(self) -> threading.Thread:
        """Serve in a daemon thread (tests, the demo); stop with `stop()`."""
        thread = threading.Thread(
            target=self.serve_forever, args=(0.05,), name="pith-registry", daemon=True
        )
        thread.start()
        return thread

    def stop(self) -> None:
        self.shutdown()
        self.server_close()


def _encode(doc: Any) -> bytes:
    """A document as the server sends it: compact UTF-8 JSON."""
    return served_text(doc).encode("utf-8")


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True  # no 40 ms Nagle/delayed-ACK stalls on keep-alive
    server: RegistryServer
    server_version = "pithauthor-local-registry/1"

    def log_message(self, format: str, *args: Any) -> None:
        """Quiet: the CLI prints its own one-line start-up message."""

    keep = False  # after handle(): give the connection back to the pool's waiting room
    _answered = False
    _length = 0  # of the body, from the head (framing.body_length)

    def __init__(
        self, sock: socket.socket, addr: Any, server: RegistryServer, data: bytes, whole: bool
    ) -> None:
        self._request_bytes, self._whole = data, whole
        super().__init__(sock, addr, server)

    def setup(self) -> None:
        super().setup()
        self.rfile.close()
        self.rfile = _Request(self._request_bytes, self._whole)

    def handle(self) -> None:
        """Answer the one request the waiting room has read whole; the connection goes back
        there if it stays open (and every byte it was given was used: else the two sides
        disagree about where requests end, and the connection must not go on)."""
        self.keep = False
        try:
            self.handle_one_request()
        except (_Reset, ConnectionError, TimeoutError):
            self.close_connection = True
        rest = len(self._request_bytes) - self.rfile.tell()
        self.keep = not self.close_connection and rest == 0

    def handle_expect_100(self) -> bool:
        """The waiting room has sent `100 Continue` already (or the body came unasked)."""
        return True

    def handle_one_request(self) -> None:
        """The request; an unexpected error is answered 500 (JSON) and logged by type and
        place only."""
        self._answered = False
        try:
            super().handle_one_request()
        except (_Reset, ConnectionError, TimeoutError):
            raise
        except _HeadTooLarge:
            self.send_error(
                HTTPStatus.REQUEST_HEADER_FIELDS_TOO_LARGE,
                f"the request head is larger than {framing.MAX_HEAD} bytes",
            )
        except Exception as exc:
            self.close_connection = True
            tb = exc.__traceback__
            while tb is not None and tb.tb_next is not None:
                tb = tb.tb_next
            place = f"{tb.tb_frame.f_code.co_filename}:{tb.tb_lineno}" if tb else "?"
            path = urlsplit(getattr(self, "path", "") or "").path[:200]
            log.error(
                "internal error on %s %s: %s at %s", self.command, path, type(exc).__name__, place
            )
            if not self._answered:
                self._send(500, {"error": "internal error in the local registry"})

    def parse_request(self) -> bool:
        if not super().parse_request():
            return False
        if self.request_version == "HTTP/0.9":
            self.send_error(HTTPStatus.BAD_REQUEST, "HTTP/0.9 requests are not served")
            return False
        try:
            size = framing.head_size(self._request_bytes)
            if size is not None and size > 0:
                framing.check_head_bytes(self._request_bytes[:size])
            self._length = framing.body_length(str(self.command), self.headers)
        except framing.FramingError as exc:
            self.send_error(HTTPStatus.BAD_REQUEST, str(exc))
            return False
        return True

    def send_response(self, code: int, message: str | None = None) -> None:
        self._answered = True
        super().send_response(code, message)

    def send_error(self, code: int, message: str | None = None, explain: str | None = None) -> None:
        """Errors found by the HTTP layer (bad request line, headers, method) as JSON."""
        if code == HTTPStatus.NOT_IMPLEMENTED:  # an unknown method is the client's fault
            code, message = HTTPStatus.METHOD_NOT_ALLOWED, f"method {self.command!r} not allowed"
        elif code == HTTPStatus.HTTP_VERSION_NOT_SUPPORTED:  # so is a made-up HTTP version
            code = HTTPStatus.BAD_REQUEST
        self.close_connection = True
        if getattr(self, "request_version", "HTTP/0.9") == "HTTP/0.9":
            self.request_version = "HTTP/1.1"  # a status line and headers, whatever was sent
        self._send(code, {"error": message or HTTPStatus(code).phrase}, {"Connection": "close"})

    def _not_allowed(self) -> None:
        self.send_error(HTTPStatus.METHOD_NOT_ALLOWED)

    do_HEAD = do_PUT = do_DELETE = do_PATCH = do_OPTIONS = _not_allowed

    # --- plumbing --------------------------------------------------------------------------

    def _base(self) -> str:
        return self.server.base_url  # never the request's Host: a client must not pick links

    def _send(self, status: int, doc: Any, extra: Mapping[str, str] | None = None) -> None:
        body = doc if isinstance(doc, Encoded) else Encoded((_encode(doc),), "")
        self.send_response(status)
        self.send_header("Content-Type", "application/json; charset=utf-8")
        self.send_header("Content-Length", str(body.size))
        for name, value in (extra or {}).items():
            self.send_header(name, value)
        self.end_headers()
        for part in body.parts:  # a state's few large segments, each as it is
            self.wfile.write(part)

    def _fail(self, exc: HTTPFailure) -> None:
        extra = {"WWW-Authenticate": "Bearer"} if exc.status == 401 else None
        self._send(exc.status, exc.body, extra)

    def _reset(self) -> None:
        # linger 0: close() sends RST, not FIN; the client sees its answer lost after the store
        self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        self.connection.close()
        raise _Reset

    def _find(self, ref: str) -> Any:
        rec = self.server.store.find(ref)
        if rec is None:
            raise HTTPFailure(404, f"no record for {ref!r} on this registry")
        return rec

    # --- GET -------------------------------------------------------------------------------

    def do_GET(self) -> None:
        try:
            doc = self._get()
        except HTTPFailure as exc:
            self._fail(exc)
            return
        if not isinstance(doc, Encoded):
            self._send(200, doc)
            return
        # a state or bundle: a reader that already holds these bytes gets 304 and no body (a
        # state of 10,000 events is megabytes; revalidating it costs the same as a small one)
        held = {
            t.strip().removeprefix("W/") for t in self.headers.get("If-None-Match", "").split(",")
        }
        if doc.etag in held or "*" in held:
            self.send_response(304)
            self.send_header("ETag", doc.etag)
            self.end_headers()
            return
        self._send(200, doc, {"ETag": doc.etag})

    def _get(self) -> Any:
        url = urlsplit(self.path)
        parts = [p for p in url.path.split("/") if p]
        server = self.server
        if parts == ["pith-mirrors.json"]:
            return server.key.manifest(self._base())
        if parts == ["api", "pith-number", "resolve"]:
            arxiv = (parse_qs(url.query).get("arxiv") or [""])[0]
            if not arxiv:
                raise HTTPFailure(400, "give ?arxiv=ID")
            return answers.resolve_document(self._find(arxiv), self._base())
        if len(parts) >= 2 and parts[0] == "pith":
            ref = "/".join(parts[1:])
            for suffix, kind in (("/bundle.json", "bundle"), ("/state.json", "state")):
                if ref.endswith(suffix):
                    return self._merged(self._find(ref.removesuffix(suffix)), kind)
            return answers.record_document(self._find(ref.removesuffix(".json")), self._base())
        raise HTTPFailure(404, f"no such endpoint: {url.path}")

    def _merged(self, rec: StoredRecord, kind: str) -> Encoded:
        """The encoded bundle or merged state of `rec`, from the cache while no event of the
        paper has been stored since it was built (the record and the key never change)."""
        server = self.server
        # both before what they version (see cache.py); each only grows, and any change grows
        # one of them, so their sum names what was read
        times = server.store.time_version(rec.body)
        version = server.store.events_version(rec.body) + times
        cached = server.documents.get((rec.body, kind), version)
        if cached is not None:
            return cached
        sidecars = server.store.sidecars(rec.body)
        if kind == "bundle":
            events = server.store.events(rec.body)
            bundle = answers.bundle_document(rec, server.key, events, sidecars)
            doc = Encoded.of(_encode(bundle))
        else:  # kept up to date by each POST: joined and hashed, not merged
            version, parts, sha = server.states.document(rec)
            version += times
            if sidecars:
                # outside the hashed body: appended to the served object (compact JSON, ends
                # in "}"); the tag then names the proofs too
                text = b"".join(parts)
                doc = Encoded.of(text[:-1] + b',"trusted_time":' + _encode(sidecars) + b"}")
            else:
                # the tag from state_sha256, which names these bytes (the same state is
                # written the same way): hashing 100 MB once more cost a fifth of the read
                doc = Encoded(parts, '"' + sha[:32] + '"')
        if doc.size > MAX_JSON_BYTES:
            # the one limit: nothing is served that `pith` would refuse to read
            raise HTTPFailure(
                507,
                f"the {kind} of {rec.pith_number} is {doc.size // 2**20} MiB, over the "
                f"{MAX_JSON_BYTES // 2**20} MiB a registry document may be",
            )
        server.documents.put((rec.body, kind), version, doc)
        return doc

    # --- POST ------------------------------------------------------------------------------

    def do_POST(self) -> None:
        refused = self.server.refusal(self.path, self.headers, self._length)
        if refused is not None:  # the waiting room read no body: nor does this
            self.close_connection = True
            self._fail(refused)
            return
        raw = self.rfile.read(self._length)
        if len(raw) < self._length:  # cannot happen while both sides use framing.py
            self.close_connection = True
            self._fail(HTTPFailure(400, "the body is shorter than its Content-Length"))
            return
        fault = self.server.faults.next_fault() if self.server.faults else None
        if fault in ("500", "501"):
            self._fail(HTTPFailure(int(fault), "injected fault"))
            return
        if fault == "stall":
            time.sleep(self.server.faults.stall_seconds if self.server.faults else 0)
        try:
            status, answer = self._post(raw)
        except HTTPFailure as exc:
            self._fail(exc)
            return
        if fault == "reset":
            self._reset()
        self._send(status, answer)

    def _post_time(self, rec: StoredRecord, doc: Any) -> tuple[int, TimeAnswer]:
        """A trusted-time sidecar for a stored event of `rec`: merged into what is kept."""
        try:
            sidecar = parse_sidecar(doc)
        except SidecarFault as exc:
            raise HTTPFailure(422, f"not a trusted-time sidecar: {exc}", ["trusted_time"]) from None
        eid = sidecar["event_id"]
        stored = self.server.store.event(eid)
        if stored is None or stored["subject_pith_number"] != rec.pith_number:
            raise HTTPFailure(404, f"no event {eid} of {rec.pith_number} on this registry")
        kept = self.server.store.keep_time(eid, sidecar)
        if kept is None:  # cannot happen: events are never deleted
            raise HTTPFailure(404, f"no event {eid} on this registry")
        return 200, {"status": "accepted", "event_id": eid, "changed": kept[1]}

    def _broken_link(self, event: AuthorEvent) -> list[str]:
        """The correction rules (docs/protocol.md, Corrections) a new event's `replaces` or
        `withdraws` breaks against the stored event it names: another key, type or subject, a
        later date, a withdrawal. Each is for good (a stored event never changes), so it is
        refused now. A link to an event not stored yet is accepted: it may come later, and the
        merge leaves the event out until it does."""
        link = link_of(event)
        if link is None or self.server.store.event(event["event_id"]) is not None:
            return []
        target = self.server.store.event(link[1])
        return link_faults(event, target) if target is not None else []

    def _post(self, raw: bytes) -> tuple[int, ActionAnswer | HeldAnswer | TimeAnswer]:
        parts = [p for p in urlsplit(self.path).path.split("/") if p]
        kind = parts[3]  # the route was checked by `refusal`
        rec = self._find(parts[1])
        try:
            event = parse_json(raw)
        except JSONFault as exc:
            raise HTTPFailure(400, f"the body is not strict JSON: {exc}") from None
        if kind == TIME_ACTION:
            return self._post_time(rec, event)
        if not isinstance(event, dict):
            raise HTTPFailure(400, "the body must be a signed event (a JSON object)")
        key = self.headers.get("Idempotency-Key")  # = event_id: DESIGN, docs/protocol.md section 5
        if key is None or key != event.get("event_id"):
            raise HTTPFailure(400, "the Idempotency-Key header must equal the event's event_id")
        report, checked = checked_author_event(event)
        failed = [c.name for c in report.failed]
        if event.get("event_type") != kind:
            failed.append("action_kind")
        if event.get("subject_pith_number") != rec.pith_number:
            failed.append("subject_matches")
        payload = event.get("payload")
        if not isinstance(payload, Mapping) or payload.get("canonical_sha256") != (
            rec.canonical_sha256
        ):
            failed.append("payload_canonical_sha256")
        if failed or checked is None:
            raise HTTPFailure(422, "the event does not verify: " + ", ".join(failed), failed)
        broken = self._broken_link(checked)
        if broken:
            raise HTTPFailure(
                422, "the event it corrects does not allow it: " + ", ".join(broken), broken
            )
        eid = checked["event_id"]
        server = self.server
        if server.moderate and not server.signed_in(self.headers) and not server.store.event(eid):
            server.store.hold_event(rec.body, checked, utc_now())
            return 202, {
                "status": "held_for_moderation",
                "event_id": eid,
                "pith_number": rec.pith_number,
            }
        received = utc_now()
        outcome = self.server.store.insert_event(rec.body, checked, received)
        if outcome == "new":  # the paper's state takes it now, at a cost that does not grow
            # with the paper (a same-second event is appended, its part sorted when the state
            # is next written: `StateBuilder._insert`), so the next read only writes the state
            self.server.states.update(rec)
        return (201 if outcome == "new" else 200), {
            "status": "accepted",
            "duplicate": outcome == "repeat",
            "event_id": eid,
            "pith_number": rec.pith_number,
            "registry_receipt": {
                "key_id": self.server.key.key_id,
                "algorithm": "ed25519",
                "signed_message": "event_id_bytes",
                "signature_b64": self.server.key.sign(bytes.fromhex(eid[7:])),
            },
        }
