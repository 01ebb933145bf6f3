"""Small timing helpers shared by the benchmarks: medians of repeated runs."""

from __future__ import annotations

import statistics
import subprocess
import time
from collections.abc import Callable, Sequence
from typing import Any


def median_seconds(fn: Callable[[], Any], runs: int = 5, warmup: int = 1) -> float:
    """Median wall time of `fn()` over `runs` runs, after `warmup` unmeasured runs."""
    for _ in range(warmup):
        fn()
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def median_command_seconds(argv: Sequence[str], runs: int = 10, **kwargs: Any) -> float:
    """Median wall time of running a command `runs` times (output discarded)."""

    def once() -> None:
        subprocess.run(
            argv, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, **kwargs
        )

    return median_seconds(once, runs=runs, warmup=1)


def row(
    name: str,
    figure: float,
    baseline: float,
    target: float,
    unit: str = "s",
    *,
    higher_is_better: bool = False,
    note: str = "",
) -> dict[str, Any]:
    """One row: `ratio` = figure/baseline, met when <= target (>= for speed-ups)."""
    ratio = figure / baseline if baseline else float("inf")
    met = ratio >= target if higher_is_better else ratio <= target
    return {
        "name": name,
        "figure": figure,
        "baseline": baseline,
        "ratio": ratio,
        "target": target,
        "unit": unit,
        "higher_is_better": higher_is_better,
        "met": met,
        "note": note,
    }
