"""The keys a manuscript cites, from its `.aux` file or from its LaTeX source.

From LaTeX: every `\\cite`-like command (natbib, biblatex, apacite, starred, with optional
arguments, biblatex's multicite `\\cites[..]{a}[..]{b}`) and `\\nocite`, outside comments and
verbatim-like environments, in the main file and the files it `\\input`s or `\\include`s inside
its own folder tree. `*` in the result means `\\nocite{*}`: every entry is cited.
"""

from __future__ import annotations

import re
from pathlib import Path

from pithauthor._core.tex_verbatim import VERBATIM_BLOCK
from pithauthor._files import MAX_TEX_BYTES, read_user_file
from pithauthor.errors import ManuscriptError

ALL = "*"

_VERBATIM = VERBATIM_BLOCK
_VERB = re.compile(r"\\verb\*?([^a-zA-Z\s*])(?:(?!\1).)*\1")
_CITE = re.compile(r"\\([A-Za-z]*[Cc]ite[A-Za-z]*|nocite)(?![A-Za-z@])\*?")
_NOT_CITATIONS = ("Declare", "New", "Renew", "Provide", "citestyle", "citesetup")
_OPTIONAL = re.compile(r"\s*(?:\[[^\[\]]*(?:\[[^\[\]]*\][^\[\]]*)*\]|<[^<>]*>|\([^()]*\))")
_MANDATORY = re.compile(r"\s*\{([^{}]*)\}")
_INPUT = re.compile(
    r"\\(?:input|include|subfile|InputIfFileExists)\s*(?:\{([^{}]+)\}|([^\s{}\\%]+))"
)
_AUX_CITATION = re.compile(r"\\citation\{([^{}]*)\}")
_AUX_BIBLATEX = re.compile(r"\\abx@aux@cite(?:\{[^{}]*\})?\{([^{}]*)\}")
_AUX_INPUT = re.compile(r"\\@input\{([^{}]+)\}")


def cited_keys(path: Path) -> set[str]:
    """The citation keys of a `.tex` manuscript (with its inputs) or a `.aux` file."""
    path = Path(path)
    try:
        root = path.resolve().parent
    except (OSError, RuntimeError):  # RuntimeError: a link loop, before Python 3.13
        raise ManuscriptError(f"{path}: a loop of symbolic links (or too many of them)") from None
    if path.suffix.lower() == ".aux":
        keys = _aux_keys(path, root=root, seen=set())
    else:
        keys = _tex_keys(path, root=root, seen=set())
    if not keys:
        raise ManuscriptError(
            f"{path}: no citation found in it (no \\cite, \\citation or \\bibcite); "
            "give the manuscript's main .tex or its .aux"
        )
    return keys


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


def keys_in_source(text: str) -> set[str]:
    """Citation keys in one piece of already cleaned LaTeX."""
    keys: set[str] = set()
    for match in _CITE.finditer(text):
        name = match.group(1)
        if name.startswith(_NOT_CITATIONS):
            continue
        position = match.end()
        while True:
            while optional := _OPTIONAL.match(text, position):
                position = optional.end()
            mandatory = _MANDATORY.match(text, position)
            if mandatory is None:
                break
            keys |= _split_keys(mandatory.group(1))
            position = mandatory.end()
            if not name.endswith("cites"):
                break  # only biblatex's multicite commands take several key groups
    return keys


def _inside(root: Path, candidate: Path) -> Path | None:
    try:
        resolved = candidate.resolve()
    except (OSError, RuntimeError):  # a link loop: not a file the build can read either
        return None
    return resolved if resolved.is_relative_to(root) else None


def _tex_keys(path: Path, *, root: Path, seen: set[Path]) -> set[str]:
    seen.add(path.resolve())
    text = clean_source(_read(path))
    keys = keys_in_source(text)
    for match in _INPUT.finditer(text):
        name = (match.group(1) or match.group(2)).strip()
        for candidate in (root / f"{name}.tex", root / name):
            child = _inside(root, candidate)
            if child is not None and child.is_file():
                if child not in seen:
                    keys |= _tex_keys(child, root=root, seen=seen)
                break
    return keys
