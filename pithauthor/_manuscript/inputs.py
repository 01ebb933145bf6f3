"""A `\\pithnumber` already in a file the preamble reads (`\\input{preamble}`, Overleaf style)."""

from __future__ import annotations

import re
from pathlib import Path

from pithauthor._manuscript.textfile import read_text_file
from pithauthor.errors import ManuscriptError

_INPUT = re.compile(r"^[^%\n]*?\\(?:input|include)\s*\{([^}]+)\}", re.MULTILINE)
_NUMBER = re.compile(r"^[^%\n]*?\\pithnumber\s*\{([^}]*)\}", re.MULTILINE)


def number_in_inputs(preamble: str, folder: Path) -> tuple[Path, str] | None:
    """The first file `\\input` by `preamble` (inside `folder`) with a live `\\pithnumber`,
    and the number it gives; one level deep, as authors split a preamble."""
    for match in _INPUT.finditer(preamble):
        name = match.group(1).strip().strip('"')
        path = folder / name
        if not path.is_file():
            path = folder / f"{name}.tex"
        if not path.is_file() or folder.resolve() not in path.resolve().parents:
            continue
        try:
            found = _NUMBER.search(read_text_file(path).text)
        except ManuscriptError:
            continue
        if found:
            return path, found.group(1).strip()
    return None
