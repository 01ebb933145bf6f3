"""arXiv's API over HTTP, as its terms of use ask: one connection, one request at a time, at
least 3 seconds apart, a User-Agent that says who is asking; a bounded answer.

The 3-second spacing holds for every host except loopback ones (127.0.0.0/8, ::1,
localhost): those are your own machine (a test server, a local mirror), where arXiv's terms do
not reach; `loopback_interval` (default 0) sets their spacing, for tests and benchmarks.

The URL rule, the client, the capped read and the retry statuses are the one network layer's
(`pithauthor._http`); only the pacing and arXiv's own answers are this module's.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Final
from urllib.parse import urlsplit

from pithauthor._bib.arxiv_atom import Feed, parse_feed
from pithauthor._core.web_url import is_loopback
from pithauthor._http import (
    RETRY_STATUSES,
    AnswerTooLarge,
    AnswerTooSlow,
    check_url,
    new_client,
    origin,
    parse_retry_after,
    read_capped,
    transport_reason,
)
from pithauthor._version import __version__
from pithauthor.errors import ArxivApiError, ArxivQueryRefused

# httpx is imported where requests are sent: it takes longer to load than Typer.

if TYPE_CHECKING:
    import httpx

DEFAULT_API: Final = "https://export.arxiv.org/api/query"
#: arXiv's terms: no more than one request every three seconds.
ARXIV_INTERVAL: Final = 3.0
MAX_ANSWER_BYTES: Final = 8 * 1024 * 1024
USER_AGENT: Final = (
    f"pithauthor/{__version__} (bibliography identifier lookup; https://pith.science)"
)
_MAX_RETRY_AFTER = 60.0


class _Transient(Exception):
    """A timeout or a broken connection: worth another attempt."""


def _refusal(body: bytes, where: str) -> None:
    """Raise arXiv's own reason when the body is its error feed."""
    try:
        parse_feed(body, where)
    except ArxivQueryRefused:
        raise
    except ArxivApiError:
        pass


def check_api_url(url: str) -> str:
    """`url` when it is https (or http to loopback); InputError otherwise."""
    check_url(url, "--arxiv-api")
    return url.strip()


class ArxivApi:
    """A paced client of arXiv's `query` interface. Thread-safe: requests are serialised."""

    def __init__(
        self,
        url: str = DEFAULT_API,
        *,
        timeout: float = 30.0,
        attempts: int = 3,
        loopback_interval: float = 0.0,
        transport: httpx.BaseTransport | None = None,
        sleep: Callable[[float], None] = time.sleep,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.url = check_api_url(url)
        host = urlsplit(self.url).hostname or ""
        self.interval = max(0.0, loopback_interval) if is_loopback(host) else ARXIV_INTERVAL
        self.attempts = max(1, attempts)
        self.timeout = timeout  # also the longest a whole answer may take to arrive
        self.requests = 0  # requests sent, retries included
        self._sleep = sleep
        self._clock = clock
        self._last: float | None = None
        self._lock = threading.Lock()
        # one connection: arXiv's terms ask for one request at a time
        self._http = new_client(
            headers={"User-Agent": USER_AGENT, "Accept": "application/atom+xml"},
            timeout=timeout,
            connect_timeout=min(timeout, 10.0),
            max_connections=1,
            transport=transport,
        )

    def close(self) -> None:
        self._http.close()

    def __enter__(self) -> ArxivApi:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def search(self, search_query: str, max_results: int) -> Feed:
        """One query (retried on timeouts, 429 and 5xx); ArxivApiError when it cannot be had."""
        params = {"search_query": search_query, "start": "0", "max_results": str(max_results)}
        where = origin(self.url)
        last = ""
        with self._lock:
            for attempt in range(self.attempts):
                wait = 0.0
                try:
                    status, body, retry_after = self._get(params)
                except _Transient as exc:
                    last = str(exc)
                else:
                    if status == 200 and body.strip() != b"Rate exceeded.":
                        return parse_feed(body, where)
                    if status not in RETRY_STATUSES and status != 200:
                        _refusal(body, where)
                        raise ArxivApiError(f"the arXiv API at {where} answered HTTP {status}")
                    last = f"HTTP {status}" if status != 200 else "rate exceeded"
                    wait = min(retry_after or 0.0, _MAX_RETRY_AFTER)
                if attempt + 1 < self.attempts and wait:
                    self._sleep(wait)
        raise ArxivApiError(
            f"the arXiv API at {where} did not answer ({last}) after {self.attempts} attempts; "
            "answers received so far are cached: run again later, or use --offline"
        )

    def _pace(self) -> None:
        if self._last is not None:
            wait = self._last + self.interval - self._clock()
            if wait > 0:
                self._sleep(wait)
        self._last = self._clock()

    def _get(self, params: dict[str, str]) -> tuple[int, bytes, float | None]:
        import httpx

        self._pace()
        self.requests += 1
        try:
            with self._http.stream("GET", self.url, params=params) as response:
                body = read_capped(response, MAX_ANSWER_BYTES, self.timeout, self._clock)
                retry_after = parse_retry_after(response.headers.get("Retry-After"))
                return response.status_code, body, retry_after
        except AnswerTooLarge:
            raise ArxivApiError(self._too_big()) from None
        except (httpx.TransportError, AnswerTooSlow) as exc:
            raise _Transient(transport_reason(exc)) from None
        finally:
            self._last = self._clock()  # the spacing counts from the end of the answer

    def _too_big(self) -> str:
        return (
            f"the arXiv API at {origin(self.url)} sent an answer larger than "
            f"{MAX_ANSWER_BYTES // (1024 * 1024)} MiB; refused"
        )
