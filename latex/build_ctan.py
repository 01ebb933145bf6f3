"""Build the CTAN bundle of pith.sty: `python latex/build_ctan.py OUT.zip` (`make ctan`).

The zip holds one folder `pith/` with every file the package ships (pith.sty and the files it
reads, each with its role: `pithauthor.latex.sty.MANIFEST`; one missing from this version is
left out), README.md, pith-doc.tex and pith-doc.pdf, built here from pith-doc.tex with
pdfLaTeX (twice, for the references). Exit 1, with the log's first error, when the documentation does not build.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))  # the checkout's pithauthor, installed or not
from pithauthor.latex.sty import SHIPPED  # noqa: E402 (after the path it is found on)

SOURCES = (*SHIPPED, "README.md", "pith-doc.tex")
FLAGS = ["-interaction=nonstopmode", "-halt-on-error", "-no-shell-escape"]


def build(out: Path) -> list[str]:
    """Write the bundle to `out`; return its member names."""
    with tempfile.TemporaryDirectory(prefix="pith-ctan-") as tmp:
        folder = Path(tmp) / "pith"
        folder.mkdir()
        for name in SOURCES:
            if (HERE / name).is_file():
                shutil.copyfile(HERE / name, folder / name)
        for _ in range(2):
            run = subprocess.run(
                ["pdflatex", *FLAGS, "pith-doc.tex"],
                cwd=folder, capture_output=True, text=True, errors="replace", timeout=300,
            )  # fmt: skip
            if run.returncode != 0:
                first = next((x for x in run.stdout.splitlines() if x.startswith("!")), "")
                raise SystemExit(f"build_ctan: pith-doc.tex does not build: {first}")
        names = [n for n in (*SOURCES, "pith-doc.pdf") if (folder / n).is_file()]
        out.parent.mkdir(parents=True, exist_ok=True)
        with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as bundle:
            for name in names:
                bundle.write(folder / name, f"pith/{name}")
    return [f"pith/{n}" for n in names]


if __name__ == "__main__":
    target = Path(sys.argv[1] if len(sys.argv) > 1 else "dist/pith-ctan.zip")
    for member in build(target):
        print(member)
    print(f"{target}: CTAN bundle written", file=sys.stderr)
