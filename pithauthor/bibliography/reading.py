"""Reading an author's bibliography: one `BibEntry` per entry, with its identifier and
relationship, and the per-entry report (one row per entry, as a text table or as JSON).
The reading half of `pith cite`: no network, no signing.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

from pithauthor.bibliography.bibtex import RawEntry, RawFailure, read_files
from pithauthor.bibliography.identifiers import Identifier, find_identifier, to_unicode
from pithauthor.errors import InputError
from pithauthor.protocol.ids import ArxivId, PithNumber
from pithauthor.protocol.payloads import (
    DEFAULT_RELATIONSHIP,
    normalize_relationship,
    relationship_problem,
)
from pithauthor.protocol.text import escaped

if TYPE_CHECKING:  # a type only: `pith bib scan` without --lookup loads no matching
    from pithauthor.bibliography.matching import Choice

__all__ = [
    "STATUSES",
    "BibEntry",
    "BibReading",
    "EntryRow",
    "parse_relationship_map",
    "read_bibliographies",
    "render_table",
    "rows_as_json",
    "source_counts",
    "status_counts",
]


# The per-entry report: one row per bibliography entry, as a text table or as JSON.

#: Every status a row can have. `found` is the reading-only outcome (an identifier, nothing
#: wrong); the signer turns it into `signed`, `already_signed` (the outbox holds that very
#: citation: nothing is signed) or `unresolved`. `comment`: an entry commented
#: out with `%`, ignored (as biber does) and only reported.
STATUSES: Final[tuple[str, ...]] = (
    "found",
    "signed",
    "already_signed",
    "unresolved",
    "no_identifier",
    "ambiguous",
    "not_found",
    "invalid_identifier",
    "invalid_relationship",
    "duplicate",
    "parse_error",
    "skipped",
    "comment",
)


_COLUMNS = ("key", "file", "line", "status", "identifier", "source", "detail")


# `*` among the keys a manuscript cites (cited.py): `\nocite{*}`, every entry is cited. Here, not
# in cited.py: `pith bib scan` without --only-cited loads no manuscript reader.
ALL = "*"


_KNOWN_STATUSES = frozenset(STATUSES)  # every row is checked: one hash, not a scan of 13


@dataclass(frozen=True, slots=True, init=False)
class EntryRow:
    """What happened to one entry (or one unparsable block, whose key may be unknown)."""

    key: str | None
    file: str
    line: int | None
    status: str
    identifier: str | None = None
    detail: str = ""
    source: str | None = None  # how the identifier was found: a field name, or "lookup"

    def __init__(
        self,
        key: str | None,
        file: str,
        line: int | None,
        status: str,
        identifier: str | None = None,
        detail: str = "",
        source: str | None = None,
    ) -> None:
        """The dataclass's own __init__, but each field is stored through its slot's setter:
        the generated one of a frozen class calls `object.__setattr__` per field, which made
        building a row half the cost of a signed bibliography's per-entry bookkeeping (a row
        per entry). Setting a field afterwards still raises FrozenInstanceError."""
        if status not in _KNOWN_STATUSES:
            raise ValueError(f"unknown row status {status!r}")
        _set_key(self, key)
        _set_file(self, file)
        _set_line(self, line)
        _set_status(self, status)
        _set_identifier(self, identifier)
        _set_detail(self, detail)
        _set_source(self, source)

    def as_dict(self) -> dict[str, Any]:
        return {name: getattr(self, name) for name in _COLUMNS}


# the slots' own setters (member descriptors), in the fields' order; test_reading_report.py
# checks that the row keeps the dataclass's fields, order, defaults, equality and frozenness
(_set_key, _set_file, _set_line, _set_status, _set_identifier, _set_detail, _set_source) = (
    EntryRow.__dict__[name].__set__ for name in EntryRow.__slots__
)


def rows_as_json(rows: Iterable[EntryRow]) -> list[dict[str, Any]]:
    """The rows as JSON-ready objects with the same columns as the table."""
    return [row.as_dict() for row in rows]


def status_counts(rows: Iterable[EntryRow]) -> dict[str, int]:
    """How many rows have each status, in STATUSES order, zero counts left out."""
    counts = dict.fromkeys(STATUSES, 0)
    for row in rows:
        counts[row.status] += 1
    return {status: n for status, n in counts.items() if n}


def source_counts(rows: Iterable[EntryRow]) -> dict[str, int]:
    """How many identifiers each source gave (`eprint`, `journal`, `url`, ..., `lookup`)."""
    counts: dict[str, int] = {}
    for row in rows:
        if row.source:
            counts[row.source] = counts.get(row.source, 0) + 1
    return dict(sorted(counts.items(), key=lambda item: (-item[1], item[0])))


def render_table(rows: Sequence[EntryRow], *, max_detail: int = 80) -> str:
    """A plain aligned text table (for stderr), with a one-line summary under it."""
    header = ("KEY", "WHERE", "STATUS", "IDENTIFIER", "FROM", "DETAIL")
    body = [
        (
            escaped(row.key or "?"),  # keys, ids and details quote the .bib: not pith's text
            f"{row.file}:{row.line}" if row.line is not None else row.file,
            row.status,
            escaped(row.identifier or "-"),
            row.source or "-",
            _shorten(escaped(" ".join(row.detail.split())), max_detail),
        )
        for row in rows
    ]
    widths = [max(len(cells[i]) for cells in (header, *body)) for i in range(len(header) - 1)]
    lines = [
        "  ".join([*(c.ljust(w) for c, w in zip(cells, widths, strict=False)), cells[-1]]).rstrip()
        for cells in (header, *body)
    ]
    summary = ", ".join(f"{n} {status}" for status, n in status_counts(rows).items())
    sources = ", ".join(f"{n} {source}" for source, n in source_counts(rows).items())
    if sources:
        summary += f"; identifiers from {sources}"
    lines.append(f"{len(rows)} entries: {summary}" if rows else "0 entries")
    return "\n".join(lines)


def _shorten(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


# Read an author's bibliography: one `BibEntry` per entry, with its identifier and relationship.
#
# This is the reading half of `pith cite` (no network, no signing):
#
#     reading = read_bibliographies([Path("refs.bib")], only_cited=cited_keys(Path("main.aux")))
#     for entry in reading.to_sign(): ...  # an identifier, a valid relationship, first of its paper
#     print(render_table(reading.rows()), file=sys.stderr)
#
# Identifier rules, statuses and fields are documented in docs/cite.md.

RELATIONSHIP_FIELD = "pith-relationship"


@dataclass(frozen=True, slots=True)
class BibEntry:
    """One parsed entry. `fields` are bibtexparser's values (macros resolved, outer braces
    removed, crossref fields added) under lower-case names."""

    key: str
    entry_type: str
    source_file: Path
    line: int
    fields: Mapping[str, str]
    identifier: ArxivId | PithNumber | None
    identifier_source: str | None
    relationship: str | None
    relationship_error: str | None
    identifier_error: str | None = None
    identifier_hint: str | None = None
    duplicate_of: BibEntry | None = None
    skipped: bool = False
    notes: tuple[str, ...] = ()
    lookup_status: str | None = None  # after `--lookup`: resolved, ambiguous or not_found
    lookup_detail: str | None = None  # its evidence, candidates, or why it was not looked up
    lookup_choices: tuple[Choice, ...] = ()  # `ambiguous`: the candidates, to settle it

    @property
    def title_unicode(self) -> str:
        """The title as Unicode text, converted when asked (`to_unicode` caches it): only the
        lookup and its choices show titles, and the LaTeX of 300 titles was a fifth of reading
        them for `pith bib scan` (start-up)."""
        return to_unicode(self.fields.get("title", ""))

    @property
    def status(self) -> str:
        """The reading outcome: one of STATUSES other than signed/unresolved/parse_error."""
        if self.skipped:
            return "skipped"
        if self.identifier_error is not None:
            return "invalid_identifier"
        if self.identifier is None:
            if self.lookup_status in ("ambiguous", "not_found"):
                return self.lookup_status
            return "no_identifier"
        if self.relationship_error is not None:
            return "invalid_relationship"
        if self.duplicate_of is not None:
            return "duplicate"
        return "found"

    def row(self) -> EntryRow:
        """This entry's report row."""
        status = self.status  # a walk of the entry's fields: once per row
        detail = self._detail(status)
        if self.notes:  # most entries have none: no generator for them
            detail = "; ".join(d for d in (detail, *self.notes) if d)
        # (key, file, line, status, identifier, detail, source): by position, as below, since
        # matching seven keywords was a third of building a row (a row per entry)
        return EntryRow(
            self.key,
            str(self.source_file),
            self.line,
            status,
            None if self.identifier is None else str(self.identifier),
            detail,
            self.source,
        )

    def outcome_row(self, status: str, detail: str, identifier: str | None = None) -> EntryRow:
        """The row of this entry once the signer is done with it: its place and source, the
        signer's `status` and `detail`, and `identifier` (the resolved number) when given.
        The same as replacing those in `row()`, without building the reading's row first
        (a signed bibliography makes one per entry)."""
        if identifier is None and self.identifier is not None:
            identifier = str(self.identifier)
        return EntryRow(
            self.key, str(self.source_file), self.line, status, identifier, detail, self.source
        )

    @property
    def source(self) -> str | None:
        """How the identifier was found: the field it came from, or `lookup`."""
        if self.identifier is None or not self.identifier_source:
            return None
        return self.identifier_source.split(" ")[0]

    def _detail(self, status: str) -> str:
        if status == "skipped":
            return "not cited by the manuscript"
        if status == "invalid_identifier":
            return self.identifier_error or ""
        if status in ("ambiguous", "not_found"):
            return self.lookup_detail or ""
        if status == "no_identifier":
            return self.lookup_detail or self.identifier_hint or "no arXiv identifier"
        if status == "invalid_relationship":
            return self.relationship_error or ""
        first = self.duplicate_of
        if first is not None:
            text = f"same paper as {first.key} ({first.source_file}:{first.line})"
            if first.relationship != self.relationship:
                text += f"; its relationship {first.relationship} is used, not {self.relationship}"
            return text
        if self.identifier_source == "lookup":
            return f"{self.relationship} ({self.lookup_detail})"
        return f"{self.relationship} (from {self.identifier_source})"


