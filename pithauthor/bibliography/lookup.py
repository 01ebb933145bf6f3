"""arXiv's answers to `--lookup`, cached on disk so that a second run asks nothing.

One JSON file per query under `<PITH_HOME>/cache/arxiv-lookup/` (0700), named by the SHA-256
of the normalised query and of the API's URL; it holds the papers that concern the query.
Answers are used for `MAX_AGE` (new papers appear on arXiv); `--offline` uses them whatever
their age. A file that cannot be read is a miss, and is replaced; so files are written
atomically but not fsynced (two fsyncs per answer were most of a fresh lookup's time).

Find the arXiv identifier of bibliography entries that carry none, by asking arXiv's API for
their title and authors, and accepting only certain matches (rules:
`pithauthor.bibliography.matching`, docs/cite.md).

    reading = read_bibliographies([Path("refs.bib")])
    with ArxivApi() as api:
        result = lookup_identifiers(reading, api)
    result.reading            # entries resolved by lookup are `found`, source `lookup`
    write_back(result.reading)  # add eprint/archivePrefix to the .bib files
"""

from __future__ import annotations

import hashlib
import json
import time
from collections.abc import Callable, Iterable
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Any, Final

from pithauthor.bibliography.arxiv_api import (
    ARXIV_INTERVAL,
    DEFAULT_API,
    RESULTS_PER_TITLE,
    ArxivApi,
    Feed,
    batches,
    search_query,
)
from pithauthor.bibliography.matching import (
    YEARS_AFTER,
    YEARS_BEFORE,
    Candidate,
    Query,
    concerns,
    decide,
    query_for,
)
from pithauthor.bibliography.reading import BibEntry, BibReading
from pithauthor.bibliography.writeback import WriteBack, write_eprints
from pithauthor.errors import ArxivApiError, InputError
from pithauthor.fs import private_dir, replace_file
from pithauthor.protocol.canonical_json import parse_json
from pithauthor.protocol.ids import ArxivId

__all__ = [
    "ARXIV_INTERVAL",
    "DEFAULT_API",
    "YEARS_AFTER",
    "YEARS_BEFORE",
    "ArxivApi",
    "ArxivApiError",
    "LookupCache",
    "LookupResult",
    "WriteBack",
    "lookup_bibliography",
    "lookup_identifiers",
    "paste_line",
    "settle",
    "write_back",
]


MAX_AGE: Final = 30 * 24 * 3600.0


_VERSION = 1


class LookupCache:
    """Papers per (API URL, normalised query)."""

    def __init__(self, folder: Path | None = None) -> None:
        if folder is None:
            folder = private_dir("cache", "arxiv-lookup")
        self.folder = folder

    def _path(self, api: str, key: str) -> Path:
        digest = hashlib.sha256(f"{api}\n{key}".encode()).hexdigest()
        return self.folder / f"{digest[:40]}.json"

    def get(
        self, api: str, key: str, *, any_age: bool = False
    ) -> tuple[tuple[Candidate, ...], bool] | None:
        """(papers, complete) for the query, or None when not cached (or too old)."""
        try:
            doc = parse_json(self._path(api, key).read_bytes())
            # the file's own query must be this one: a name is only a hash prefix, and a file
            # copied or left from another query is a miss, never another entry's answer
            if doc.get("version") != _VERSION or doc.get("query") != key:
                return None
            if not any_age and time.time() - float(doc["fetched_at"]) > MAX_AGE:
                return None
            papers = tuple(_candidate(c) for c in doc["candidates"])
            return papers, bool(doc["complete"])
        except (OSError, ValueError, KeyError, TypeError, AttributeError):
            return None

    def put(self, api: str, key: str, papers: tuple[Candidate, ...], complete: bool) -> None:
        doc = {
            "version": _VERSION,
            "query": key,
            "api": api,
            "fetched_at": int(time.time()),
            "complete": complete,
            "candidates": [asdict(c) for c in papers],
        }
        data = json.dumps(doc, ensure_ascii=False, sort_keys=True).encode("utf-8")
        path = self._path(api, key)
        replace_file(path, data, mode=0o600, durable=False)  # a lost answer is asked again


