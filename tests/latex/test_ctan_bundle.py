"""`make ctan`: the bundle CTAN gets holds the package, its binding, a README and the
documentation, and the documentation builds from the unpacked bundle alone."""

from __future__ import annotations

import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
from support.latex.pdfcheck import info
from support.latex.texbuild import NUMBER, REPO, STY

from pithauthor.latex.sty import SHIPPED


@pytest.mark.tex("pdflatex")
def test_ctan_bundle_unpacks_and_its_documentation_builds(tmp_path: Path) -> None:
    out = tmp_path / "pith-ctan.zip"
    made = subprocess.run(
        [sys.executable, str(REPO / "latex" / "build_ctan.py"), str(out)],
        capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    assert made.returncode == 0, made.stderr
    with zipfile.ZipFile(out) as bundle:
        names = set(bundle.namelist())
        present = [name for name in SHIPPED if STY.with_name(name).is_file()]
        assert STY.name in present  # the others are left out only when this version lacks them
        assert {
            *(f"pith/{name}" for name in present),
            "pith/README.md",
            "pith/pith-doc.tex",
            "pith/pith-doc.pdf",
        } <= names
        for name in present:
            assert bundle.read(f"pith/{name}") == STY.with_name(name).read_bytes(), name
        bundle.extractall(tmp_path / "unpacked")
    folder = tmp_path / "unpacked" / "pith"
    (folder / "pith-doc.pdf").unlink()
    for _ in range(2):
        build = subprocess.run(
            ["pdflatex", "-interaction=nonstopmode", "-halt-on-error", "pith-doc.tex"],
            cwd=folder, capture_output=True, text=True, errors="replace", timeout=300,
        )  # fmt: skip
        assert build.returncode == 0, build.stdout[-3000:]
    assert info(folder / "pith-doc.pdf")["/PithNumber"] == NUMBER
    text = subprocess.run(
        ["pdftotext", str(folder / "pith-doc.pdf"), "-"], capture_output=True, text=True
    ).stdout
    for option in ("placement", "style", "link", "metadata", "baseurl"):
        assert option in text  # every option is documented
    assert text.count("pith:NFG5PAOX") >= 4  # the badge shown live in several styles
