"""What a bibliography entry names: its identifier (the documented rules, in order), its
authors' names split as BibTeX does, and its LaTeX field values as Unicode text.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from functools import cache, lru_cache
from typing import Any

from pithauthor.errors import ArxivIdError, PithNumberError
from pithauthor.protocol.ids import OLD_ARCHIVES, ArxivId, PithNumber

# LaTeX field values to Unicode text, for display and matching.
#
# pylatexenc does the real work, but it costs a few hundred microseconds a call, so plain values
# (no backslash, no math, no tie) skip it: only their grouping braces are dropped. Results are
# cached, and one converter instance serves every call.
#
# Author names as BibTeX and arXiv write them, split into surname and given names (pure).
#
# bibtexparser v2's name splitter does BibTeX's work: `and` between names (not inside braces),
# the three forms `First von Last`, `von Last, First` and `von Last, Jr, First`, lower-case von
# particles, braced groups kept whole (`{Google DeepMind}`, `{de Gennes}`). This module adds what
# the two sources write that BibTeX does not know:
#
# - DBLP's homonym numbers (`Wei Wang 0001`) are not part of the name;
# - a generational suffix written after the name in `First Last` form (`John Smith Jr.`, how arXiv
#   lists it) is the `jr` part, not the surname;
# - biblatex's extended name format, as Better BibTeX writes names with particles
#   (`family=Driessche, given=George, prefix=van den, useprefix=true`), is read by its keys;
# - LaTeX in a name (`{\L}ukasz`, `Schr{\"o}dinger`) is decoded with pylatexenc (latex_text),
#   so that `Schr{\"o}dinger` and arXiv's `Schrödinger` or `Schrodinger` compare equal.
#
# Names are compared by `Person.surname_keys` only: a given name is never taken for a surname
# (`Kim Jones` is not an author surnamed Kim). `same_person_family_first` is the one exception,
# for names written family name first (`Zhang Wei` for `Zhang, Wei`): it needs the whole name to
# agree, given names spelled out in full.

# pylatexenc is imported on the first conversion: most entries need none.

_NEEDS_LATEX = frozenset("\\$~")

#: Macros common in bibliographies that pylatexenc would otherwise drop.
_EXTRA_MACROS = {
    "TeX": "TeX",
    "LaTeX": "LaTeX",
    "LaTeXe": "LaTeX2e",
    "BibTeX": "BibTeX",
    "XeTeX": "XeTeX",
    "hyphen": "-",
    "slash": "/",
}

_converter: Any = None

#: Letters NFKD does not decompose.
_FOLD = str.maketrans(
    {
        "ł": "l",
        "Ł": "L",
        "ø": "o",
        "Ø": "O",
        "đ": "d",
        "Đ": "D",
        "ß": "ss",
        "æ": "ae",
        "Æ": "AE",
        "œ": "oe",
        "Œ": "OE",
        "\u0131": "i",
        "þ": "th",
        "Þ": "Th",
        "ð": "d",
    }
)


def fold(text: str) -> str:
    """Unicode text without accents, case folded."""
    if text.isascii():  # most names and titles: nothing to decompose
        return text.lower()
    decomposed = unicodedata.normalize("NFKD", text.translate(_FOLD))
    return "".join(c for c in decomposed if not unicodedata.combining(c)).casefold()


def _latex_to_text(value: str) -> str:
    global _converter
    if _converter is None:
        from pylatexenc.latex2text import (
            LatexNodes2Text,
            MacroTextSpec,
            get_default_latex_context_db,
        )

        context = get_default_latex_context_db()  # a fresh copy: extending it is private to us
        context.add_context_category(
            "pithauthor-bib",
            prepend=True,
            macros=[MacroTextSpec(name, text) for name, text in _EXTRA_MACROS.items()],
        )
        _converter = LatexNodes2Text(latex_context=context, strict_latex_spaces=True)
    try:
        return str(_converter.latex_to_text(value))
    except Exception:  # pylatexenc raises many kinds; the brace-stripped text is the fallback
        return value.replace("{", "").replace("}", "")


@lru_cache(maxsize=16384)
def to_unicode(value: str) -> str:
    """`value` with its LaTeX markup turned into Unicode, on one line, outer spaces trimmed."""
    if _NEEDS_LATEX.isdisjoint(value):
        text = value.replace("{", "").replace("}", "") if "{" in value or "}" in value else value
    else:
        text = _latex_to_text(value)
    return " ".join(text.split())


def strip_markup(value: str) -> str:
    """A cheap version for identifier matching: braces and `\\url`/`\\href` wrappers removed."""
    if "\\" in value:
        for command in ("\\url", "\\href", "\\path", "\\nolinkurl", "\\texttt", "\\detokenize"):
            value = value.replace(command, " ")
        value = value.replace("\\_", "_").replace("\\%", "%").replace("\\#", "#")
        value = value.replace("\\&", "&").replace("\\~", "~").replace("\\/", "")
    return value.replace("{", " ").replace("}", " ")


#: DBLP appends a 4-digit number to tell homonyms apart: `Wei Wang 0001`.
_DBLP_NUMBER = re.compile(r"\s+[0-9]{4}$")

#: Suffixes that are a `jr` part when written after the name (`John Smith Jr.`).
_JR = frozenset({"jr", "jr.", "sr", "sr.", "ii", "iii", "iv", "junior", "senior"})


@cache  # compiled on first use (see _url_re): only the lookup reads names
def _extended_re() -> re.Pattern[str]:
    """biblatex's extended name format: `family=..., given=..., prefix=..., suffix=...`."""
    return re.compile(r"^\s*(?:family|given|prefix|suffix|useprefix)\s*=", re.IGNORECASE)


