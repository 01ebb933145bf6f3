"""Pictures of the badge: page 1 of each class template, rendered with pdftoppm and cropped
around the badge; and page 1 of docs/example-paper badged through an Overleaf-style zip, as the
author's Overleaf preview shows it after the upload. Set PITH_UPDATE_IMAGES=1 to write them to
docs/img/ for docs/latex.md."""

from __future__ import annotations

import os
import subprocess
import zipfile
from pathlib import Path

import pytest
from support.cli import RunPith
from support.latex.pdfcheck import pages_words, render_crop, word_box
from support.latex.texbuild import NUMBER, REPO, SHORT, TEX_FLAGS, shared_build, template

CLASSES = ["article", "amsart", "revtex4-2", "acmart", "IEEEtran", "llncs", "elsarticle"]
PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


@pytest.mark.slow
@pytest.mark.tex("pdflatex", "pdftoppm", "pdftotext")
@pytest.mark.parametrize("cls", CLASSES)
def test_badge_picture_of_page_one_is_rendered_and_cropped(tmp_path: Path, cls: str) -> None:
    result = shared_build(template(cls))  # the same build as test_sty_classes.py's
    assert result.ok, result.output[-2000:]
    box = word_box(result.pdf, SHORT)
    assert box is not None
    _x0, y0, x1, y1 = box
    crop = (x1 - 165, y0 - 40, x1 + 30, y1 + 25)  # the mark and label left of the number
    folder = REPO / "docs" / "img" if os.environ.get("PITH_UPDATE_IMAGES") == "1" else tmp_path
    png = render_crop(result.pdf, folder / f"badge-{cls}.png", crop)
    data = png.read_bytes()
    assert data.startswith(PNG_SIGNATURE)
    width = int.from_bytes(data[16:20], "big")
    assert width == round((x1 + 30) * 150 / 72) - round((x1 - 165) * 150 / 72)


EXAMPLE = REPO / "docs" / "example-paper"  # its number is NUMBER, the record of arXiv:2302.12445
FIGURE = REPO / "tests" / "fixtures" / "manuscripts" / "acmart-sigconf" / "figures"
OVERLEAF_DPI = 80
# \today of the example's \maketitle pinned (to arXiv:2302.12445's v1 day) so that the picture
# is the same on every run of `make pictures`; pdfTeX reads it with FORCE_SOURCE_DATE=1
FIXED_DATE = {"SOURCE_DATE_EPOCH": "1677196800", "FORCE_SOURCE_DATE": "1"}


def _overleaf_zip(path: Path) -> Path:
    """docs/example-paper as a project zip of the shape Overleaf's *Download → Source* gives
    (files at the top, a nested `figures/` folder), plus the `__MACOSX/` folder a Mac adds."""
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as out:
        for name in ("main.tex", "refs.bib"):
            out.write(EXAMPLE / name, name)
        out.write(FIGURE / "sample-franklin.png", "figures/franklin.png")
        out.writestr("__MACOSX/._main.tex", b"\x00\x05\x16\x07 resource fork")
    return path


@pytest.mark.slow
@pytest.mark.tex("latexmk", "pdflatex", "pdftoppm", "pdftotext")
def test_overleaf_picture_shows_the_badge_under_the_title_of_the_badged_zip(
    tmp_path: Path, pith: RunPith
) -> None:
    source = _overleaf_zip(tmp_path / "paper.zip")
    badged = tmp_path / "badged.zip"
    args = ["latex", "inject", str(source), "--pith", NUMBER, "--offline", "--zip-out"]
    result = pith(*args, str(badged))
    assert result.returncode == 0, result.stderr
    # a fresh folder holding only what the zip holds: what Overleaf's New Project → Upload
    # Project makes of it, compiled as Overleaf does by default (latexmk with pdfLaTeX)
    project = tmp_path / "overleaf"
    with zipfile.ZipFile(badged) as handle:
        handle.extractall(project)
    assert (project / "figures" / "franklin.png").is_file()  # the nested folder came back
    assert not (project / "__MACOSX").exists()
    build = subprocess.run(
        ["latexmk", "-pdf", *TEX_FLAGS, "main.tex"],
        cwd=project,
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, **FIXED_DATE},
    )
    assert build.returncode == 0, build.stdout[-2000:]
    pdf = project / "main.pdf"
    title = word_box(pdf, "DeAR:")
    badge = word_box(pdf, SHORT)
    assert title is not None and badge is not None
    assert badge[1] > title[3]  # the badge sits below the title
    # the top of page 1, full width, from just above the title to just below the badge
    (width, _height), _words = pages_words(pdf)[0]
    crop = (0.0, title[1] - 30, width, badge[3] + 30)
    folder = REPO / "docs" / "img" if os.environ.get("PITH_UPDATE_IMAGES") == "1" else tmp_path
    png = render_crop(pdf, folder / "overleaf-badged-page1.png", crop, dpi=OVERLEAF_DPI)
    data = png.read_bytes()
    assert data.startswith(PNG_SIGNATURE)
    scale = OVERLEAF_DPI / 72
    assert int.from_bytes(data[16:20], "big") == round(width * scale)
    height = round((badge[3] + 30) * scale) - round((title[1] - 30) * scale)
    assert int.from_bytes(data[20:24], "big") == height
