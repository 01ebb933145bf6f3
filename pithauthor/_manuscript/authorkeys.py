"""Add `\\pithauthorkey{KEY_ID}` lines to a preamble (the paper proof of docs/identity.md)."""

from __future__ import annotations

import re
from collections.abc import Sequence

from pithauthor._manuscript.preamble import locate
from pithauthor.errors import ManuscriptError

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
