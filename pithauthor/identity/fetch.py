"""Fetching for identity proofs: GETs with short timeouts, capped answers, redirects only
within an origin, each address once per run (`Fetcher`). Nothing here judges a proof: `proofs`
does.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TypeVar, cast
from urllib.parse import urljoin

from pithauthor.errors import InputError
from pithauthor.fs import MAX_PDF_BYTES, read_user_file
from pithauthor.net import (
    AnswerTooLarge,
    AnswerTooSlow,
    ClientsByScheme,
    check_url,
    read_capped,
)
from pithauthor.protocol.canonical_json import parse_json
from pithauthor.protocol.urls import same_origin

__all__ = ["DEFAULT_TIMEOUT", "Fetcher", "NotFound", "Unreadable"]


DEFAULT_TIMEOUT = 5.0  # `--proof-timeout`: a proof is checked now, not waited for (exit 3)


JSON_LIMIT = 1 << 20  # 1 MiB: an ORCID researcher-urls answer or a pith-keys.json is small


PDF_ACCEPT = "application/pdf"


MAX_REDIRECTS = 3  # same-origin ones only: enough for a slash or a moved page; a loop ends


USER_AGENT = "pithauthor (identity proofs; https://pith.science)"


T = TypeVar("T")


# --- fetching ---------------------------------------------------------------------------------


class Unreadable(Exception):
    """A source could not be read; `network` when the cause was the network."""

    def __init__(self, reason: str, *, network: bool) -> None:
        super().__init__(reason)
        self.reason, self.network = reason, network


class NotFound(Exception):
    """The source answered 404 (or 410): there is nothing there."""


@dataclass(frozen=True, slots=True)
class _Parsed:
    value: Any


class Fetcher:
    """GETs with short timeouts, capped answers and a strict redirect rule, over the one
    network layer (`pithauthor.net`). Each address is fetched once per fetcher (one
    `pith verify` run): a JSONL file of claims by one author asks ORCID once, and every claim
    sees the same answer. No retries: a proof is checked now, and an unreachable one is said
    (exit 3), not waited for."""

    def __init__(self, timeout: float, offline: bool) -> None:
        self.timeout, self.offline = timeout, offline
        # trust_env=False: a proof's host is the event's word, not the user's: no ~/.netrc
        # password or proxy setting of this machine is used for it
        self._clients = ClientsByScheme(
            headers={"User-Agent": USER_AGENT}, timeout=timeout, trust_env=False
        )
        self._seen: dict[tuple[str, str], bytes | _Parsed | Exception] = {}
        self._derived: dict[tuple[object, ...], Any] = {}

    def memo(self, key: tuple[object, ...], make: Callable[[], T]) -> T:
        """`make()` once per run for `key`: what each event of a run would otherwise derive
        again from the same answers and settings (2,000 claims by one author check one ORCID
        record against one key; doing it per claim was a third of `verify --orcid`).
        Only for results that depend on nothing but `key` during one run."""
        if key not in self._derived:
            self._derived[key] = make()
        return cast(T, self._derived[key])

    def close(self) -> None:
        """Close the network clients of this run."""
        self._clients.close()

    def _once(self, key: tuple[str, str], make: Callable[[], bytes | _Parsed]) -> bytes | _Parsed:
        """`make()` the first time `key` is asked for, then the same answer (or failure)."""
        if key not in self._seen:
            try:
                self._seen[key] = make()
            except (Unreadable, NotFound) as exc:
                self._seen[key] = exc
        found = self._seen[key]
        if isinstance(found, Exception):
            raise found
        return found

    def get(self, url: str, accept: str, limit: int) -> bytes:
        """The bytes at `url` (at most `limit`), fetched once per fetcher: `NotFound` for a
        404 or 410, `Unreadable` for any other failure."""
        found = self._once((url, accept), lambda: self._get(url, accept, limit))
        assert isinstance(found, bytes)
        return found

    def read_file(self, path: str) -> None:
        """Read the PDF file the user named (`--paper-pdf FILE`) now, through the one file
        reader: a missing, unreadable, non-regular or oversized file is an InputError before
        anything is fetched. Later `get(path, PDF_ACCEPT, ...)` answers these bytes."""
        self._seen[(path, PDF_ACCEPT)] = read_user_file(
            path, InputError, "a PDF file", limit=MAX_PDF_BYTES, text_only=False
        )

    def json(self, url: str) -> Any:
        """The strict JSON document at `url` (parsed once per fetcher, like the bytes)."""
        found = self._once(
            (url, "json"), lambda: _Parsed(_json(self.get(url, "application/json", JSON_LIMIT)))
        )
        assert isinstance(found, _Parsed)
        return found.value

    def _get(self, url: str, accept: str, limit: int) -> bytes:
        try:  # a locator from the event: never a local file, never a refused address
            check_url(url, "the proof's address")
        except InputError as exc:
            raise Unreadable(str(exc), network=False) from None
        if self.offline:
            raise Unreadable("not fetched (--offline)", network=False)
        import httpx

        current = url
        for _ in range(MAX_REDIRECTS + 1):
            client = self._clients.for_url(current)
            try:
                with client.stream("GET", current, headers={"Accept": accept}) as answer:
                    if answer.is_redirect:
                        current = _redirect_target(current, answer.headers.get("location", ""))
                        continue
                    # 404/410 is an answer (no proof there: "absent"); a 5xx or 429 says nothing
                    # about the proof, so it is a network problem (exit 3), never "absent"
                    if answer.status_code in (404, 410):
                        raise NotFound(f"HTTP {answer.status_code}")
                    if answer.status_code >= 500 or answer.status_code == 429:
                        raise Unreadable(f"HTTP {answer.status_code}", network=True)
                    if answer.status_code != 200:
                        raise Unreadable(f"HTTP {answer.status_code}", network=False)
                    return read_capped(answer, limit, self.timeout)
            except AnswerTooLarge:
                raise Unreadable(f"answer larger than {limit} bytes", network=False) from None
            except AnswerTooSlow:
                raise Unreadable(
                    f"no whole answer within {self.timeout:g} s", network=True
                ) from None
            except httpx.TimeoutException:
                raise Unreadable(f"no answer within {self.timeout:g} s", network=True) from None
            except httpx.HTTPError as exc:
                reason = str(exc) or type(exc).__name__
                raise Unreadable(f"cannot connect ({reason})", network=True) from None
        raise Unreadable(f"more than {MAX_REDIRECTS} redirects", network=False)


def _redirect_target(current: str, location: str) -> str:
    """Where a redirect leads, if allowed: the same origin (scheme, host and port). Another
    port of the same host is another server (maybe another user's), so it is refused too."""
    target = urljoin(current, location)
    if not same_origin(current, target):
        raise Unreadable(
            f"redirects to {target}, another origin (scheme, host or port)", network=False
        )
    return target


def _json(data: bytes) -> Any:
    try:
        return parse_json(data.decode("utf-8"))
    except (UnicodeDecodeError, ValueError) as exc:
        raise Unreadable(f"the answer is not strict JSON ({exc})", network=False) from None
