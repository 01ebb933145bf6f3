"""Start-up: `pith --version` and `pith --help` against `python -c "import typer"`.

The three commands run in alternation, RUNS times each; medians are compared."""

from __future__ import annotations

import sys
from typing import Any

from benchmarks._timing import command, interleaved_medians, row

RUNS = 15


def run() -> list[dict[str, Any]]:
    baseline, version, help_ = interleaved_medians(
        [
            command([sys.executable, "-c", "import typer"]),
            command([sys.executable, "-m", "pithauthor", "--version"]),
            command([sys.executable, "-m", "pithauthor", "--help"]),
        ],
        runs=RUNS,
        warmup=2,
    )
    note = f"median of {RUNS} interleaved runs; baseline: python -c 'import typer'"
    return [
        row("start-up: pith --version", version, baseline, 1.5, note=note),
        row("start-up: pith --help", help_, baseline, 2.0, note=note),
    ]