@dataclass(frozen=True, slots=True)
class BibReading:
    """Everything read from the bibliography files, in file order."""

    files: tuple[Path, ...]
    entries: tuple[BibEntry, ...]
    failures: tuple[EntryRow, ...]  # parse errors and repeated keys: no BibEntry for them
    unknown_map_keys: tuple[str, ...] = ()  # --map keys no entry has
    missing_cited: tuple[str, ...] = ()  # cited keys no entry has (lower case)
    warnings: tuple[str, ...] = ()  # file-level notes, e.g. a file read as Latin-1

    def to_sign(self) -> list[BibEntry]:
        """The entries to resolve and sign: status `found`."""
        return [entry for entry in self.entries if entry.status == "found"]

    def with_entries(self, entries: Iterable[BibEntry]) -> BibReading:
        """This reading with its entries replaced (e.g. after a lookup); duplicates are marked
        again, since a looked-up identifier may name a paper another entry already names."""
        fresh = [replace(entry, duplicate_of=None) for entry in entries]
        return replace(self, entries=tuple(_mark_duplicates(fresh)))

    def rows(self) -> list[EntryRow]:
        """One row per entry and per failure, ordered by file then line."""
        order = {str(path): i for i, path in enumerate(self.files)}
        rows = [entry.row() for entry in self.entries] + list(self.failures)
        return sorted(rows, key=lambda r: (order.get(r.file, len(order)), r.line or 0))


