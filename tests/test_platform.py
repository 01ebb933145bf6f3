"""The Pythons authors have: nothing in pithauthor needs a patch release newer than
the oldest Python that pyproject.toml allows. Debian 12's own `python3` is 3.11.2, and
`tarfile`'s extraction filters (`extractall(filter=...)`, `tarfile.data_filter`) came in 3.11.4:
`pith latex arxiv` crashed there. This checks every call statically on any Python; `.ci/run`
also runs the suite under Debian's python3 (`make test-debian-python`)."""

from __future__ import annotations

import ast
import re
import tomllib
from pathlib import Path

import pithauthor

REPO = Path(pithauthor.__file__).resolve().parent.parent
# the code an author's `pith` runs, and what packs or tests it
SOURCES = [
    *sorted((REPO / "pithauthor").rglob("*.py")),
    *sorted((REPO / "latex").glob("*.py")),
    *sorted((REPO / "benchmarks").glob("*.py")),
    *sorted((REPO / "tests").rglob("*.py")),
]
# tarfile's names from 3.11.4 (and 3.12): absent on 3.11.0-3.11.3
NEWER_TARFILE = {"data_filter", "tar_filter", "fully_trusted_filter", "extraction_filter"}


def newer_than_3_11_0(source: str, name: str = "<source>") -> list[str]:
    """Each use in `source` of what 3.11.0 lacks: an `extract`/`extractall` call given
    `filter=` (tarfile's, from 3.11.4; zipfile's take none), or one of tarfile's filter names."""
    found = []
    for node in ast.walk(ast.parse(source, name)):
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr in ("extract", "extractall")
            and any(keyword.arg == "filter" for keyword in node.keywords)
        ):
            found.append(f"{name}:{node.lineno}: {node.func.attr}(filter=...)")
        elif isinstance(node, ast.Attribute) and node.attr in NEWER_TARFILE:
            found.append(f"{name}:{node.lineno}: .{node.attr}")
    return found


def test_no_call_passes_filter_to_tarfile_extraction() -> None:
    found = [
        hit for path in SOURCES for hit in newer_than_3_11_0(path.read_text("utf-8"), str(path))
    ]
    assert found == [], "new in Python 3.11.4; Debian 12 has 3.11.2: " + "; ".join(found)


def test_the_check_sees_each_form_of_the_filter() -> None:
    assert newer_than_3_11_0("t.extractall(d, filter='data')") == [
        "<source>:1: extractall(filter=...)"
    ]
    assert newer_than_3_11_0("t.extract(m, filter=tarfile.data_filter)") == [
        "<source>:1: extract(filter=...)",
        "<source>:1: .data_filter",
    ]
    assert newer_than_3_11_0("t.extraction_filter = f") == ["<source>:1: .extraction_filter"]
    assert newer_than_3_11_0("t.add(p, filter=strip_owner)") == []  # TarFile.add's, from 3.2


def test_the_oldest_python_allowed_is_the_one_the_guards_name() -> None:
    """pyproject's requires-python, the entry point's refusal and the Makefile's agree."""
    pyproject = tomllib.loads((REPO / "pyproject.toml").read_text("utf-8"))
    oldest = re.fullmatch(r">=(\d+)\.(\d+)", pyproject["project"]["requires-python"])
    assert oldest is not None
    assert (int(oldest[1]), int(oldest[2])) == pithauthor._OLDEST_PYTHON
    makefile = (REPO / "Makefile").read_text("utf-8")
    assert f"sys.version_info < ({oldest[1]}, {oldest[2]})" in makefile


def test_an_older_python_is_refused_at_once_in_one_line() -> None:
    """`pith` (or an import) under Python 3.10 stops before anything else, with one line
    naming the Python and the install route that brings a newer one. (3.10's own run is this
    line too: python3.10 -m pithauthor, checked by hand on Ubuntu 22.04's 3.10.)"""
    import subprocess
    import sys

    fake = "import sys; sys.version_info = (3, 10, 12, 'final', 0); import pithauthor._cli.entry"
    result = subprocess.run(
        [sys.executable, "-c", fake], capture_output=True, text=True, timeout=60, cwd=REPO
    )
    assert result.returncode == 1
    assert result.stdout == ""
    lines = result.stderr.splitlines()
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith("pith: error: pithauthor needs Python 3.11 or newer")
    assert "uv tool install ." in lines[0]


def test_ci_installs_tex_with_make_tex_and_runs_debians_python() -> None:
    """One list of TeX packages (the Makefile's, behind `make tex`, which the skipped-tests line
    names); CI installs with it and runs the suite under Debian's python3 too."""
    ci = (REPO / ".ci" / "run").read_text("utf-8")
    makefile = (REPO / "Makefile").read_text("utf-8")
    commands = [line.split("#")[0].strip() for line in ci.splitlines()]
    assert "make tex" in commands
    assert "make test-debian-python" in commands
    assert "texlive" not in ci  # no second list to drift
    assert re.search(r"^tex:", makefile, flags=re.M)
    assert re.search(r"^TEX_PACKAGES = texlive-latex-base", makefile, flags=re.M)
    assert re.search(r"^DEBIAN_PYTHON \?= /usr/bin/python3$", makefile, flags=re.M)


def test_make_refuses_an_older_python_at_once_in_one_line(tmp_path: Path) -> None:
    """`make install PYTHON=python3.10` stops before a venv is made or anything downloaded."""
    import shutil
    import subprocess
    import sys

    if shutil.which("make") is None:
        import pytest

        pytest.skip("make is not installed")
    old = tmp_path / "python3.10"  # this Python, answering version checks as 3.10.12
    old.write_text(
        "#!/bin/sh\n"
        f'exec "{sys.executable}" -c "import sys; sys.version_info = (3, 10, 12, \'final\', 0); '
        'sys.version = \'3.10.12\'; exec(sys.argv.pop(1))" "$2"\n'
    )
    old.chmod(0o755)
    venv = tmp_path / "venv"
    result = subprocess.run(
        ["make", "-s", "-C", str(REPO), "install", f"PYTHON={old}", f"VENV={venv}"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode != 0
    assert not venv.exists()
    first = result.stderr.splitlines()[0]
    assert first == f"make: pithauthor needs Python 3.11 or newer; {old} is 3.10.12: " + (
        "make PYTHON=python3.11 ..."
    ), result.stderr


def test_the_session_wide_local_trust_has_one_name() -> None:
    """The CLI spells PITH_TRUST_LOCAL_REGISTRY itself (no library import for `--help`); it is
    the registry face's name, which `pith doctor` reads too."""
    from pithauthor._cli.options import TRUST_LOCAL_ENV as CLI_NAME
    from pithauthor.registry.credentials import TRUST_LOCAL_ENV

    assert CLI_NAME == TRUST_LOCAL_ENV == "PITH_TRUST_LOCAL_REGISTRY"
