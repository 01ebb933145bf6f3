"""The default badge in the title blocks of the papers authors write most, on the
project's own manuscripts (tests/fixtures/manuscripts/, each with a minimal style of its own):
an ICML-style header built in \\twocolumn[...] without \\maketitle, a CVPR-style teaser pulled
up under the authors with a negative \\vspace (inside \\twocolumn[{...}] and in cuted's strip),
an ACL-style review-mode paper whose columns lineno numbers, a thmtools theorem paper; and a
one-column paper numbered with lineno.

Page count, warnings, the title block and the margin placement moving no word are tested for
these manuscripts with all the others in test_sty_layout.py; here: the badge is visible (no
figure drawn over it, no text on it), ICML's and ACL's columns do not move at all, a pulled-up
teaser starts below the badge, and the badge's line never takes a line number."""

from __future__ import annotations

import re
from collections import Counter
from functools import cache

import pytest
from support.latex import pdfcheck
from support.latex.layout import (
    BY_NAME,
    MANUSCRIPT_LIST,
    Manuscript,
    badge_words,
    overlaps,
    shared_builds,
    title_page,
    union,
)
from support.latex.pdfcheck import Box, drawn_rects
from support.latex.texbuild import NUMBER, Build, shared_build, without_pith

pytestmark = pytest.mark.tex("pdflatex")
pages_words = cache(pdfcheck.pages_words)
Words = list[tuple[str, Box]]
# every pdflatex cell of test_sty_layout.py (acmart-biblatex is slow there)
VISIBLE = [m for m in MANUSCRIPT_LIST if m.name != "acmart-biblatex"]


def builds_of(manuscript: Manuscript) -> dict[str, Build]:
    result = shared_builds(manuscript, "pdflatex")
    for variant, build in result.items():
        assert build.ok, f"{variant}: {build.output[-2000:]}"
    return result


def badge_box(build: Build, manuscript: Manuscript) -> tuple[int, Box]:
    pages = pages_words(build.pdf)
    index = title_page(pages, manuscript)
    found = badge_words(pages[index][1])
    assert found, "no badge on the title page"
    return index, union([box for _word, box in found])


@pytest.mark.parametrize("manuscript", VISIBLE, ids=lambda m: m.name)
def test_the_title_badge_has_no_figure_drawn_over_it_and_no_text_on_it(
    manuscript: Manuscript,
) -> None:
    build = builds_of(manuscript)["title"]
    index, badge = badge_box(build, manuscript)
    for rect in drawn_rects(build.pdf, index):
        assert not overlaps(rect, badge, clearance=0), f"a figure at {rect} covers the badge"
    own = {box for _word, box in badge_words(pages_words(build.pdf)[index][1])}
    # acmart's badge is on a line of text (its "ACM Reference Format:" heading): word boxes are
    # the fonts' bounding boxes, and those of two lines of its text overlap by 0.36 pt
    clearance = -0.5 if manuscript.acm_reference else 0
    for word, box in pages_words(build.pdf)[index][1]:
        if box not in own:
            assert not overlaps(box, badge, clearance), f"{word!r} is printed on the badge"


def moved_words(base: Words, new: Words) -> Counter[tuple[str, tuple[float, ...]]]:
    def key(words: Words) -> Counter[tuple[str, tuple[float, ...]]]:
        return Counter((w, tuple(round(v, 1) for v in b)) for w, b in words)

    return key(base) - key(new)


@pytest.mark.parametrize("name", ["icml", "acl-review"])
def test_a_title_block_with_room_keeps_every_word_below_it_in_place(name: str) -> None:
    """ICML's header ends with 0.3in, ACL's title box has stretchable space: the badge goes
    into that room, so the columns (and ACL's line numbers) stay exactly where they were."""
    manuscript = BY_NAME[name]
    builds = builds_of(manuscript)
    index, badge = badge_box(builds["title"], manuscript)
    base_pages, pages = pages_words(builds["baseline"].pdf), pages_words(builds["title"].pdf)
    assert len(pages) == len(base_pages)
    for number, ((_s, words), (_b, base)) in enumerate(zip(pages, base_pages, strict=True)):
        below = [(w, b) for w, b in base if number != index or b[1] > badge[3]]
        assert below, f"page {number + 1} has no words below the badge"
        assert moved_words(below, words) == Counter(), f"page {number + 1}"


def line_numbers(words: Words) -> dict[str, float]:
    """lineno's numbers on a page: each number (its text) and its baseline."""
    return {w: b[3] for w, b in words if re.fullmatch(r"\d{1,3}", w)}