def parse_relationship_map(items: Iterable[str]) -> dict[str, str]:
    """`KEY=RELATIONSHIP` options to a dict; InputError on a malformed or contradictory one.

    The relationship itself is checked per entry (an unknown one is that entry's error).
    """
    mapping: dict[str, str] = {}
    for item in items:
        key, sep, relationship = item.partition("=")
        key, relationship = key.strip(), relationship.strip()
        if not sep or not key or not relationship:
            raise InputError(f"--map {item!r}: expected KEY=RELATIONSHIP, e.g. smith2020=extends")
        if mapping.get(key, relationship) != relationship:
            raise InputError(
                f"--map gives {key!r} two relationships: {mapping[key]}, {relationship}"
            )
        mapping[key] = relationship
    return mapping


def read_bibliographies(
    paths: Sequence[Path],
    *,
    default_relationship: str = DEFAULT_RELATIONSHIP,
    relationship_map: Mapping[str, str] | None = None,
    only_cited: Collection[str] | None = None,
) -> BibReading:
    """Parse `paths` (in order, sharing `@string`s) and classify every entry.

    `only_cited` (e.g. from `cited_keys`) marks the other entries `skipped`; `"*"` in it keeps
    all. Raises BibliographyError (exit 2) when a file cannot be read at all, InputError when
    `default_relationship` is not one of the eight.
    """
    default = normalize_relationship(default_relationship)
    mapping = dict(relationship_map or {})
    folded_map = {key.lower(): value for key, value in mapping.items()}
    cited = None if only_cited is None or ALL in only_cited else {k.lower() for k in only_cited}
    warnings: list[str] = []
    raw_entries, raw_failures = read_files(paths, warnings)
    entries = [_entry(raw, default, mapping, folded_map, cited) for raw in raw_entries]
    entries = _mark_duplicates(entries)
    keys = {entry.key.lower() for entry in entries}
    keys |= {f.key.lower() for f in raw_failures if f.key and f.kind != "comment"}
    return BibReading(
        files=tuple(Path(p) for p in paths),
        entries=tuple(entries),
        failures=tuple(_failure_row(f, cited) for f in raw_failures),
        unknown_map_keys=tuple(k for k in mapping if k.lower() not in keys),
        missing_cited=tuple(sorted(k for k in (cited or ()) if k not in keys)),
        warnings=tuple(warnings),
    )


