"""What arXiv's submission system checks or needs (file names, hidden files, upload size, .bbl
versions, `00README.json`), and TeX comments stripped from the sources, since arXiv publishes
the sources it is sent.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import PurePosixPath

from pithauthor.latex.verbatim import VERBATIM_ENVIRONMENTS

# What arXiv's submission system checks or needs, as far as its documentation says
# (info.arxiv.org/help: submit_tex, faq/mistakes, 00README): file names, hidden files, the size
# of the upload, biblatex .bbl versions, \include in subfolders, and the `00README.json` that
# names the top-level file and the compiler (Submission 1.5).

# arXiv's limit on the size of an upload; above it the submission needs an exception
SIZE_LIMIT = 50 * 1024 * 1024


# the biblatex .bbl formats arXiv's TeX Live accepts: 3.2 (TL 2023), 3.3 (TL 2024 and 2025)
BBL_FORMATS = ("3.2", "3.3")


README_NAME = "00README.json"


# arXiv turns other characters of a file name into `_` (and the paper then misses the file)
_SAFE_NAME = re.compile(r"^[A-Za-z0-9_+\-.,=]+$")


_BBL_FORMAT = re.compile(rb"biblatex bbl format version (\S+)")


_DOCUMENTCLASS = re.compile(r"(?m)^[^%\n]*?\\document(?:class|style)\b")


def name_warnings(names: list[str]) -> list[str]:
    """File names arXiv renames or deletes."""
    warnings = []
    for name in names:
        parts = PurePosixPath(name).parts
        bad = [part for part in parts if not _SAFE_NAME.match(part)]
        if bad:
            warnings.append(
                f"{name}: arXiv turns characters other than letters, digits and _+-.,= into '_', "
                "so the paper would not find this file; rename it"
            )
        if any(part.startswith(".") for part in parts):
            warnings.append(f"{name}: arXiv deletes hidden files when the paper is announced")
    return warnings


def bbl_warnings(name: str, data: bytes, main_stem: str) -> list[str]:
    """A biblatex .bbl of a format arXiv's TeX Live may not read; a .bbl not named after the
    main file."""
    warnings = []
    match = _BBL_FORMAT.search(data[:2000])
    if match:
        version = match.group(1).decode("ascii", "replace")
        if version not in BBL_FORMATS:
            warnings.append(
                f"{name} is biblatex .bbl format {version}; arXiv's TeX Live reads formats "
                f"{' and '.join(BBL_FORMATS)} only, so its references may come out empty: "
                "build with a TeX Live from 2023 to 2025"
            )
    if PurePosixPath(name).stem != main_stem:
        warnings.append(f"{name}: arXiv expects the .bbl to be named {main_stem}.bbl")
    return warnings


def subfolder_warnings(outputs: list[str]) -> list[str]:
    """arXiv lets TeX write only in the top folder: `\\include{sub/x}` writes `sub/x.aux`."""
    return [
        f"the build writes {name}; arXiv lets TeX write only in the top folder, so "
        "\\include a file there or \\input this one"
        for name in outputs
        if name.endswith(".aux")
    ]


def other_main_files(main_name: str, texts: dict[str, str]) -> list[str]:
    """Packed .tex files other than the main one that also hold `\\documentclass`."""
    return sorted(
        name for name, text in texts.items() if name != main_name and _DOCUMENTCLASS.search(text)
    )


def readme(main_name: str, engine: str) -> bytes:
    """arXiv's `00README.json` naming the top-level file and the compiler."""
    compiler = "latex" if engine == "latex" else "pdflatex"
    document = {
        "process": {"compiler": compiler},
        "sources": [{"filename": main_name, "usage": "toplevel"}],
    }
    return (json.dumps(document, indent=2) + "\n").encode("utf-8")


def size_warning(size: int) -> list[str]:
    if size <= SIZE_LIMIT:
        return []
    return [
        f"the archive is {size / 1e6:.1f} MB, over arXiv's {SIZE_LIMIT // (1024 * 1024)} MB "
        "limit: make the figures smaller"
    ]


# Strip TeX comments from a source file, since arXiv publishes the sources it is sent.
#
# The scan follows TeX's own rules closely enough to be safe: `\%` and `\\` are control
# symbols, `\verb|...|` and the first argument of `\url`, `\href` and friends are copied as they
# stand (URLs hold `%`), and so is the body of every verbatim-like environment. A comment that
# has the line to itself goes with its line; a comment after text keeps its `%`, which also
# swallows the end of line (removing it would add a space). The first line is kept when it is an
# arXiv `%&format` directive.
#
# pylatexenc's walker could find comment nodes, but it does not know that `\url` reads its
# argument verbatim and it re-parses the whole body; this scanner is linear and small.

# macros whose first mandatory argument is read verbatim (braces or a delimiter)
_URL_MACROS = frozenset({"url", "href", "nolinkurl", "path", "burl", "Url", "lstinline"})


_VERB_MACROS = frozenset({"verb", "Verb"})


