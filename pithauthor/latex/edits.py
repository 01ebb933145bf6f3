r"""What the files a preamble reads hold (`\input{preamble}`, Overleaf style, and the files those
read in turn): a `\pithnumber`, or the `\usepackage{pith}` the main file must not repeat.

Add `\pithauthorkey{KEY_ID}` lines to a preamble (the paper proof of docs/identity.md).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from pithauthor.errors import ManuscriptError
from pithauthor.latex.preamble import InputUse, locate, locate_fragment
from pithauthor.latex.sources import read_text_file

_MAX_DEPTH = 8  # \input chains deeper than this are not followed (nor are loops)


@dataclass(frozen=True, slots=True)
class InputFacts:
    """The first `\\pithnumber` and `\\usepackage{pith}` found along the preamble's inputs."""

    number: tuple[Path, str] | None = None  # the file, and the number it gives
    package: Path | None = None  # the file that loads pith
    via: InputUse | None = None  # the main file's `\input` that leads to that load


def preamble_inputs(inputs: list[InputUse], folder: Path) -> InputFacts:
    """Follow the main file's `inputs` (and theirs, depth first, inside `folder`), parsed as
    TeX reads them: comments and disabled blocks do not count."""
    number: tuple[Path, str] | None = None
    package: tuple[Path, InputUse] | None = None
    seen: set[Path] = set()

    def walk(uses: list[InputUse], depth: int, top: InputUse | None) -> None:
        nonlocal number, package
        for use in uses:
            path = _resolve(folder, use.name)
            if path is None or path in seen or depth > _MAX_DEPTH:
                continue
            seen.add(path)
            try:
                found = locate_fragment(read_text_file(path).text, path.name)
            except ManuscriptError:
                continue
            if number is None and found.pith_numbers:
                number = (path, found.pith_numbers[0].text.strip())
            if package is None and found.pith_package is not None:
                package = (path, top or use)
            walk(found.inputs, depth + 1, top or use)

    walk(inputs, 1, None)
    return InputFacts(
        number=number,
        package=package[0] if package else None,
        via=package[1] if package else None,
    )


def _resolve(folder: Path, name: str) -> Path | None:
    """The file `\\input{name}` reads (as TeX: the name, else with .tex), inside `folder`."""
    name = name.strip().strip('"')
    if not name:
        return None
    for candidate in (folder / name, folder / f"{name}.tex"):
        # inside the paper's folder only (links resolved): `\input{../../.ssh/x}` is not
        # read, and a file from outside would not be in the arXiv upload anyway
        if candidate.is_file() and folder.resolve() in candidate.resolve().parents:
            return candidate.resolve()
    return None


_KEY_USE = re.compile(r"^[ \t]*\\pithauthorkey\s*\{\s*([^}]*?)\s*\}", re.MULTILINE)


def add_author_keys(text: str, name: str, newline: str, key_ids: Sequence[str]) -> tuple[str, int]:
    """`text` with a `\\pithauthorkey` line for each key id it lacks, and how many were added.

    The lines go after the last `\\pithauthorkey`, else after `\\pithnumber`, else after
    `\\usepackage{pith}`, else (with `\\usepackage{pith}`) after `\\documentclass`/hyperref."""
    pre = locate(text, name)
    head = text[: pre.begin_document]
    present = _KEY_USE.findall(head)
    missing = [k for k in dict.fromkeys(key_ids) if k not in present]
    if not missing:
        return text, 0
    lines = "".join(f"\\pithauthorkey{{{k}}}{newline}" for k in missing)
    uses = list(_KEY_USE.finditer(head))
    if uses:
        anchor = uses[-1].end()
    elif pre.pith_numbers:
        anchor = pre.pith_numbers[-1].macro.end
    elif pre.pith_package is not None:
        anchor = pre.pith_package.end
    else:
        anchor = pre.documentclass.end
        if pre.hyperref is not None and pre.hyperref.end > anchor:
            anchor = pre.hyperref.end
        lines = "\\usepackage{pith}" + newline + lines
    at = pre.line_start_after(anchor)
    if at is None:
        raise ManuscriptError(f"{name}: no safe line in the preamble for \\pithauthorkey")
    return text[:at] + lines + text[at:], len(missing)
