"""`sign_bibliography` without an outbox signs through `sign.citation_signer`'s batch (what the
citations share checked once); with an outbox (`held`), even an empty one, every
citation takes `sign_citation`'s full checks. On any bibliography, hostile keys and
relationships included, both must give the same rows, events and `fresh` lists."""

from __future__ import annotations

import hashlib
import tempfile
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from support.examples_budget import examples
from support.registry import TestSigner

from pithauthor.bibliography.cite import plan_citations, sign_bibliography, sign_plan
from pithauthor.bibliography.reading import read_bibliographies
from pithauthor.errors import PithError
from pithauthor.protocol.checks.event import check_author_event
from pithauthor.protocol.ids import PithNumber
from pithauthor.protocol.payloads import RELATIONSHIPS
from pithauthor.protocol.subject import Subject
from pithauthor.registry.statements import Statements

STAMP = "2026-12-01T10:00:00Z"
SIGNER = TestSigner(b"\x07" * 32)


def _subject(i: int) -> Subject:
    digest = hashlib.sha256(f"cited paper {i}".encode()).hexdigest()
    return Subject(PithNumber.from_digest(digest, 2000 + i), digest, f"2101.{i:05d}", 1)


SUBJECTS = [_subject(i) for i in range(6)]

# keys with what the template escapes or refuses: quotes, backslashes, a no-break space (not
# printable: the full checks), non-ASCII, and keys past the 200 characters a citation keeps
_KEY = st.text(st.sampled_from('abcXYZ019:-_./+é"\\\u00a0\u202e'), min_size=1, max_size=8) | (
    st.integers(195, 260).map(lambda n: "k" * n)
)
_RELATIONSHIP = st.none() | st.sampled_from([*RELATIONSHIPS, "Extends", " cites", "nonsense"])
# what the entry names: the arXiv id or the number of one of SUBJECTS (several entries may name
# one paper), an id the registry does not know, or nothing
_NAMES = st.sampled_from(["arxiv", "pith", "unknown", "none"])
_ENTRY = st.tuples(_KEY, _NAMES, st.integers(0, len(SUBJECTS) - 1), _RELATIONSHIP)


def _bib(entries: list[tuple[str, str, int, str | None]]) -> str:
    out = []
    for n, (key, names, i, relationship) in enumerate(entries):
        fields = [f"title = {{Paper {n}}}"]
        if names == "arxiv":
            fields.append(f"eprint = {{{SUBJECTS[i].source_id}v2}}")
        elif names == "pith":
            fields.append(f"pith = {{{SUBJECTS[i].pith_number.full}}}")
        elif names == "unknown":
            fields.append(f"eprint = {{2102.{i:05d}}}")
        if relationship is not None:
            fields.append(f"pith-relationship = {{{relationship}}}")
        out.append(f"@misc{{{key}{n}, {', '.join(fields)}}}\n")
    return "".join(out)


def _resolved(identifiers: list[str]) -> dict[str, Subject | str]:
    by_text: dict[str, Subject | str] = {}
    for subject in SUBJECTS:
        by_text[subject.pith_number.full] = subject
        by_text[f"{subject.source_id}v2"] = subject
    return {i: by_text.get(i, "the registry has no record: not found") for i in identifiers}


def _sign(reading: Any, citing: PithNumber, citing_arxiv: str | None, held: Any) -> Any:
    resolved = _resolved([str(e.identifier) for e in reading.to_sign()])
    try:
        report = sign_bibliography(
            reading,
            citing,
            SIGNER,
            resolved,
            created_at=STAMP,
            held=held,
            citing_arxiv=citing_arxiv,
        )
    except PithError as exc:
        return (type(exc).__name__, str(exc))
    return report, [(entry.key, subject) for entry, subject in report.fresh]


@settings(max_examples=examples(60), deadline=None)
@given(
    entries=st.lists(_ENTRY, min_size=1, max_size=12),
    citing=st.sampled_from(["other", "a cited paper", "another version of one"]),
)
def test_the_batch_signs_a_bibliography_as_the_full_checks_do(
    entries: list[tuple[str, str, int, str | None]], citing: str
) -> None:
    with tempfile.TemporaryDirectory() as tmp:  # (hypothesis: no function-scoped tmp_path)
        bib = Path(tmp) / "refs.bib"
        bib.write_text(_bib(entries), encoding="utf-8")
        reading = read_bibliographies([bib])
    number, citing_arxiv = PithNumber.parse("pith:2023:NFG5PAOXQUVIWDX5F7YSYYL7EW"), None
    if citing == "a cited paper":
        number = SUBJECTS[0].pith_number
    elif citing == "another version of one":
        citing_arxiv = SUBJECTS[1].source_id
    fast = _sign(reading, number, citing_arxiv, None)
    full = _sign(reading, number, citing_arxiv, Statements([]))  # every citation is new to it
    if isinstance(fast, tuple) and isinstance(fast[0], str):
        assert fast == full
        return
    (report, asked), (expected, expected_asked) = fast, full
    assert report.rows == expected.rows
    assert report.events == expected.events and report.reused == expected.reused == []
    assert [list(e) for e in report.events] == [list(e) for e in expected.events]  # key order
    assert asked == expected_asked
    for event in report.events:
        assert [c.name for c in check_author_event(event).failed] == []


def test_the_plan_says_what_to_sign_and_a_plan_with_nothing_pending_needs_no_key() -> None:
    """`plan_citations` pends each distinct cited paper once, in entry order (what a caller
    opens its key for); `sign_plan` signs those, rows in entry order, and with nothing pending
    signs nothing without a key (`pith cite` opens none then)."""
    text = _bib([("a", "unknown", 0, None), ("b", "arxiv", 1, None), ("c", "pith", 1, None)])
    text += _bib([("d", "arxiv", 2, "extends"), ("e", "none", 0, None)])
    with tempfile.TemporaryDirectory() as tmp:
        bib = Path(tmp) / "refs.bib"
        bib.write_text(text, encoding="utf-8")
        reading = read_bibliographies([bib])
        bib.write_text(_bib([("a", "unknown", 0, None), ("e", "none", 0, None)]), "utf-8")
        nothing = read_bibliographies([bib])
    citing = PithNumber.parse("pith:2023:NFG5PAOXQUVIWDX5F7YSYYL7EW")
    plan = plan_citations(
        reading, citing, _resolved([str(e.identifier) for e in reading.to_sign()])
    )
    assert [(e.key, s) for e, s in plan.pending] == [("b1", SUBJECTS[1]), ("d0", SUBJECTS[2])]
    assert [r is None for r in plan.rows] == [False, True, False, True, False]
    with pytest.raises(ValueError, match="no signer"):  # never a report with rows unsigned
        sign_plan(plan, None)
    report = sign_plan(plan, SIGNER, created_at=STAMP)
    assert [e.key for e, _s in report.fresh] == ["b1", "d0"] and len(report.events) == 2
    assert [r.status for r in report.rows] == [
        "unresolved",
        "signed",
        "duplicate",
        "signed",
        "no_identifier",
    ]
    resolved = _resolved([str(e.identifier) for e in reading.to_sign()])
    # the scripts' call is the same plan, signed
    assert (
        report.rows == sign_bibliography(reading, citing, SIGNER, resolved, created_at=STAMP).rows
    )
    empty = plan_citations(
        nothing, citing, _resolved([str(e.identifier) for e in nothing.to_sign()])
    )
    assert empty.pending == []
    unsigned = sign_plan(empty, None)
    assert unsigned.events == [] and unsigned.fresh == []
    assert [r.status for r in unsigned.rows] == ["unresolved", "no_identifier"]
