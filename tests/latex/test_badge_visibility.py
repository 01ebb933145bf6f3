"""`inject --check` looks at the page: the badge must be visible, with no figure,
image, text or drawing painted over its box, not clipped away, and on the page. Each failing
case covers the badge on purpose: the paper is built once to find the badge's box, then a
figure (or image, text, rule) is drawn exactly there, over it, in the page's foreground; the
same paper without the cover passes."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from support.cli import RunPith, assert_one_line_error
from support.latex.arxiv import latexmk
from support.latex.inject import NUMBER, snapshot
from support.latex.pdfcheck import page_text
from support.latex.texbuild import STY, shared_folder

from pithauthor import PithNumber
from pithauthor.latex.injection import inject
from pithauthor.latex.pdf import view_badge

TEX = pytest.mark.tex("latexmk", "pdflatex")
NUMBER_OBJ = PithNumber.parse(NUMBER)
URL = NUMBER_OBJ.url()
PAPER = r"""\documentclass[10pt,twocolumn]{article}
\usepackage{graphicx}
%s
\title{Seeing Through Teasers}
\author{Ada Author\\Example University}
\begin{document}
%s
\section{Introduction}
Body text of the paper. Body text of the paper. Body text of the paper.
\end{document}
"""
# the CVPR idiom: the title block and a teaser across both columns, pulled up under the authors
TEASER = r"""\twocolumn[{%
\maketitle
\begin{center}\vspace{-1.2cm}
\includegraphics[width=0.9\linewidth,height=3.5cm]{example-image}
\end{center}}]"""
# what is drawn over the badge's box (w x h bp), by what the check must name
COVERS = {
    "a figure": r"\includegraphics[width=%(w)sbp,height=%(h)sbp]{example-image}",  # PDF: a form
    "an image": r"\includegraphics[width=%(w)sbp,height=%(h)sbp]{example-image.png}",  # bitmap
    "text": r"\makebox[%(w)sbp][l]{\normalsize Words over words over words}",
    "a drawing": r"\rule{%(w)sbp}{%(h)sbp}",
}


def write_paper(folder: Path, title_block: str = TEASER, preamble: str = "") -> Path:
    folder.mkdir()
    (folder / "paper.tex").write_text(PAPER % (preamble, title_block))
    return folder


def badge_box() -> tuple[float, float, float, float, float]:
    """Where the badge of the teaser paper lands with the shipped pith.sty: its link's
    rectangle (x0, y0, x1, y1, from the page's foot) and the page's height, in bp.

    Measured once per test session and shared across workers (`shared_folder`, keyed by the
    paper and the bytes of latex/pith*): five tests draw over the same box, and each measuring
    build is a latexmk run of two pdflatex passes (about 1 s of CPU)."""

    def measure(shared: Path) -> None:
        folder = write_paper(shared / "measure")
        inject(folder, NUMBER_OBJ)
        view = view_badge(latexmk(folder, "paper.tex"), URL)
        assert view is not None
        (shared / "box.json").write_text(json.dumps([*view.rect, view.page_height]), "utf-8")

    package = [p.read_text("utf-8") for p in sorted(STY.parent.glob("pith*"))]
    key = "\0".join(("badge box", PAPER % ("", TEASER), *package))
    x0, y0, x1, y1, height = json.loads((shared_folder(key, measure) / "box.json").read_text())
    return (x0, y0, x1, y1, height)


def cover_over(box: tuple[float, float, float, float, float], what: str) -> str:
    """A preamble line that draws `what` on page 1's foreground exactly over `box` (foreground
    coordinates run from the page's top left)."""
    x0, y0, x1, y1, height = box
    item = COVERS[what] % {"w": f"{x1 - x0:.2f}", "h": f"{y1 - y0:.2f}"}
    at = f"{x0:.2f},{-(height - y0) + (1.0 if what == 'text' else 0.0):.2f}"
    return (
        "\\AddToHook{shipout/foreground}{\\ifnum\\value{page}=1 "
        f"\\setlength{{\\unitlength}}{{1bp}}\\put({at}){{{item}}}\\fi}}"
    )


@TEX
def test_check_fails_on_a_badge_covered_on_purpose_naming_what_covers_it(
    tmp_path: Path, pith: RunPith
) -> None:
    box = badge_box()
    for what in sorted(COVERS):
        folder = write_paper(tmp_path / what.replace(" ", "-"), preamble=cover_over(box, what))
        before = snapshot(folder)
        result = pith("latex", "inject", str(folder), "--pith", NUMBER, "--offline", "--check")
        assert_one_line_error(result, 1)
        assert "the badge (page 1, at " in result.stderr
        assert f"is hidden: {what} is drawn over it" in result.stderr, what
        assert snapshot(folder) == before  # nothing written when the check fails


@TEX
def test_a_cvpr_teaser_pulled_up_under_the_title_leaves_the_badge_visible(tmp_path: Path) -> None:
    folder = write_paper(tmp_path / "paper")
    result = inject(folder, NUMBER_OBJ, check=True)
    assert result.changed and result.checked
    assert "\\pithnumber{" in (folder / "paper.tex").read_text()


@TEX
def test_a_cover_beside_the_badge_is_not_taken_for_one_over_it(
    tmp_path: Path, pith: RunPith
) -> None:
    x0, y0, x1, y1, height = badge_box()
    beside = (x0, y0 + 40, x1, y1 + 40, height)  # the same figure, 40 bp higher on the page
    folder = write_paper(tmp_path / "paper", preamble=cover_over(beside, "a figure"))
    result = pith("latex", "inject", str(folder), "--pith", NUMBER, "--offline", "--check")
    assert result.returncode == 0, result.stderr


@TEX
def test_the_margin_placement_escapes_a_figure_over_the_title_badge(
    tmp_path: Path, pith: RunPith
) -> None:
    folder = write_paper(tmp_path / "paper", preamble=cover_over(badge_box(), "a figure"))
    result = pith(
        "latex",
        "inject",
        str(folder),
        "--pith",
        NUMBER,
        "--offline",
        "--check",
        "--placement",
        "margin",
    )
    assert result.returncode == 0, result.stderr


@TEX
def test_a_title_badge_low_on_its_page_after_a_long_front_matter_passes(
    tmp_path: Path, pith: RunPith
) -> None:
    """The end of the title block is where the badge belongs, however low on the page a long
    front matter puts it (elsarticle after its highlights, AASTeX 7's abstract);
    an upper-half rule refused these."""
    folder = write_paper(tmp_path / "paper", r"\twocolumn[{\vspace*{13cm}\maketitle}]")
    result = pith("latex", "inject", str(folder), "--pith", NUMBER, "--offline", "--check")
    assert result.returncode == 0, result.stderr


@TEX
def test_check_fails_on_a_badge_that_a_clipping_path_hides(tmp_path: Path, pith: RunPith) -> None:
    """Text extraction ignores clipping; a viewer does not: the title block drawn inside a
    1 bp clip shows nothing of the badge."""
    clipped = r"\twocolumn[{\pdfliteral{q 0 0 1 1 re W n}\maketitle\pdfliteral{Q}}]"
    folder = write_paper(tmp_path / "paper", clipped)
    result = pith("latex", "inject", str(folder), "--pith", NUMBER, "--offline", "--check")
    assert_one_line_error(result, 1)
    assert "is not drawn where a reader sees it (clipped)" in result.stderr


@TEX
def test_a_covered_badge_is_still_in_the_text_layer_so_only_painting_order_tells(
    tmp_path: Path,
) -> None:
    """Why the paintings are read: text extraction finds the badge's words either way."""
    covered = write_paper(tmp_path / "covered", preamble=cover_over(badge_box(), "text"))
    inject(covered, NUMBER_OBJ)
    pdf = latexmk(covered, "paper.tex")
    assert "pith:" in page_text(pdf)
    view = view_badge(pdf, URL)
    assert view is not None and view.covered_by is not None
    assert view.covered_by.kind == "text"


@TEX
def test_arxiv_warns_when_the_badge_of_the_upload_is_hidden(tmp_path: Path, pith: RunPith) -> None:
    folder = write_paper(tmp_path / "paper", preamble=cover_over(badge_box(), "a figure"))
    inject(folder, NUMBER_OBJ)
    out = tmp_path / "paper.tar.gz"
    result = pith("latex", "arxiv", str(folder), "-o", str(out))
    assert result.returncode == 0, result.stderr  # the number and link are there: packed
    assert "warning: paper.pdf: the badge (page 1, at " in result.stderr
    assert "is hidden: a figure is drawn over it" in result.stderr
    assert out.is_file()
