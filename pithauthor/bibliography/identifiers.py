"""Find the identifier of one bibliography entry, trying the documented rules in order.

Rules (first match wins; see docs/cite.md):

1. `pith` field: a full Pith Number or a bare 26-character body.
2. `eprint` with `archivePrefix`/`eprinttype` = arXiv (with `primaryClass`/`eprintclass` for
   bare old-style numbers); an `eprint` without a prefix that is itself an arXiv id.
3. `doi` = 10.48550/arXiv.ID.
4. arxiv.org `abs`/`pdf` URLs in `url`, `eprint`, `howpublished`, `note`, ... .
5. DBLP's `journal = {CoRR}` with `volume = {abs/ID}` (also Semantic Scholar's
   `journal = {ArXiv}`); "arXiv preprint arXiv:ID" style text in `journal`, `note`, ... .
6. Bare old-style ids (`hep-th/9901001`) in those text fields.

Rules 1-3 are explicit declarations: a malformed value there is a problem for the entry, not
a reason to guess from the other fields. Rules 4-6 are searches: a miss just moves on.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass

from pithauthor.bibliography.names import strip_markup
from pithauthor.errors import ArxivIdError, PithNumberError
from pithauthor.protocol.ids import OLD_ARCHIVES, ArxivId, PithNumber

Identifier = ArxivId | PithNumber

#: Fields the rules read; crossref never copies these from a parent entry: a proceedings
#: volume's eprint or DOI names the volume, not the paper that cross-references it.
IDENTIFIER_FIELDS = frozenset(
    ("pith", "eprint", "archiveprefix", "eprinttype", "primaryclass", "eprintclass", "doi", "url")
)
#: `journal` values under which `volume`/`number` hold the id (DBLP, Semantic Scholar, ...).
PREPRINT_JOURNALS = frozenset(("corr", "arxiv", "arxiv preprint", "arxiv e-prints", "arxiv.org"))
URL_FIELDS = ("url", "eprint", "howpublished", "note", "pdf", "link", "addendum")
TEXT_FIELDS = (
    "journal",
    "journaltitle",
    "note",
    "howpublished",
    "booktitle",
    "publisher",
    "series",
    "addendum",
    "number",
)

_ID = r"(?:[0-9]{4}\.[0-9]{4,5}|[a-z]+(?:-[a-z]+)?(?:\.[a-z]{2})?/[0-9]{7})(?:v[0-9]+)?"
_URL_RE = re.compile(r"arxiv\.org/(?:abs|pdf)/(" + _ID + r")(?:\.pdf)?", re.IGNORECASE)
_ARXIV_TEXT_RE = re.compile(
    r"\barxiv\b(?:\s|[:,.]|preprint|e-?prints?|arxiv|abs/|no\.?|id)*?(" + _ID + r")\b",
    re.IGNORECASE,
)
_CORR_TEXT_RE = re.compile(r"\bcorr\b[\s,]*(?:vol(?:ume)?\.?\s*)?abs/(" + _ID + r")\b", re.I)
_VOLUME_RE = re.compile(r"\s*(?:abs/|arxiv:\s*)?(" + _ID + r")\s*", re.IGNORECASE)
_OLD_RE = re.compile(
    r"(?<![\w./-])([a-z]+(?:-[a-z]+)?)((?:\.[a-z]{2})?/[0-9]{7}(?:v[0-9]+)?)\b", re.IGNORECASE
)
_BARE_OLD_NUMBER = re.compile(r"[0-9]{7}(?:v[0-9]+)?")


@dataclass(frozen=True, slots=True)
class Found:
    """What the rules concluded for one entry."""

    identifier: Identifier | None = None
    source: str | None = None
    problem: str | None = None  # a declared identifier is malformed: an error for the entry
    hint: str | None = None  # something arXiv-like was seen but did not parse


def find_identifier(fields: Mapping[str, str]) -> Found:
    """Apply the rules in order to `fields` (lower-case names, string values)."""
    for rule in (_pith_field, _eprint_field, _doi_field):
        found = rule(fields)
        if found is not None:
            return found
    hint: str | None = None
    for search in (_urls, _texts, _old_style):
        found = search(fields)
        if found is None:
            continue
        if found.identifier is not None:
            return found
        hint = hint or found.hint
    return Found(hint=hint)


def _clean(value: str) -> str:
    return " ".join(strip_markup(value).split())


def _pith_field(fields: Mapping[str, str]) -> Found | None:
    value = fields.get("pith")
    if value is None:
        return None
    try:
        return Found(PithNumber.parse(_clean(value)), "pith")
    except PithNumberError as exc:
        return Found(problem=f"pith field: {exc}")


def _eprint_field(fields: Mapping[str, str]) -> Found | None:
    raw = fields.get("eprint")
    if raw is None:
        return None
    value = _clean(raw)
    prefix = _clean(fields.get("archiveprefix") or fields.get("eprinttype") or "").lower()
    if prefix and prefix != "arxiv":
        return None  # another archive (HAL, JSTOR, PubMed, ...): not ours
    if prefix and _BARE_OLD_NUMBER.fullmatch(value):
        archive = _clean(fields.get("primaryclass") or fields.get("eprintclass") or "")
        if archive.split(".")[0].lower() in OLD_ARCHIVES:
            value = f"{archive}/{value}"
    try:
        identifier = ArxivId.parse(value)
    except ArxivIdError as exc:
        if prefix:
            return Found(problem=f"eprint field: {exc}")
        return None  # an unlabelled eprint that is not an arXiv id
    return Found(identifier, "eprint" if prefix else "eprint (no archivePrefix)")


def _doi_field(fields: Mapping[str, str]) -> Found | None:
    value = fields.get("doi")
    if value is None or "10.48550/arxiv" not in value.lower():
        return None
    try:
        return Found(ArxivId.parse(_clean(value)), "doi")
    except ArxivIdError as exc:
        return Found(problem=f"doi field: {exc}")


def _parse_or_hint(text: str, source: str) -> Found:
    try:
        return Found(ArxivId.parse(text), source)
    except ArxivIdError as exc:
        return Found(hint=f"{source}: {exc}")


def _first(candidates: Iterator[Found]) -> Found | None:
    """The first candidate that is an identifier, else the first hint (None for neither)."""
    hint: Found | None = None
    for found in candidates:
        if found.identifier is not None:
            return found
        hint = hint or found
    return hint


def _urls(fields: Mapping[str, str]) -> Found | None:
    def candidates() -> Iterator[Found]:
        for name in URL_FIELDS:
            value = fields.get(name)
            if value is None or "arxiv.org" not in value.lower():
                continue
            for match in _URL_RE.finditer(strip_markup(value)):
                yield _parse_or_hint(match.group(1), f"{name} (arxiv.org URL)")

    return _first(candidates())


def _texts(fields: Mapping[str, str]) -> Found | None:
    def candidates() -> Iterator[Found]:
        journal = fields.get("journal") or fields.get("journaltitle")
        if journal is not None and _clean(journal).lower() in PREPRINT_JOURNALS:
            for name in ("volume", "number", "pages"):
                value = fields.get(name)
                match = None if value is None else _VOLUME_RE.fullmatch(_clean(value))
                if match is not None:
                    where = f"{name} (under journal {_clean(journal)})"
                    yield _parse_or_hint(match.group(1), where)
        for name in TEXT_FIELDS:
            value = fields.get(name)
            if value is None or ("arxiv" not in value.lower() and "corr" not in value.lower()):
                continue
            text = _clean(value)
            for pattern in (_ARXIV_TEXT_RE, _CORR_TEXT_RE):
                for match in pattern.finditer(text):
                    yield _parse_or_hint(match.group(1), f"{name} (arXiv text)")

    return _first(candidates())


def _old_style(fields: Mapping[str, str]) -> Found | None:
    for name in (*TEXT_FIELDS, "eprint", "reportnumber"):
        value = fields.get(name)
        if value is None or "/" not in value:
            continue
        for match in _OLD_RE.finditer(_clean(value)):
            if match.group(1).lower() not in OLD_ARCHIVES:
                continue
            found = _parse_or_hint(match.group(1) + match.group(2), f"{name} (old-style id)")
            if found.identifier is not None:
                return found
    return None
