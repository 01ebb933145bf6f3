"""`inject --check` looks at the page (issue 23): the badge must be visible, with no figure,
image, text or drawing painted over its box, and (default placement) in the title block, not at
the page's foot. Each case covers the badge on purpose, the way real title blocks do (a CVPR
teaser pulled up with a negative \\vspace), and the same paper without the cover passes."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import RunPith, assert_one_line_error
from inject_helpers import NUMBER, snapshot

from pithauthor import PithNumber
from pithauthor._manuscript.visibility import view_badge
from pithauthor.latex import inject

TEX = pytest.mark.tex("latexmk", "pdflatex")
URL = PithNumber.parse(NUMBER).url()
PAPER = r"""\documentclass[10pt,twocolumn]{article}
\usepackage{graphicx}
\title{Seeing Through Teasers}
\author{Ada Author\\Example University}
\begin{document}
%s
\section{Introduction}
Body text of the paper. Body text of the paper. Body text of the paper.
\end{document}
"""
# the CVPR idiom: the title block and a teaser figure across both columns, pulled up under it
TEASER = r"""\twocolumn[{%%
\maketitle
\begin{center}\vspace{%s}
\includegraphics[width=0.9\linewidth,height=3.5cm]{example-image%s}
\end{center}}]"""
COVERS = {
    "a figure": TEASER % ("-1.6cm", ""),  # a PDF figure: a form XObject
    "an image": TEASER % ("-1.6cm", ".png"),  # a bitmap: an image XObject
    "text": r"\twocolumn[{\maketitle\vspace{-1.45cm}\centering Words written where the badge"
    r" is, words written where the badge is.\par}]",
    "a drawing": r"\twocolumn[{\maketitle\vspace{-0.7cm}\centering\rule{6cm}{0.6cm}\par}]",
}


def write_paper(folder: Path, title_block: str) -> Path:
    folder.mkdir()
    (folder / "paper.tex").write_text(PAPER % title_block)
    return folder


@TEX
@pytest.mark.parametrize("what", sorted(COVERS))
def test_check_fails_on_a_badge_covered_on_purpose_naming_what_covers_it(
    what: str, tmp_path: Path, pith: RunPith
) -> None:
    folder = write_paper(tmp_path / "paper", COVERS[what])
    before = snapshot(folder)
    result = pith("latex", "inject", str(folder), "--pith", NUMBER, "--check")
    assert_one_line_error(result, 1)
    assert f"the badge (page 1, at " in result.stderr
    assert f"is hidden: {what} is drawn over it" in result.stderr
    assert snapshot(folder) == before  # nothing written when the check fails


@TEX
def test_the_same_teaser_below_the_badge_passes_and_the_badge_is_written(tmp_path: Path) -> None:
    folder = write_paper(tmp_path / "paper", TEASER % ("0cm", ""))
    result = inject(folder, PithNumber.parse(NUMBER), check=True)
    assert result.changed and result.checked
    assert "\\pithnumber{" in (folder / "paper.tex").read_text()


@TEX
def test_the_margin_placement_escapes_a_teaser_that_covers_the_title_badge(
    tmp_path: Path, pith: RunPith
) -> None:
    folder = write_paper(tmp_path / "paper", COVERS["a figure"])
    result = pith(
        "latex", "inject", str(folder), "--pith", NUMBER, "--check", "--placement", "margin"
    )
    assert result.returncode == 0, result.stderr


@TEX
def test_check_fails_on_a_title_badge_in_the_lower_half_of_the_page(
    tmp_path: Path, pith: RunPith
) -> None:
    folder = write_paper(tmp_path / "paper", r"\twocolumn[{\vspace*{13cm}\maketitle}]")
    result = pith("latex", "inject", str(folder), "--pith", NUMBER, "--check")
    assert_one_line_error(result, 1)
    assert "the badge is not in the title block (page 1" in result.stderr
    assert "in the lower half of the page); use --placement margin" in result.stderr


@TEX
def test_the_covering_figure_is_found_where_text_extraction_still_sees_the_badge(
    tmp_path: Path,
) -> None:
    """The reason for reading the paintings: the badge's words are in the text layer either
    way, so only the painting order tells a hidden badge from a visible one."""
    from arxiv_helpers import latexmk
    from pdfcheck import page_text

    covered = write_paper(tmp_path / "covered", COVERS["a figure"])
    visible = write_paper(tmp_path / "visible", TEASER % ("0cm", ""))
    views = {}
    for folder in (covered, visible):
        inject(folder, PithNumber.parse(NUMBER))
        pdf = latexmk(folder, "paper.tex")
        assert "pith:" in page_text(pdf)
        views[folder.name] = view_badge(pdf, URL)
    assert views["covered"] is not None and views["covered"].covered_by is not None
    assert views["covered"].covered_by.kind == "figure"
    assert views["visible"] is not None and views["visible"].covered_by is None
