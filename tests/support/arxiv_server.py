"""A local stand-in for arXiv's API (`/api/query`), answering in arXiv's Atom format.

It implements what the manual documents and `--lookup` uses: `search_query` with `ti:`/`au:`
terms (words or "phrases"), `AND`/`OR`/`ANDNOT` and parentheses, `start`, `max_results`; and
`id_list` (one id, with or without its version: the entry of that paper, which `pith claim`
reads arXiv's author order from);
Atom feeds with OpenSearch totals and one `<entry>` per paper (id with version, wrapped title,
`<published>`, `<author><name>`, `<arxiv:doi>`, links, categories); errors as arXiv sends them
(HTTP 400 and a feed whose one entry is titled "Error"). Faults on demand: a delay, an error
feed, 503 "Rate exceeded.", an oversized answer, an answer trickling in. Every request is
recorded (time, query, client port, User-Agent). Used by tests/unit/bibliography/test_lookup*.py
and benchmarks/bench_lookup.py.
"""

from __future__ import annotations

import re
import threading
import time
import unicodedata
from dataclasses import dataclass, field
from functools import lru_cache
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, quote, urlsplit
from xml.sax.saxutils import escape

_TOKEN = re.compile(r'\(|\)|[a-z]+:"[^"]*"|[a-z]+:[^\s()"]+|ANDNOT|AND|OR')


@dataclass
class Paper:
    arxiv_id: str  # without version
    title: str
    authors: list[str]
    published: str  # 2017-06-12T17:57:34Z
    version: int = 1
    doi: str | None = None
    category: str = "cs.CL"


@lru_cache(maxsize=65536)
def _words(text: str) -> list[str]:
    folded = unicodedata.normalize("NFKD", text)
    folded = "".join(c for c in folded if not unicodedata.combining(c)).lower()
    return re.findall(r"[a-z0-9]+", folded)


def _contains(haystack: list[str], needle: list[str]) -> bool:
    n = len(needle)
    return n > 0 and any(haystack[i : i + n] == needle for i in range(len(haystack) - n + 1))


class QueryError(ValueError):
    pass


class _Parser:
    """search_query := or; or := and (OR and)*; and := atom ((AND|ANDNOT) atom)*."""

    def __init__(self, text: str) -> None:
        self.tokens = _TOKEN.findall(text)
        if "".join(self.tokens).replace(" ", "") != re.sub(r"\s+", "", text):
            raise QueryError(f"malformed query: {text[:80]}")
        self.i = 0

    def parse(self) -> Any:
        node = self._or()
        if self.i != len(self.tokens):
            raise QueryError("unbalanced query")
        return node

    def _peek(self) -> str | None:
        return self.tokens[self.i] if self.i < len(self.tokens) else None

    def _or(self) -> Any:
        node = self._and()
        while self._peek() == "OR":
            self.i += 1
            node = ("or", node, self._and())
        return node

    def _and(self) -> Any:
        node = self._atom()
        while self._peek() in ("AND", "ANDNOT"):
            op = self.tokens[self.i]
            self.i += 1
            node = ("and" if op == "AND" else "andnot", node, self._atom())
        return node

    def _atom(self) -> Any:
        token = self._peek()
        if token is None:
            raise QueryError("query ends early")
        self.i += 1
        if token == "(":
            node = self._or()
            if self._peek() != ")":
                raise QueryError("missing )")
            self.i += 1
            return node
        if ":" not in token:
            raise QueryError(f"unexpected {token}")
        prefix, value = token.split(":", 1)
        return ("term", prefix, value.strip('"').replace("_", " "))


def _matches(node: Any, paper: Paper) -> bool:
    kind = node[0]
    if kind == "or":
        return _matches(node[1], paper) or _matches(node[2], paper)
    if kind == "and":
        return _matches(node[1], paper) and _matches(node[2], paper)
    if kind == "andnot":
        return _matches(node[1], paper) and not _matches(node[2], paper)
    _, prefix, value = node
    wanted = _words(value)
    if prefix == "ti":
        return _contains(_words(paper.title), wanted)
    if prefix == "au":
        return any(_contains(_words(name), wanted) for name in paper.authors)
    if prefix == "all":
        return _contains(_words(paper.title + " " + " ".join(paper.authors)), wanted)
    raise QueryError(f"unknown field prefix {prefix}")


def _wrap(title: str) -> str:
    """arXiv's titles come hard-wrapped."""
    if len(title) <= 60:
        return title
    cut = title.rfind(" ", 0, 60)
    return title if cut < 0 else title[:cut] + "\n  " + title[cut + 1 :]


