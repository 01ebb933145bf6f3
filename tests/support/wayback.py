"""A loopback Internet Archive (127.0.0.1, port 0, real sockets) speaking the two APIs `pith
archive` uses, as their public documentation gives them, and an "arXiv" beside it serving the
pages it captures.

Save Page Now 2 (the SPN2 public API docs, Vangelis Banos):

- `POST /save` with the form field `url=` (and `Accept: application/json`), with the header
  `Authorization: LOW accesskey:secret` or anonymous: 200 `{"url": ..., "job_id": "spn2-..."}`;
  403 `{"status": "error", "status_ext": "error:blocked-url", "message": ...}` for a refused
  URL, 403 `{"status": "error", "status_ext": "error:unauthorized", ...}` for keys this archive
  does not know (or for no keys, when `anonymous` is off);
- `GET /save/status/{job_id}`: `{"status": "pending", "job_id", "resources": []}` while the job
  runs (`pending_polls` times), then `{"status": "success", "job_id", "original_url",
  "timestamp": "YYYYMMDDhhmmss", "duration_sec", "resources"}`, or, for a URL in `failing`,
  `{"status": "error", "job_id", "status_ext": "error:...", "exception", "message"}`.

The CDX server API (`GET /cdx/search/cdx?url=...&output=json`, optional `from`/`to` 14-digit
bounds and `filter=statuscode:200`): a JSON array whose first row is the field names
`["urlkey","timestamp","original","mimetype","statuscode","digest","length"]` and then one row
per capture; `[]` when there is none. `digest` is the base32 SHA-1 of the captured body, as the
Wayback Machine writes it (no `sha1:` prefix); `lie` makes it say another for a URL.
`GET /web/<timestamp>id_/<url>` answers a capture's bytes.

The "arXiv" pages: `GET /pdf/<id>v<n>` the fixture PDF of that version (`pdfs`), `GET
/abs/<id>v<n>` a small abstract page. A capture of `https://arxiv.org/pdf/<idv>` is of these
bytes, so the PDF pith downloads itself (PITH_ARXIV_PDF = `url + "/pdf"`) is the one captured,
unless the test changes `pdfs` after capturing.
"""

from __future__ import annotations

import base64
import hashlib
import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, unquote, urlsplit

CAPTURED_AT = "20261207031500"
"""The 14-digit time every capture of this archive gets (`timestamp`)."""

CDX_FIELDS = ["urlkey", "timestamp", "original", "mimetype", "statuscode", "digest", "length"]


def fixture_pdf(version: str) -> bytes:
    """A small PDF standing for arXiv's PDF of `version` (e.g. 2302.12445v2)."""
    return (
        b"%PDF-1.4\n1 0 obj\n<< /Type /Catalog >>\nendobj\n% the paper "
        + version.encode("ascii")
        + b"\ntrailer\n<< /Root 1 0 R >>\n%%EOF\n"
    )


def cdx_digest(body: bytes) -> str:
    """The Wayback Machine's digest of a body: base32 of its SHA-1 (32 characters)."""
    return base64.b32encode(hashlib.sha1(body).digest()).decode("ascii")


def surt(url: str) -> str:
    """The CDX `urlkey` of `url` (SURT form: `org,arxiv)/pdf/2302.12445v2`)."""
    parts = urlsplit(url)
    host = ",".join(reversed((parts.hostname or "").split(".")))
    return f"{host}){parts.path.lower()}"


@dataclass
class Capture:
    original: str
    timestamp: str
    mimetype: str
    body: bytes