_SPACE = " \t"


@dataclass(frozen=True, slots=True)
class Stripped:
    """The text without comments, and how many comments went (whole lines among them)."""

    text: str
    comments: int
    whole_lines: int


def strip_comments(text: str) -> Stripped:
    """`text` with its comments removed (see the module docstring for what is kept)."""
    return _Scanner(text).run()


class _Scanner:
    def __init__(self, text: str) -> None:
        self.text = text
        self.out: list[str] = []
        self.pending = ""  # blanks at the start of the current line, not yet written
        self.content = False  # the current output line has something besides blanks
        self.comments = 0
        self.whole = 0

    def emit(self, chunk: str) -> None:
        if self.pending:
            self.out.append(self.pending)
            self.pending = ""
        self.out.append(chunk)
        self.content = True

    def run(self) -> Stripped:
        text, i, n = self.text, 0, len(self.text)
        if text.startswith("%&"):
            i = _line_end(text, 0)
            self.emit(text[:i])
        while i < n:
            char = text[i]
            if char == "\n":
                self.out.append(self.pending + "\n")
                self.pending, self.content = "", False
                i += 1
            elif char in _SPACE and not self.content:
                self.pending += char
                i += 1
            elif char == "%":
                i = self.comment(i)
            elif char == "\\":
                i = self.control(i)
            else:
                self.emit(char)
                i += 1
        if self.pending:
            self.out.append(self.pending)
        return Stripped("".join(self.out), self.comments, self.whole)

    def comment(self, i: int) -> int:
        text = self.text
        end = text.find("\n", i)
        end = len(text) if end == -1 else end
        stop = end - 1 if end > i and text[end - 1] == "\r" else end
        if not self.content:  # the comment has the line to itself: the line goes
            self.pending = ""
            self.comments += 1
            self.whole += 1
            return end + 1
        if text[i + 1 : stop].strip():
            self.comments += 1
        self.emit("%")
        return stop

    def control(self, i: int) -> int:
        text, n = self.text, len(self.text)
        j = i + 1
        if j >= n:
            self.emit("\\")
            return n
        if not text[j].isalpha():
            self.emit(text[i : j + 1])  # a control symbol: \%, \\, \{ ...
            return j + 1
        while j < n and text[j].isalpha():
            j += 1
        name = text[i + 1 : j]
        if name in _VERB_MACROS:
            return self.copy_verb(i, j)
        if name in _URL_MACROS:
            return self.copy_argument(i, j)
        if name == "begin":
            return self.copy_environment(i, j)
        self.emit(text[i:j])
        return j

    def copy_verb(self, start: int, j: int) -> int:
        """`\\verb*?<d>...<d>`: to the closing delimiter (never past the line)."""
        text = self.text
        if j < len(text) and text[j] == "*":
            j += 1
        if j >= len(text) or text[j] in "\r\n":
            self.emit(text[start:j])
            return j
        close = text.find(text[j], j + 1)
        line = _line_end(text, j)
        end = line if close == -1 or close > line else close + 1
        self.emit(text[start:end])
        return end

    def copy_argument(self, start: int, j: int) -> int:
        """A URL-like macro: an optional `[...]`, then `{...}` or `<d>...<d>`, copied as is."""
        text, n = self.text, len(self.text)
        k = j
        while k < n and text[k] in _SPACE:
            k += 1
        if k < n and text[k] == "[":
            close = text.find("]", k)
            k = n if close == -1 else close + 1
        if k >= n or text[k] in "\r\n%\\":
            self.emit(text[start:j])
            return j
        if text[k] == "{":
            end = _matching_brace(text, k)
        else:
            close = text.find(text[k], k + 1)
            end = _line_end(text, k) if close == -1 else close + 1
        self.emit(text[start:end])
        return end

    def copy_environment(self, start: int, j: int) -> int:
        """`\\begin{env}`: a verbatim-like environment is copied through its `\\end{env}`."""
        text = self.text
        k = j
        while k < len(text) and text[k] in _SPACE:
            k += 1
        close = text.find("}", k)
        if k >= len(text) or text[k] != "{" or close == -1:
            self.emit(text[start:j])
            return j
        env = text[k + 1 : close]
        if env not in VERBATIM_ENVIRONMENTS:
            self.emit(text[start:j])
            return j
        end_tag = "\\end{" + env + "}"
        found = text.find(end_tag, close)
        end = len(text) if found == -1 else found + len(end_tag)
        self.emit(text[start:end])
        return end


def _line_end(text: str, i: int) -> int:
    end = text.find("\n", i)
    return len(text) if end == -1 else end


def _matching_brace(text: str, i: int) -> int:
    """The position after the `}` that closes the `{` at `i` (escaped braces skipped)."""
    depth, k, n = 0, i, len(text)
    while k < n:
        char = text[k]
        if char == "\\":
            k += 2
            continue
        if char == "{":
            depth += 1
        elif char == "}":
            depth -= 1
            if depth == 0:
                return k + 1
        k += 1
    return n
