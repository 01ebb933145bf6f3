"""Start-up: `pith --version` and `pith --help` against `python -c "import typer"`."""

from __future__ import annotations

import sys
from typing import Any

from benchmarks._timing import median_command_seconds, row

RUNS = 15


def run() -> list[dict[str, Any]]:
    baseline = median_command_seconds([sys.executable, "-c", "import typer"], runs=RUNS)
    version = median_command_seconds([sys.executable, "-m", "pithauthor", "--version"], runs=RUNS)
    help_ = median_command_seconds([sys.executable, "-m", "pithauthor", "--help"], runs=RUNS)
    note = f"median of {RUNS} runs; baseline: python -c 'import typer'"
    return [
        row("start-up: pith --version", version, baseline, 1.5, note=note),
        row("start-up: pith --help", help_, baseline, 2.0, note=note),
    ]
