"""What arXiv's submission system checks or needs, as far as its documentation says
(info.arxiv.org/help: submit_tex, faq/mistakes, 00README): file names, hidden files, the size
of the upload, biblatex .bbl versions, \\include in subfolders, and the `00README.json` that
names the top-level file and the compiler (Submission 1.5)."""

from __future__ import annotations

import json
import re
from pathlib import PurePosixPath

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
