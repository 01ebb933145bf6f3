"""pith.sty in the classes authors use, on every engine arXiv runs: each build must carry
/PithNumber and /PithURL in its Info dictionary, link page 1 to the record, show the short form
on page 1, and log no error or warning that the same paper without the package does not log.

By default every class runs on pdfLaTeX (arXiv's engine) without hyperref, and `article` on
XeLaTeX and LuaLaTeX; the other cells (hyperref before and after, acmart on XeLaTeX and
LuaLaTeX, dvips) are marked slow. Builds are shared (texbuild.shared_build): the link tests
read the same `article` builds as the matrix."""

from __future__ import annotations

from pathlib import Path

import pytest
from pypdf import PdfReader
from support.latex.pdfcheck import (
    info,
    link_rects,
    link_uris,
    log_problems,
    metadata_streams,
    page_text,
    word_box,
)
from support.latex.texbuild import NUMBER, SHORT, URL, build, shared_build, template, without_pith

PDFLATEX_CLASSES = ["article", "amsart", "revtex4-2", "acmart", "IEEEtran", "llncs", "elsarticle"]
FAST = {(c, "pdflatex", "") for c in PDFLATEX_CLASSES} | {
    ("article", "xelatex", ""),
    ("article", "lualatex", ""),
}


def _cell(cls: str, engine: str, hyperref: str, *programs: str) -> object:
    marks = [pytest.mark.tex(*(programs or (engine,)))]
    if (cls, engine, hyperref) not in FAST:
        marks.append(pytest.mark.slow)
    return pytest.param(
        cls, engine, hyperref, marks=marks, id=f"{cls}-{engine}-{hyperref or 'nohyperref'}"
    )


# acmart loads hyperref itself, so its "no hyperref" build is the class's own hyperref.
MATRIX = (
    [
        _cell(c, "pdflatex", h)
        for c in PDFLATEX_CLASSES
        for h in ("", "before", "after")
        if not (c == "acmart" and h == "before")
    ]
    + [
        _cell(c, e, h)
        for c in ("article", "acmart")
        for e in ("xelatex", "lualatex")
        for h in ("", "after")
        if not (c == "acmart" and h)
    ]
    + [
        _cell(c, "dvips", h, "latex", "dvips", "ps2pdf")
        for c in ("article", "revtex4-2")
        for h in ("", "before")
    ]
)


@pytest.mark.parametrize(("cls", "engine", "hyperref"), MATRIX)
def test_template_builds_with_number_link_badge_and_no_new_warnings(
    cls: str, engine: str, hyperref: str
) -> None:
    source = template(cls, hyperref=hyperref)
    result = shared_build(source, engine)
    assert result.ok, result.output[-3000:]

    meta = info(result.pdf)
    assert meta.get("/PithNumber") == NUMBER
    assert meta.get("/PithURL") == URL
    assert URL in link_uris(result.pdf, page=0)
    assert SHORT in page_text(result.pdf, page=1)
    assert metadata_streams(result.pdf) <= 1

    baseline = shared_build(without_pith(source), engine)
    assert baseline.ok, baseline.output[-3000:]
    assert not any(p.startswith("! ") for p in log_problems(result.log))
    assert log_problems(result.log) - log_problems(baseline.log) == set()


ENGINES = {
    "pdflatex": ("pdflatex",),
    "xelatex": ("xelatex",),
    "lualatex": ("lualatex",),
    "dvips": ("latex", "dvips", "ps2pdf"),
}
# hyperref after pith on XeLaTeX and LuaLaTeX: slow (pdfLaTeX and dvips cover hyperref's links)
LINK_CELLS = [
    pytest.param(
        e,
        h,
        marks=[pytest.mark.tex(*p)] + ([pytest.mark.slow] if h and e.endswith("tex") else []),
        id=f"{e}-{h}",
    )
    for e, p in ENGINES.items()
    for h in ("", "after")
]


@pytest.mark.parametrize(("engine", "hyperref"), LINK_CELLS)
def test_link_covers_the_mark_and_the_number(engine: str, hyperref: str) -> None:
    result = shared_build(template("article", hyperref=hyperref), engine)
    assert result.ok, result.output[-2000:]
    label = word_box(result.pdf, "Pith")  # the badge's label comes first on the page
    number = word_box(result.pdf, SHORT)
    assert label is not None and number is not None
    (rect,) = link_rects(result.pdf)
    mark_and_kern = 6.0  # points: the mark is as wide as a capital letter, then a .3em kern
    assert rect[0] <= label[0] - mark_and_kern
    assert rect[2] >= number[2] - 1.0


@pytest.mark.tex("pdflatex")
def test_revtex4_preprint_title_page_carries_the_badge_inside_the_page(tmp_path: Path) -> None:
    # revtex4's preprint \maketitle leaves its page break pending, so the badge after the
    # title used to land on page 2; and revtex4 keeps \paperwidth = \paperheight = 0pt, so
    # the page-1 fallback was drawn off the page (link rectangle above the top edge).
    source = (
        "\\documentclass[preprint,aps]{revtex4}\n\\usepackage{pith}\n"
        f"\\pithnumber{{{NUMBER}}}\n\\begin{{document}}\n\\title{{T}}\\author{{A}}\n"
        "\\begin{abstract}Abstract.\\end{abstract}\n\\maketitle\n\\section{S}\nText.\n"
        "\\end{document}\n"
    )
    result = build(source, tmp_path)
    assert result.ok, result.output[-3000:]
    assert URL in link_uris(result.pdf, page=0)
    assert SHORT in page_text(result.pdf, page=1)
    assert SHORT not in page_text(result.pdf, page=2)
    box = word_box(result.pdf, SHORT)
    assert box is not None
    x0, y0, x1, y1 = box
    width, height = (float(v) for v in PdfReader(result.pdf).pages[0].mediabox[2:])
    assert 0 < x0 < x1 < width and 0 < y0 < y1 < height
    for rect in link_rects(result.pdf, page=0):
        assert 0 <= rect[0] < rect[2] <= width and 0 <= rect[1] < rect[3] <= height
