"""Software Heritage's "save code now", as `pith archive --code URL` asks it:

- `POST <swh>/api/1/origin/save/git/url/<origin>/`: the save request, `{"id",
  "save_request_status": "accepted", "save_task_status": "scheduled", ...}` (403 for an
  origin the archive refuses);
- `GET <swh>/api/1/origin/save/<id>/`: the request again, its `save_task_status` moving from
  `scheduled` / `running` to `succeeded` (then `snapshot_swhid` names the snapshot the visit
  made: `swh:1:snp:<40 hex>`) or `failed`.

Over `pithauthor.net.exchange`, like the Wayback Machine's calls (`archive.wayback`).
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from pithauthor.archive.wayback import Polling, json_of, said
from pithauthor.errors import ArchiveRefused, InputError, NetworkError
from pithauthor.net import RetryPolicy, check_url, exchange
from pithauthor.protocol.urls import checked_url

__all__ = ["DEFAULT_SWH", "SWH_ENV", "CodeSnapshot", "save_code", "swh_base"]

DEFAULT_SWH = "https://archive.softwareheritage.org"

SWH_ENV = "PITH_SWH_URL"
"""The Software Heritage archive to ask: a loopback stand-in in tests."""

SNAPSHOT = re.compile(r"\Aswh:1:snp:[0-9a-f]{40}\Z")

ANSWER_LIMIT = 64 * 1024


def swh_base(env: Mapping[str, str] | None = None) -> str:
    """The archive `PITH_SWH_URL` names (else Software Heritage's), under the URL policy."""
    value = (os.environ if env is None else env).get(SWH_ENV, "").strip()
    return check_url(value or DEFAULT_SWH, SWH_ENV)


def code_origin(url: str) -> str:
    """`--code URL` checked: an https URL of a git repository (http only to loopback, as every
    URL here), without a query or fragment. InputError otherwise."""
    checked_url(url, "--code")
    origin = url.strip()
    if "?" in origin or "#" in origin or any(c.isspace() for c in origin):
        raise InputError("--code is a repository's URL, without a query or fragment")
    return origin


@dataclass(frozen=True)
class CodeSnapshot:
    """The code's copy: its origin and the snapshot's SWHID."""

    origin: str
    swhid: str


def save_code(
    origin: str,
    base: str,
    polling: Polling,
    *,
    timeout: float = 30.0,
    retry: RetryPolicy | None = None,
) -> CodeSnapshot:
    """Ask Software Heritage at `base` to save the git repository `origin`, and wait (bounded:
    `polling`) for the snapshot. ArchiveRefused for a refused origin or a failed save,
    NetworkError when the archive cannot be had or does not finish in time."""
    what = f"Software Heritage at {base}"

    def ask(method: str, path: str) -> tuple[int, Any]:
        answer = exchange(
            method,
            base + path,
            what=what,
            headers={"Accept": "application/json"},
            timeout=timeout,
            limit=ANSWER_LIMIT,
            retry=retry,
            sleep=polling.sleep,
        )
        if 400 <= answer.status < 500:
            doc: Any = None
            if answer.body.strip()[:1] == b"{":
                doc = json_of(answer, what)
            reason = said(doc.get("reason", "")) if isinstance(doc, dict) else said(answer.body)
            raise ArchiveRefused(
                f"{what} refused to save {origin} ({answer.status}: {reason}); nothing was signed"
            )
        if answer.status != 200:
            raise NetworkError(f"{what} answered {answer.status}")
        doc = json_of(answer, what)
        if not isinstance(doc, dict):
            raise NetworkError(f"{what} answered something that is not a save request")
        return answer.status, doc

    _, request = ask("POST", f"/api/1/origin/save/git/url/{origin}/")
    number = request.get("id")
    if not isinstance(number, int) or isinstance(number, bool):
        raise NetworkError(f"{what} answered a save request with no id")

    def done(doc: dict[str, Any]) -> CodeSnapshot | None:
        if doc.get("save_request_status") == "rejected":
            raise ArchiveRefused(f"{what} rejected saving {origin}; nothing was signed")
        task = doc.get("save_task_status")
        if task == "failed":
            raise ArchiveRefused(f"{what} could not save {origin} (its visit failed)")
        if task != "succeeded":
            return None
        swhid = doc.get("snapshot_swhid")
        if not isinstance(swhid, str) or not SNAPSHOT.match(swhid):
            raise NetworkError(f"{what} saved {origin} but named no snapshot SWHID")
        return CodeSnapshot(origin, swhid)

    found = done(request)
    if found is not None:
        return found
    snapshot: CodeSnapshot = polling.until(
        lambda: done(ask("GET", f"/api/1/origin/save/{number}/")[1]),
        f"the save of {origin} by {what}",
    )
    return snapshot
