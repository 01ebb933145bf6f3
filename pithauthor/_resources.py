"""Files shipped inside the package: the LaTeX package pith.sty, which the tool copies beside
an author's paper so that it travels with the source (arXiv has no pith.sty of its own)."""

from __future__ import annotations

import re
from importlib import resources
from pathlib import Path

from pithauthor.errors import PithError

_PROVIDES = re.compile(r"\\ProvidesPackage\{pith\}\s*\[(\d{4}/\d{2}/\d{2})\s+v(\S+)")


def pith_sty_path() -> Path:
    """The path of the packaged pith.sty (a real file inside the installed package)."""
    path = Path(str(resources.files("pithauthor") / "data" / "pith.sty"))
    if not path.is_file():
        raise PithError(f"the packaged pith.sty is missing: {path}")
    return path


def pith_ltxml_path() -> Path:
    """The packaged pith.sty.ltxml: the LaTeXML binding that arXiv's HTML view uses."""
    path = Path(str(resources.files("pithauthor") / "data" / "pith.sty.ltxml"))
    if not path.is_file():
        raise PithError(f"the packaged pith.sty.ltxml is missing: {path}")
    return path


def pith_sty_version() -> str:
    """The version and date of the packaged pith.sty, as `1.0.0 (2026/11/29)`."""
    text = pith_sty_path().read_text(encoding="utf-8")
    match = _PROVIDES.search(text)
    if match is None:
        raise PithError("the packaged pith.sty has no \\ProvidesPackage{pith}[date vX.Y] line")
    return f"{match.group(2)} ({match.group(1)})"