@dataclass(frozen=True, slots=True)
class Person:
    """One author: display surname (von + last), and the comparison forms of the name."""

    surname: str  # display form, Unicode: `van der Maaten`, `Schrödinger`
    surname_keys: frozenset[str]  # `vandermaaten`, `maaten`: what a surname is compared by
    given: tuple[str, ...]  # comparison forms of the given names, in order: ("laurens",)
    family_first: str = ""  # the first word's key, when the name was written `First Last`
    after_first: str = ""  # ... and the key of the words after it
    whole: str = ""  # the key of the whole name (a corporate name, a mononym)
    corporate: str = ""  # ... without a leading `The` and a trailing `Collaboration`


def key(text: str) -> str:
    """A name part's comparison form: Unicode, no accents, no case, letters and digits only."""
    return "".join(c for c in fold(to_unicode(text)) if c.isalnum())


def split_names(authors: str) -> list[str]:
    """BibTeX's `A and B and C` (any case of `and`, not inside braces); `others` is kept."""
    from bibtexparser.middlewares.names import split_multiple_persons_names

    return [name.strip() for name in split_multiple_persons_names(authors) if name.strip()]


@lru_cache(maxsize=65536)
def person(name: str) -> Person | None:
    """The parts of one name, in any of BibTeX's forms (or arXiv's `First Last`); None for
    `others`, an empty name or one bibtexparser cannot split."""
    from bibtexparser.middlewares.names import InvalidNameError, parse_single_name_into_parts

    name = " ".join(_DBLP_NUMBER.sub("", name.strip()).split())
    if not name or name.lower() == "others":
        return None
    if _extended_re().match(name):
        return _extended(name)
    try:
        parts = parse_single_name_into_parts(name, strict=False)
    except InvalidNameError:
        return None
    first, von, last = list(parts.first), list(parts.von), list(parts.last)
    return _person("," in name, first, von, last, bool(parts.jr))


def _extended(name: str) -> Person | None:
    """`family=Driessche, given=George, prefix=van den, useprefix=true` (biblatex)."""
    parts: dict[str, list[str]] = {}
    for item in name.split(","):
        field, _, value = item.partition("=")
        parts[field.strip().lower()] = value.strip().strip("{}").split()
    if not parts.get("family"):
        return None
    given, prefix, family = parts.get("given", []), parts.get("prefix", []), parts["family"]
    return _person(True, given, prefix, family, bool(parts.get("suffix")))


