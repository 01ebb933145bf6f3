"""Small timing helpers shared by the benchmarks: medians of repeated, interleaved runs.

The machine that runs `make bench` is shared and noisy, so a figure and its baseline are
always measured in alternation (a, b, a, b, ...): a burst of load from elsewhere falls on
both alike. The median of the runs is reported, not the best one.
"""

from __future__ import annotations

import gc
import statistics
import subprocess
import time
from collections.abc import Callable, Sequence
from typing import Any


def interleaved_times(
    fns: Sequence[Callable[[], Any]],
    runs: int = 5,
    warmup: int = 1,
    setup: Callable[[], Any] | None = None,
    clock: Callable[[], float] = time.perf_counter,
) -> list[list[float]]:
    """The times of each of `fns`, run in alternation `runs` times after `warmup` unmeasured
    rounds (round i of every function lies side by side in time). `setup` (untimed) runs
    before every call. `clock` is wall time; `time.process_time` counts the CPU time of every
    thread of this process instead (what other processes' load hardly changes)."""
    times: list[list[float]] = [[] for _ in fns]
    for round_ in range(warmup + runs):
        for fn, out in zip(fns, times, strict=True):
            if setup is not None:
                setup()
            gc.collect()
            start = clock()
            fn()
            took = clock() - start
            if round_ >= warmup:
                out.append(took)
    return times


def interleaved_medians(
    fns: Sequence[Callable[[], Any]],
    runs: int = 5,
    warmup: int = 1,
    setup: Callable[[], Any] | None = None,
    clock: Callable[[], float] = time.perf_counter,
) -> list[float]:
    """Median time of each of `fns` (wall, or `clock`'s: see `interleaved_times`)."""
    return [statistics.median(t) for t in interleaved_times(fns, runs, warmup, setup, clock)]


def chunked_rounds(
    baseline: Callable[[int, int], Any],
    figure: Callable[[int, int], Any],
    n: int,
    chunk: int,
    runs: int = 9,
    warmup: int = 1,
    setup: Callable[[], Any] | None = None,
    clock: Callable[[], float] = time.process_time,
) -> tuple[list[float], list[float]]:
    """(baseline times, figure times), one of each per round: `baseline(start, stop)` and
    `figure(start, stop)` each do items start..stop-1 of the same `n`, and a round runs both
    over every chunk of `chunk` items in turn (chunk 0: baseline then figure; chunk 1: figure
    then baseline; ...), each side's round time the sum of its chunks. So a round does the
    same work as one whole call of each side, but the two take turns every few milliseconds:
    a burst of load from elsewhere (which slows CPU time too, through the shared caches and
    the core's other thread) falls on both sides alike instead of on one whole run. `setup`
    (untimed) runs before each round, then a full garbage collection; `warmup` rounds come
    first, unmeasured."""
    base_times: list[float] = []
    figure_times: list[float] = []
    for round_ in range(warmup + runs):
        if setup is not None:
            setup()
        gc.collect()
        spent = [0.0, 0.0]
        for k, start in enumerate(range(0, n, chunk)):
            stop = min(start + chunk, n)
            for side in (0, 1) if k % 2 == 0 else (1, 0):
                fn = baseline if side == 0 else figure
                began = clock()
                fn(start, stop)
                spent[side] += clock() - began
        if round_ >= warmup:
            base_times.append(spent[0])
            figure_times.append(spent[1])
    return base_times, figure_times


def paired_ratios(figures: Sequence[float], baselines: Sequence[float]) -> list[float]:
    """figure/baseline of each round: a burst of load shifts both sides of a round alike, so
    the median of these is steadier than the ratio of the two medians."""
    return [f / b for f, b in zip(figures, baselines, strict=True)]


def median_seconds(fn: Callable[[], Any], runs: int = 5, warmup: int = 1) -> float:
    """Median wall time of `fn()` over `runs` runs, after `warmup` unmeasured runs."""
    return interleaved_medians([fn], runs=runs, warmup=warmup)[0]


def command(argv: Sequence[str], **kwargs: Any) -> Callable[[], None]:
    """A function running `argv` once (output discarded, failure raises)."""

    def once() -> None:
        subprocess.run(
            argv, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, **kwargs
        )

    return once


def median_command_seconds(argv: Sequence[str], runs: int = 10, **kwargs: Any) -> float:
    """Median wall time of running a command `runs` times (output discarded)."""
    return median_seconds(command(argv, **kwargs), runs=runs, warmup=1)


def row(
    name: str,
    figure: float,
    baseline: float,
    target: float,
    unit: str = "s",
    *,
    higher_is_better: bool = False,
    note: str = "",
    informational: bool = False,
) -> dict[str, Any]:
    """One row: `ratio` = figure/baseline, met when <= target (>= for speed-ups).

    `informational`: the row is shown with its real ratio, but a missed target is explained
    in docs/performance.md rather than counted as a failure of the code."""
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
        "informational": informational,
    }
