"""A local server (127.0.0.1, port 0, real sockets) that answers like ORCID's public API v3.0
and like an author's web site, for the identity-proof tests.

ORCID's shapes, as its public API documents them (Accept: application/json):

- `GET /v3.0/{iD}/researcher-urls`: `{"last-modified-date": {"value": ms}, "researcher-url":
  [{"created-date", "last-modified-date", "source", "url-name", "url": {"value"},
  "visibility", "path", "put-code", "display-index"}], "path": "/{iD}/researcher-urls"}`;
- `GET /v3.0/{iD}/keywords`: `{"keyword": [{"content", ...}], "path": ...}`;
- `GET /v3.0/{iD}/person`: both of them, under `researcher-urls` and `keywords`;
- a record that does not exist: 404 with `{"response-code": 404, "developer-message",
  "user-message", "error-code": 9016, "more-info"}`;
- without `Accept: application/json`, ORCID answers XML: so does this server.

Faults: an iD in `slow` answers after `delay` seconds; one in `failing` answers 500.
"""

from __future__ import annotations

import contextlib
import json
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

MS = 1700000000000


def _source(orcid: str, name: str) -> dict[str, Any]:
    return {
        "source-orcid": {"uri": f"https://orcid.org/{orcid}", "path": orcid, "host": "orcid.org"},
        "source-client-id": None,
        "source-name": {"value": name},
        "assertion-origin-orcid": None,
        "assertion-origin-client-id": None,
        "assertion-origin-name": None,
    }


def researcher_urls(orcid: str, links: list[tuple[str, str]]) -> dict[str, Any]:
    """The v3.0 `/researcher-urls` document of a record with these (name, url) links."""
    entries = [
        {
            "created-date": {"value": MS + i},
            "last-modified-date": {"value": MS + i},
            "source": _source(orcid, "Test Researcher"),
            "url-name": name,
            "url": {"value": url},
            "visibility": "public",
            "path": f"/{orcid}/researcher-urls/{41000 + i}",
            "put-code": 41000 + i,
            "display-index": i + 1,
        }
        for i, (name, url) in enumerate(links)
    ]
    return {
        "last-modified-date": {"value": MS + len(links)} if links else None,
        "researcher-url": entries,
        "path": f"/{orcid}/researcher-urls",
    }


def keywords(orcid: str, words: list[str]) -> dict[str, Any]:
    """The v3.0 `/keywords` document."""
    return {
        "last-modified-date": {"value": MS} if words else None,
        "keyword": [
            {
                "created-date": {"value": MS},
                "last-modified-date": {"value": MS},
                "source": _source(orcid, "Test Researcher"),
                "content": w,
                "visibility": "public",
                "path": f"/{orcid}/keywords/{3000 + i}",
                "put-code": 3000 + i,
                "display-index": i + 1,
            }
            for i, w in enumerate(words)
        ],
        "path": f"/{orcid}/keywords",
    }


def not_found(orcid: str) -> dict[str, Any]:
    return {
        "response-code": 404,
        "developer-message": f"404 Not Found: The resource was not found. Full validation "
        f"error: ORCID iD {orcid} not found",
        "user-message": "The resource was not found.",
        "error-code": 9016,
        "more-info": "https://members.orcid.org/api/resources/troubleshooting",
    }


@dataclass
class Site:
    """What the server holds: ORCID records, a web site's files, and the faults to play."""

    records: dict[str, list[tuple[str, str]]] = field(default_factory=dict)
    words: dict[str, list[str]] = field(default_factory=dict)
    files: dict[str, tuple[str, bytes]] = field(default_factory=dict)  # path -> (type, body)
    redirects: dict[str, str] = field(default_factory=dict)
    slow: set[str] = field(default_factory=set)
    failing: set[str] = field(default_factory=set)
    delay: float = 3.0
    requests: list[tuple[str, str]] = field(default_factory=list)  # (path, Accept)


class _Handler(BaseHTTPRequestHandler):
    site: Site

    def log_message(self, *args: Any) -> None:
        pass

    def _send(self, status: int, ctype: str, body: bytes, extra: dict[str, str] | None = None):
        self.send_response(status)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body)))
        for k, v in (extra or {}).items():
            self.send_header(k, v)
        self.end_headers()
        with contextlib.suppress(BrokenPipeError, ConnectionResetError):
            self.wfile.write(body)

    def do_GET(self) -> None:
        site = self.site
        accept = self.headers.get("Accept", "")
        site.requests.append((self.path, accept))
        if self.path in site.redirects:
            self._send(302, "text/plain", b"", {"Location": site.redirects[self.path]})
            return
        if self.path in site.files:
            ctype, body = site.files[self.path]
            self._send(200, ctype, body)
            return
        parts = self.path.strip("/").split("/")
        if len(parts) == 3 and parts[0] == "v3.0":
            self._orcid(parts[1], parts[2], accept)
            return
        self._send(404, "text/html", b"<h1>Not Found</h1>")

    def _orcid(self, orcid: str, what: str, accept: str) -> None:
        site = self.site
        if orcid in site.slow:
            time.sleep(site.delay)
        if orcid in site.failing:
            self._send(500, "text/html", b"<h1>Internal Server Error</h1>")
            return
        if "application/json" not in accept:
            self._send(200, "application/vnd.orcid+xml", b"<?xml version='1.0'?><record/>")
            return
        if orcid not in site.records:
            self._send(404, "application/json", json.dumps(not_found(orcid)).encode())
            return
        urls = researcher_urls(orcid, site.records[orcid])
        words = keywords(orcid, site.words.get(orcid, []))
        docs = {
            "researcher-urls": urls,
            "keywords": words,
            "person": {"researcher-urls": urls, "keywords": words, "path": f"/{orcid}/person"},
        }
        if what not in docs:
            self._send(404, "application/json", json.dumps(not_found(orcid)).encode())
            return
        self._send(200, "application/json;charset=UTF-8", json.dumps(docs[what]).encode())


class IdentityServer:
    """Serve `site` on 127.0.0.1 (port 0) in a thread; `url` is its base address."""

    def __init__(self, site: Site | None = None) -> None:
        self.site = site or Site()
        handler = type("Handler", (_Handler,), {"site": self.site})
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self._server.daemon_threads = True
        self._thread = threading.Thread(
            target=self._server.serve_forever, args=(0.05,), daemon=True
        )  # shutdown() waits up to one poll interval: 0.05 s, not 0.5 s

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    @property
    def orcid_api(self) -> str:
        return self.url + "/v3.0"

    def __enter__(self) -> IdentityServer:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()
