"""The report rows: the text table for stderr and the JSON form."""

from __future__ import annotations

import dataclasses
import inspect
import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from support.examples_budget import examples

from pithauthor.bibliography.reading import (
    STATUSES,
    EntryRow,
    render_table,
    rows_as_json,
    status_counts,
)

ROWS = [
    EntryRow("vaswani2017", "refs.bib", 3, "found", "1706.03762", "cites (from eprint)"),
    EntryRow("broken", "refs.bib", 12, "parse_error", None, "Unexpected block start"),
    EntryRow("witten", "more/refs2.bib", 140, "duplicate", "hep-th/9802150", "same paper as x"),
    EntryRow(None, "refs.bib", None, "parse_error", None, "x" * 200),
]


def test_statuses_are_the_documented_ones() -> None:
    assert set(STATUSES) == {
        "found", "signed", "already_signed", "unresolved", "no_identifier", "invalid_identifier",
        "invalid_relationship", "duplicate", "parse_error", "skipped", "ambiguous", "not_found",
        "comment",
    }  # fmt: skip
    with pytest.raises(ValueError, match="status"):
        EntryRow("k", "f.bib", 1, "fine")


def test_table_has_a_header_one_aligned_line_per_row_and_a_summary() -> None:
    lines = render_table(ROWS).splitlines()
    assert lines[0].split() == ["KEY", "WHERE", "STATUS", "IDENTIFIER", "FROM", "DETAIL"]
    assert len(lines) == len(ROWS) + 2
    status_column = lines[0].index("STATUS")
    for line, row in zip(lines[1:-1], ROWS, strict=True):
        assert line[status_column:].startswith(row.status)
    assert "more/refs2.bib:140" in lines[3]
    assert lines[4].startswith("?  ") and "refs.bib " in lines[4]
    assert lines[-1] == "4 entries: 1 found, 1 duplicate, 2 parse_error"


def test_long_details_are_shortened_in_the_table_only() -> None:
    table = render_table(ROWS)
    assert "x" * 200 not in table and "…" in table
    assert rows_as_json(ROWS)[3]["detail"] == "x" * 200


def test_json_rows_have_the_table_columns() -> None:
    data = json.loads(json.dumps(rows_as_json(ROWS)))
    assert data[0] == {
        "key": "vaswani2017",
        "file": "refs.bib",
        "line": 3,
        "status": "found",
        "identifier": "1706.03762",
        "source": None,
        "detail": "cites (from eprint)",
    }
    assert data[3]["key"] is None and data[3]["line"] is None


def test_counts_follow_status_order_and_skip_zeros() -> None:
    counts = status_counts(ROWS)
    assert list(counts.items()) == [("found", 1), ("duplicate", 1), ("parse_error", 2)]
    assert render_table([]).endswith("0 entries")


def test_the_summary_counts_where_identifiers_came_from() -> None:
    rows = [
        EntryRow("a", "r.bib", 1, "found", "1706.03762", "cites", source="lookup"),
        EntryRow("b", "r.bib", 5, "signed", "pith:2017:X", "cites", source="eprint"),
        EntryRow("c", "r.bib", 9, "found", "1810.04805", "cites", source="lookup"),
        EntryRow("d", "r.bib", 12, "not_found", None, "no arXiv paper with this title"),
    ]
    lines = render_table(rows).splitlines()
    assert lines[1].split()[3:5] == ["1706.03762", "lookup"]
    assert lines[4].split()[3:5] == ["-", "-"]
    assert lines[-1] == (
        "4 entries: 2 found, 1 signed, 1 not_found; identifiers from 2 lookup, 1 eprint"
    )


# EntryRow stores its fields through its slots' setters, not the generated frozen __init__
# (faster: a row is made per entry): it must still be exactly the dataclass it declares.
@dataclasses.dataclass(frozen=True, slots=True)
class _Declared:
    key: str | None
    file: str
    line: int | None
    status: str
    identifier: str | None = None
    detail: str = ""
    source: str | None = None


_VALUE = st.none() | st.text(max_size=3) | st.integers(-2, 2)


@settings(max_examples=examples(200), deadline=None)
@given(
    values=st.tuples(_VALUE, _VALUE, _VALUE, st.sampled_from(STATUSES), _VALUE, _VALUE, _VALUE),
    cut=st.integers(4, 7),
    by_name=st.booleans(),
)
def test_a_row_is_the_frozen_dataclass_it_declares(
    values: tuple[Any, ...], cut: int, by_name: bool
) -> None:
    names = [f.name for f in dataclasses.fields(EntryRow)]
    assert names == [f.name for f in dataclasses.fields(_Declared)] == list(EntryRow.__slots__)
    given_ = values[:cut]  # the later fields may take their defaults
    if by_name:
        by = dict(zip(names[:cut], given_, strict=True))
        row, declared = EntryRow(**by), _Declared(**by)
    else:
        row, declared = EntryRow(*given_), _Declared(*given_)
    assert dataclasses.astuple(row) == dataclasses.astuple(declared)
    assert [getattr(row, n) for n in names] == [getattr(declared, n) for n in names]
    assert repr(row) == repr(declared).replace("_Declared", "EntryRow")
    assert row == EntryRow(*dataclasses.astuple(row)) and hash(row) == hash(declared)
    assert dataclasses.replace(row, detail="x").detail == "x"
    with pytest.raises(dataclasses.FrozenInstanceError):
        row.status = "found"  # type: ignore[misc]
    with pytest.raises(dataclasses.FrozenInstanceError):
        del row.key  # type: ignore[misc]


def test_a_row_takes_the_dataclass_signature() -> None:
    expected = inspect.signature(_Declared.__init__)
    assert inspect.signature(EntryRow.__init__).parameters.keys() == expected.parameters.keys()
    for name, parameter in inspect.signature(EntryRow.__init__).parameters.items():
        assert parameter.default == expected.parameters[name].default, name
        assert parameter.kind == expected.parameters[name].kind, name
    with pytest.raises(TypeError):
        EntryRow("k", "f.bib", 1)  # type: ignore[call-arg]
    with pytest.raises(TypeError):
        EntryRow("k", "f.bib", 1, "found", nonsense=1)  # type: ignore[call-arg]
