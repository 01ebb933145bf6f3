"""The three records of `bibliography/bibtex.py` are written out, not made with `@dataclass`
(issue 27: start-up): each must behave as the dataclass it replaced, made here from the same
fields with `dataclasses.make_dataclass` (repr, == and hash, assignment and deletion)."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

import pytest

from pithauthor.bibliography.bibtex import CommentedEntry, RawEntry, RawFailure

NAN = float("nan")  # one object: a field equal to itself only by identity, as in a tuple

# each record: the dataclass it replaced (fields, frozen), and values to build both from
RECORDS: dict[type, tuple[list[Any], bool, list[tuple[Any, ...]]]] = {
    CommentedEntry: (
        ["entry_type", "key", "line"],
        True,
        [("article", "a", 1), ("article", "a", 2), ("book", "a", 1), ("article", "A", 1)],
    ),
    RawFailure: (
        ["kind", "file", "line", "key", "message"],
        True,
        [
            ("parse_error", Path("a.bib"), 3, "k", "bad"),
            ("parse_error", Path("a.bib"), None, None, "bad"),
            ("duplicate", Path("a.bib"), 3, "k", "bad"),
            ("parse_error", Path("b.bib"), 3, "k", "bad"),
            ("parse_error", Path("a.bib"), 3, "k", NAN),
        ],
    ),
    RawEntry: (
        [
            "key",
            "entry_type",
            "file",
            "line",
            "fields",
            ("inherited", frozenset[str], dataclasses.field(default=frozenset())),
            ("notes", list[str], dataclasses.field(default_factory=list)),
        ],
        False,
        [
            ("k", "article", Path("a.bib"), 1, {"title": "T"}),
            ("k", "article", Path("a.bib"), 1, {"title": "U"}),
            ("k", "article", Path("a.bib"), 1, {"title": "T"}, frozenset({"title"})),
            ("k", "book", Path("a.bib"), 1, {}),
            ("k", "article", Path("a.bib"), 2, {"title": NAN}),
        ],
    ),
}


def _pairs(record: type) -> list[tuple[Any, Any]]:
    """(ours, the dataclass's) for each sample of `record`."""
    fields, frozen, samples = RECORDS[record]
    reference = dataclasses.make_dataclass(record.__name__, fields, frozen=frozen, slots=True)
    return [(record(*values), reference(*values)) for values in samples]


def _outcome(action: Any) -> tuple[str, str]:
    try:
        action()
    except Exception as exc:  # the type and message must be the dataclass's
        return type(exc).__name__, str(exc)
    return "ok", ""


@pytest.mark.parametrize("record", list(RECORDS), ids=lambda r: r.__name__)
def test_a_written_out_record_behaves_as_its_dataclass(record: type) -> None:
    pairs = _pairs(record)
    names = [f if isinstance(f, str) else f[0] for f in RECORDS[record][0]]
    assert list(record.__slots__) == names  # the fields, in the dataclass's order
    for ours, theirs in pairs:
        assert repr(ours) == repr(theirs)
        assert _outcome(lambda o=ours: hash(o))[0] == _outcome(lambda t=theirs: hash(t))[0]
        if RECORDS[record][1]:
            assert hash(ours) == hash(theirs)
        assert (ours == theirs, ours != "x") == (False, True)  # another class is never equal
        for name in names:
            assert _outcome(lambda o=ours, n=name: setattr(o, n, 1)) == _outcome(
                lambda t=theirs, n=name: setattr(t, n, 1)
            )
            assert _outcome(lambda o=ours, n=name: delattr(o, n)) == _outcome(
                lambda t=theirs, n=name: delattr(t, n)
            )
        # a name that is no field: refused by both (a frozen slots dataclass of Python 3.11
        # raises TypeError there, from super() in its __setattr__; ours FrozenInstanceError)
        refused = _outcome(lambda o=ours: setattr(o, "other", 1))[0]
        assert refused == ("FrozenInstanceError" if RECORDS[record][1] else "AttributeError")
        assert _outcome(lambda t=theirs: setattr(t, "other", 1))[0] != "ok"
    fresh = _pairs(record)  # unchanged by the assignments above
    for ours_a, theirs_a in fresh:
        for ours_b, theirs_b in fresh:
            assert (ours_a == ours_b) == (theirs_a == theirs_b)
            assert (ours_a != ours_b) == (theirs_a != theirs_b)
    twins = _pairs(record)  # built anew: equal by value, not by identity
    assert all(a[0] == b[0] for a, b in zip(fresh, twins, strict=True))
