"""`pith --version` and `pith --help` import none of the heavy libraries (python -X importtime)."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

HEAVY = ("httpx", "keyring", "nacl", "bibtexparser", "pylatexenc", "sqlite3", "jsonschema", "rich")


def _imported_modules(*args: str) -> set[str]:
    env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1"}
    result = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "pithauthor", *args],
        capture_output=True,
        text=True,
        env=env,
        check=True,
    )
    modules = set()
    for line in result.stderr.splitlines():
        if line.startswith("import time:") and "|" in line:
            modules.add(line.rsplit("|", 1)[1].strip())
    assert modules, "importtime printed nothing"
    return modules


@pytest.mark.parametrize("args", [("--version",), ("--help",)], ids=["version", "help"])
def test_version_and_help_import_no_heavy_library(args: tuple[str, ...]) -> None:
    modules = _imported_modules(*args)
    assert "pithauthor._version" in modules  # the measurement itself works
    heavy = sorted(m for m in modules if m.split(".")[0] in HEAVY or m == "_sqlite3")
    assert heavy == []


def test_version_answers_before_the_command_tree_is_built() -> None:
    modules = _imported_modules("--version")
    assert "typer" not in modules and "pithauthor._cli.main" not in modules
    assert "typer" in _imported_modules("--help")


def test_a_command_does_import_what_it_needs() -> None:
    """Proves the check can fail: verifying a record does load PyNaCl."""
    from conftest import FIXTURES

    modules = _imported_modules("verify", str(FIXTURES / "record-2302.12445v2.json"))
    assert "nacl" in modules


def test_every_public_name_of_the_package_resolves() -> None:
    import pithauthor

    missing = [name for name in pithauthor.__all__ if getattr(pithauthor, name, None) is None]
    assert missing == []
    assert "PithNumber" in dir(pithauthor)
