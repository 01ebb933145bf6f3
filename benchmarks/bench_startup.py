"""Start-up: `pith --version` against bare `python -c pass` (it loads no Typer), `pith --help`
against `python -c "import typer"`, and
`pith bib scan` of a 300-entry bibliography against a fresh `python -c` that imports
bibtexparser and parses the same file.

The commands of each row run in alternation, RUNS times each; medians are compared."""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

from benchmarks._timing import command, interleaved_medians, row

RUNS = 15
BIB_ENTRIES = 300


def run() -> list[dict[str, Any]]:
    bare, baseline, version, help_ = interleaved_medians(
        [
            command([sys.executable, "-c", "pass"]),
            command([sys.executable, "-c", "import typer"]),
            command([sys.executable, "-m", "pithauthor", "--version"]),
            command([sys.executable, "-m", "pithauthor", "--help"]),
        ],
        runs=RUNS,
        warmup=2,
    )
    note = f"median of {RUNS} interleaved runs; baseline: python -c 'import typer'"
    return [
        # `--version` loads no Typer (it is answered first): its honest baseline is bare
        # Python (against `import typer` it beat a baseline heavier than itself)
        row(
            "start-up: pith --version vs bare python",
            version,
            bare,
            1.5,
            note=f"median of {RUNS} interleaved runs; baseline: python -c 'pass'",
        ),
        row("start-up: pith --help", help_, baseline, 1.2, note=note),
        _bib_scan(),
    ]


def _scan(argv: list[str], env: dict[str, str]) -> Callable[[], None]:
    """`pith bib scan`, which exits 1 when an entry's identifier is invalid (the generated
    file holds two, as real ones do): 0 or 1 with its summary line is a complete scan."""

    def once() -> None:
        done = subprocess.run(argv, env=env, capture_output=True, text=True, check=False)
        if done.returncode not in (0, 1) or f"{BIB_ENTRIES} entries" not in done.stdout:
            raise RuntimeError(f"pith bib scan failed: {done.stderr.strip()[-200:]}")

    return once


def _bib_scan() -> dict[str, Any]:
    from benchmarks.bench_bibliography import generate

    with tempfile.TemporaryDirectory(prefix="pith-bench-") as tmp:
        bib = Path(tmp) / "refs.bib"
        generate(bib, entries=BIB_ENTRIES)
        env = {**os.environ, "PITH_HOME": str(Path(tmp) / "home")}
        parse = f"import bibtexparser; bibtexparser.parse_file({str(bib)!r})"
        baseline, scan = interleaved_medians(
            [
                command([sys.executable, "-c", parse], env=env),
                _scan([sys.executable, "-m", "pithauthor", "bib", "scan", str(bib)], env),
            ],
            runs=RUNS,
            warmup=2,
        )
    return row(
        f"start-up: pith bib scan of {BIB_ENTRIES} entries vs import bibtexparser + parse",
        scan,
        baseline,
        1.5,
        note=f"median of {RUNS} interleaved runs; a fresh process each",
    )
