"""The eight relationships a citation can carry (the registry's citation form, OBSERVED).

This tuple is the one place the names live: the bibliography reader validates against it and
the citation events use it.
"""

from __future__ import annotations

from typing import Final

from pithauthor.errors import InputError

RELATIONSHIPS: Final[tuple[str, ...]] = (
    "supports",
    "refutes",
    "extends",
    "uses_method",
    "depends_on",
    "replaces",
    "compares",
    "cites",
)
DEFAULT_RELATIONSHIP: Final[str] = "cites"

_KNOWN: Final[frozenset[str]] = frozenset(RELATIONSHIPS)


def relationship_problem(text: str) -> str | None:
    """None when `text` names one of the eight (case and outer spaces ignored); else why not."""
    if text.strip().lower() in _KNOWN:
        return None
    hint = ""
    folded = "_".join(text.strip().lower().replace("-", " ").split())
    if folded in _KNOWN:
        hint = f" (did you mean {folded!r}?)"
    return f"{text!r} is not a relationship{hint}; expected one of {', '.join(RELATIONSHIPS)}"


def normalize_relationship(text: str) -> str:
    """The relationship `text` names, in its canonical spelling; InputError when none."""
    problem = relationship_problem(text)
    if problem is not None:
        raise InputError(problem)
    return text.strip().lower()