def numbered_lines(words: Words) -> dict[str, tuple[str, ...]]:
    """Each line number with the words printed on its baseline to its right."""
    numbers = line_numbers(words)
    boxes = {w: b for w, b in words if w in numbers}
    return {
        n: tuple(
            w
            for w, b in words
            if abs(b[3] - y) < 1.0 and b[0] > boxes[n][2] and b[0] - boxes[n][2] < 40
        )[:3]
        for n, y in numbers.items()
    }


def test_acl_review_mode_gives_the_badge_no_line_number() -> None:
    manuscript = BY_NAME["acl-review"]
    builds = builds_of(manuscript)
    index, badge = badge_box(builds["title"], manuscript)
    words = pages_words(builds["title"].pdf)[index][1]
    assert line_numbers(words), "the review-mode paper has line numbers"
    on_badge_line = [w for w, b in words if abs(b[3] - badge[3]) < 3 and w.isdigit()]
    assert on_badge_line == []
    base_words = pages_words(builds["baseline"].pdf)[index][1]
    assert numbered_lines(words) == numbered_lines(base_words)


LINENO_PAPER = (
    "\\documentclass{article}\n\\usepackage{lineno}\n\\linenumbers\n"
    f"\\usepackage{{pith}}\n\\pithnumber{{{NUMBER}}}\n"
    "\\title{A Numbered Paper}\\author{A. Author}\n\\begin{document}\n\\maketitle\n"
    + "".join(
        f"Paragraph {p} of a paper whose every line carries a number, so that a referee can "
        f"point at words. It goes on for a while, so that it fills a few lines. \n\n"
        for p in range(1, 12)
    )
    + "\\end{document}\n"
)


def test_lineno_numbers_the_same_lines_with_the_badge_as_without() -> None:
    """One column, lineno: the badge after the title is no numbered line, so every number
    still stands next to the same words (the text moves down by the badge's line)."""
    new = shared_build(LINENO_PAPER)
    base = shared_build(without_pith(LINENO_PAPER))
    assert new.ok and base.ok, new.output[-2000:]
    words, base_words = pages_words(new.pdf)[0][1], pages_words(base.pdf)[0][1]
    assert len(line_numbers(base_words)) > 10
    assert numbered_lines(words) == numbered_lines(base_words)
    badge = union([b for _w, b in badge_words(words)])
    assert [w for w, b in words if abs(b[3] - badge[3]) < 3 and w.isdigit()] == []


@pytest.mark.parametrize("name", ["cvpr-teaser", "cvpr-strip"])
def test_a_teaser_after_the_authors_starts_below_the_badge(name: str) -> None:
    manuscript = BY_NAME[name]
    builds = builds_of(manuscript)
    index, badge = badge_box(builds["title"], manuscript)
    (teaser,) = drawn_rects(builds["title"].pdf, index)
    assert teaser[1] > badge[3], "the teaser's top is below the badge"
    authors = [b for w, b in pages_words(builds["title"].pdf)[index][1] if "secondauthor" in w]
    assert authors and authors[0][3] < badge[1], "the badge follows the authors"
    if name == "cvpr-teaser":
        # the negative \vspace is real: without pith the teaser reaches up to the authors,
        # so a badge below them would be covered had the teaser not moved down with it
        (base_teaser,) = drawn_rects(builds["baseline"].pdf, index)
        base_authors = [
            b for w, b in pages_words(builds["baseline"].pdf)[index][1] if "secondauthor" in w
        ]
        assert base_teaser[1] < base_authors[0][3] + 1


def test_ieeetran_conference_badge_stands_apart_from_the_last_affiliation() -> None:
    """Before: the badge sat one line under the last affiliation, like one more line of it.
    Half a line of the title block's closing space now goes above it (the block keeps its
    height): pdftotext's boxes of the lowest author line and the badge were 13.4 pt apart, now
    19.4 pt (the affiliation lines are 12.3 pt apart, baseline to baseline)."""
    manuscript = BY_NAME["ieeetran-conf"]
    build = builds_of(manuscript)["title"]
    index, badge = badge_box(build, manuscript)
    words = pages_words(build.pdf)[index][1]
    above = [b[3] for _w, b in words if badge[1] - 40 < b[3] <= badge[1] + 0.5]
    assert above, "author lines above the badge"
    assert badge[1] - max(above) > 16, f"{badge[1] - max(above):.1f} pt clear above the badge"
