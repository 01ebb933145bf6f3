"""The Internet Archive, as `pith archive` asks it: Save Page Now 2 to capture a URL, and the
CDX index to read what the capture holds.

- `POST <wayback>/save` (form `url=`, `Accept: application/json`), with the header
  `Authorization: LOW <access key>:<secret>` when the author gave archive.org keys, anonymous
  otherwise: `{"url", "job_id"}`;
- `GET <wayback>/save/status/<job_id>`: `{"status": "pending"}` while the capture runs, then
  `{"status": "success", "timestamp": "YYYYMMDDhhmmss", "original_url", ...}` or
  `{"status": "error", "status_ext": "error:...", "message"}`;
- `GET <wayback>/cdx/search/cdx?url=<url>&output=json&from=<ts>&to=<ts>`: a header row of
  field names, then one row per capture; the `digest` field is the base32 SHA-1 of the
  captured body (what `pith archive` compares with the PDF it downloads itself).

Every request goes through `pithauthor.net.exchange` (the URL policy, no redirect followed, no
credentials or proxies from the environment, capped and timed answers, the one retry loop).
The keys go only in the Authorization header of requests to the archive named by
PITH_WAYBACK_URL, and never into a message: `IaKeys` does not even show them in its repr.
"""

from __future__ import annotations

import os
import re
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlencode

from pithauthor.errors import ArchiveRefused, AuthError, InputError, NetworkError
from pithauthor.fs import MAX_SECRET_BYTES, read_user_file
from pithauthor.net import RetryPolicy, ServiceAnswer, check_url, exchange
from pithauthor.protocol.canonical_json import JSONFault, parse_json

__all__ = [
    "ACCESS_KEY_ENV",
    "DEFAULT_WAYBACK",
    "SECRET_KEY_ENV",
    "WAYBACK_ENV",
    "CdxRow",
    "IaKeys",
    "Polling",
    "SavePageNow",
    "ia_keys_from_env",
    "ia_keys_from_file",
    "wayback_base",
]

DEFAULT_WAYBACK = "https://web.archive.org"

WAYBACK_ENV = "PITH_WAYBACK_URL"
"""The Wayback Machine to ask (its Save Page Now and CDX API): a loopback stand-in in tests."""

ACCESS_KEY_ENV = "PITH_IA_ACCESS_KEY"
SECRET_KEY_ENV = "PITH_IA_SECRET_KEY"

CDX_FIELDS = ("urlkey", "timestamp", "original", "mimetype", "statuscode", "digest", "length")
"""The columns of a CDX row, in the order the JSON output names them in its first row."""

_STAMP = re.compile(r"\A[0-9]{14}\Z")
_DIGEST = re.compile(r"\A[A-Z2-7]{32}\Z")
# an S3-style key of archive.org: letters and digits; refused with a colon (it would split the
# `LOW access:secret` header elsewhere), white space or control characters
_KEY = re.compile(r"\A[\x21-\x39\x3b-\x7e]{1,128}\Z")

ANSWER_LIMIT = 256 * 1024
"""The largest answer read from Save Page Now or CDX (a status or a few rows of one URL)."""


def wayback_base(env: Mapping[str, str] | None = None) -> str:
    """The Wayback Machine `PITH_WAYBACK_URL` names (else web.archive.org), under the URL
    policy (InputError naming the variable otherwise)."""
    value = (os.environ if env is None else env).get(WAYBACK_ENV, "").strip()
    return check_url(value or DEFAULT_WAYBACK, WAYBACK_ENV)


@dataclass(frozen=True)
class IaKeys:
    """The author's archive.org S3 keys. Shown nowhere: not in a repr, not in an error."""

    access: str = field(repr=False)
    secret: str = field(repr=False)

    def header(self) -> dict[str, str]:
        """The Authorization header SPN2 reads (`LOW access:secret`)."""
        return {"Authorization": f"LOW {self.access}:{self.secret}"}


def ia_keys_from_file(path: str) -> IaKeys:
    """The keys in the file `path` (`--ia-keys FILE`): `ACCESS:SECRET`, or the two keys on two
    lines (or separated by white space), as archive.org's S3 page lists them. InputError naming
    the file, never what it holds, for anything else."""
    data = read_user_file(path, InputError, "an archive.org keys file", limit=MAX_SECRET_BYTES)
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError:
        text = ""
    parts = text.split()
    if len(parts) == 1 and parts[0].count(":") == 1:
        parts = parts[0].split(":")
    if len(parts) != 2 or not all(_KEY.match(p) for p in parts):
        raise InputError(
            f"{path} holds no archive.org keys: ACCESS:SECRET, or the two keys on two lines "
            "(https://archive.org/account/s3.php)"
        )
    return IaKeys(parts[0], parts[1])