def feed(query: str, papers: list[Paper], total: int, start: int, size: int) -> bytes:
    """An Atom feed in arXiv's shape."""
    q = escape(query)
    parts = [
        '<?xml version="1.0" encoding="UTF-8"?>',
        '<feed xmlns="http://www.w3.org/2005/Atom">',
        f'  <link href="http://arxiv.org/api/query?search_query%3D{quote(query)}" rel="self" '
        'type="application/atom+xml"/>',
        f'  <title type="html">ArXiv Query: search_query={q}&amp;id_list=&amp;start={start}'
        f"&amp;max_results={size}</title>",
        "  <id>http://arxiv.org/api/cHxbiOdZaP56ODnBPIenZhzg5f8</id>",
        "  <updated>2026-11-30T00:00:00-05:00</updated>",
        '  <opensearch:totalResults xmlns:opensearch="http://a9.com/-/spec/opensearch/1.1/">'
        f"{total}</opensearch:totalResults>",
        '  <opensearch:startIndex xmlns:opensearch="http://a9.com/-/spec/opensearch/1.1/">'
        f"{start}</opensearch:startIndex>",
        '  <opensearch:itemsPerPage xmlns:opensearch="http://a9.com/-/spec/opensearch/1.1/">'
        f"{size}</opensearch:itemsPerPage>",
    ]
    for p in papers:
        vid = f"{p.arxiv_id}v{p.version}"
        parts += [
            "  <entry>",
            f"    <id>http://arxiv.org/abs/{vid}</id>",
            f"    <updated>{p.published}</updated>",
            f"    <published>{p.published}</published>",
            f"    <title>{escape(_wrap(p.title))}</title>",
            f"    <summary>  An abstract of {escape(p.title)}.\n</summary>",
            *(f"    <author>\n      <name>{escape(a)}</name>\n    </author>" for a in p.authors),
        ]
        if p.doi:
            parts.append(
                f'    <arxiv:doi xmlns:arxiv="http://arxiv.org/schemas/atom">{escape(p.doi)}'
                "</arxiv:doi>"
            )
        parts += [
            f'    <link href="http://arxiv.org/abs/{vid}" rel="alternate" type="text/html"/>',
            f'    <link title="pdf" href="http://arxiv.org/pdf/{vid}" rel="related" '
            'type="application/pdf"/>',
            f'    <arxiv:primary_category xmlns:arxiv="http://arxiv.org/schemas/atom" '
            f'term="{p.category}" scheme="http://arxiv.org/schemas/atom"/>',
            f'    <category term="{p.category}" scheme="http://arxiv.org/schemas/atom"/>',
            "  </entry>",
        ]
    parts.append("</feed>\n")
    return "\n".join(parts).encode("utf-8")


def error_feed(reason: str) -> bytes:
    """arXiv's error answer: a feed with one entry titled "Error"."""
    anchor = reason.replace(" ", "_")
    return (
        '<?xml version="1.0" encoding="UTF-8"?>\n'
        '<feed xmlns="http://www.w3.org/2005/Atom">\n'
        '  <link href="http://arxiv.org/api/query?search_query%3D%26id_list%3D" rel="self" '
        'type="application/atom+xml"/>\n'
        '  <title type="html">ArXiv Query: search_query=&amp;id_list=</title>\n'
        "  <id>http://arxiv.org/api/kvuntZ8c9a4Eq5CF7KY03nMug+Q</id>\n"
        "  <updated>2026-11-30T00:00:00-05:00</updated>\n"
        '  <opensearch:totalResults xmlns:opensearch="http://a9.com/-/spec/opensearch/1.1/">1'
        "</opensearch:totalResults>\n"
        '  <opensearch:startIndex xmlns:opensearch="http://a9.com/-/spec/opensearch/1.1/">0'
        "</opensearch:startIndex>\n"
        '  <opensearch:itemsPerPage xmlns:opensearch="http://a9.com/-/spec/opensearch/1.1/">1'
        "</opensearch:itemsPerPage>\n"
        "  <entry>\n"
        f"    <id>http://arxiv.org/api/errors#{escape(anchor)}</id>\n"
        "    <title>Error</title>\n"
        f"    <summary>{escape(reason)}</summary>\n"
        "    <updated>2026-11-30T00:00:00-05:00</updated>\n"
        f'    <link href="http://arxiv.org/api/errors#{escape(anchor)}" rel="alternate" '
        'type="text/html"/>\n'
        "    <author>\n      <name>arXiv api core</name>\n    </author>\n"
        "  </entry>\n</feed>\n"
    ).encode()


@dataclass
class Request:
    at: float
    query: str
    max_results: int
    port: int
    user_agent: str