def _candidate(doc: Any) -> Candidate:
    authors = doc["authors"]
    if not isinstance(authors, list) or not all(isinstance(a, str) for a in authors):
        raise TypeError("authors")
    fields = (doc["arxiv_id"], doc["title"])
    if not all(isinstance(f, str) for f in fields) or not isinstance(doc["year"], int):
        raise TypeError("fields")
    doi = doc.get("doi")
    if doi is not None and not isinstance(doi, str):
        raise TypeError("doi")
    return Candidate(doc["arxiv_id"], doc["title"], tuple(authors), doc["year"], doi)


#: Called after each request with (requests done, requests planned so far).
Progress = Callable[[int, int], None]


#: Papers asked for when one title is asked again on its own.
_SINGLE_RESULTS = 50


@dataclass(frozen=True, slots=True)
class LookupResult:
    """The reading with lookup outcomes, and what it cost."""

    reading: BibReading
    looked_up: int  # entries that had no identifier and could be looked up
    requests: int  # HTTP requests sent (0 when every answer was cached)
    cached: int  # queries answered from the cache

    def stats(self) -> dict[str, int]:
        """What the lookup cost (the `lookup` part of `--json`)."""
        return {"looked_up": self.looked_up, "requests": self.requests, "cached": self.cached}

    def summary(self, offline: bool = False) -> str:
        """`arXiv lookup: 3 entries looked up (2 request(s) to arXiv, ...): 2 found, ...`."""
        looked = [e for e in self.reading.entries if e.lookup_status or e.lookup_detail]
        found = sum(e.identifier_source == "lookup" for e in looked)
        ambiguous = sum(e.status == "ambiguous" for e in looked)
        missing = sum(e.status == "not_found" for e in looked)
        asked = "offline" if offline else f"{self.requests} request(s) to arXiv"
        return (
            f"arXiv lookup: {self.looked_up} entr{'y' if self.looked_up == 1 else 'ies'} "
            f"looked up ({asked}, {self.cached} cached answer(s)): {found} found, "
            f"{ambiguous} ambiguous, {missing} not found"
        )


@dataclass
class _Plan:
    queries: dict[str, Query]
    answers: dict[str, tuple[tuple[Candidate, ...], bool]]
    requests: int = 0
    planned: int = 0


def lookup_identifiers(
    reading: BibReading,
    api: ArxivApi,
    *,
    cache: LookupCache | None = None,
    offline: bool = False,
    progress: Progress | None = None,
) -> LookupResult:
    """Look up every `no_identifier` entry of `reading` on arXiv (only in the cache when
    `offline`: nothing is sent). ArxivApiError (exit 3) when arXiv cannot be asked; the answers
    received before are cached."""
    cache = cache or LookupCache()
    api_url = api.url
    targets: list[tuple[BibEntry, Query | str]] = [
        (entry, query_for(entry.fields)) for entry in reading.entries
        if entry.status == "no_identifier"
    ]  # fmt: skip
    plan = _Plan({}, {})
    for _, query in targets:
        if isinstance(query, Query):
            plan.queries.setdefault(query.key, query)
    cached = 0
    for key in plan.queries:
        hit = cache.get(api_url, key, any_age=offline)
        if hit is not None:
            plan.answers[key] = hit
            cached += 1
    missing = [q for k, q in plan.queries.items() if k not in plan.answers]
    if missing and not offline:
        _ask(api, cache, plan, missing, progress)
    entries = {id(entry): _apply(entry, query, plan) for entry, query in targets}
    updated = [entries.get(id(entry), entry) for entry in reading.entries]
    return LookupResult(
        reading=reading.with_entries(updated),
        looked_up=sum(isinstance(q, Query) for _, q in targets),
        requests=plan.requests,
        cached=cached,
    )


def lookup_bibliography(
    reading: BibReading,
    api_url: str | None = None,
    *,
    offline: bool = False,
    progress: Progress | None = None,
) -> LookupResult:
    """`lookup_identifiers` through arXiv's API at `api_url` (default: DEFAULT_API)."""
    with ArxivApi(api_url or DEFAULT_API) as api:
        return lookup_identifiers(reading, api, offline=offline, progress=progress)


