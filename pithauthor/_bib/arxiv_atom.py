"""arXiv's API, the pure half: the `search_query` we send and the Atom feed it answers.

The query interface is described in arXiv's API manual: `search_query` with field prefixes
(`ti:` title, `au:` author), phrases in double quotes, `AND`/`OR`/`ANDNOT` and parentheses;
`start`, `max_results`. The answer is an Atom 1.0 feed with OpenSearch's `totalResults`, one
`<entry>` per paper (`<id>http://arxiv.org/abs/ID vN</id>`, `<title>`, `<published>`,
`<author><name>`, `<arxiv:doi>`), and errors as a feed whose one entry is titled `Error`.
The XML is parsed by defusedxml: no DTD, no entities, so no entity expansion bombs.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Final

from defusedxml import DefusedXmlException
from defusedxml.ElementTree import fromstring

from pithauthor._bib.matching import Candidate, Query, query_surname
from pithauthor._core.arxiv_id import ArxivId
from pithauthor.errors import ArxivApiError, ArxivIdError, ArxivQueryRefused

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
_ABS_ID = re.compile(r"arxiv\.org/abs/(.+?)(?:v[0-9]+)?$")
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
    except (ET.ParseError, DefusedXmlException, ValueError) as exc:
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
    return Candidate(arxiv_id, _text(entry, f"{ATOM}title"), authors[:500], int(published[:4]), doi)
