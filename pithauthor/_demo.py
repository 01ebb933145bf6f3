"""`make demo`: what pithauthor does today, on the bundled example paper and real vectors."""

from __future__ import annotations

import subprocess
import sys
from importlib import resources


def _run(*args: str) -> str:
    print(f"\n$ pith {' '.join(args)}", flush=True)
    result = subprocess.run(
        [sys.executable, "-m", "pithauthor", *args], capture_output=True, text=True
    )
    sys.stdout.write(result.stdout)
    sys.stdout.write(result.stderr)
    if result.returncode != 0:
        raise SystemExit(f"demo step failed with exit code {result.returncode}")
    return result.stdout


def main() -> None:
    examples = resources.files("pithauthor").joinpath("data", "examples")
    with resources.as_file(examples) as folder:
        print("pithauthor demo: a Pith Number from arXiv metadata, then the registry's own data")
        _run("number", "from-arxiv", str(folder / "arxivraw-2302.12445.xml"))
        _run("verify", str(folder / "record-2302.12445v2.json"))
        _run("verify", str(folder / "state-2204.10562v1.json"))
    print("\ndemo finished: every check above passed or is marked unverifiable")


if __name__ == "__main__":
    main()
