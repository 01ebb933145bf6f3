"""When is an arXiv paper *certainly* a bibliography entry? The rules of `--lookup` (pure).

A candidate is certain when all three hold (docs/cite.md, "Looking identifiers up"):

- its normalised title equals the entry's: TeX markup turned into Unicode (pylatexenc),
  accents removed (NFKD), case folded, everything but letters and digits dropped;
- at least one author surname of the entry is the surname of one of its authors;
- its year (arXiv's first version) is the entry's year or the year before
  (`YEARS_BEFORE`/`YEARS_AFTER`): a preprint may precede its venue, never follow it.

When the entry has a DOI and the candidate names another one, it is not certain. Exactly one
certain paper resolves the entry; several, or only near misses, make it `ambiguous`; nothing
makes it `not_found`.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Final

from pithauthor._bib.latex_text import to_unicode

#: The arXiv year may be this many years before the entry's year ...
YEARS_BEFORE: Final = 1
#: ... and this many after it.
YEARS_AFTER: Final = 0
#: Letters NFKD does not decompose.
_FOLD = str.maketrans(
    {"ł": "l", "Ł": "L", "ø": "o", "Ø": "O", "đ": "d", "Đ": "D", "ß": "ss", "æ": "ae",
     "Æ": "AE", "œ": "oe", "Œ": "OE", "\u0131": "i", "þ": "th", "Þ": "Th", "ð": "d"}
)  # fmt: skip
_YEAR = re.compile(r"(?<![0-9])(1[89][0-9]{2}|2[0-9]{3})(?![0-9])")
_AND = re.compile(r"\s+and\s+", re.IGNORECASE)
_WORD = re.compile(r"[a-z0-9]+")
_SURNAME_WORD = re.compile(r"[a-z]+(?:[ -][a-z]+)*")
_DOI = re.compile(r"10\.[0-9]{4,9}/\S+")


def fold(text: str) -> str:
    """Unicode text without accents, case folded."""
    decomposed = unicodedata.normalize("NFKD", text.translate(_FOLD))
    return "".join(c for c in decomposed if not unicodedata.combining(c)).casefold()


@lru_cache(maxsize=16384)
def normal_title(title: str) -> str:
    """The comparison form of a title: letters and digits only, no accents, no case."""
    return "".join(c for c in fold(to_unicode(title)) if c.isalnum())


@lru_cache(maxsize=16384)
def title_words(title: str) -> tuple[str, ...]:
    """The title's ASCII words, as arXiv's search splits them (for the query phrase)."""
    return tuple(_WORD.findall(fold(to_unicode(title))))


def _split_names(authors: str) -> list[str]:
    """BibTeX's `A and B and C`, splitting only outside braces."""
    names, depth, start = [], 0, 0
    for i, char in enumerate(authors):
        if char == "{":
            depth += 1
        elif char == "}":
            depth -= 1
        elif depth == 0 and char in " \t\n" and (m := _AND.match(authors, i)) and i >= start:
            names.append(authors[start:i])
            start = m.end()
    names.append(authors[start:])
    return [n.strip() for n in names if n.strip()]


def bib_surnames(authors: str) -> list[str]:
    """Each author's surname (display form) from a BibTeX `author` field, in order.

    `Last, First` gives `Last` (with its von part); `First Last` gives the last word; a braced
    corporate name is kept whole; `others` is dropped."""
    out = []
    for name in _split_names(authors):
        if name.lower() == "others":
            continue
        depth, comma = 0, -1
        for i, char in enumerate(name):
            depth += char == "{"
            depth -= char == "}"
            if char == "," and depth == 0:
                comma = i
                break
        if comma >= 0:
            surname = name[:comma]
        elif name.startswith("{") and name.endswith("}"):
            surname = name
        else:
            surname = _last_word(name)
        text = to_unicode(surname).strip()
        if text:
            out.append(text)
    return out


def _last_word(name: str) -> str:
    depth, start = 0, 0
    for i, char in enumerate(name):
        depth += char == "{"
        depth -= char == "}"
        if char.isspace() and depth == 0:
            start = i + 1
    return name[start:]


@lru_cache(maxsize=16384)
def surname_key(surname: str) -> str:
    """A surname's comparison form (`van der Maaten` -> `vandermaaten`)."""
    return "".join(c for c in fold(surname) if c.isalnum())


def query_surname(surname: str) -> str | None:
    """The surname as an arXiv `au:` term (`del_maestro`), or None when it is not plain ASCII."""
    folded = " ".join(fold(surname).replace("-", " ").split())
    if not _SURNAME_WORD.fullmatch(folded):
        return None
    return folded.replace(" ", "_")


def entry_year(fields: Mapping[str, str]) -> int | None:
    """The entry's year, from `year` or biblatex's `date`."""
    for name in ("year", "date"):
        match = _YEAR.search(fields.get(name, ""))
        if match:
            return int(match.group(1))
    return None


