"""The built wheel carries what the package needs at run time: pith.sty, the pinned manifest,
the payload schemas and the example papers."""

from __future__ import annotations

import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
from conftest import REPO


@pytest.mark.slow
def test_the_wheel_carries_pith_sty_the_manifest_and_the_schemas(tmp_path: Path) -> None:
    """Slow: builds the wheel with pip (10-20 s)."""
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "--quiet", "-w", str(tmp_path),
         str(REPO)],
        check=True, capture_output=True, timeout=300,
    )  # fmt: skip
    (wheel,) = tmp_path.glob("pithauthor-*.whl")
    with zipfile.ZipFile(wheel) as zf:
        names = set(zf.namelist())
        sty = zf.read("pithauthor/data/pith.sty")
        ltxml = zf.read("pithauthor/data/pith.sty.ltxml")
        manifest = zf.read("pithauthor/data/pith-mirrors.json")
    assert sty == (REPO / "latex" / "pith.sty").read_bytes()  # the file itself, not a link
    assert ltxml == (REPO / "latex" / "pith.sty.ltxml").read_bytes()
    assert manifest == (REPO / "pithauthor" / "data" / "pith-mirrors.json").read_bytes()
    schemas = {n for n in names if n.startswith("pithauthor/schemas/") and n.endswith(".json")}
    assert {Path(n).name for n in schemas} == {
        "author_attestation.schema.json",
        "citation_signature.schema.json",
        "replication_record.schema.json",
    }
    assert "pithauthor/data/examples/2302.12445.json" in names
    assert "pithauthor/data/demo/refs.bib" in names
    assert not any(n.startswith(("tests/", "benchmarks/")) for n in names)
    licences = {n.split("/licenses/", 1)[1] for n in names if "/licenses/" in n}
    assert licences == {"LICENSE", "latex/LICENSE"}  # MIT for Python, LPPL 1.3c for pith.sty
    assert "pithauthor/data/LICENSE-pith.sty" in names
    assert "pithauthor/py.typed" in names  # type checkers read the package's hints (PEP 561)
