"""arXiv's API for `--lookup`: the `search_query` we send and the Atom feed it answers (pure),
and the client that asks, one request at a time at arXiv's pace, over the one network layer.
"""

from __future__ import annotations

import re
import threading
import time
import xml.etree.ElementTree as ET
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final
from urllib.parse import urlsplit

from defusedxml import DefusedXmlException
from defusedxml.ElementTree import fromstring

from pithauthor._version import __version__
from pithauthor.bibliography.matching import Candidate, Query, query_surname
from pithauthor.errors import ArxivApiError, ArxivIdError, ArxivQueryRefused
from pithauthor.net import (
    RETRY_STATUSES,
    AnswerTooLarge,
    AnswerTooSlow,
    Retry,
    RetryPolicy,
    check_url,
    new_client,
    parse_retry_after,
    read_capped,
    transport_reason,
    with_retries,
)
from pithauthor.protocol.ids import ArxivId
from pithauthor.protocol.urls import is_loopback, origin

if TYPE_CHECKING:
    import httpx


# arXiv's API, the pure half: the `search_query` we send and the Atom feed it answers.
#
# The query interface is described in arXiv's API manual: `search_query` with field prefixes
# (`ti:` title, `au:` author), phrases in double quotes, `AND`/`OR`/`ANDNOT` and parentheses;
# `start`, `max_results`. The answer is an Atom 1.0 feed with OpenSearch's `totalResults`, one
# `<entry>` per paper (`<id>http://arxiv.org/abs/ID vN</id>`, `<title>`, `<published>`,
# `<author><name>`, `<arxiv:doi>`), and errors as a feed whose one entry is titled `Error`.
# The XML is parsed by defusedxml: no DTD, no entities, so no entity expansion bombs.

ATOM: Final = "{http://www.w3.org/2005/Atom}"


OPENSEARCH: Final = "{http://a9.com/-/spec/opensearch/1.1/}"


ARXIV: Final = "{http://arxiv.org/schemas/atom}"


#: Titles per request, and papers asked per title.
BATCH_TITLES: Final = 10


RESULTS_PER_TITLE: Final = 10


#: Longest `search_query` sent (characters before URL encoding); a batch is cut before it.
MAX_QUERY_CHARS: Final = 3000


#: Words of a title put in the phrase (long titles are cut: a phrase still matches).
MAX_PHRASE_WORDS: Final = 24


_ABS_ID = re.compile(r"arxiv\.org/abs/(.+?)(?:v([0-9]+))?$")


_MAX_TEXT = 2000  # longest title or name kept from an answer


def term(query: Query) -> str:
    """One query's search term: its title phrase, and its first surnames when they are ASCII."""
    phrase = " ".join(query.words[:MAX_PHRASE_WORDS])
    names = [s for s in (query_surname(x) for x in query.surnames[:3]) if s]
    title = f'ti:"{phrase}"'
    if not names:
        return title
    return f"({title} AND ({' OR '.join(f'au:{n}' for n in dict.fromkeys(names))}))"


def batches(queries: Sequence[Query]) -> list[list[Query]]:
    """The queries cut into requests: at most BATCH_TITLES each and MAX_QUERY_CHARS long."""
    out: list[list[Query]] = []
    current: list[Query] = []
    length = 0
    for query in queries:
        size = len(term(query)) + 4  # " OR "
        if current and (len(current) >= BATCH_TITLES or length + size > MAX_QUERY_CHARS):
            out.append(current)
            current, length = [], 0
        current.append(query)
        length += size
    if current:
        out.append(current)
    return out


def search_query(queries: Sequence[Query]) -> str:
    return " OR ".join(term(q) for q in queries)


@dataclass(frozen=True, slots=True)
class Feed:
    """An answer: the papers listed, and how many matched in all."""

    total: int
    listed: int  # entries in this answer (papers or not)
    candidates: tuple[Candidate, ...]

    @property
    def complete(self) -> bool:
        """Whether every matching paper is in this answer."""
        return self.total <= self.listed


def _text(element: Any, tag: str) -> str:
    child = element.find(tag)
    text = "" if child is None or child.text is None else child.text
    return " ".join(text.split())[:_MAX_TEXT]


