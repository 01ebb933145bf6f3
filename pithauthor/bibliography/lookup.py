"""`--lookup` and `--write-back`: arXiv's answers for entries without an identifier (cached on
disk), and the identifiers found written back into the .bib file, byte for byte.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import stat
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Any, Final

from pithauthor.bibliography.arxiv_api import (
    DEFAULT_API,
    RESULTS_PER_TITLE,
    ArxivApi,
    Feed,
    batches,
    search_query,
)
from pithauthor.bibliography.bibtex import field_text, prepare
from pithauthor.bibliography.identifiers import find_identifier
from pithauthor.bibliography.matching import (
    Candidate,
    Query,
    concerns,
    decide,
    query_for,
)
from pithauthor.bibliography.reading import BibEntry, BibReading
from pithauthor.errors import BibliographyError, InputError
from pithauthor.fs import MAX_BIB_BYTES, private_dir, read_user_file, replace_file
from pithauthor.latex.sources import backup_path
from pithauthor.protocol.canonical_json import parse_json
from pithauthor.protocol.ids import ArxivId

__all__ = [
    "LookupCache",
    "LookupResult",
    "WriteBack",
    "lookup_bibliography",
    "lookup_identifiers",
    "paste_line",
    "settle",
    "write_back",
]


# `--write-back`: add `eprint = {ID}` and `archivePrefix = {arXiv}` to entries, inserting bytes
# after each entry's last field (a `,` first when that field has none) and changing or removing
# no byte of the file (docs/cite.md lists the bytes inserted).
#
# The new fields follow the entry's own layout (indent, spaces around `=`, trailing comma, line
# ending). The edited text is parsed again and must give each entry its id before anything is
# written; the old file is kept as `NAME.pith-backup` (as `pith latex inject` does), and the new
# one replaces it atomically. A symbolic link is followed: its target is edited.

# bibtexparser is imported where files are parsed: it takes longer to load than Typer.

_FIELD_LINE = re.compile(r"\n([ \t]*)[A-Za-z][\w:.+-]*([ \t]*=[ \t]*)")

_INLINE_SEP = re.compile(r",([ \t]*)[A-Za-z][\w:.+-]*([ \t]*=[ \t]*)")

_BOM = b"\xef\xbb\xbf"


@dataclass(frozen=True, slots=True)
class WriteBack:
    """What was done to one file."""

    path: Path
    written: tuple[str, ...]  # keys that got their eprint
    skipped: tuple[tuple[str, str], ...]  # (key, why not)
    backup: Path | None


def _decode(data: bytes) -> tuple[str, str, int]:
    """The text as the reader decodes it, the codec that re-encodes it exactly, BOM length."""
    bom = len(_BOM) if data.startswith(_BOM) else 0
    # UTF-8, else Windows' cp1252 (its quotes and dashes are not latin-1), else latin-1, which
    # takes any byte; only ASCII is inserted, so each codec writes the new fields exactly
    for codec in ("utf-8", "cp1252", "latin-1"):
        try:
            return data[bom:].decode(codec), codec, bom
        except UnicodeDecodeError:
            continue
    raise AssertionError("latin-1 decodes every byte")  # pragma: no cover


def insertions(
    text: str, ids: Mapping[str, str]
) -> tuple[list[tuple[int, str]], list[tuple[str, str]]]:
    """(position in `text`, text to insert) per entry of `ids`, and the entries left alone.

    Entries are found in `text` as the reader reads it (`prepare`: comments blanked, ...): a
    commented-out copy of an entry is not written to (positions are the same in both)."""
    from bibtexparser.entrypoint import parse_string

    prepared = prepare(text)
    text = prepared.text
    library = parse_string(text, parse_stack=[])
    found: list[tuple[int, str]] = []
    skipped: list[tuple[str, str]] = []
    done: set[str] = set()
    position = 0
    for block in library.blocks:
        raw = block.raw or ""
        start = text.find(raw, position) if raw else -1
        if start < 0:
            continue
        position = start + len(raw)
        block = _entry(block)
        if block is None:
            continue
        key = prepared.restore(block.key)
        # a key given twice: the first entry is the one BibTeX uses ("Repeated entry")
        if key not in ids or key in done:
            continue
        done.add(key)
        names = {f.key.lower() for f in block.fields}
        if names & {"eprint", "archiveprefix", "eprinttype"}:
            skipped.append((key, "it already has an eprint field"))
            continue
        if raw[-1:] not in ("}", ")"):
            skipped.append((key, "its end could not be found"))
            continue
        body = raw[:-1]
        kept = body.rstrip()
        found.append((start + len(kept), _new_fields(raw, kept, ids[key])))
    skipped += [(key, "not found in the file") for key in ids if key not in done]
    return found, skipped


def _entry(block: Any) -> Any:
    """The entry of a block (also of one with a field given twice), or None."""
    from bibtexparser.model import DuplicateFieldKeyBlock, Entry

    if isinstance(block, DuplicateFieldKeyBlock):
        block = block.ignore_error_block
    return block if isinstance(block, Entry) else None


def _new_fields(raw: str, kept: str, arxiv_id: str) -> str:
    newline = "\r\n" if "\r\n" in raw else "\n"
    line = _FIELD_LINE.search(raw.replace("\r\n", "\n"))
    if line is not None:
        lead, sep = newline + line.group(1), line.group(2)
    else:  # one-line entry
        inline = _INLINE_SEP.search(raw)
        lead, sep = (" ", inline.group(2)) if inline else (" ", " = ")
    fields = f"eprint{sep}{{{arxiv_id}}},{lead}archivePrefix{sep}{{arXiv}}"
    if kept.endswith(","):
        return f"{lead}{fields},"
    return f",{lead}{fields}"


def write_eprints(path: Path, ids: Mapping[str, str]) -> WriteBack:
    """Add the eprint fields of `ids` (key -> arXiv id) to the .bib file at `path`."""
    data = read_user_file(path, BibliographyError, "a .bib file", limit=MAX_BIB_BYTES)
    target = Path(path).resolve()  # written through a symbolic link: the link stays
    text, codec, bom = _decode(data)
    edits, skipped = insertions(text, ids)
    if not edits:
        return WriteBack(Path(path), (), tuple(skipped), None)
    # inserted into the bytes read, not the text encoded again: every other byte stays as it was
    new = data
    for at, insert in sorted(edits, reverse=True):
        offset = bom + len(text[:at].encode(codec))
        new = new[:offset] + insert.encode("ascii") + new[offset:]
    written = [key for key in ids if key not in {k for k, _ in skipped}]
    _check(new, target, codec, bom, {key: ids[key] for key in written})
    mode = target.stat().st_mode
    if not mode & stat.S_IWUSR or not os.access(target.parent, os.W_OK | os.X_OK):
        raise BibliographyError(f"{path} is read-only; nothing was written back")
    backup = backup_path(target)
    replace_file(target, new, mode=mode, backup=backup)  # a refused write: OutputError (fs)
    return WriteBack(Path(path), tuple(written), tuple(skipped), backup)


def _check(new: bytes, target: Path, codec: str, bom: int, ids: Mapping[str, str]) -> None:
    """Parse the edited text: every written entry must now carry its id, and only those."""
    from bibtexparser.entrypoint import parse_string

    prepared = prepare(new[bom:].decode(codec))
    library = parse_string(prepared.text, parse_stack=[])
    got: dict[str, str] = {}
    for block in map(_entry, library.blocks):
        key = None if block is None else prepared.restore(block.key)
        if key is not None and key in ids and key not in got:
            fields = {
                f.key.lower(): prepared.restore(field_text(f.value, {})) for f in block.fields
            }
            identifier = find_identifier(fields).identifier
            got[key] = "" if identifier is None else str(identifier)
    wrong = [key for key, value in ids.items() if got.get(key) != value]
    if wrong:
        raise BibliographyError(
            f"{target}: adding eprint fields would not give {', '.join(wrong)} its id; "
            "the file was left unchanged"
        )


# arXiv's answers to `--lookup`, cached on disk so that a second run asks nothing.
#
# One JSON file per query under `<PITH_HOME>/cache/arxiv-lookup/` (0700), named by the SHA-256
# of the normalised query and of the API's URL; it holds the papers that concern the query.
# Answers are used for `MAX_AGE` (new papers appear on arXiv); `--offline` uses them whatever
# their age. A file that cannot be read is a miss, and is replaced; so files are written
# atomically but not fsynced (two fsyncs per answer were most of a fresh lookup's time).
#
# Find the arXiv identifier of bibliography entries that carry none, by asking arXiv's API for
# their title and authors, and accepting only certain matches (rules:
# `pithauthor.bibliography.matching`, docs/cite.md).
#
#     reading = read_bibliographies([Path("refs.bib")])
#     with ArxivApi() as api:
#         result = lookup_identifiers(reading, api)
#     result.reading            # entries resolved by lookup are `found`, source `lookup`
#     write_back(result.reading)  # add eprint/archivePrefix to the .bib files

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
    version = doc.get("version")  # absent from the files of earlier releases
    if version is not None and (not isinstance(version, int) or isinstance(version, bool)):
        raise TypeError("version")
    return Candidate(doc["arxiv_id"], doc["title"], tuple(authors), doc["year"], doi, version)


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
        (entry, query_for(entry.fields))
        for entry in reading.entries
        if entry.status == "no_identifier"
    ]
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
