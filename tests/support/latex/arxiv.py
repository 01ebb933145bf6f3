"""Shared helpers for the `pith latex arxiv` tests: run the real command, build the way an author
does (latexmk in the folder) and the way arXiv does (pdfLaTeX alone, no BibTeX/Biber), and read
an archive back."""

from __future__ import annotations

import os
import re
import subprocess
import tarfile
from pathlib import Path

from pypdf import PdfReader

from pithauthor.fs import unpack_plain_files
from support.cli import run_in_process

REPO = Path(__file__).resolve().parents[3]
NUMBER = "pith:2023:NFG5PAOXQUVIHWKP5TT6Y3LVRM"
BODY = NUMBER.split(":")[2]
ARTICLE = r"""\documentclass{article}
\usepackage{hyperref}
\usepackage{pith}
\pithnumber{%s}
\title{A Small Paper}\author{Ada Author}
\begin{document}
\maketitle
%s
\end{document}
"""


def article(body: str, number: str = NUMBER, *, hyperref: bool = True) -> str:
    """The small badged paper around `body`. `hyperref=False` leaves hyperref out: latexmk then
    builds it in one pdfLaTeX run instead of two (hyperref's first run writes the .out file
    that asks for a second), for the tests where hyperref plays no part."""
    text = ARTICLE % (number, body)
    return text if hyperref else text.replace("\\usepackage{hyperref}\n", "", 1)


def run_pith(*args: str, home: Path) -> subprocess.CompletedProcess[str]:
    """The `pith` command, run in this process with its own PITH_HOME (usable from
    module-scoped fixtures, where the `pith` fixture is not)."""
    return run_in_process(list(args), env={"PITH_HOME": str(home)})


def latexmk(folder: Path, main: str, *, sty_installed: bool = False) -> Path:
    """The author's own build, in the folder (leaving .aux, .fls, .fdb_latexmk, .log ...);
    `sty_installed`: pith.sty is found in a TeX tree of the author's, not in the folder."""
    env = {**os.environ}
    if sty_installed:
        env["TEXINPUTS"] = f".:{REPO / 'latex'}//:"
    subprocess.run(
        ["latexmk", "-pdf", "-interaction=nonstopmode", "-halt-on-error", main],
        cwd=folder,
        check=True,
        capture_output=True,
        timeout=300,
        env=env,
    )
    return folder / Path(main).with_suffix(".pdf")


def unpack(archive: Path, folder: Path) -> dict[str, tarfile.TarInfo]:
    """Unpack into an empty folder; returns the members by name."""
    folder.mkdir(parents=True)
    assert not any(folder.iterdir())
    with tarfile.open(archive) as tar:
        members = {m.name: m for m in tar.getmembers()}
    # as pith's own proof build unpacks: no `filter=` before Python 3.11.4
    unpack_plain_files(archive, folder)
    return members


_RERUN = re.compile(r"Rerun to get|Please rerun|Label\(s\) may have changed|Rerun LaTeX", re.I)


def pdflatex_alone(folder: Path, main: str) -> Path:
    """What arXiv does: pdfLaTeX again while the log asks for a rerun (three times at most), no
    BibTeX, no Biber, no shell escape."""
    log = folder / Path(main).with_suffix(".log")
    for _ in range(3):
        subprocess.run(
            ["pdflatex", "-interaction=nonstopmode", "-halt-on-error", "-no-shell-escape", main],
            cwd=folder,
            check=True,
            capture_output=True,
            timeout=300,
        )
        if not _RERUN.search(log.read_text("latin-1")):
            break
    return folder / Path(main).with_suffix(".pdf")


def pages(pdf: Path) -> int:
    return len(PdfReader(pdf).pages)
