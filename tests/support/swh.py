"""A loopback Software Heritage (127.0.0.1, port 0, real sockets) answering its "save code now"
API as the archive's Web API documentation gives it:

- `POST /api/1/origin/save/<visit_type>/url/<origin_url>/`: 200 and the save request
  `{"id", "origin_url", "visit_type", "save_request_date", "save_request_status": "accepted",
  "save_task_status": "scheduled", "visit_date": null, "visit_status": null,
  "snapshot_swhid": null, "note": null, "request_url"}`; 403 `{"exception": "ForbiddenExc",
  "reason": ...}` for an origin in `refused`; 400 for an origin that is no URL;
- `GET /api/1/origin/save/<id>/`: the request, `scheduled` then `running` (`pending_polls`
  times in all), then `succeeded` with `visit_status` "full" and `snapshot_swhid`
  `swh:1:snp:<40 hex>`; or `failed` (visit_status "failed", no snapshot) for an origin in
  `failing`.
"""

from __future__ import annotations

import hashlib
import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

SAVE = "/api/1/origin/save/"


def snapshot_id(origin: str) -> str:
    """The snapshot SWHID this stand-in gives an origin (40 hex from the origin's name)."""
    return "swh:1:snp:" + hashlib.sha1(origin.encode("utf-8")).hexdigest()


@dataclass
class Heritage:
    url: str = ""
    refused: set[str] = field(default_factory=set)
    failing: set[str] = field(default_factory=set)
    pending_polls: int = 2
    saves: dict[int, dict[str, Any]] = field(default_factory=dict)
    requests: list[str] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def request_doc(self, number: int) -> dict[str, Any]:
        save = self.saves[number]
        doc: dict[str, Any] = {
            "id": number,
            "origin_url": save["origin"],
            "visit_type": save["visit_type"],
            "save_request_date": "2026-12-07T03:15:00.000000+00:00",
            "save_request_status": "accepted",
            "save_task_status": "scheduled",
            "visit_date": None,
            "visit_status": None,
            "snapshot_swhid": None,
            "note": None,
            "request_url": f"{self.url}{SAVE}{number}/",
        }
        polls = save["polls"]
        if polls == 0:
            return doc
        if polls <= self.pending_polls:
            doc["save_task_status"] = "running" if polls > 1 else "scheduled"
            return doc
        doc["visit_date"] = "2026-12-07T03:16:00.000000+00:00"
        if save["origin"] in self.failing:
            doc.update(save_task_status="failed", visit_status="failed")
        else:
            doc.update(
                save_task_status="succeeded",
                visit_status="full",
                snapshot_swhid=snapshot_id(save["origin"]),
            )
        return doc

    def answer(self, method: str, path: str) -> tuple[int, Any]:
        with self.lock:
            self.requests.append(f"{method} {path}")
        if not path.startswith(SAVE):
            return 404, {"exception": "NotFoundExc", "reason": "Not found"}
        rest = path[len(SAVE) :]
        if method == "POST":
            visit_type, _, tail = rest.partition("/url/")
            origin = tail.removesuffix("/")
            if visit_type not in ("git", "hg", "svn") or not origin.startswith("http"):
                return 400, {"exception": "BadInputExc", "reason": "Invalid origin url or type"}
            if origin in self.refused:
                return 403, {
                    "exception": "ForbiddenExc",
                    "reason": f"The provided origin url ({origin}) is blacklisted.",
                }
            with self.lock:
                number = len(self.saves) + 1
                self.saves[number] = {"origin": origin, "visit_type": visit_type, "polls": 0}
                return 200, self.request_doc(number)
        if method == "GET" and rest.rstrip("/").isdigit():
            number = int(rest.rstrip("/"))
            with self.lock:
                if number not in self.saves:
                    return 404, {"exception": "NotFoundExc", "reason": "No such save request"}
                self.saves[number]["polls"] += 1
                return 200, self.request_doc(number)
        return 405, {"exception": "MethodNotAllowed", "reason": "Method not allowed"}


@contextmanager
def software_heritage() -> Iterator[Heritage]:
    """A running loopback Software Heritage at `heritage.url`."""
    heritage = Heritage()

    class Handler(BaseHTTPRequestHandler):
        def _reply(self, method: str) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            if length:
                self.rfile.read(length)
            status, doc = heritage.answer(method, self.path)
            body = json.dumps(doc).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def do_GET(self) -> None:
            self._reply("GET")

        def do_POST(self) -> None:
            self._reply("POST")

        def log_message(self, format: str, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    heritage.url = f"http://127.0.0.1:{server.server_address[1]}"
    thread = threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True)
    thread.start()
    try:
        yield heritage
    finally:
        server.shutdown()
        server.server_close()
        thread.join(5)
