"""A PITH_HOME others may write in, or that another user owns: every command
that opens it warns about the first and refuses the second, and `pith doctor` reports both.

The suite runs as root: "another user owns it" is made with os.chown to the nobody uid."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from support.cli import RunPith, assert_one_line_error

NOBODY = 65534


def _home(isolated_home: Path, mode: int) -> Path:
    isolated_home.mkdir(parents=True, exist_ok=True)
    os.chmod(isolated_home, mode)
    return isolated_home


def _doctor_home(pith: RunPith) -> dict[str, str]:
    result = pith("doctor", "--offline", "--json")
    found = {f["check"]: f for f in json.loads(result.stdout)}
    return {**found["home"], "returncode": str(result.returncode), "stderr": result.stderr}


@pytest.mark.parametrize("mode", [0o777, 0o770, 0o1777])
def test_a_home_others_may_write_in_is_warned_about_once_by_a_command_opening_it(
    pith: RunPith, isolated_home: Path, mode: int
) -> None:
    home = _home(isolated_home, mode)
    result = pith("outbox", "list")
    assert result.returncode == 0, result.stderr
    warnings = [line for line in result.stderr.splitlines() if line.startswith("pith: warning:")]
    assert len(warnings) == 1, result.stderr
    assert str(home) in warnings[0] and f"chmod 700 {home}" in warnings[0]
    again = pith("outbox", "list")  # each command says it again
    assert "pith: warning:" in again.stderr


def test_doctor_reports_a_home_others_may_write_in(pith: RunPith, isolated_home: Path) -> None:
    _home(isolated_home, 0o777)
    home = _doctor_home(pith)
    assert home["level"] == "warn" and "may rename or replace" in home["detail"]


def test_a_private_home_is_not_warned_about(pith: RunPith, isolated_home: Path) -> None:
    _home(isolated_home, 0o700)
    assert "warning" not in pith("outbox", "list").stderr
    assert _doctor_home(pith)["level"] == "ok"


@pytest.fixture
def foreign_home(isolated_home: Path) -> Path:
    if os.getuid() != 0:
        pytest.skip("making a folder another user's needs root")
    home = _home(isolated_home, 0o700)
    os.chown(home, NOBODY, NOBODY)
    return home


@pytest.mark.parametrize(
    "command",
    [["outbox", "list"], ["keys", "list"], ["submit"], ["keys", "generate", "--name", "x"]],
)
def test_a_home_another_user_owns_is_refused_by_every_command_opening_it(
    pith: RunPith, foreign_home: Path, command: list[str]
) -> None:
    result = pith(*command)
    assert_one_line_error(result, 4)
    assert f"{foreign_home} is owned by another user (uid {NOBODY})" in result.stderr
    assert list(foreign_home.iterdir()) == []  # nothing was made in it


def test_doctor_reports_a_home_another_user_owns_as_unsafe(
    pith: RunPith, foreign_home: Path
) -> None:
    home = _doctor_home(pith)
    assert home["level"] == "unsafe" and f"uid {NOBODY}" in home["detail"]
    assert home["returncode"] == "1"
    assert list(foreign_home.iterdir()) == []
