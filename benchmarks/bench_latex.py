"""pdfLaTeX time of a small article with pith.sty against the same article without it, once
with hyperref in both and once without: median of several runs each. Targets: <= 1.02x with
hyperref (docs/performance.md), <= 1.05x without (for scale, orcidlink with TikZ costs about
1.37x). The time is pdflatex's CPU time (user + system, from the kernel's account of the
finished child): pdflatex is one single-threaded process, so on an idle machine that is its
wall time, and on the shared one it leaves out the time spent waiting for a core, which moved
the wall-time ratio by +-0.05x between runs.

Two more rows count the same builds in instructions (callgrind's `Collected` line), with and
without hyperref, which load on the machine does not move (within about 0.03%): the steady
figures for the targets (the CPU-time ratios still moved by +-0.03x between runs of the row
alone). Without valgrind those rows are left out and the CPU-time rows' notes say so."""

from __future__ import annotations

import re
import resource
import shutil
import statistics
import subprocess
import tempfile
from pathlib import Path

STY = Path(__file__).resolve().parent.parent / "latex" / "pith.sty"
RUNS = 15
TARGETS = {"with hyperref": 1.02, "no hyperref": 1.05}

ARTICLE = r"""\documentclass{article}
%(preamble)s
\title{A Small Article}\author{Ada Author}
\begin{document}
\maketitle
\section{Introduction}
%(body)s
\end{document}
"""
BODY = "\n\n".join(["The body of a small article, with some text to set. " * 8] * 12)
PITH = "\\usepackage{pith}\n\\pithnumber{pith:2023:NFG5PAOXQUVIWDX5F7YSYYL7EW}"


def _prepare(folder: Path, preamble: str) -> list[str]:
    folder.mkdir()
    shutil.copy(STY, folder / "pith.sty")
    shutil.copy(STY.with_name("pith-compat.def"), folder / "pith-compat.def")
    shutil.copy(STY.with_name("pith-placement.def"), folder / "pith-placement.def")
    shutil.copy(STY.with_name("pith-authorkeys.def"), folder / "pith-authorkeys.def")
    (folder / "paper.tex").write_text(ARTICLE % {"preamble": preamble, "body": BODY}, "utf-8")
    cmd = ["pdflatex", "-interaction=batchmode", "-halt-on-error", "paper.tex"]
    subprocess.run(cmd, cwd=folder, capture_output=True, check=True)  # warm the caches
    return cmd


def _seconds(folder: Path, cmd: list[str]) -> float:
    """The CPU time (user + system) of one build: the children's account grows by exactly the
    finished pdflatex's (nothing else is a child of this process meanwhile)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    subprocess.run(cmd, cwd=folder, capture_output=True, check=True)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def _instructions(folder: Path, cmd: list[str]) -> int:
    """The instructions one build executes, counted by callgrind (TeX, kpathsea, zlib:
    everything pdflatex runs)."""
    valgrind = ["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null"]
    done = subprocess.run(valgrind + cmd, cwd=folder, capture_output=True, text=True, check=True)
    match = re.search(r"Collected : (\d+)", done.stderr)
    if match is None:
        raise RuntimeError(f"callgrind printed no count: {done.stderr[-500:]}")
    return int(match.group(1))


def _medians(tmp: Path, base: str) -> tuple[float, float]:
    """Median CPU times without and with pith.sty, the two builds interleaved so that drift
    in the machine's speed falls on both alike."""
    without, with_pith = tmp / "without", tmp / "with"
    cmd = _prepare(without, base)
    _prepare(with_pith, base + "\n" + PITH)
    times: tuple[list[float], list[float]] = ([], [])
    for _ in range(RUNS):
        times[0].append(_seconds(without, cmd))
        times[1].append(_seconds(with_pith, cmd))
    return statistics.median(times[0]), statistics.median(times[1])


def _counted(tmp: Path, base: str, label: str) -> dict[str, object]:
    """An instruction-count row: one counted build each, after the warm-up build."""
    without, with_pith = tmp / "without", tmp / "with"
    cmd = _prepare(without, base)
    _prepare(with_pith, base + "\n" + PITH)
    baseline, figure = _instructions(without, cmd), _instructions(with_pith, cmd)
    return {
        "name": f"pdflatex small article + pith.sty ({label}), instructions",
        "figure": round(figure / 1e6, 1),
        "baseline": round(baseline / 1e6, 1),
        "ratio": round(figure / baseline, 4),
        "target": TARGETS[label],
        "unit": "M instr",
        "note": "valgrind --tool=callgrind, one build each (load does not move it)",
    }


def run() -> list[dict[str, object]]:
    """The ratio with/without pith.sty, with hyperref and without it: in CPU time, and (with
    valgrind) in instructions."""
    rows: list[dict[str, object]] = []
    counting = shutil.which("valgrind") is not None
    for label, base in (("with hyperref", "\\usepackage{hyperref}"), ("no hyperref", "")):
        with tempfile.TemporaryDirectory() as tmp:
            baseline, figure = _medians(Path(tmp), base)
        note = f"CPU time, median of {RUNS} interleaved runs"
        if not counting:
            note += "; valgrind not installed: no instruction-count row"
        rows.append(
            {
                "name": f"pdflatex small article + pith.sty ({label})",
                "figure": round(figure, 4),
                "baseline": round(baseline, 4),
                "ratio": round(figure / baseline, 3),
                "target": TARGETS[label],
                "unit": "s",
                "note": note,
            }
        )
        if counting:
            with tempfile.TemporaryDirectory() as tmp:
                rows.append(_counted(Path(tmp), base, label))
    return rows


if __name__ == "__main__":
    for r in run():
        print(r)