@dataclass
class Wayback:
    """The archive's state and its knobs (a test sets them before or between requests)."""

    url: str = ""
    pdfs: dict[str, bytes] = field(default_factory=dict)
    keys: tuple[str, str] = ("test-access-key", "test-secret-key")
    anonymous: bool = True
    """Whether a capture request without keys is taken."""
    refused: set[str] = field(default_factory=set)
    """URLs SPN refuses (403, `error:blocked-url`)."""
    failing: set[str] = field(default_factory=set)
    """URLs whose capture job ends in error."""
    lie: dict[str, str] = field(default_factory=dict)
    """original URL -> the digest CDX gives instead of the true one."""
    pending_polls: int = 2
    """How many status requests of each job answer "pending" before the end."""
    captures: list[Capture] = field(default_factory=list)
    jobs: dict[str, dict[str, Any]] = field(default_factory=dict)
    requests: list[str] = field(default_factory=list)
    authorizations: list[str] = field(default_factory=list)
    """The Authorization header of every capture request ("" when none)."""
    lock: threading.Lock = field(default_factory=threading.Lock)

    def page(self, path: str) -> tuple[str, bytes] | None:
        """The "arXiv" page at `path` (`/pdf/<idv>` or `/abs/<idv>`): (mimetype, bytes)."""
        if path.startswith("/pdf/") and path[5:] in self.pdfs:
            return "application/pdf", self.pdfs[path[5:]]
        if path.startswith("/abs/") and path[5:] in self.pdfs:
            html = f"<html><head><title>arXiv:{path[5:]}</title></head><body></body></html>"
            return "text/html", html.encode("utf-8")
        return None

    # --- Save Page Now ---------------------------------------------------------------------

    def save(self, form: dict[str, list[str]], authorization: str) -> tuple[int, Any]:
        self.authorizations.append(authorization)
        if authorization:
            if authorization != f"LOW {self.keys[0]}:{self.keys[1]}":
                return 403, _error("error:unauthorized", "Your S3 keys were not accepted.")
        elif not self.anonymous:
            return 403, _error("error:unauthorized", "You need to be logged in to use SPN2.")
        target = (form.get("url") or [""])[0]
        if not target.startswith(("http://", "https://")):
            return 400, _error("error:invalid-url-syntax", "Invalid URL syntax.")
        if target in self.refused:
            return 403, _error("error:blocked-url", "This URL is excluded from the archive.")
        with self.lock:
            job = f"spn2-{hashlib.sha1(f'{target}{len(self.jobs)}'.encode()).hexdigest()}"
            self.jobs[job] = {"url": target, "polls": 0}
        return 200, {"url": target, "job_id": job}

    def status(self, job_id: str) -> tuple[int, Any]:
        with self.lock:
            job = self.jobs.get(job_id)
            if job is None:
                return 200, {"status": "error", "job_id": job_id, **_not_found()}
            job["polls"] += 1
            if job["polls"] <= self.pending_polls:
                return 200, {"status": "pending", "job_id": job_id, "resources": []}
            target = job["url"]
        if target in self.failing:
            return 200, {
                "status": "error",
                "job_id": job_id,
                "status_ext": "error:bad-gateway",
                "exception": "[Errno 111] Connection refused",
                "message": "Bad Gateway for URL " + target,
            }
        page = self.page(urlsplit(target).path)
        if page is None:
            return 200, {
                "status": "error",
                "job_id": job_id,
                "status_ext": "error:not-found",
                "exception": "",
                "message": "The server cannot find the requested resource " + target,
            }
        with self.lock:
            if job.get("capture") is None:
                job["capture"] = Capture(target, CAPTURED_AT, page[0], page[1])
                self.captures.append(job["capture"])
        return 200, {
            "status": "success",
            "job_id": job_id,
            "original_url": target,
            "timestamp": CAPTURED_AT,
            "duration_sec": 1.2,
            "resources": [target],
        }

    # --- CDX --------------------------------------------------------------------------------

    def cdx(self, query: dict[str, list[str]]) -> tuple[int, Any]:
        target = (query.get("url") or [""])[0]
        if not target:
            return 400, "url parameter required"
        low = (query.get("from") or ["0"])[0]
        high = (query.get("to") or ["99999999999999"])[0]
        rows: list[list[str]] = []
        for c in self.captures:
            if c.original != target or not low <= c.timestamp <= high.ljust(14, "9"):
                continue
            digest = self.lie.get(c.original, cdx_digest(c.body))
            rows.append(
                [surt(c.original), c.timestamp, c.original, c.mimetype, "200", digest,
                 str(len(c.body))]
            )  # fmt: skip
        return 200, [CDX_FIELDS, *rows] if rows else []

    def replay(self, rest: str) -> tuple[int, bytes]:
        stamp, _, target = rest.partition("/")
        stamp = stamp.removesuffix("id_")
        for c in self.captures:
            if c.timestamp == stamp and c.original == target:
                return 200, c.body
        return 404, b"not in the archive"

    # --- dispatch ---------------------------------------------------------------------------

    def answer(
        self, method: str, path: str, body: bytes, authorization: str
    ) -> tuple[int, str, bytes]:
        with self.lock:
            self.requests.append(f"{method} {path}")
        parts = urlsplit(path)
        if method == "POST" and parts.path in ("/save", "/save/"):
            status, doc = self.save(parse_qs(body.decode("utf-8")), authorization)
            return status, "application/json", json.dumps(doc).encode()
        if method == "GET" and parts.path.startswith("/save/status/"):
            status, doc = self.status(parts.path.removeprefix("/save/status/"))
            return status, "application/json", json.dumps(doc).encode()
        if method == "GET" and parts.path == "/cdx/search/cdx":
            status, doc = self.cdx(parse_qs(parts.query))
            if isinstance(doc, str):
                return status, "text/plain", doc.encode()
            return status, "application/json", json.dumps(doc).encode()
        if method == "GET" and parts.path.startswith("/web/"):
            status, data = self.replay(unquote(path.removeprefix("/web/")))
            return status, "application/octet-stream", data
        page = self.page(parts.path) if method == "GET" else None
        if page is not None:
            return 200, page[0], page[1]
        return 404, "text/plain", b"Not Found"


def _error(status_ext: str, message: str) -> dict[str, str]:
    return {"status": "error", "status_ext": status_ext, "message": message}


def _not_found() -> dict[str, str]:
    return {"status_ext": "error:job-not-found", "message": "Job not found."}


@contextmanager
def wayback(*versions: str) -> Iterator[Wayback]:
    """A running loopback archive (and "arXiv") at `archive.url`, serving the fixture PDF of
    each arXiv `versions` (`2302.12445v2`)."""
    archive = Wayback(pdfs={v: fixture_pdf(v) for v in versions})

    class Handler(BaseHTTPRequestHandler):
        def _reply(self, method: str) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            body = self.rfile.read(length) if length else b""
            auth = self.headers.get("Authorization") or ""
            status, kind, answer = archive.answer(method, self.path, body, auth)
            self.send_response(status)
            self.send_header("Content-Type", kind)
            self.send_header("Content-Length", str(len(answer)))
            self.end_headers()
            self.wfile.write(answer)

        def do_GET(self) -> None:
            self._reply("GET")

        def do_POST(self) -> None:
            self._reply("POST")

        def log_message(self, format: str, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    archive.url = f"http://127.0.0.1:{server.server_address[1]}"
    thread = threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True)
    thread.start()
    try:
        yield archive
    finally:
        server.shutdown()
        server.server_close()
        thread.join(5)