def normal_doi(value: str) -> str | None:
    match = _DOI.search(value.strip().lower())
    return match.group(0).rstrip(".,;") if match else None


@dataclass(frozen=True, slots=True)
class Candidate:
    """One arXiv paper from an answer."""

    arxiv_id: str  # without version
    title: str
    authors: tuple[str, ...]
    year: int
    doi: str | None = None


@dataclass(frozen=True, slots=True)
class Query:
    """What one entry is looked up by."""

    title: str  # the normalised title
    words: tuple[str, ...]  # the query phrase
    surnames: tuple[str, ...]  # display forms
    year: int
    doi: str | None = None

    @property
    def key(self) -> str:
        """The cache key: the normalised query (what is asked, not how it is batched)."""
        asked = [s for s in (query_surname(x) for x in self.surnames[:3]) if s]
        return "v1|" + " ".join(self.words) + "|" + ",".join(asked)


def query_for(fields: Mapping[str, str]) -> Query | str:
    """The query for an entry's fields, or why the entry cannot be looked up."""
    title = fields.get("title", "")
    words = title_words(title)
    surnames = bib_surnames(fields.get("author", ""))
    year = entry_year(fields)
    missing = [
        name
        for name, ok in (("title", words), ("author", surnames), ("year", year is not None))
        if not ok
    ]
    if missing:
        return f"not looked up: no {' or '.join(missing)} to confirm a match"
    assert year is not None
    doi = normal_doi(fields.get("doi", ""))
    return Query(normal_title(title), words, tuple(surnames), year, doi)


def concerns(query: Query, candidate: Candidate) -> bool:
    """Whether an answer's paper is about this query: its title holds the query's phrase
    (how arXiv matched it) or has the same normalised title."""
    if normal_title(candidate.title) == query.title:
        return True
    words = title_words(candidate.title)
    n = len(query.words)
    return any(words[i : i + n] == query.words for i in range(len(words) - n + 1))


@dataclass(frozen=True, slots=True)
class Outcome:
    """The verdict for one entry: `resolved` (with `arxiv_id`), `ambiguous` or `not_found`."""

    status: str
    detail: str
    arxiv_id: str | None = None
    candidates: tuple[str, ...] = ()  # the arXiv ids considered, for `ambiguous`


def _shared_surname(query: Query, candidate: Candidate) -> str | None:
    keys = {surname_key(s): s for s in query.surnames if surname_key(s)}
    for name in candidate.authors:
        words = [surname_key(w) for w in to_unicode(name).split()]
        words = [w for w in words if w]
        forms = {"".join(words[i:]) for i in range(len(words))}
        if words:
            forms.add(words[0])  # family name first
        for form in forms:
            if form in keys:
                return keys[form]
    return None


def _problems(query: Query, c: Candidate) -> list[str]:
    problems = []
    if normal_title(c.title) != query.title:
        problems.append("another title")
    if _shared_surname(query, c) is None:
        problems.append("no author in common")
    if not query.year - YEARS_BEFORE <= c.year <= query.year + YEARS_AFTER:
        problems.append(f"arXiv year {c.year}, entry year {query.year}")
    if query.doi and c.doi and normal_doi(c.doi) != query.doi:
        problems.append(f"DOI {c.doi}")
    return problems


def decide(query: Query, candidates: Sequence[Candidate], *, complete: bool = True) -> Outcome:
    """Apply the rules to the candidates that concern `query`."""
    seen: dict[str, Candidate] = {}
    for c in candidates:
        if concerns(query, c):
            seen.setdefault(c.arxiv_id, c)
    certain = [c for c in seen.values() if not _problems(query, c)]
    if len(certain) == 1 and not complete:
        c = certain[0]
        return Outcome(
            "ambiguous",
            f"{c.arxiv_id} {c.title!r} fits, but arXiv listed more papers than were compared",
            candidates=(c.arxiv_id,),
        )
    if len(certain) == 1:
        c = certain[0]
        evidence = f"title, author {_shared_surname(query, c)}, arXiv {c.year}"
        if query.doi and c.doi:
            evidence += ", DOI"
        return Outcome("resolved", f"arXiv lookup: {evidence}", c.arxiv_id)
    if len(certain) > 1:
        listed = "; ".join(f"{c.arxiv_id} {c.title!r}" for c in certain[:5])
        return Outcome(
            "ambiguous",
            f"{len(certain)} arXiv papers fit: {listed}",
            candidates=tuple(c.arxiv_id for c in certain),
        )
    if seen:
        near = list(seen.values())[:5]
        listed = "; ".join(
            f"{c.arxiv_id} ({', '.join(_problems(query, c))}) {c.title!r}" for c in near
        )
        return Outcome(
            "ambiguous",
            f"not certain: {listed}",
            candidates=tuple(c.arxiv_id for c in near),
        )
    partial = "" if complete else " (arXiv listed too many titles holding it to compare all)"
    return Outcome("not_found", f"no arXiv paper with this title{partial}")
