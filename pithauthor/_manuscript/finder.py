"""Which file is the main one, and which engine it asks for (`% !TEX root` / `% !TEX program`)."""

from __future__ import annotations

import re
from pathlib import Path

from pithauthor._files import MAX_TEX_BYTES, read_user_file
from pithauthor._manuscript.preamble import has_live_begin_document, locate
from pithauthor._manuscript.textfile import read_text_file
from pithauthor.errors import ManuscriptError

_MAGIC_LINES = 20  # editors read magic comments from the first lines only
_ROOT = re.compile(r"^\s*%\s*!\s*TEX\s+root\s*=\s*(.+?)\s*$", re.IGNORECASE | re.MULTILINE)
_PROGRAM = re.compile(
    r"^\s*%\s*!\s*TEX\s+(?:TS-)?program\s*=\s*([A-Za-z]+)\s*$", re.IGNORECASE | re.MULTILINE
)
_DOCUMENTCLASS = re.compile(r"\\document(?:class|style)\b")
_STANDALONE = re.compile(
    r"^[^%\n]*\\documentclass\s*(?:\[[^\]]*\]\s*)?\{standalone\}", re.MULTILINE
)
ENGINES = ("pdflatex", "xelatex", "lualatex", "latex")


def _head(text: str) -> str:
    """The first lines of `text`, where editors look for magic comments."""
    end = 0
    for _ in range(_MAGIC_LINES):
        end = text.find("\n", end) + 1
        if end == 0:
            return text
    return text[:end]


def _read_head(path: Path) -> str:
    """The first few KB of a file, decoded leniently (for magic comments only)."""
    # only the head is read: the whole file is read (and checked) once, by whoever parses it
    data = read_user_file(path, ManuscriptError, "a LaTeX file", limit=MAX_TEX_BYTES, head=8192)
    return data.decode("utf-8", errors="replace")


def magic_root(path: Path, text: str) -> Path | None:
    """The file named by a `% !TEX root = ...` comment, relative to `path`'s folder."""
    match = _ROOT.search(_head(text))
    if match is None:
        return None
    target = (path.parent / match.group(1)).resolve()
    if target == path.resolve():
        return None
    return target


def engine_of(text: str) -> str:
    """The engine asked for by `% !TEX program = ...` (pdflatex when none or unknown)."""
    match = _PROGRAM.search(_head(text))
    if match is None:
        return "pdflatex"
    name = match.group(1).lower()
    if name not in ENGINES:
        raise ManuscriptError(
            f"% !TEX program = {match.group(1)} is not one of {', '.join(ENGINES)}"
        )
    return name


def _is_main(path: Path) -> bool:
    try:
        text = read_text_file(path).text
    except ManuscriptError:
        return False
    return bool(_DOCUMENTCLASS.search(text)) and has_live_begin_document(text)


def _why_not_main(files: list[Path]) -> str:
    """What the preamble reader found in the first file with a `\\documentclass` ('' if none)."""
    for path in files:
        try:
            text = read_text_file(path).text
            if _DOCUMENTCLASS.search(text):
                locate(text, path.name)
        except ManuscriptError as exc:
            return f"; {exc}"
    return ""


def _is_standalone(path: Path) -> bool:
    """Whether `path` is a `standalone`-class document: a figure built on its own."""
    return bool(_STANDALONE.search(read_text_file(path).text))


def find_main_file(target: Path) -> Path:
    """The main file of `target` (a .tex file, or a folder searched at its top level)."""
    if not target.exists():
        raise ManuscriptError(f"{target}: no such file or folder")
    if target.is_file():
        root = magic_root(target, _read_head(target))
        if root is not None:
            if not root.is_file():
                raise ManuscriptError(f"{target}: % !TEX root names {root}, which does not exist")
            return root
        return target
    files = sorted(p for p in target.iterdir() if p.suffix == ".tex" and p.is_file())
    if not files:
        raise ManuscriptError(f"{target}: no .tex file in this folder")
    named: set[Path] = set()
    pointing: set[Path] = set()
    for path in files:
        try:
            root = magic_root(path, _read_head(path))
        except ManuscriptError:
            continue
        if root is not None:
            named.add(root)
            pointing.add(path.resolve())
    candidates = [p for p in files if p.resolve() not in pointing and _is_main(p)]
    preferred = [p for p in candidates if p.resolve() in named]
    if len(preferred) == 1:
        return preferred[0]
    papers = [p for p in candidates if not _is_standalone(p)]
    if len(papers) == 1:  # the others are figures (or pieces) built alone: not the paper
        return papers[0]
    if not candidates:
        raise ManuscriptError(
            f"{target}: no main file (one with \\documentclass and \\begin{{document}})"
            + _why_not_main([p for p in files if p.resolve() not in pointing])
        )
    if len(candidates) > 1:
        names = ", ".join(p.name for p in candidates)
        raise ManuscriptError(
            f"{target}: several main-file candidates ({names}); name one, e.g. "
            f"'pith latex inject {candidates[0]}', or add '% !TEX root = ...'"
        )
    return candidates[0]
