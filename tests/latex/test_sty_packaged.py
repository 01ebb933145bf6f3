"""The Python package ships pith.sty: the packaged copy resolves, is byte-identical to the
canonical latex/pith.sty, and its version line is read back."""

from __future__ import annotations

import re

from support.latex.texbuild import STY

from pithauthor.latex.sty import pith_sty_path, pith_sty_version


def test_packaged_sty_resolves_and_is_identical_to_latex_pith_sty() -> None:
    packaged = pith_sty_path()
    assert packaged.is_file()
    assert packaged.read_bytes() == STY.read_bytes()


def test_version_comes_from_the_provides_package_line() -> None:
    line = next(x for x in STY.read_text("utf-8").splitlines() if x.startswith("\\ProvidesPackage"))
    date, version = re.findall(r"\[(\S+) v(\S+)", line)[0]
    assert pith_sty_version() == f"{version} ({date})"


def test_sty_has_lppl_header_and_needs_no_tikz() -> None:
    text = STY.read_text("utf-8")
    assert "LaTeX Project Public License" in text
    assert "tikz" not in text.lower().replace("no tikz", "")
    assert "\\RequirePackage{hyperref}" not in text.replace(" ", "")
    assert "PassOptionsToPackage" not in text
