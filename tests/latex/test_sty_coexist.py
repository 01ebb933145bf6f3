"""pith.sty beside the packages theory papers load with hyperref: thmtools and thm-restate
(which patch kvsetkeys' default processor), cleveref and autonum (which patch \\label and
hyperref's anchors), hyperxmp (which rewrites hyperref's metadata), xkeyval (which replaces
keyval's \\setkeys). pith is loaded before them, as `pith latex inject` does it (after
hyperref), in both placements. Each build must succeed, carry /PithNumber, /PithURL and the link
on page 1, print the badge, and add no warning to the same paper without pith."""

from __future__ import annotations

import pytest
from support.latex.pdfcheck import info, link_uris, log_problems, page_text, xmp_text
from support.latex.texbuild import NUMBER, SHORT, URL, shared_build

pytestmark = pytest.mark.tex("pdflatex")

# the package line(s) and a use of each, so that what it patches is exercised
PACKAGES = {
    "thmtools": (
        "\\usepackage{amsthm}\\usepackage{thmtools}\n\\declaretheorem{theorem}\n",
        "\\begin{theorem}[Name]\\label{t}A theorem.\\end{theorem}\n",
    ),
    "thm-restate": (
        "\\usepackage{amsthm}\\usepackage{thm-restate}\n\\declaretheorem{theorem}\n",
        "\\begin{restatable}{theorem}{first}\\label{t}A theorem.\\end{restatable}\n\\first*\n",
    ),
    "cleveref": (
        "\\usepackage{amsmath}\\usepackage{cleveref}\n",
        "\\begin{equation}\\label{e}x=1\\end{equation}See \\cref{e}.\n",
    ),
    "autonum": (
        "\\usepackage{amsmath}\\usepackage{autonum}\n",
        "\\begin{equation}\\label{e}x=1\\end{equation}See \\eqref{e}.\n",
    ),
    "hyperxmp": (
        "\\usepackage{hyperxmp}\n\\hypersetup{pdfauthor={A. Author},pdfcopyright={CC-BY}}\n",
        "",
    ),
    "xkeyval": (
        "\\usepackage{xkeyval}\n\\hypersetup{pdftitle={A title}}\n",
        "",
    ),
}


def paper(package: str, placement: str | None) -> str:
    """A small titled paper with hyperref, pith (unless `placement` is None) and `package`."""
    preamble, body = PACKAGES[package]
    pith = ""
    if placement is not None:
        option = "" if placement == "title" else f"[placement={placement}]"
        pith = f"\\usepackage{option}{{pith}}\n\\pithnumber{{{NUMBER}}}\n"
    return (
        "\\documentclass{article}\n\\usepackage{hyperref}\n"
        + pith
        + preamble
        + "\\title{Coexistence}\\author{A. Author}\n\\begin{document}\n\\maketitle\n"
        + body
        + "Text.\n\\end{document}\n"
    )


def test_the_four_line_thmtools_repro_builds() -> None:
    source = (
        "\\documentclass{article}\n\\usepackage{hyperref}\\usepackage{pith}"
        f"\\pithnumber{{{NUMBER}}}\\usepackage{{thmtools}}\n\\begin{{document}}x\\end{{document}}\n"
    )
    result = shared_build(source)
    assert result.ok, result.output[-2000:]
    assert info(result.pdf)["/PithNumber"] == NUMBER


# What these packages patch (keyval's processor, \label, hyperref's anchors and metadata) is
# the same whichever placement pith draws in; the placement only moves the same badge and link
# from the title block to page 1's margin (test_sty_layout.py proves both on every default class).
# So `make test` builds every package with the title placement and one with the margin, cleveref
# (it patches \label and hyperref's anchors, what a link in the margin is closest to); the other
# five margin builds (2 pdfLaTeX runs each, ~0.7 CPU-s) run in `make test-all` and CI.
MARGIN_IN_MAKE_TEST = {"cleveref"}
# Two packages patch what another of the six patches the same way: thm-restate is thmtools' own
# (the same kvsetkeys processor), autonum patches \label and the anchors as cleveref does. Their
# title builds (with their baselines: four pdfLaTeX runs, ~1.4 CPU-s each) run in `make test-all`
# and CI; `make test` keeps thmtools, cleveref, hyperxmp and xkeyval.
TITLE_SLOW = {"thm-restate", "autonum"}
CELLS = [
    pytest.param(
        package,
        placement,
        marks=[]
        if (placement == "title" and package not in TITLE_SLOW)
        or (placement == "margin" and package in MARGIN_IN_MAKE_TEST)
        else [pytest.mark.slow],
        id=f"{package}-{placement}",
    )
    for package in PACKAGES
    for placement in ("title", "margin")
]


@pytest.mark.parametrize(("package", "placement"), CELLS)
def test_pith_builds_with_a_package_that_patches_keyval_or_hyperref(
    package: str, placement: str
) -> None:
    result = shared_build(paper(package, placement), runs=2)
    assert result.ok, result.output[-2000:]
    meta = info(result.pdf)
    assert meta["/PithNumber"] == NUMBER
    assert meta["/PithURL"] == URL
    assert URL in link_uris(result.pdf)
    assert SHORT in page_text(result.pdf)
    baseline = shared_build(paper(package, None), runs=2)
    assert baseline.ok, baseline.output[-2000:]
    assert log_problems(result.log) - log_problems(baseline.log) == set()
    if package == "hyperxmp":  # hyperxmp's packet is still written, with the number in it
        xmp = xmp_text(result.pdf)
        assert "CC-BY" in xmp
        assert f"<rdf:li>{NUMBER}</rdf:li>" in xmp
    if package == "xkeyval":
        assert meta["/Title"] == "A title"