def _ask(
    api: ArxivApi, cache: LookupCache, plan: _Plan, missing: list[Query], progress: Progress | None
) -> None:
    groups = batches(missing)
    plan.planned = len(groups)
    if progress is not None:
        progress(0, plan.planned)
    retry: list[Query] = []
    for group in groups:
        feed = _search(api, plan, progress, group, RESULTS_PER_TITLE * len(group))
        for query in group:
            papers = tuple(c for c in feed.candidates if concerns(query, c))
            if feed.complete or len(group) == 1:
                _store(cache, api.url, plan, query, papers, feed.complete)
            else:  # the answer was cut: this title alone, so that no paper of it is missed
                retry.append(query)
    plan.planned += len(retry)
    for query in retry:
        feed = _search(api, plan, progress, [query], _SINGLE_RESULTS)
        papers = tuple(c for c in feed.candidates if concerns(query, c))
        _store(cache, api.url, plan, query, papers, feed.complete)


def _search(
    api: ArxivApi, plan: _Plan, progress: Progress | None, group: list[Query], results: int
) -> Feed:
    feed = api.search(search_query(group), results)
    plan.requests += 1
    if progress is not None:
        progress(plan.requests, plan.planned)
    return feed


def _store(
    cache: LookupCache,
    api_url: str,
    plan: _Plan,
    query: Query,
    papers: tuple[Candidate, ...],
    complete: bool,
) -> None:
    cache.put(api_url, query.key, papers, complete)
    plan.answers[query.key] = (papers, complete)


def _apply(entry: BibEntry, query: Query | str, plan: _Plan) -> BibEntry:
    if isinstance(query, str):
        return replace(entry, lookup_detail=query)
    answer = plan.answers.get(query.key)
    if answer is None:
        return replace(entry, lookup_detail="not looked up: no cached answer (--offline)")
    outcome = decide(query, answer[0], complete=answer[1])
    if outcome.status != "resolved":
        return replace(
            entry,
            lookup_status=outcome.status,
            lookup_detail=outcome.detail,
            lookup_choices=outcome.choices,
        )
    assert outcome.arxiv_id is not None
    return replace(
        entry,
        identifier=ArxivId.parse(outcome.arxiv_id),
        identifier_source="lookup",
        identifier_hint=None,
        lookup_status="resolved",
        lookup_detail=outcome.detail,
    )


def settle(reading: BibReading, entry: BibEntry, arxiv_id: str) -> BibReading:
    """`reading` with the `ambiguous` `entry` settled by its author as the candidate
    `arxiv_id` (one of `entry.lookup_choices`): it is then `found`, source `lookup`, like a
    certain match (signed by `pith cite`, written by `write_back`). InputError otherwise."""
    choice = next((c for c in entry.lookup_choices if c.arxiv_id == arxiv_id), None)
    if entry.status != "ambiguous" or choice is None:
        raise InputError(f"{entry.key}: {arxiv_id} is not one of its lookup candidates")
    chosen = replace(
        entry,
        identifier=ArxivId.parse(arxiv_id),
        identifier_source="lookup",
        identifier_hint=None,
        lookup_status="resolved",
        lookup_detail=f"arXiv lookup: chosen by the author among {len(entry.lookup_choices)}",
        lookup_choices=(),
    )
    return reading.with_entries(chosen if e is entry else e for e in reading.entries)


def paste_line(arxiv_id: str) -> str:
    """The fields that settle an entry by hand: `eprint = {ID}, archivePrefix = {arXiv},`."""
    return f"eprint = {{{ArxivId.parse(arxiv_id).id}}}, archivePrefix = {{arXiv}},"


def write_back(reading: BibReading | Iterable[BibEntry]) -> list[WriteBack]:
    """Add `eprint`/`archivePrefix` to every entry whose identifier came from a lookup, file by
    file (each with a backup). Files with nothing to add are not touched."""
    entries = reading.entries if isinstance(reading, BibReading) else tuple(reading)
    per_file: dict[Path, dict[str, str]] = {}
    for entry in entries:
        if entry.identifier_source == "lookup" and entry.identifier is not None:
            per_file.setdefault(entry.source_file, {})[entry.key] = str(entry.identifier)
    return [write_eprints(path, ids) for path, ids in per_file.items()]
