"""When is an arXiv paper *certainly* a bibliography entry? The rules of `--lookup` (pure).

A candidate is certain when all three hold (docs/cite.md, "Looking identifiers up"):

- its normalised title equals the entry's: TeX markup turned into Unicode (pylatexenc),
  accents removed (NFKD), case folded, everything but letters and digits dropped;
- one author of the entry and one of the candidate have the same surname, names split as
  BibTeX does (`names`: surnames are compared with surnames only, never with a given name);
- its year (arXiv's first version) is at most `YEARS_BEFORE` years before the entry's year and
  not after it: a preprint may precede its venue (journals in maths and physics take years),
  never follow it.

When the entry has a DOI and the candidate names another one, it is not certain. Exactly one
certain paper resolves the entry. Several, or only near misses, make it `ambiguous`; so does a
paper that fails the year rule alone (same title, same surname): it may be the entry's own
preprint, and then another paper that fits is the wrong one. Nothing makes it `not_found`.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from functools import lru_cache
from typing import Final

from pithauthor.bibliography.identifiers import (
    Person,
    collaborations,
    fold,
    may_share,
    name_key,
    people,
    person,
    same_person_family_first,
    shared_surname,
    to_unicode,
)

__all__ = []

#: The arXiv year may be this many years before the entry's year (a journal version in maths
#: or physics often appears two or three years after its preprint) ...
YEARS_BEFORE: Final = 3
#: ... and this many after it.
YEARS_AFTER: Final = 0
#: A phrase of fewer plain words than this is not asked for alone (see `phrase_words`); with
#: the entry's surnames in the query, `_MIN_PHRASE_WITH_AUTHORS` will do.
_MIN_PHRASE: Final = 3
_MIN_PHRASE_WITH_AUTHORS: Final = 2
_YEAR = re.compile(r"(?<![0-9])(1[89][0-9]{2}|2[0-9]{3})(?![0-9])")
_WORD = re.compile(r"[a-z0-9]+")
_UNICODE_WORD = re.compile(r"[^\W_]+")
#: Greek letters spelled out (`Ω` is `omega`): arXiv titles are plain text, and a .bib's
#: `$\Omega$` becomes `Ω`, while arXiv often writes "Omega".
_GREEK_NAMES = str.maketrans(
    {
        chr(c): unicodedata.name(chr(c)).rsplit(" ", 1)[-1].lower().replace("lamda", "lambda")
        for c in range(0x3B1, 0x3CA)  # small alpha to omega; Unicode spells lambda "LAMDA"
    }
)
_SURNAME_WORD = re.compile(r"[a-z]+(?:[ -][a-z]+)*")
_DOI = re.compile(r"10\.[0-9]{4,9}/\S+")


@lru_cache(maxsize=16384)
def normal_title(title: str) -> str:
    """The comparison form of a title: letters and digits only, no accents, no case."""
    return "".join(c for c in fold(to_unicode(title)).translate(_GREEK_NAMES) if c.isalnum())


@lru_cache(maxsize=16384)
def title_words(title: str) -> tuple[str, ...]:
    """The title's ASCII words, as arXiv's search splits them (for the query phrase)."""
    return tuple(_WORD.findall(fold(to_unicode(title)).translate(_GREEK_NAMES)))


@lru_cache(maxsize=16384)
def phrase_words(title: str, *, with_authors: bool = False) -> tuple[str, ...]:
    """The words of the title phrase sent to arXiv's search.

    arXiv often stores a title as its author typed it, TeX accents included
    (`Le lemme fondamental pour les alg\\`ebres de Lie`), and its search splits such a word
    in two: a phrase holding `algebres` would not find it. So the phrase is the longest run of
    words that are plain ASCII in the entry (spelled the same in every form), when that run has
    at least `_MIN_PHRASE` words (two when the query also names authors, `with_authors`) or
    is the whole title; otherwise all the title's words. The whole normalised title is
    compared afterwards either way."""
    runs: list[list[str]] = [[]]
    for word in _UNICODE_WORD.findall(to_unicode(title)):
        if word.isascii():
            runs[-1].extend(_WORD.findall(word.lower()))
        elif runs[-1]:
            runs.append([])
    words = title_words(title)
    best = max(runs, key=len)
    least = _MIN_PHRASE_WITH_AUTHORS if with_authors else _MIN_PHRASE
    if len(best) == len(words) or len(best) < least:
        return words
    return tuple(best)


def bib_surnames(authors: str) -> list[str]:
    """Each author's surname (display form: von part and last name) from a BibTeX `author`
    field, in order; `others` is dropped."""
    return [p.surname for p in people(authors)]


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
    version: int | None = None  # the version the answer's entry names, when it names one


@dataclass(frozen=True, slots=True)
class Query:
    """What one entry is looked up by."""

    title: str  # the normalised title
    words: tuple[str, ...]  # the query phrase
    surnames: tuple[str, ...]  # display forms
    year: int
    doi: str | None = None
    authors: tuple[Person, ...] = ()

    @property
    def key(self) -> str:
        """The cache key: the normalised query (what is asked, not how it is batched)."""
        asked = [s for s in (query_surname(x) for x in self.surnames[:3]) if s]
        # `v1|`: a change to how queries are built changes the prefix, so answers cached for
        # the old queries are never taken for the new ones
        return "v1|" + " ".join(self.words) + "|" + ",".join(asked)


#: The longest title and author list an entry is looked up with: LaTeX is decoded at about
#: 12 microseconds a character, and a .bib value may hold 200,000 (bounded work);
#: the longest real titles hold a few hundred characters, author lists of big collaborations
#: (3,000 names) about 60,000.
MAX_TITLE_CHARS: Final = 2_000
MAX_AUTHORS_CHARS: Final = 100_000


def query_for(fields: Mapping[str, str]) -> Query | str:
    """The query for an entry's fields, or why the entry cannot be looked up."""
    title = fields.get("title", "")
    if len(title) > MAX_TITLE_CHARS or len(fields.get("author", "")) > MAX_AUTHORS_CHARS:
        return "not looked up: its title or author list is too long to be a paper's"
    authors = collaborations(fields.get("collaboration", "")) + people(fields.get("author", ""))
    surnames = [p.surname for p in authors]
    asked = any(query_surname(s) for s in surnames[:3])  # the query names authors too
    words = phrase_words(title, with_authors=asked)
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
    return Query(normal_title(title), words, tuple(surnames), year, doi, tuple(authors))


def concerns(query: Query, candidate: Candidate) -> bool:
    """Whether an answer's paper is about this query: its title holds the query's phrase
    (how arXiv matched it) or has the same normalised title."""
    if normal_title(candidate.title) == query.title:
        return True
    words = title_words(candidate.title)
    n = len(query.words)
    return any(words[i : i + n] == query.words for i in range(len(words) - n + 1))


@dataclass(frozen=True, slots=True)
class Choice:
    """One candidate of an `ambiguous` entry, for the author to settle it."""

    arxiv_id: str
    title: str
    authors: tuple[str, ...]  # the first three
    year: int
    problem: str  # what keeps it from being certain ("" when it fits every rule)


@dataclass(frozen=True, slots=True)
class Outcome:
    """The verdict for one entry: `resolved` (with `arxiv_id`), `ambiguous` or `not_found`."""

    status: str
    detail: str
    arxiv_id: str | None = None
    candidates: tuple[str, ...] = ()  # the arXiv ids considered, for `ambiguous`
    choices: tuple[Choice, ...] = ()  # ... with what the author needs to choose among them


def _shared_surname(query: Query, candidate: Candidate) -> str | None:
    """The surname (display form) of an entry author who is one of the candidate's authors."""
    wholes = [(name, name_key(name)) for name in candidate.authors]
    for ours in query.authors:
        for name, whole in wholes:
            if not may_share(ours, whole):  # most names: not even split
                continue
            theirs = person(name)
            if theirs is not None and (
                shared_surname(ours, theirs) or same_person_family_first(ours, theirs)
            ):
                return ours.surname
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


def _only_the_year(problems: list[str]) -> bool:
    return len(problems) == 1 and problems[0].startswith("arXiv year")


def decide(query: Query, candidates: Sequence[Candidate], *, complete: bool = True) -> Outcome:
    """Apply the rules to the candidates that concern `query`."""
    outcome = _decide(query, candidates, complete)
    if outcome.status != "ambiguous":
        return outcome
    by_id = {c.arxiv_id: c for c in candidates}
    problems = {i: _problems(query, by_id[i]) for i in outcome.candidates}
    # The year trap (see `_decide`): the paper that fits every rule is the likely wrong one, a
    # later paper by a namesake; its line must not read as the answer. So the candidates are
    # listed oldest first (the entry's preprint before it), and its reason says why it is
    # suspect, where an unsuspected fit says it fits.
    trap = any(not p for p in problems.values()) and any(
        _only_the_year(p) for p in problems.values()
    )
    order = list(outcome.candidates)
    if trap:
        order.sort(key=lambda i: (by_id[i].year, i))
    choices = tuple(
        Choice(
            c.arxiv_id,
            c.title,
            c.authors[:3],
            c.year,
            LATER_NAMESAKE if trap and not problems[i] else ", ".join(problems[i]),
        )
        for i, c in ((i, by_id[i]) for i in order)
    )
    return replace(outcome, candidates=tuple(order), choices=choices)


#: The reason shown for a paper that fits every rule when an older one of the same title and
#: author fails only the year rule: it is more likely a namesake's later paper than the entry.
LATER_NAMESAKE = (
    "fits every rule, but an older paper has the same title and author (the entry's "
    "preprint?): likely a namesake's later paper, check before taking it"
)


def _decide(query: Query, candidates: Sequence[Candidate], complete: bool) -> Outcome:
    seen: dict[str, Candidate] = {}
    for c in candidates:
        if concerns(query, c):
            seen.setdefault(c.arxiv_id, c)
    problems = {c.arxiv_id: _problems(query, c) for c in seen.values()}
    certain = [c for c in seen.values() if not problems[c.arxiv_id]]
    year_only = [c for c in seen.values() if _only_the_year(problems[c.arxiv_id])]
    if certain and year_only:
        fits = "; ".join(f"{c.arxiv_id} {c.title!r}" for c in certain[:5])
        listed = "; ".join(
            f"{c.arxiv_id} ({problems[c.arxiv_id][0]}) {c.title!r}" for c in year_only[:5]
        )
        return Outcome(
            "ambiguous",
            f"{listed} fits except for its year (the entry's preprint?); {fits} fits every "
            "rule but is later (a namesake's paper?)",
            candidates=tuple(c.arxiv_id for c in [*year_only, *certain]),
        )
    # one fit among a partial listing is not "exactly one": a second could be in the rest
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
