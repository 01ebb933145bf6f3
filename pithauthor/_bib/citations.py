"""The keys a manuscript cites, from its `.aux` file or from its LaTeX source.

From LaTeX: every `\\cite`-like command (natbib, biblatex, apacite, starred, with optional
arguments, biblatex's multicite `\\cites[..]{a}[..]{b}`) and `\\nocite`, outside comments and
verbatim-like environments, in the main file and the files it `\\input`s or `\\include`s inside
its own folder tree, and the citation macros the manuscript defines (`cite_macros`). `*` in the
result means `\\nocite{*}`: every entry is cited.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

from pithauthor._bib.cite_macros import (
    COMMAND,
    Definitions,
    definitions,
    is_citation,
    read_use,
    split_keys,
)
from pithauthor._core.tex_verbatim import VERBATIM_BLOCK
from pithauthor._files import MAX_TEX_BYTES, read_user_file
from pithauthor.errors import ManuscriptError

ALL = "*"

_VERBATIM = VERBATIM_BLOCK
_VERB = re.compile(r"\\verb\*?([^a-zA-Z\s*])(?:(?!\1).)*\1")
_INPUT = re.compile(
    r"\\(?:input|include|subfile|InputIfFileExists)\s*(?:\{([^{}]+)\}|([^\s{}\\%]+))"
)
_AUX_CITATION = re.compile(r"\\citation\{([^{}]*)\}")
_AUX_BIBLATEX = re.compile(r"\\abx@aux@cite(?:\{[^{}]*\})?\{([^{}]*)\}")
_AUX_INPUT = re.compile(r"\\@input\{([^{}]+)\}")


@dataclass(frozen=True, slots=True)
class Citations:
    """What a manuscript cites: its keys, and the citation macros it defines that could not be
    followed (name -> why; their uses may cite keys that are not in `keys`)."""

    keys: frozenset[str]
    unfollowed: dict[str, str] = field(default_factory=dict)


def cited_keys(path: Path) -> set[str]:
    """The citation keys of a `.tex` manuscript (with its inputs) or a `.aux` file."""
    return set(read_citations(path).keys)


def read_citations(path: Path) -> Citations:
    """`cited_keys`, with the citation macros that could not be followed (LaTeX source only:
    an `.aux` lists every key exactly)."""
    path = Path(path)
    try:
        root = path.resolve().parent
    except (OSError, RuntimeError):  # RuntimeError: a link loop, before Python 3.13
        raise ManuscriptError(f"{path}: a loop of symbolic links (or too many of them)") from None
    unfollowed: dict[str, str] = {}
    if path.suffix.lower() == ".aux":
        keys = _aux_keys(path, root=root, seen=set())
    else:
        source = "\n".join(_tex_sources(path, root=root, seen=set()))
        defs = definitions(source)
        keys = keys_in_source(source, defs)
        unfollowed = defs.unfollowed
    if not keys:
        raise ManuscriptError(
            f"{path}: no citation found in it (no \\cite, \\citation or \\bibcite); "
            "give the manuscript's main .tex or its .aux"
        )
    return Citations(frozenset(keys), unfollowed)


def _read(path: Path) -> str:
    data = read_user_file(
        path, ManuscriptError, "a .tex or .aux file", limit=MAX_TEX_BYTES, text_only=False
    )
    return data.decode("utf-8", errors="replace")


def _split_keys(text: str) -> set[str]:
    return {key.strip() for key in text.split(",") if key.strip()}


def _aux_keys(path: Path, *, root: Path, seen: set[Path]) -> set[str]:
    seen.add(path.resolve())
    text = _read(path)
    keys: set[str] = set()
    for match in _AUX_CITATION.finditer(text):
        keys |= _split_keys(match.group(1))
    for match in _AUX_BIBLATEX.finditer(text):
        keys |= _split_keys(match.group(1))
    for match in _AUX_INPUT.finditer(text):
        child = _inside(root, path.parent / match.group(1))
        if child is not None and child not in seen and child.is_file():
            keys |= _aux_keys(child, root=root, seen=seen)
    return keys


def strip_comments(text: str) -> str:
    """`text` without TeX comments: a `%` preceded by an even number of backslashes."""
    if "%" not in text:
        return text
    out = []
    for line in text.split("\n"):
        cut = _comment_start(line)
        out.append(line if cut is None else line[:cut])
    return "\n".join(out)


def _comment_start(line: str) -> int | None:
    start = 0
    while (i := line.find("%", start)) >= 0:
        backslashes = len(line[:i]) - len(line[:i].rstrip("\\"))
        if backslashes % 2 == 0:
            return i
        start = i + 1
    return None


def clean_source(text: str) -> str:
    """LaTeX source without comments, verbatim-like environments and `\\verb` arguments."""
    text = _VERBATIM.sub(" ", text)
    text = _VERB.sub(" ", text)
    return strip_comments(text)


def keys_in_source(text: str, defs: Definitions | None = None) -> set[str]:
    """Citation keys in already cleaned LaTeX: every citation command, and every use of a
    citation macro (`defs`, by default the ones `text` defines). The definitions themselves
    are not uses."""
    if defs is None:
        defs = definitions(text)
    for start, end in defs.spans:
        text = text[:start] + " " * (end - start) + text[end:]
    keys: set[str] = set()
    for match in COMMAND.finditer(text):
        name = match.group(1)
        if is_citation(name, defs):
            arguments, _ = read_use(text, match.end(), defs.macros.get(name), name)
            for raw in arguments:
                keys |= split_keys(raw)
    return keys


def _inside(root: Path, candidate: Path) -> Path | None:
    try:
        resolved = candidate.resolve()
    except (OSError, RuntimeError):  # a link loop: not a file the build can read either
        return None
    return resolved if resolved.is_relative_to(root) else None


def _tex_sources(path: Path, *, root: Path, seen: set[Path]) -> list[str]:
    """The cleaned text of `path` and of the files it inputs, in reading order."""
    seen.add(path.resolve())
    text = clean_source(_read(path))
    texts = [text]
    for match in _INPUT.finditer(text):
        name = (match.group(1) or match.group(2)).strip()
        for candidate in (root / f"{name}.tex", root / name):
            child = _inside(root, candidate)
            if child is not None and child.is_file():
                if child not in seen:
                    texts += _tex_sources(child, root=root, seen=seen)
                break
    return texts