@dataclass
class FakeArxiv:
    """The server's state: its papers, the faults to inject, and the requests seen."""

    papers: list[Paper] = field(default_factory=list)
    delay: float = 0.0
    error: str | None = None  # answer every request with this error feed
    error_status: int = 400  # ... with this HTTP status
    rate_exceeded: int = 0  # answer the next N requests 503 "Rate exceeded."
    oversized: int = 0  # bytes of padding to send instead of a feed
    trickle: float = 0.0  # seconds between 100-byte pieces of the answer
    requests: list[Request] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def answer(self, query: str, start: int, size: int, id_list: str = "") -> tuple[int, bytes]:
        if self.error:
            return self.error_status, error_feed(self.error)
        if self.rate_exceeded > 0:
            self.rate_exceeded -= 1
            return 503, b"Rate exceeded."
        if self.oversized:
            return 200, b"<feed>" + b" " * self.oversized + b"</feed>"
        if id_list:  # arXiv ignores search_query then; an unknown id is an empty feed
            wanted, _, version = id_list.partition("v") if "/" not in id_list else (id_list, "", "")
            hits = [p for p in self.papers if p.arxiv_id == wanted
                    and (not version or str(p.version) == version)]  # fmt: skip
            return 200, feed(f"id_list={id_list}", hits[:size], len(hits), 0, size)
        try:
            tree = _Parser(query).parse()
            hits = [p for p in self.papers if _matches(tree, p)]
        except QueryError as exc:
            return 400, error_feed(str(exc))
        return 200, feed(query, hits[start : start + size], len(hits), start, size)


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True  # headers and body are two writes: no 40 ms delayed ACK
    server: _Server

    def do_GET(self) -> None:
        state = self.server.state
        url = urlsplit(self.path)
        params = parse_qs(url.query)
        id_list = params.get("id_list", [""])[0]
        query = params.get("search_query", [""])[0] or (f"id_list={id_list}" if id_list else "")
        size = int(params.get("max_results", ["10"])[0])
        start = int(params.get("start", ["0"])[0])
        with state.lock:
            state.requests.append(
                Request(time.monotonic(), query, size, self.client_address[1],
                        self.headers.get("User-Agent", ""))
            )  # fmt: skip
        if state.delay:
            time.sleep(state.delay)
        if url.path != "/api/query":
            status, body = 404, b"<html><body>Not Found</body></html>"
        else:
            status, body = state.answer(query, start, size, id_list)
        try:
            self.send_response(status)
            self.send_header("Content-Type", "application/atom+xml; charset=UTF-8")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            if not state.trickle:
                self.wfile.write(body)
            for i in range(0, len(body) if state.trickle else 0, 100):
                self.wfile.write(body[i : i + 100])
                self.wfile.flush()
                time.sleep(state.trickle)
        except (BrokenPipeError, ConnectionResetError):
            pass

    def log_message(self, *args: Any) -> None:
        pass


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    state: FakeArxiv


class ArxivServer:
    """`with ArxivServer(papers) as server:` -> server.url, server.state."""

    def __init__(self, papers: list[Paper] | None = None) -> None:
        self.state = FakeArxiv(papers=list(papers or []))
        self._server = _Server(("127.0.0.1", 0), _Handler)
        self._server.state = self.state
        self.url = f"http://127.0.0.1:{self._server.server_address[1]}/api/query"
        self._thread = threading.Thread(
            target=self._server.serve_forever, args=(0.05,), daemon=True
        )  # shutdown() waits up to one poll interval: 0.05 s, not 0.5 s

    def __enter__(self) -> ArxivServer:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()


# DeAR's authors as arXiv lists them (arXivRaw `<authors>` in
# tests/fixtures/arxivraw-2302.12445.xml, and the API's `<author>` entries): not the order of
# the registry's record, which sorts them by given name.
DEAR_ARXIV_ORDER = [
    "Lin Zhang", "Shaohuai Shi", "Xiaowen Chu", "Wei Wang", "Bo Li", "Chengjian Liu"
]  # fmt: skip


def known_papers() -> list[Paper]:
    """Every paper the tests' local registries hold, with its authors in arXiv's order: DeAR
    (2302.12445, v1 and v2), the registry's two examples, and the cite tests' papers
    (support.cite), so that a claim's `--position` is checked as against arXiv."""
    from support.cite import EXTRA_IDS, REAL_BIB_IDS

    dear = "DeAR: Accelerating Distributed Deep Learning with Fine-Grained All-Reduce Pipelining"
    papers = [
        Paper("2302.12445", dear, DEAR_ARXIV_ORDER, "2023-02-24T04:11:18Z", version=v,
              category="cs.LG")
        for v in (1, 2)
    ]  # fmt: skip
    examples = ["Example Author", "Another Example"]
    papers += [  # v2 too: tests/unit/registry/test_local_store_versions.py adds one
        Paper(aid, f"Example paper {aid}", examples, "2021-01-04T10:00:00Z", version=v)
        for aid in ("2101.99901", "2101.99902")
        for v in (1, 2)
    ]
    papers += [
        Paper(aid, f"Example paper {aid} for the cite tests", ["Chengjian Liu", "Another Example"],
              "2021-01-04T10:00:00Z")
        for aid in EXTRA_IDS + REAL_BIB_IDS
    ]  # fmt: skip
    return papers
