"""The per-entry report: one row per bibliography entry, as a text table or as JSON."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any, Final

from pithauthor._core.text import escaped

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


@dataclass(frozen=True, slots=True)
class EntryRow:
    """What happened to one entry (or one unparsable block, whose key may be unknown)."""

    key: str | None
    file: str
    line: int | None
    status: str
    identifier: str | None = None
    detail: str = ""
    source: str | None = None  # how the identifier was found: a field name, or "lookup"

    def __post_init__(self) -> None:
        if self.status not in STATUSES:
            raise ValueError(f"unknown row status {self.status!r}")

    def as_dict(self) -> dict[str, Any]:
        return {name: getattr(self, name) for name in _COLUMNS}


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