def _person(
    comma_form: bool, first: list[str], von: list[str], last: list[str], jr: bool
) -> Person | None:
    """The Person of split parts; `comma_form`: written `Last, First` (the order is known)."""
    if not comma_form and not jr and len(last) == 1 and last[0].lower() in _JR and first:
        last = [first.pop()]  # `John Smith Jr.`: BibTeX would take `Jr.` for the surname
    if not last:
        return None
    display = to_unicode(" ".join([*von, *last])).strip()
    keys = {key(" ".join([*von, *last])), key(" ".join(last))}
    # A surname of several words (`García Márquez`) may be written without a comma, so that
    # BibTeX takes all but its last word for given names: the trailing words after the first
    # given name are also surname forms. The first word never is (it is a given name).
    words = [*first, *von, *last]
    if not comma_form and len(words) > 2:
        keys |= {key(" ".join(words[i:])) for i in range(1, len(words) - 1)}
    given = tuple(k for k in (key(word) for word in first) if k)
    written_first = not comma_form and len(words) > 1
    return Person(
        display,
        frozenset(k for k in keys if k),
        given,
        key(words[0]) if written_first else "",
        key(" ".join(words[1:])) if written_first else "",
        key(" ".join(words)),
        _corporate(words),
    )


def _corporate(words: list[str]) -> str:
    """`The ATLAS Collaboration` and `{ATLAS Collaboration}` and `ATLAS` -> `atlas`."""
    keys = [k for k in (key(w) for w in " ".join(words).split()) if k]
    if keys[:1] == ["the"]:
        keys = keys[1:]
    if keys[-1:] in (["collaboration"], ["collaborations"]):
        keys = keys[:-1]
    return "".join(keys)


def collaborations(field: str) -> list[Person]:
    """INSPIRE's `collaboration = "ATLAS"` (or `"ATLAS, CMS"`) as corporate authors."""
    names = [name.strip() for name in field.replace(" and ", ",").split(",")]
    out = []
    for name in names:
        words = to_unicode(name).split()
        corporate = _corporate(words) if words else ""
        if corporate:
            surname = " ".join(words)
            out.append(Person(surname, frozenset({corporate}), (), "", "", corporate, corporate))
    return out


def people(authors: str) -> list[Person]:
    """Every person of a BibTeX `author` field, in order (`others` dropped)."""
    return [p for p in (person(name) for name in split_names(authors)) if p is not None]


@lru_cache(maxsize=65536)
def name_key(name: str) -> str:
    """The comparison form of a whole written name: every key a `person(name)` has (surname,
    family name first, whole, corporate) is a substring of it."""
    return key(_DBLP_NUMBER.sub("", name))


def may_share(ours: Person, whole: str) -> bool:
    """False when `ours` certainly shares nothing with the name whose `name_key` is `whole`:
    a cheap test before that name is split (`shared_surname`, `same_person_family_first`)."""
    if any(k in whole for k in ours.surname_keys):
        return True
    return not ours.given and (ours.whole in whole or ours.corporate in whole)


def shared_surname(ours: Person, theirs: Person) -> bool:
    """Whether two names have the same surname (compared with surnames only). A name of ours
    without given names (`{Google DeepMind}`, `{ATLAS Collaboration}`) is compared whole, and a
    collaboration's name with or without `The` and `Collaboration`."""
    if not ours.given and (ours.whole == theirs.whole or ours.corporate == theirs.corporate):
        return True
    return not ours.surname_keys.isdisjoint(theirs.surname_keys)


def same_person_family_first(ours: Person, theirs: Person) -> bool:
    """`theirs` written family name first (`Zhang Wei`, `Ngo Bao Chau`) is `ours`: its first
    word is our surname and the rest are our given names, each spelled out in full (an initial
    is not enough: `Lee J.` could be anyone)."""
    if not theirs.family_first or theirs.family_first not in ours.surname_keys:
        return False
    full = [g for g in ours.given if len(g) > 1]
    return bool(full) and len(full) == len(ours.given) and theirs.after_first == "".join(full)


