"""The badge never breaks a paper's layout. The project's real manuscripts (acmart sigconf with
BibTeX and with biblatex, IEEEtran conference and journal, revtex4-2 two-column, elsarticle with
a graphical abstract and highlights, llncs, amsart, article) are built on pdfLaTeX, XeLaTeX and
LuaLaTeX three ways: without pith, with the default placement, with placement=margin.

Default placement: the badge is on the page that holds the title, centred in the title block
(in a two-column class, the spanning header; under PNAS's flush-left block, flush left;
acmart: at the right end of its "ACM Reference Format:" line, in a text column), below
the title; the page count is the same and the log has no warning the baseline lacks. Margin:
every word of every page is where the baseline has it, the badge is the only new text, on the
title page, clear of the baseline's text and of arXiv's stamp in the left margin. A class's own
XMP dc:identifier (acmart's DOI) survives, with the Pith Number beside it.

By default every manuscript runs on pdfLaTeX (arXiv's engine), each but acmart-biblatex
(acmart-sigconf's class): 15 cells; the other 33, XeLaTeX and LuaLaTeX included, are marked slow
(`make test-all`, run in CI). `article` on XeLaTeX and LuaLaTeX (six builds of about 0.7 CPU-s)
left `make test` to save its CPU time: there test_sty_classes.py builds `article` on both
engines (number, link, badge, no new warning) and test_sty_authorkey.py and
test_sty_options.py write metadata on them; where the badge sits on the page is
pith-placement.def's TeX, the same on every engine, and is proven on pdfLaTeX for every
manuscript. Each cell's three builds run side by side once per session (whichever pytest-xdist
worker comes first) and are shared by the four tests of that cell, as is each PDF's text read
back."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from collections import Counter
from functools import cache

import pytest
from support.latex import pdfcheck
from support.latex.layout import (
    MANUSCRIPT_LIST,
    Manuscript,
    badge_words,
    only_badge_pages,
    overlaps,
    rounded,
    shared_builds,
    title_page,
    union,
)
from support.latex.pdfcheck import info, link_rects, link_uris, log_problems, xmp_text
from support.latex.texbuild import NUMBER, URL, Build

ENGINES = ("pdflatex", "xelatex", "lualatex")
# acmart-biblatex is acmart-sigconf's class with another bibliography: slow
DEFAULT_CELLS = {(m.name, "pdflatex") for m in MANUSCRIPT_LIST if m.name != "acmart-biblatex"}
STAMP_STRIP = 72.0  # points from the left edge: arXiv's vertical stamp on page 1 lives there
CELLS = [
    pytest.param(
        m,
        e,
        marks=[pytest.mark.tex(e)] + ([] if (m.name, e) in DEFAULT_CELLS else [pytest.mark.slow]),
        id=f"{m.name}-{e}",
    )
    for m in MANUSCRIPT_LIST
    for e in ENGINES
]


@pytest.fixture
def builds(request: pytest.FixtureRequest) -> dict[str, Build]:
    params = request.node.callspec.params
    result = shared_builds(params["manuscript"], params["engine"])
    for variant, build in result.items():
        assert build.ok, f"{variant}: {build.output[-2000:]}"
    return result


pages_words = cache(pdfcheck.pages_words)  # a shared build's PDF is read back once per worker


@pytest.mark.parametrize(("manuscript", "engine"), CELLS)
def test_title_placement_puts_the_badge_in_the_title_block_of_the_title_page(
    builds: dict[str, Build], manuscript: Manuscript, engine: str
) -> None:
    base_pages, pages = pages_words(builds["baseline"].pdf), pages_words(builds["title"].pdf)
    assert len(pages) == len(base_pages)
    index = title_page(base_pages, manuscript)
    assert only_badge_pages(pages) == [index]
    (width, _height), words = pages[index]
    badge = union([box for _word, box in badge_words(words)])
    title = next(box for word, box in words if manuscript.title in word)
    assert title[3] < badge[1], "the badge sits below the title"
    if manuscript.acm_reference:  # acmart: the right end of its "ACM Reference Format:" line
        (heading,) = [box for word, box in words if word == "Reference"]
        assert abs(badge[3] - heading[3]) < 2, "on the line of the heading"
        assert heading[2] < badge[0], "after it (right-aligned in the heading's column)"
        # the badge adds no height: every word of every page is where the baseline has it
        for number, ((_s, new), (_b, base)) in enumerate(zip(pages, base_pages, strict=True)):
            own = badge_words(new) if number == index else []
            assert rounded(new) - rounded(own) == rounded(base), f"page {number + 1}"
    elif manuscript.flush_left:  # PNAS: flush left with the title, as its block is
        # (the badge's words start after its mark, about 9 pt in)
        assert 0 <= badge[0] - title[0] < 12, "flush left with the title"
    else:
        centre = (badge[0] + badge[2]) / 2
        assert abs(centre - width / 2) < 0.1 * width, "centred on the page, not in a column"
    assert URL in link_uris(builds["title"].pdf, page=index)


@pytest.mark.parametrize(("manuscript", "engine"), CELLS)
def test_title_placement_adds_no_warning_and_no_page(
    builds: dict[str, Build], manuscript: Manuscript, engine: str
) -> None:
    new = log_problems(builds["title"].log) - log_problems(builds["baseline"].log)
    assert new == set()
    assert len(pages_words(builds["title"].pdf)) == len(pages_words(builds["baseline"].pdf))


_BAD_BOX = re.compile(r"^(Underfull|Overfull) \\([hv])box", re.M)


@pytest.mark.parametrize(("manuscript", "engine"), CELLS)
def test_no_placement_adds_an_underfull_or_overfull_box(
    builds: dict[str, Build], manuscript: Manuscript, engine: str
) -> None:
    """Counted, not compared as a set as above (which holds one line per kind of message): one
    more `Underfull \\vbox ... while \\output is active` than the baseline is a new box.
    acmart's biblatex sample on pdfLaTeX: with the badge as a line in acmart's header,
    the first section went to column 2 (badness 1038); on its reference-format line, no height."""

    def count(build: Build) -> Counter[tuple[str, str]]:
        return Counter(_BAD_BOX.findall(build.log))

    base = count(builds["baseline"])
    for variant in ("title", "margin"):
        assert count(builds[variant]) - base == Counter(), variant


@pytest.mark.parametrize(("manuscript", "engine"), CELLS)
def test_margin_placement_moves_no_word_and_keeps_clear_of_text_and_arxiv_stamp(
    builds: dict[str, Build], manuscript: Manuscript, engine: str
) -> None:
    base_pages, pages = pages_words(builds["baseline"].pdf), pages_words(builds["margin"].pdf)
    assert len(pages) == len(base_pages)
    index = title_page(base_pages, manuscript)
    assert only_badge_pages(pages) == [index]
    for number, ((_s, words), (_b, base_words)) in enumerate(zip(pages, base_pages, strict=True)):
        badge = badge_words(words) if number == index else []
        assert rounded(words) - rounded(badge) == rounded(base_words), f"page {number + 1}"
        assert rounded(base_words) <= rounded(words)
    (width, height), words = pages[index]
    badge_box = union([box for _word, box in badge_words(words)])
    assert STAMP_STRIP < badge_box[0] < badge_box[2] < width
    assert 0 < badge_box[1] < badge_box[3] < height
    for word, box in base_pages[index][1]:
        assert not overlaps(badge_box, box), f"the badge touches {word!r}"
    top_down = [
        (r[0], height - r[3], r[2], height - r[1]) for r in link_rects(builds["margin"].pdf, index)
    ]
    (rect,) = [r for r in top_down if overlaps(r, badge_box)]
    assert rect[0] <= badge_box[0] and rect[2] >= badge_box[2] - 1
    assert URL in link_uris(builds["margin"].pdf, page=index)
    new = log_problems(builds["margin"].log) - log_problems(builds["baseline"].log)
    assert new == set()


_DC_IDENTIFIER = re.compile(r"<dc:identifier>(.*?)</dc:identifier>", re.S)


@pytest.mark.parametrize(("manuscript", "engine"), CELLS)
def test_class_metadata_survives_and_the_number_joins_it(
    builds: dict[str, Build], manuscript: Manuscript, engine: str
) -> None:
    base_xmp = xmp_text(builds["baseline"].pdf)
    if manuscript.name.startswith("acmart"):  # acmart declares its DOI through hyperxmp
        assert _DC_IDENTIFIER.findall(base_xmp) == ["info:doi/XXXXXXX.XXXXXXX"]
    for variant in ("title", "margin"):
        meta = info(builds[variant].pdf)
        assert meta.get("/PithNumber") == NUMBER
        assert meta.get("/PithURL") == URL
        xmp = xmp_text(builds[variant].pdf)
        if xmp:
            ET.fromstring(xmp.encode("utf-8"))  # still well-formed XML after the addition
        assert _DC_IDENTIFIER.findall(xmp) == _DC_IDENTIFIER.findall(base_xmp)
        if base_xmp:
            identifiers = re.search(r"<xmp:Identifier>(.*?)</xmp:Identifier>", xmp, re.S)
            assert identifiers is not None and NUMBER in identifiers.group(1)
