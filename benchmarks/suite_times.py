"""Time `make check`, `make test` and `make test-all` and write their section of
benchmarks/RESULTS.md.

    python benchmarks/suite_times.py            # the three (what `make test-durations` runs)
    python benchmarks/suite_times.py check      # only `make check` (the other row is kept)

Wall time depends on what else the machine runs, so the section also gives the CPU time of the
run (user + system, every process it started) and the load average before and after. The
section is kept when `make bench` rewrites the rest of RESULTS.md.

The caches are warmed first, untimed: the aims are for the edit loop, which re-runs a suite
whose bytecode and rewritten test modules are already on disk. Right after a checkout or a merge
every pytest worker rewrites the asserts of every test module it imports, and the `pith`
processes compile the package: `make check` took 62 CPU-s cold against 46 CPU-s warm on the same
tree (docs/performance.md, the test suite).
"""

from __future__ import annotations

import os
import re
import resource
import subprocess
import sys
import time
from datetime import UTC, datetime
from pathlib import Path

HERE = Path(__file__).resolve().parent
RESULTS = HERE / "RESULTS.md"
SECTION = "## Test suite durations"
TARGETS = {"check": "30 s", "test": "100 s", "test-all": ""}  # test-all: no aim (CI's)
_SUMMARY = re.compile(r"^=*\s*(\d+ (?:passed|failed|skipped|deselected|errors?|xfailed).*) in ")


def _load() -> str:
    return " ".join(Path("/proc/loadavg").read_text().split()[:3])


def warm_caches() -> None:
    """One collection of the whole suite, untimed: it writes the bytecode of the package and of
    the test helpers and pytest's rewritten test modules, which every timed run then reads."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "--collect-only", "-p", "no:anyio"],
        cwd=HERE.parent,
        env=env,
        capture_output=True,
        check=False,
    )


def _time(target: str) -> dict[str, str]:
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    load_before, start = _load(), time.perf_counter()
    proc = subprocess.run(
        ["make", "--no-print-directory", target],
        cwd=HERE.parent,
        capture_output=True,
        text=True,
        check=False,
    )
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    lines = [_SUMMARY.match(line.strip("= ")) for line in proc.stdout.splitlines()]
    counts = next((m.group(1) for m in reversed(lines) if m), "no pytest summary")
    sys.stderr.write(f"make {target}: {wall:.0f} s wall, {cpu:.0f} s CPU, {counts}\n")
    for line in proc.stdout.splitlines():  # which tests failed: the summary only counts them
        if line.startswith(("FAILED ", "ERROR ")):
            sys.stderr.write(f"  {line}\n")
    return {
        "target": f"`make {target}`",
        "wall": f"{wall:.0f} s",
        "cpu": f"{cpu:.0f} s",
        "aim": TARGETS.get(target, ""),
        "tests": counts + ("" if proc.returncode == 0 else f" (exit {proc.returncode})"),
        "load": f"{load_before} → {_load()}",
    }


def _row(r: dict[str, str]) -> str:
    return f"| {r['target']} | {r['wall']} | {r['cpu']} | {r['aim']} | {r['tests']} | {r['load']} |"


def _section(rows: list[str]) -> str:
    stamp = datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")
    lines = [
        SECTION,
        "",
        f"Written by `benchmarks/suite_times.py` on {stamp}, {os.cpu_count()} cores, after one "
        "untimed collection (warm bytecode caches, as in the edit loop). Wall time "
        "is what the machine's load allows; CPU time (user + system of every process) is "
        "less affected by it. Load average: 1, 5, 15 minutes, before → after; above the core "
        "count, other jobs shared the machine and the wall times are longer than idle ones.",
        "",
        "| command | wall | CPU | aim (idle 2 cores, wall) | tests | load average |",
        "|---|---|---|---|---|---|",
    ]
    lines += rows
    return "\n".join(lines) + "\n"


def replace_section(text: str, section: str) -> str:
    """`text` with its test-durations section (up to the next `## ` heading) replaced."""
    head, found, rest = text.partition(SECTION)
    if not found:
        return text.rstrip("\n") + "\n\n" + section
    tail = rest.split("\n## ", 1)
    after = "\n## " + tail[1] if len(tail) == 2 else ""
    return head + section + after


def kept_section(text: str) -> str:
    """The test-durations section of an existing RESULTS.md (for `make bench` to keep)."""
    _, found, rest = text.partition(SECTION)
    if not found:
        return ""
    return SECTION + rest.split("\n## ", 1)[0].rstrip("\n") + "\n"


def main(argv: list[str]) -> int:
    targets = argv or list(TARGETS)
    warm_caches()
    rows = [_row(_time(t)) for t in targets]
    text = RESULTS.read_text("utf-8") if RESULTS.exists() else "# Benchmark results\n"
    earlier = kept_section(text).splitlines()  # rows of targets not timed this time stay
    rows += [r for r in earlier if r.startswith("| `make ") and r.split("`")[1][5:] not in targets]
    RESULTS.write_text(replace_section(text, _section(rows)), "utf-8")
    sys.stderr.write(f"wrote {RESULTS}\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