# Find the identifier of one bibliography entry, trying the documented rules in order.
#
# Rules (first match wins; see docs/cite.md):
#
# 1. `pith` field: a full Pith Number or a bare 26-character body.
# 2. `eprint` with `archivePrefix`/`eprinttype` = arXiv (with `primaryClass`/`eprintclass` for
#    bare old-style numbers); an `eprint` without a prefix that is itself an arXiv id.
# 3. `doi` = 10.48550/arXiv.ID.
# 4. arxiv.org `abs`/`pdf` URLs in `url`, `eprint`, `howpublished`, `note`, ... .
# 5. DBLP's `journal = {CoRR}` with `volume = {abs/ID}` (also Semantic Scholar's
#    `journal = {ArXiv}`); "arXiv preprint arXiv:ID" style text in `journal`, `note`, ... .
# 6. Bare old-style ids (`hep-th/9901001`) in those text fields.
#
# Rules 1-3 are explicit declarations: a malformed value there is a problem for the entry, not
# a reason to guess from the other fields. Rules 4-6 are searches: a miss just moves on.

Identifier = ArxivId | PithNumber

#: Fields the rules read; crossref never copies these from a parent entry: a proceedings
#: volume's eprint or DOI names the volume, not the paper that cross-references it.
IDENTIFIER_FIELDS = frozenset(
    (
        "pith",
        "eprint",
        "archiveprefix",
        "eprinttype",
        "primaryclass",
        "eprintclass",
        "doi",
        "url",
        "arxivid",
    )
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

# An arXiv identifier is ASCII: its letters match ASCII letters only (`(?a:...)`, scoped so that
# `\s` and `\b` around it keep their Unicode meaning). Without it, `[a-z]` under IGNORECASE also
# matches the Kelvin sign and the long s (their case folds are k and s), and `re` builds a table
# of all 65,536 code points for each such class (about 0.5 ms a pattern, start-up).
_ID = r"(?a:(?:[0-9]{4}\.[0-9]{4,5}|[a-z]+(?:-[a-z]+)?(?:\.[a-z]{2})?/[0-9]{7})(?:v[0-9]+)?)"

# These are compiled on first use, not at import: most bibliographies need few of them, or none.


@cache
def _url_re() -> re.Pattern[str]:
    return re.compile(r"arxiv\.org/(?:abs|pdf)/(" + _ID + r")(?:\.pdf)?", re.IGNORECASE)


@cache
def _arxiv_text_re() -> re.Pattern[str]:
    # At most 12 separators between `arXiv` and the id ("arXiv preprint arXiv:" has 5; text
    # is searched with its white space collapsed): unbounded, each `arXiv` of a 24,000-character
    # "arXiv arXiv ..." note rescanned the rest, 4.5 s a field (bounded work).
    return re.compile(
        r"\barxiv\b(?:\s|[:,.]|preprint|e-?prints?|arxiv|abs/|no\.?|id){0,12}?(" + _ID + r")\b",
        re.IGNORECASE,
    )


@cache
def _corr_text_re() -> re.Pattern[str]:
    return re.compile(r"\bcorr\b[\s,]*(?:vol(?:ume)?\.?\s*)?abs/(" + _ID + r")\b", re.I)


@cache
def _volume_re() -> re.Pattern[str]:
    return re.compile(r"\s*(?:abs/|arxiv:\s*)?(" + _ID + r")\s*", re.IGNORECASE)


@cache
def _doi_re() -> re.Pattern[str]:
    """arXiv's DOI, with any scheme or none: `10.48550/arXiv.ID`, `doi.org/10.48550/...`."""
    return re.compile(r"\b10\.48550/arxiv\.(" + _ID + r")\b", re.IGNORECASE)


@cache
def _old_re() -> re.Pattern[str]:
    return re.compile(
        r"(?<![\w./-])((?a:[a-z]+(?:-[a-z]+)?))((?a:(?:\.[a-z]{2})?/[0-9]{7}(?:v[0-9]+)?))\b",
        re.IGNORECASE,
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
    for rule in (_pith_field, _eprint_field, _arxivid_field, _doi_field):
        found = rule(fields)
        if found is not None:
            return found
    hint: str | None = None
    for search in (_urls, _dois, _texts, _old_style):
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
        # Mendeley writes the class with the archive's name: `primaryClass = {arXiv:hep-ph}`
        archive = archive[6:] if archive.lower().startswith("arxiv:") else archive
        if archive.split(".")[0].lower() in OLD_ARCHIVES:
            value = f"{archive}/{value}"
    try:
        identifier = ArxivId.parse(value)
    except ArxivIdError as exc:
        if "arxivid" in fields:  # Mendeley's own field says it whole: `_arxivid_field`
            return None
        if prefix:
            return Found(problem=f"eprint field: {exc}")
        return None  # an unlabelled eprint that is not an arXiv id
    return Found(identifier, "eprint" if prefix else "eprint (no archivePrefix)")


def _arxivid_field(fields: Mapping[str, str]) -> Found | None:
    """Mendeley's `arxivId = {1001.1234}` (also `{hep-ph/0101001}`, `{arXiv:1001.1234}`)."""
    raw = fields.get("arxivid")
    if raw is None:
        return None
    value = _clean(raw)
    value = value[6:].strip() if value.lower().startswith("arxiv:") else value
    try:
        return Found(ArxivId.parse(value), "arxivid")
    except ArxivIdError as exc:
        return Found(problem=f"arxivId field: {exc}")


def _doi_field(fields: Mapping[str, str]) -> Found | None:
    value = fields.get("doi")
    if value is None or "10.48550/arxiv" not in value.lower():
        return None
    # with any scheme or none: `doi.org/10.48550/...`, `dx.doi.org/...`, `https://doi.org/...`
    match = _doi_re().search(_clean(value))
    try:
        return Found(ArxivId.parse(match.group(1) if match else _clean(value)), "doi")
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
            for match in _url_re().finditer(strip_markup(value)):
                yield _parse_or_hint(match.group(1), f"{name} (arxiv.org URL)")

    return _first(candidates())


def _dois(fields: Mapping[str, str]) -> Found | None:
    """arXiv's DOI in any field but `doi` (rule 3), with any scheme or none: a lab's
    `journal = {{arXiv}}, volume = {doi.org/10.48550/arXiv.2307.09288}`, a `note`, a `url`."""

    def candidates() -> Iterator[Found]:
        for name, value in fields.items():
            if name == "doi" or "10.48550" not in value:  # digits: no case to fold
                continue
            for match in _doi_re().finditer(strip_markup(value)):
                yield _parse_or_hint(match.group(1), f"{name} (arXiv DOI)")

    return _first(candidates())


def _texts(fields: Mapping[str, str]) -> Found | None:
    def candidates() -> Iterator[Found]:
        journal = fields.get("journal") or fields.get("journaltitle")
        if journal is not None and _clean(journal).lower() in PREPRINT_JOURNALS:
            for name in ("volume", "number", "pages"):
                value = fields.get(name)
                match = None if value is None else _volume_re().fullmatch(_clean(value))
                if match is not None:
                    where = f"{name} (under journal {_clean(journal)})"
                    yield _parse_or_hint(match.group(1), where)
        for name in TEXT_FIELDS:
            value = fields.get(name)
            if value is None or ("arxiv" not in value.lower() and "corr" not in value.lower()):
                continue
            text = _clean(value)
            for pattern in (_arxiv_text_re(), _corr_text_re()):
                for match in pattern.finditer(text):
                    yield _parse_or_hint(match.group(1), f"{name} (arXiv text)")

    return _first(candidates())


def _old_style(fields: Mapping[str, str]) -> Found | None:
    for name in (*TEXT_FIELDS, "eprint", "reportnumber"):
        value = fields.get(name)
        if value is None or "/" not in value:
            continue
        for match in _old_re().finditer(_clean(value)):
            if match.group(1).lower() not in OLD_ARCHIVES:
                continue
            found = _parse_or_hint(match.group(1) + match.group(2), f"{name} (old-style id)")
            if found.identifier is not None:
                return found
    return None
