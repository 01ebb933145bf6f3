"""Pictures of the badge: page 1 of each class template, rendered with pdftoppm and cropped
around the badge. Set PITH_UPDATE_IMAGES=1 to write them to docs/img/ for docs/latex.md."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from support.latex.pdfcheck import render_crop, word_box
from support.latex.texbuild import REPO, SHORT, shared_build, template

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
