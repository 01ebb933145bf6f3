"""Files shipped inside the package: the LaTeX package pith.sty, which the tool copies beside
an author's paper so that it travels with the source (arXiv has no pith.sty of its own).

`latex/pith.sty` in the repository is the one source; the wheel carries a real copy of it as
`pithauthor/data/pith.sty` (pyproject's force-include), and a source checkout or an editable
install reads `latex/` directly.
"""

from __future__ import annotations

import re
from importlib import resources
from pathlib import Path

from pithauthor.errors import PithError

_PROVIDES = re.compile(r"\\ProvidesPackage\{pith\}\s*\[(\d{4}/\d{2}/\d{2})\s+v(\S+)")
_CHECKOUT_LATEX = Path(__file__).resolve().parent.parent / "latex"


def latex_file(name: str) -> Path:
    """The path of a shipped LaTeX file (`pith.sty`, `pith-compat.def`, `pith.sty.ltxml`),
    always a real file."""
    packaged = Path(str(resources.files("pithauthor") / "data" / name))
    for path in (packaged, _CHECKOUT_LATEX / name):
        if path.is_file():
            return path.resolve()
    raise PithError(f"the packaged {name} is missing: {packaged}")


def pith_sty_path() -> Path:
    """The path of the packaged pith.sty (a real file, never a link)."""
    return latex_file("pith.sty")


def pith_ltxml_path() -> Path:
    """The packaged pith.sty.ltxml: the LaTeXML binding that arXiv's HTML view uses."""
    return latex_file("pith.sty.ltxml")


def pith_sty_version() -> str:
    """The version and date of the packaged pith.sty, as `1.0.0 (2026/11/29)`."""
    text = pith_sty_path().read_text(encoding="utf-8")
    match = _PROVIDES.search(text)
    if match is None:
        raise PithError("the packaged pith.sty has no \\ProvidesPackage{pith}[date vX.Y] line")
    return f"{match.group(2)} ({match.group(1)})"
