"""Run every benchmark in benchmarks/ (or those named) and write benchmarks/RESULTS.md.

    python benchmarks/run.py              # all: writes benchmarks/RESULTS.md
    python benchmarks/run.py startup      # only bench_startup.py: benchmarks/RESULTS.partial.md
    python benchmarks/run.py --help       # usage and the benchmark names; runs nothing

Each `bench_*.py` module exposes `run() -> list[dict]`; each row holds a figure, a baseline
measured in the same run, their ratio and the target ratio. No benchmark asserts: the report
says whether each target is met.
"""

from __future__ import annotations

import argparse
import importlib
import os
import platform
import sys
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

# Every `pith` a benchmark runs stays on this machine: trusted time asks public authorities and
# calendars after signing (docs/protocol.md), which is network time, not pith's cost, and which
# this machine cannot reach. The benchmarks that time signing commands measure them without it.
os.environ.update(PITH_TSA="none", PITH_OTS_CALENDARS="none", PITH_BTC_HEADERS="none")
# nor the Internet Archive, Software Heritage or arXiv's PDFs (`pith archive`): the discard port
os.environ.update(
    PITH_WAYBACK_URL="http://127.0.0.1:9",
    PITH_SWH_URL="http://127.0.0.1:9",
    PITH_ARXIV_PDF="http://127.0.0.1:9/pdf",
)


def _machine() -> str:
    cpu = platform.processor() or platform.machine()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return (
        f"{platform.system()} {platform.release()}, {cpu}, {os.cpu_count()} cores, "
        f"Python {platform.python_version()}"
    )


def _fmt(value: float, unit: str) -> str:
    if unit == "s":
        return f"{value * 1000:.1f} ms" if value < 1 else f"{value:.2f} s"
    return f"{value:,.1f} {unit}"


def _normalise(r: dict[str, Any]) -> dict[str, Any]:
    """Fill `ratio`, `higher_is_better` and `met` for rows that give only the basics."""
    r = dict(r)
    higher = bool(
        r.get("higher_is_better")
        or r.get("target_kind") in ("min", "minimum")
        or r.get("better") == "higher"
    )
    r["higher_is_better"] = higher
    if "ratio" not in r:
        r["ratio"] = r["figure"] / r["baseline"] if r["baseline"] else float("inf")
    if "met" not in r:
        r["met"] = r["ratio"] >= r["target"] if higher else r["ratio"] <= r["target"]
    r.setdefault("unit", "s")
    return r


def _met(r: dict[str, Any]) -> str:
    if r["met"]:
        return "yes"
    return "no (informational, see docs/performance.md)" if r.get("informational") else "NO"


def _load() -> str:
    """The 1, 5 and 15 minute load averages: on a shared machine the figures mean little
    without them (other processes' CPU time lands in every figure and baseline alike)."""
    try:
        return "{:.2f} {:.2f} {:.2f}".format(*os.getloadavg())
    except OSError:  # not every platform has a load average
        return "unknown"


def _render(
    rows: list[dict[str, Any]], errors: list[str], seconds: float, load: tuple[str, str]
) -> str:
    lines = [
        "# Benchmark results",
        "",
        f"Written by `make bench` on {datetime.now(UTC).strftime('%Y-%m-%d %H:%M UTC')} "
        f"in {seconds:.0f} s.",
        f"Machine: {_machine()}.",
        f"Load average (1, 5, 15 min): {load[0]} before the run, {load[1]} after it.",
        "",
        "Each figure is compared with a baseline measured in the same run; the ratio is "
        "figure / baseline. For speed-ups (marked ≥) higher is better. How each benchmark "
        "works, and how to run one alone: docs/performance.md.",
        "",
        "| benchmark | figure | baseline | ratio | target | met | note |",
        "|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        sign = "≥" if r.get("higher_is_better") else "≤"
        lines.append(
            f"| {r['name']} | {_fmt(r['figure'], r['unit'])} | {_fmt(r['baseline'], r['unit'])} "
            f"| {r['ratio']:.2f}x | {sign} {r['target']}x | {_met(r)} | {r.get('note', '')} |"
        )
    if errors:
        lines += ["", "## Benchmarks that could not run", ""] + [f"- {e}" for e in errors]
    return "\n".join(lines) + "\n"


def _arguments(argv: list[str], names: list[str]) -> set[str]:
    """The benchmarks asked for (none: all). `--help` prints usage and exits before anything
    runs or is written; an unknown name is a usage error (exit 2), not an empty report."""
    parser = argparse.ArgumentParser(
        prog="benchmarks/run.py",
        description="Run the benchmarks and write benchmarks/RESULTS.md (all of them) or "
        "benchmarks/RESULTS.partial.md (those named).",
        epilog="benchmarks: " + ", ".join(names),
    )
    parser.add_argument(
        "benchmarks",
        nargs="*",
        metavar="BENCHMARK",
        help="a benchmark to run, by name (startup) or module (bench_startup); default: all",
    )
    wanted = set(parser.parse_args(argv).benchmarks)
    unknown = sorted(w for w in wanted if w.removeprefix("bench_") not in names)
    if unknown:
        parser.error(f"no such benchmark: {', '.join(unknown)} (choose from {', '.join(names)})")
    return wanted


def _compile_package() -> None:
    """Write the package's bytecode first, as installing a wheel does: a `pith` process timed
    here must not compile the modules changed since the last import (15 of them after a merge:
    45 ms of a 190 ms `pith cite`), and it cannot cache them itself under
    PYTHONDONTWRITEBYTECODE=1, which some shells set. compileall writes them regardless."""
    import compileall

    compileall.compile_dir(HERE.parent / "pithauthor", quiet=1)


def main(argv: list[str]) -> int:
    modules = sorted(p.stem for p in HERE.glob("bench_*.py"))
    wanted = _arguments(argv, [m.removeprefix("bench_") for m in modules])
    if wanted:
        modules = [m for m in modules if m.removeprefix("bench_") in wanted or m in wanted]
    rows: list[dict[str, Any]] = []
    errors: list[str] = []
    _compile_package()
    load_before = _load()
    start = time.perf_counter()
    for name in modules:
        print(f"running {name} …", file=sys.stderr, flush=True)
        t0 = time.perf_counter()
        try:
            module = importlib.import_module(f"benchmarks.{name}")
            new_rows = module.run()
        except Exception as exc:  # one failing benchmark must not hide the rest
            errors.append(f"{name}: {type(exc).__name__}: {exc}")
            continue
        new_rows = [_normalise(r) for r in new_rows]
        for r in new_rows:
            mark = (
                "met"
                if r["met"]
                else "NOT MET" + (" (informational)" * r.get("informational", False))
            )
            print(
                f"  {r['name']}: {r['ratio']:.2f}x (target {r['target']}x, {mark})", file=sys.stderr
            )
        print(f"  ({time.perf_counter() - t0:.0f} s)", file=sys.stderr)
        rows.extend(new_rows)
    report = _render(rows, errors, time.perf_counter() - start, (load_before, _load()))
    out = HERE / "RESULTS.md" if not wanted else HERE / "RESULTS.partial.md"
    if out.exists():  # keep the test-suite durations written by suite_times.py
        from suite_times import kept_section

        kept = kept_section(out.read_text("utf-8"))
        report += "\n" + kept if kept else ""
    out.write_text(report, "utf-8")
    print(f"wrote {out}", file=sys.stderr)
    return 1 if errors else 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
