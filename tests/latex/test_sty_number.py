"""\\pithnumber: both spellings of a Pith Number in either case are taken; anything else stops
the build with a package error whose help shows what a Pith Number looks like."""

from __future__ import annotations

from pathlib import Path

import pytest
from support.latex.pdfcheck import info, page_text
from support.latex.texbuild import BODY, NUMBER, SHORT, build, paper

pytestmark = pytest.mark.tex("pdflatex")


@pytest.mark.parametrize("number", [NUMBER, NUMBER.lower(), "PITH:2023:" + BODY.lower()])
def test_full_number_in_any_case_is_written_upper_case(tmp_path: Path, number: str) -> None:
    result = build(paper(number), tmp_path)
    assert result.ok, result.output[-2000:]
    assert info(result.pdf)["/PithNumber"] == NUMBER
    assert SHORT in page_text(result.pdf)


@pytest.mark.parametrize("number", [BODY, BODY.lower()])
def test_bare_body_is_accepted_and_written_as_the_body(tmp_path: Path, number: str) -> None:
    result = build(paper(number), tmp_path)
    assert result.ok, result.output[-2000:]
    meta = info(result.pdf)
    assert meta["/PithNumber"] == BODY
    assert meta["/PithURL"] == "https://pith.science/pith/" + BODY


MALFORMED = [
    "pith:23:" + BODY,  # two-digit year
    "pith:1990:" + BODY,  # before arXiv began
    "pith:2023:" + BODY[:-1],  # 25 characters
    "pith:2023:" + BODY[:25] + "1",  # 1 is not base32
    "doi:2023:" + BODY,
    BODY[:8],  # a short alias
    "pith:2023" + BODY,  # missing colon
    "",
]
# Every malformed number raises pith.sty's one `malformed` error, whose help is the same text;
# `make test` reads that help on two of them (a nonstop build each, ~0.15 CPU-s), and on the
# others in `make test-all` and CI. Every one of them still halts the build there.
HELP_IN_MAKE_TEST = {"pith:23:" + BODY, ""}


@pytest.mark.parametrize("bad", MALFORMED)
def test_malformed_number_stops_with_a_package_error(tmp_path: Path, bad: str) -> None:
    halted = build(paper(bad), tmp_path)
    assert not halted.ok
    assert "Package pith Error:" in halted.log
    assert not halted.pdf.exists()


@pytest.mark.parametrize(
    "bad",
    [
        pytest.param(b, marks=[] if b in HELP_IN_MAKE_TEST else [pytest.mark.slow])
        for b in MALFORMED
    ],
)
def test_malformed_number_error_has_help_showing_a_pith_number(tmp_path: Path, bad: str) -> None:
    going_on = build(paper(bad), tmp_path, halt=False)
    assert not going_on.ok
    assert "A Pith Number looks like pith:2023:" in " ".join(going_on.log.split())


def test_pithnumber_in_the_document_body_is_refused(tmp_path: Path) -> None:
    source = paper(NUMBER).replace("Text.", f"\\pithnumber{{{NUMBER}}}")
    result = build(source, tmp_path)
    assert not result.ok
    assert "preamble" in result.log


def test_every_character_next_to_the_allowed_ranges_is_refused(tmp_path: Path) -> None:
    # the body's characters are checked by character code (A-Z, 2-7) and the year's (0-9):
    # each neighbour of a range's ends is refused, each end accepted (one nonstop build)
    body_bad = ["1", "8", "@", "[", "0", "9", "\\%", "-"]  # (a-z is upper-cased first)
    year_bad = ["/", ":", "O"]
    bad = [BODY[:25] + c for c in body_bad] + [f"pith:20{c}3:{BODY}" for c in year_bad]
    good = [BODY[:22] + "AZ27", "pith:1991:" + BODY, "pith:2099:" + BODY]
    lines = "".join(f"\\pithnumber{{{n}}}\n" for n in bad + good)
    going_on = build(paper(NUMBER, preamble=lines), tmp_path, halt=False)
    assert going_on.log.count("Package pith Error:") == len(bad), going_on.log[-3000:]
    assert going_on.pdf.exists()
    assert info(going_on.pdf)["/PithNumber"] == "pith:2099:" + BODY