def ia_keys_from_env(env: Mapping[str, str] | None = None) -> IaKeys | None:
    """The keys PITH_IA_ACCESS_KEY and PITH_IA_SECRET_KEY hold: both, or None (anonymous) when
    neither is set. InputError when one is set alone or is no key (the message names the
    variable, never its value)."""
    source = os.environ if env is None else env
    access = source.get(ACCESS_KEY_ENV, "").strip()
    secret = source.get(SECRET_KEY_ENV, "").strip()
    if not access and not secret:
        return None
    for name, value in ((ACCESS_KEY_ENV, access), (SECRET_KEY_ENV, secret)):
        if not value:
            other = SECRET_KEY_ENV if name == ACCESS_KEY_ENV else ACCESS_KEY_ENV
            raise InputError(
                f"{other} is set but {name} is not: archive.org keys go in pairs "
                "(https://archive.org/account/s3.php), or unset both to capture anonymously"
            )
        if not _KEY.match(value):
            raise InputError(
                f"{name} is not an archive.org S3 key (printable characters, no colon or "
                "space, at most 128)"
            )
    return IaKeys(access, secret)


@dataclass(frozen=True)
class Polling:
    """How a job is waited on: asked every `interval` seconds, for at most `timeout` seconds.
    `sleep` and `clock` are the waits and the time (tests pass their own, or a 0 interval)."""

    interval: float = 5.0
    timeout: float = 900.0
    sleep: Callable[[float], None] = time.sleep
    clock: Callable[[], float] = time.monotonic

    def until(self, done: Callable[[], Any], what: str) -> Any:
        """`done()` until it answers anything but None (asked at least once); NetworkError
        naming `what` when `timeout` passed first."""
        deadline = self.clock() + self.timeout
        while True:
            found = done()
            if found is not None:
                return found
            if self.clock() + self.interval > deadline:
                raise NetworkError(
                    f"{what} did not finish within {self.timeout:g} s; nothing was signed "
                    "(run the command again later)"
                )
            if self.interval > 0:
                self.sleep(self.interval)


@dataclass(frozen=True)
class CdxRow:
    """One capture as the CDX index lists it (the digest as the index writes it: base32 SHA-1,
    no prefix)."""

    urlkey: str
    timestamp: str
    original: str
    mimetype: str
    statuscode: str
    digest: str
    length: str


def said(text: object, limit: int = 200) -> str:
    """A service's words on one short line (they end up in ours)."""
    return " ".join(str(text).split())[:limit] or "no reason given"


def json_of(answer: ServiceAnswer, what: str) -> Any:
    """The answer's strict JSON; NetworkError (the service answered out of protocol)."""
    try:
        return parse_json(answer.body)
    except JSONFault as exc:
        raise NetworkError(f"{what} answered {answer.status} with no JSON ({exc})") from None


