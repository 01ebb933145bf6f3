"""A paper's author list, and whether a claimant's public name is one of them.

A claim signs the author's public name and, with `--position N`, their place in the list; both
are compared with the record's authors before anything is signed. Names are compared the way
people write them: accents and case folded ("Ádá" = "Ada"), "Lovelace, Ada" = "Ada Lovelace",
an initial stands for any given name with that letter ("A. Lovelace", "A.-M. Legendre"), and
a middle name one side leaves out is no mismatch ("Ada Lovelace" = "Ada K. Lovelace"). Given
names are compared in order ("Ada Lovelace" is not "Augusta Ada Lovelace") and the surname (the
last word) must always agree. Pure: no I/O.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass

from pithauthor.errors import InputError

# arXiv's authors field: "A. One, B. Two and C. Three (Some University)"
_AFFILIATION = re.compile(r"\([^()]*\)")
_SEPARATORS = re.compile(r"\s*,\s*|\s*;\s*|\s+and\s+|\s*&\s*", re.IGNORECASE)
_SUFFIXES = frozenset({"jr", "sr", "ii", "iii", "iv"})


def split_authors(text: str) -> tuple[str, ...]:
    """The names of an arXiv-style author list, in order (affiliations in brackets dropped)."""
    plain = text
    while _AFFILIATION.search(plain):  # nested brackets: innermost first
        plain = _AFFILIATION.sub(" ", plain)
    parts = (" ".join(p.split()) for p in _SEPARATORS.split(plain))
    return tuple(p for p in parts if p and p.casefold().strip(".") not in _SUFFIXES)


def _fold(word: str) -> str:
    """Case and accents folded: `Ádá` -> `ada`, `Łukasz` -> `lukasz`."""
    decomposed = unicodedata.normalize("NFKD", word.casefold())
    base = "".join(c for c in decomposed if not unicodedata.combining(c))
    return base.replace("ł", "l").replace("ø", "o").replace("ß", "ss").replace("đ", "d")


def name_parts(name: str) -> tuple[tuple[str, ...], str]:
    """(given names, surname), folded. `Lovelace, Ada` and `Ada Lovelace` give the same."""
    if "," in name:  # "Surname, Given" (BibTeX style)
        surname, _, given = name.partition(",")
        name = f"{given} {surname}"
    words = [_fold(w) for w in re.split(r"[\s.\-\u2010\u2011]+", name) if w.strip()]
    words = [w for w in words if w not in _SUFFIXES]
    if not words:
        return (), ""
    return tuple(words[:-1]), words[-1]


def _given_agree(a: str, b: str) -> bool:
    if len(a) == 1 or len(b) == 1:  # an initial
        return a[0] == b[0]
    return a == b


def same_person(name: str, listed: str) -> bool:
    """Whether `name` may be the author written `listed` (see the module's rules)."""
    given_a, surname_a = name_parts(name)
    given_b, surname_b = name_parts(listed)
    if not surname_a or surname_a != surname_b:
        return False
    return all(_given_agree(a, b) for a, b in zip(given_a, given_b, strict=False))


def check_own_name(name: str, public_name: str | None, *, force: bool = False) -> None:
    """A claim signs the key's public name: `name` (a `--name`) must be that name written
    another way (`same_person`), else InputError unless `force`. A key without a public name
    has nothing to compare with: refused too (fail closed)."""
    if force:
        return
    if not public_name:
        raise InputError(
            "the key has no public name to compare --name with: set it once with "
            'pith keys set --public-name "Your Name"; nothing was signed (--force signs anyway)'
        )
    if not same_person(name, public_name):
        raise InputError(
            f"--name {name!r} is not the key's public name ({public_name!r}): a claim signs "
            "your own name; nothing was signed (--force signs it anyway)"
        )


@dataclass(frozen=True)
class AuthorCheck:
    """What comparing a claimant's name with the author list found."""

    checked: bool  # False: the record lists no authors (signed with --force only)
    positions: tuple[int, ...]  # 1-based places in the list where the name matches
    note: str  # one line for the preview


def check_claimant(
    authors: tuple[str, ...], name: str, position: int | None, *, force: bool = False
) -> AuthorCheck:
    """Compare `name` (and `position`) with `authors`; InputError when they disagree or the
    record lists no authors, unless `force` (then the note says what was not checked)."""
    if not authors:  # fail closed: nothing to compare with is no match
        if not force:
            raise InputError(
                "the record lists no authors, so your name and position cannot be checked; "
                "nothing was signed (--force signs anyway)"
            )
        return AuthorCheck(False, (), "NOT CHECKED (--force): the record lists no authors")
    found = tuple(i for i, listed in enumerate(authors, 1) if same_person(name, listed))
    problem = _problem(authors, name, position, found)
    if problem is None:
        if position is None:
            first = found[0]
            note = f"none signed; the name is {first} of {len(authors)} ({authors[first - 1]})"
        else:
            note = f"{position} of {len(authors)} ({authors[position - 1]})"
        return AuthorCheck(True, found, note)
    if not force:
        raise InputError(f"{problem}; nothing was signed (--force signs anyway)")
    return AuthorCheck(True, found, f"NOT CHECKED (--force): {problem}")


def _problem(
    authors: tuple[str, ...], name: str, position: int | None, found: tuple[int, ...]
) -> str | None:
    listing = _short_list(authors)
    if not found:
        return f"{name!r} is not among the paper's authors ({listing})"
    if position is None or position in found:
        return None
    if position > len(authors):
        return f"--position {position}: the paper has {len(authors)} authors ({listing})"
    places = " or ".join(str(p) for p in found)
    return (
        f"--position {position}: author {position} is {authors[position - 1]!r}, "
        f"not {name!r} (author {places})"
    )


def _short_list(authors: tuple[str, ...], limit: int = 8) -> str:
    shown = ", ".join(authors[:limit])
    return shown if len(authors) <= limit else f"{shown}, … {len(authors)} in all"
