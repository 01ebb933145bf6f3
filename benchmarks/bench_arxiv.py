"""Benchmark: `pith latex arxiv` on a publisher's template (revtex4-2, APS: BibTeX, several
files) vs one clean `latexmk -pdf` build of the same folder.

`pith latex arxiv` builds twice (latexmk in a private copy to learn what the paper reads, then
pdfLaTeX alone on the unpacked archive to prove it), so about 2x is expected; target <= 2.5x.
Both are timed in the same run, interleaved, median of REPEAT runs, each from a fresh copy of
the folder (no build products: the latexmk build is a clean one).
"""

from __future__ import annotations

import shutil
import subprocess
import tempfile
from pathlib import Path
from typing import Any

from benchmarks._timing import interleaved_medians, row

REPO = Path(__file__).resolve().parent.parent
TEMPLATE = "revtex4-2-aps"
MAIN = "aps-paper.tex"
NUMBER = "pith:2023:NFG5PAOXQUVIHWKP5TT6Y3LVRM"
REPEAT = 3
TARGET = 2.5


def run() -> list[dict[str, Any]]:
    from pithauthor.latex.arxiv import build_arxiv_archive
    from pithauthor.latex.injection import inject
    from pithauthor.protocol.ids import PithNumber

    tmp = Path(tempfile.mkdtemp(prefix="bench-arxiv-"))
    try:
        source = tmp / "source"
        shutil.copytree(REPO / "tests" / "fixtures" / "manuscripts" / TEMPLATE, source)
        inject(source, PithNumber.parse(NUMBER))
        for backup in source.glob("*.pith-backup*"):
            backup.unlink()
        work = tmp / "work"

        def fresh() -> None:
            shutil.rmtree(work, ignore_errors=True)
            shutil.copytree(source, work)

        def latexmk() -> None:
            subprocess.run(
                ["latexmk", "-pdf", "-interaction=nonstopmode", "-halt-on-error", MAIN],
                cwd=work,
                check=True,
                capture_output=True,
            )

        def arxiv() -> None:
            build_arxiv_archive(work, tmp / "upload.tar.gz")

        baseline, figure = interleaved_medians([latexmk, arxiv], runs=REPEAT, warmup=1, setup=fresh)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return [
        row(
            f"pith latex arxiv ({TEMPLATE}) vs one clean latexmk -pdf",
            figure,
            baseline,
            TARGET,
            note=f"median of {REPEAT} interleaved runs; arxiv builds twice (pack, then prove)",
        )
    ]


if __name__ == "__main__":
    for r in run():
        print(r)