class SavePageNow:
    """Save Page Now and the CDX index of one Wayback Machine (`base`), with the author's keys
    or anonymous."""

    def __init__(
        self,
        base: str,
        keys: IaKeys | None,
        polling: Polling,
        *,
        timeout: float = 30.0,
        retry: RetryPolicy | None = None,
    ) -> None:
        self.base = check_url(base, WAYBACK_ENV)
        self._keys = keys
        self.polling = polling
        self._timeout = timeout
        self._retry = retry
        self.what = f"the Internet Archive at {self.base}"

    def _ask(self, method: str, path: str, form: Mapping[str, str] | None = None) -> ServiceAnswer:
        headers = {"Accept": "application/json"}
        if self._keys is not None and path.startswith("/save"):
            headers.update(self._keys.header())  # only to Save Page Now, never to the index
        content = None
        if form is not None:
            content = urlencode(form).encode("ascii")
            headers["Content-Type"] = "application/x-www-form-urlencoded"
        return exchange(
            method,
            self.base + path,
            what=self.what,
            content=content,
            headers=headers,
            timeout=self._timeout,
            limit=ANSWER_LIMIT,
            retry=self._retry,
            sleep=self.polling.sleep,
        )

    def _refusal(self, answer: ServiceAnswer, url: str, doc: Any) -> Exception:
        ext = doc.get("status_ext", "") if isinstance(doc, dict) else ""
        message = said(doc.get("message", "") if isinstance(doc, dict) else answer.body[:200])
        if answer.status == 401 or "unauthorized" in str(ext) or "login" in str(ext):
            who = "your archive.org keys" if self._keys is not None else "an anonymous capture"
            return AuthError(
                f"{self.what} refused {who} ({answer.status}: {message}); nothing was signed",
                hint=f"set {ACCESS_KEY_ENV} and {SECRET_KEY_ENV} to your keys from "
                "https://archive.org/account/s3.php",
            )
        reason = f"{said(ext)}: {message}" if ext else message
        return ArchiveRefused(
            f"{self.what} refused to capture {url} ({answer.status}: {reason}); nothing was signed"
        )

    def request_capture(self, url: str) -> str:
        """Ask for a capture of `url`: the job's id. AuthError for refused keys, ArchiveRefused
        for a refused URL (or any other refusal), NetworkError when the archive cannot be had."""
        answer = self._ask("POST", "/save", {"url": url, "skip_first_archive": "1"})
        doc: Any = None
        if answer.body.strip()[:1] in (b"{", b"["):
            doc = json_of(answer, self.what)
        if answer.status != 200 or not isinstance(doc, dict) or doc.get("status") == "error":
            if 400 <= answer.status < 500 or isinstance(doc, dict):
                raise self._refusal(answer, url, doc)
            raise NetworkError(f"{self.what} answered {answer.status} to a capture request")
        job = doc.get("job_id")
        if not isinstance(job, str) or not re.fullmatch(r"[A-Za-z0-9_.:-]{1,200}", job):
            raise NetworkError(f"{self.what} answered a capture request with no job id")
        return job

    def job_status(self, job: str, url: str) -> str | None:
        """The job's capture time (14 digits) once it succeeded; None while it is pending.
        ArchiveRefused when it ended in error."""
        answer = self._ask("GET", f"/save/status/{job}")
        if answer.status != 200:
            raise NetworkError(f"{self.what} answered {answer.status} for the status of a capture")
        doc = json_of(answer, self.what)
        status = doc.get("status") if isinstance(doc, dict) else None
        if status == "pending":
            return None
        if status == "success":
            stamp = doc.get("timestamp")
            if not isinstance(stamp, str) or not _STAMP.match(stamp):
                raise NetworkError(f"{self.what} answered a capture with no 14-digit timestamp")
            return stamp
        if status == "error":
            ext = said(doc.get("status_ext", "error"))
            raise ArchiveRefused(
                f"{self.what} could not capture {url} ({ext}: {said(doc.get('message', ''))}); "
                "nothing was signed"
            )
        raise NetworkError(f"{self.what} answered a capture status it does not document")

    def capture(self, job: str, url: str) -> str:
        """Wait on `job` (bounded: `polling`): the capture's 14-digit timestamp."""
        stamp: str = self.polling.until(
            lambda: self.job_status(job, url), f"the capture of {url} by {self.what}"
        )
        return stamp

    def cdx_row(self, url: str, stamp: str) -> CdxRow | None:
        """The CDX row of `url`'s capture at `stamp` (None while the index has none yet)."""
        query = urlencode({"url": url, "output": "json", "from": stamp, "to": stamp})
        answer = self._ask("GET", f"/cdx/search/cdx?{query}")
        if answer.status != 200:
            raise NetworkError(f"{self.what} answered {answer.status} to a CDX query")
        doc = json_of(answer, f"the CDX index of {self.what}")
        if doc == []:
            return None
        if (
            not isinstance(doc, list)
            or not doc
            or not all(isinstance(r, list) and all(isinstance(c, str) for c in r) for r in doc)
        ):
            raise NetworkError(f"the CDX index of {self.what} answered rows that are not CDX JSON")
        names = doc[0]
        if not set(CDX_FIELDS) <= set(names):
            raise NetworkError(
                f"the CDX index of {self.what} answered without the fields {CDX_FIELDS}"
            )
        rows = [dict(zip(names, r, strict=False)) for r in doc[1:] if len(r) == len(names)]
        fitting = [r for r in rows if r["timestamp"] == stamp]
        fitting.sort(key=lambda r: r["original"] != url)  # the very URL first
        if not fitting:
            return None
        row = CdxRow(**{name: fitting[0][name] for name in CDX_FIELDS})
        if not _DIGEST.match(row.digest):
            raise NetworkError(f"the CDX index of {self.what} gives no SHA-1 digest for {url}")
        return row

    def indexed(self, url: str, stamp: str) -> CdxRow:
        """`cdx_row`, waited for (bounded): a fresh capture reaches the index after a while."""
        row: CdxRow = self.polling.until(
            lambda: self.cdx_row(url, stamp), f"the CDX row of {url} at {stamp} in {self.what}"
        )
        return row

    def capture_url(self, url: str, stamp: str) -> str:
        """Where the capture is replayed: `<wayback>/web/<timestamp>/<url>`."""
        return f"{self.base}/web/{stamp}/{url}"