def parse_feed(data: bytes, where: str) -> Feed:
    """The papers of one Atom answer; ArxivApiError for an error feed or something unreadable.

    Entries that are not well-formed papers (no parsable id or year) are left out."""

    try:
        root = fromstring(data, forbid_dtd=True)
    # LookupError: the XML declaration names an encoding with no text codec ("rot13")
    except (ET.ParseError, DefusedXmlException, LookupError, ValueError) as exc:
        raise ArxivApiError(
            f"the arXiv API at {where} answered something that is not an Atom feed ({exc})"
        ) from None
    if root.tag != f"{ATOM}feed":
        raise ArxivApiError(f"the arXiv API at {where} answered XML that is not an Atom feed")
    entries = root.findall(f"{ATOM}entry")
    for entry in entries:
        if _text(entry, f"{ATOM}title") == "Error" and "/api/errors" in _text(entry, f"{ATOM}id"):
            reason = _text(entry, f"{ATOM}summary")[:300] or "no reason given"
            raise ArxivQueryRefused(f"the arXiv API at {where} refused the query: {reason}")
    candidates = [c for c in (_candidate(e) for e in entries) if c is not None]
    total_text = _text(root, f"{OPENSEARCH}totalResults")
    total = int(total_text) if total_text.isdigit() and len(total_text) < 10 else len(entries)
    return Feed(total=total, listed=len(entries), candidates=tuple(candidates))


def _candidate(entry: Any) -> Candidate | None:
    match = _ABS_ID.search(_text(entry, f"{ATOM}id"))
    published = _text(entry, f"{ATOM}published")
    if match is None or not published[:4].isdigit():
        return None
    try:
        arxiv_id = ArxivId.parse(match.group(1)).id
    except ArxivIdError:
        return None
    authors = tuple(
        name for a in entry.findall(f"{ATOM}author") if (name := _text(a, f"{ATOM}name"))
    )
    doi = _text(entry, f"{ARXIV}doi") or None
    version = int(match.group(2)) if match.group(2) and len(match.group(2)) < 6 else None
    title = _text(entry, f"{ATOM}title")
    return Candidate(arxiv_id, title, authors[:500], int(published[:4]), doi, version)


# arXiv's API over HTTP, as its terms of use ask: one connection, one request at a time, at
# least 3 seconds apart, a User-Agent that says who is asking; a bounded answer.
#
# The 3-second spacing holds for every host except loopback ones (127.0.0.0/8, ::1,
# localhost): those are your own machine (a test server, a local mirror), where arXiv's terms do
# not reach; `loopback_interval` (default 0) sets their spacing, for tests and benchmarks.
#
# The URL rule, the client, the capped read and the retry statuses are the one network layer's
# (`pithauthor.net`); only the pacing and arXiv's own answers are this module's.

DEFAULT_API: Final = "https://export.arxiv.org/api/query"


#: arXiv's terms: no more than one request every three seconds.
ARXIV_INTERVAL: Final = 3.0


MAX_ANSWER_BYTES: Final = 8 * 1024 * 1024


USER_AGENT: Final = (
    f"pithauthor/{__version__} (bibliography identifier lookup; https://pith.science)"
)


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
            plain_http=self.url.startswith("http://"),  # loopback only: no CA bundle to load
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
        return self._query(params)

    def entry(self, arxiv_id: str) -> Candidate | None:
        """The entry of one paper (`2302.12445v2`: that version's; its authors in arXiv's
        order), asked by `id_list`; None when arXiv has none. ArxivApiError as `search`."""
        feed = self._query({"id_list": arxiv_id, "start": "0", "max_results": "1"})
        wanted = ArxivId.parse(arxiv_id)
        for candidate in feed.candidates:
            # the answer must be the paper (and version) asked for, never another one
            if candidate.arxiv_id == wanted.id and wanted.version in (None, candidate.version):
                return candidate
        return None

    def _query(self, params: dict[str, str]) -> Feed:
        where = origin(self.url)

        def once() -> Feed | Retry:
            try:
                status, body, retry_after = self._get(params)
            except _Transient as exc:
                return Retry(str(exc))
            if status == 200 and body.strip() != b"Rate exceeded.":
                return parse_feed(body, where)
            if status not in RETRY_STATUSES and status != 200:
                _refusal(body, where)
                raise ArxivApiError(f"the arXiv API at {where} answered HTTP {status}")
            return Retry(f"HTTP {status}" if status != 200 else "rate exceeded", retry_after)

        # no back-off of our own (the pacer already spaces requests); a Retry-After is waited,
        # up to a minute: a lookup stays minutes, not hours
        policy = RetryPolicy(max_attempts=self.attempts, base_delay=0.0, max_retry_after=60.0)
        with self._lock:
            result = with_retries(once, policy, self._sleep, what=f"the arXiv API at {where}")
        if isinstance(result, Retry):
            raise ArxivApiError(
                f"the arXiv API at {where} did not answer ({result.reason}) after "
                f"{self.attempts} attempts; "
                "answers received so far are cached: run again later, or use --offline"
            )
        return result

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