def _entry(
    raw: RawEntry,
    default: str,
    mapping: Mapping[str, str],
    folded_map: Mapping[str, str],
    cited: set[str] | None,
) -> BibEntry:
    own = {k: v for k, v in raw.fields.items() if k not in raw.inherited}
    found = find_identifier(own if raw.inherited else raw.fields)
    relationship = raw.fields.get(RELATIONSHIP_FIELD)
    if relationship is not None:
        relationship = to_unicode(relationship)
    elif raw.key in mapping:
        relationship = mapping[raw.key]
    else:
        relationship = folded_map.get(raw.key.lower(), default)
    problem = relationship_problem(relationship)
    if problem is None:
        relationship = relationship.strip().lower()
    return BibEntry(
        key=raw.key,
        entry_type=raw.entry_type,
        source_file=raw.file,
        line=raw.line,
        fields=raw.fields,
        identifier=found.identifier,
        identifier_source=found.source,
        relationship=relationship,
        relationship_error=problem,
        identifier_error=found.problem,
        identifier_hint=found.hint,
        skipped=cited is not None and raw.key.lower() not in cited,
        notes=tuple(raw.notes),
    )


def _paper_key(identifier: Identifier) -> tuple[str, str]:
    """Entries naming the same paper share this key (arXiv versions are ignored)."""
    if isinstance(identifier, ArxivId):
        return ("arxiv", identifier.id)
    return ("pith", identifier.body)


def _mark_duplicates(entries: list[BibEntry]) -> list[BibEntry]:
    first: dict[tuple[str, str], BibEntry] = {}
    out = []
    for entry in entries:
        if entry.status == "found" and entry.identifier is not None:
            paper = _paper_key(entry.identifier)
            if paper in first:
                entry = replace(entry, duplicate_of=first[paper])
            else:
                first[paper] = entry
        out.append(entry)
    return out


def _failure_row(failure: RawFailure, cited: set[str] | None) -> EntryRow:
    status, detail = failure.kind, failure.message
    # a repeated key the manuscript does not cite is no more a problem than its first entry,
    # which is `skipped` (a parse error stays one: its key may be misread)
    if status == "duplicate" and cited is not None and (failure.key or "").lower() not in cited:
        status, detail = "skipped", f"not cited by the manuscript; {detail}"
    return EntryRow(
        key=failure.key,
        file=str(failure.file),
        line=failure.line,
        status=status,
        detail=detail,
    )
