"""Files shipped with the package (PLACEHOLDER from branch `inject`; branch `sty` owns this)."""

from __future__ import annotations

import re
from pathlib import Path

_DATA = Path(__file__).resolve().parent / "data"


def pith_sty_path() -> Path:
    """The copy of `pith.sty` shipped inside the package."""
    return _DATA / "pith.sty"


def pith_sty_version() -> str:
    """The date and version from `\\ProvidesPackage{pith}[...]`, e.g. `2026/11/29 v0.1`."""
    text = pith_sty_path().read_text("utf-8")
    match = re.search(r"\\ProvidesPackage\{pith\}\[(\S+)\s+(v\S+)", text)
    return f"{match.group(1)} {match.group(2)}" if match else "unknown"
