"""benchmarks/run.py as a command: `--help` runs and writes nothing, an unknown name is a usage
error, and the report's header says the load average before and after the run."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
RUN = REPO / "benchmarks" / "run.py"


def _run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(RUN), *args], capture_output=True, text=True, timeout=60, cwd=REPO
    )


def _reports() -> dict[Path, float]:
    """The report files benchmarks/run.py may write, with their modification times."""
    paths = (REPO / "benchmarks" / "RESULTS.md", REPO / "benchmarks" / "RESULTS.partial.md")
    return {p: p.stat().st_mtime_ns for p in paths if p.exists()}


def test_help_prints_usage_and_names_and_writes_no_report() -> None:
    before = _reports()
    result = _run("--help")
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("usage: benchmarks/run.py"), result.stdout
    assert "startup" in result.stdout and "state_cache" in result.stdout  # the names it knows
    assert "running" not in result.stderr  # no benchmark started
    assert _reports() == before


def test_an_unknown_benchmark_is_a_usage_error_before_anything_runs() -> None:
    before = _reports()
    result = _run("startup", "no-such-bench")
    assert result.returncode == 2, result.stderr
    assert "no such benchmark: no-such-bench" in result.stderr
    assert "running" not in result.stderr
    assert _reports() == before


def test_report_header_gives_the_load_average_before_and_after() -> None:
    sys.path.insert(0, str(REPO))
    try:
        from benchmarks.run import _render
    finally:
        sys.path.remove(str(REPO))
    row = {"name": "x", "figure": 2.0, "baseline": 1.0, "ratio": 2.0, "target": 3.0, "met": True}
    text = _render([{**row, "unit": "s"}], [], 5.0, ("0.10 0.20 0.30", "1.50 0.90 0.40"))
    expected = "Load average (1, 5, 15 min): 0.10 0.20 0.30 before the run, 1.50 0.90 0.40 after"
    assert expected in text


def test_chunked_rounds_cover_every_item_on_both_sides_taking_turns() -> None:
    """Each round does all `n` items on each side, in chunks that take turns (the side that
    goes first alternates), and each side's round time is the sum of its own chunks."""
    sys.path.insert(0, str(REPO))
    try:
        from benchmarks._timing import chunked_rounds
    finally:
        sys.path.remove(str(REPO))
    calls: list[tuple[str, int, int]] = []
    now = [0.0]

    def clock() -> float:
        return now[0]

    def side(name: str, cost: float) -> Callable[[int, int], None]:
        def run(start: int, stop: int) -> None:
            calls.append((name, start, stop))
            now[0] += cost * (stop - start)

        return run

    rounds: list[int] = []
    bases, figures = chunked_rounds(
        side("base", 1.0), side("figure", 3.0), 10, 4, runs=2, warmup=1,
        setup=lambda: rounds.append(len(calls)), clock=clock,
    )  # fmt: skip
    assert bases == [10.0, 10.0] and figures == [30.0, 30.0]  # the warm-up round left out
    assert rounds == [0, 6, 12]  # setup before each round
    assert calls[:6] == [
        ("base", 0, 4), ("figure", 0, 4),
        ("figure", 4, 8), ("base", 4, 8),
        ("base", 8, 10), ("figure", 8, 10),
    ]  # fmt: skip
    assert calls[6:12] == calls[:6] == calls[12:]
