"""Shared test set-up: an isolated PITH_HOME per test, the `pith` command as a real process,
the `tex` marker (skip without TeX; fail instead under CI, where PITH_REQUIRE_TEX=1), and
`slow` tests left out unless asked for (`-m slow`, or PITH_SLOW=1)."""

from __future__ import annotations

import json
import logging
import os
import shutil
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

FIXTURES = Path(__file__).parent / "fixtures"
LAUNCHER = str(Path(__file__).parent / "pith_launcher.py")
"""`pith` as the tests start it: `python -m pithauthor` plus the test-only KDF switch."""
FAST_KDF_ENV = "PITH_TEST_FAST_KDF"
"""Read by tests/pith_launcher.py only: never by the package."""
REPO = Path(__file__).resolve().parent.parent
REQUIRE_TEX = os.environ.get("PITH_REQUIRE_TEX") == "1"

_CLEARED_ENV = ("PITH_PASSPHRASE", "PITH_REGISTRY", "PITH_TOKEN", "PITH_DEBUG", "PITH_TRUST")


@pytest.fixture(autouse=True)
def isolated_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """Every test gets its own PITH_HOME and no keyring unless it registers one itself."""
    home = tmp_path / "pith-home"
    monkeypatch.setenv("PITH_HOME", str(home))
    monkeypatch.setenv("PYTHON_KEYRING_BACKEND", "keyring.backends.fail.Keyring")
    for name in _CLEARED_ENV:
        monkeypatch.delenv(name, raising=False)
    yield home


def use_fast_kdf(monkeypatch: pytest.MonkeyPatch) -> None:
    """TEST ONLY: the cheap KDF in this process, and in `pith` processes the test starts."""
    from pithauthor._keystore import container

    monkeypatch.setattr(container, "TEST_FAST_KDF", True)
    monkeypatch.setenv(FAST_KDF_ENV, "1")


def load_fixture(name: str) -> Any:
    """A JSON fixture from tests/fixtures (a .jsonl file gives a list)."""
    path = FIXTURES / name
    if name.endswith(".jsonl"):
        return [json.loads(line) for line in path.read_text("utf-8").splitlines() if line]
    return json.loads(path.read_text("utf-8"))


RunPith = Callable[..., subprocess.CompletedProcess[str]]


@pytest.fixture
def pith() -> RunPith:
    """Run the real `pith` command in a subprocess; returns the CompletedProcess."""

    def run(
        *args: str,
        input: str | None = None,
        env: dict[str, str] | None = None,
        cwd: Path | None = None,
        timeout: float = 120,
    ) -> subprocess.CompletedProcess[str]:
        full_env = {**os.environ, **(env or {})}
        return subprocess.run(
            [sys.executable, LAUNCHER, *args],
            input=input,
            capture_output=True,
            text=True,
            env=full_env,
            cwd=cwd,
            timeout=timeout,
        )

    return run


def assert_one_line_error(result: subprocess.CompletedProcess[str], code: int) -> None:
    """A user error: the documented exit code, one line on stderr, no traceback."""
    assert result.returncode == code, (result.returncode, result.stdout, result.stderr)
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith("pith: error: "), result.stderr
    assert "Traceback" not in result.stderr


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "tex(*programs): needs these TeX programs")


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """`slow` tests (the LaTeX matrices) run only when asked: with a -m expression (CI runs
    `-m slow` after `make test`) or PITH_SLOW=1."""
    if config.option.markexpr or os.environ.get("PITH_SLOW") == "1":
        return
    slow = [item for item in items if item.get_closest_marker("slow")]
    if slow:
        config.hook.pytest_deselected(items=slow)
        items[:] = [item for item in items if not item.get_closest_marker("slow")]


def pytest_runtest_setup(item: pytest.Item) -> None:
    marker = item.get_closest_marker("tex")
    if marker is None:
        return
    programs = marker.args or ("pdflatex",)
    missing = [p for p in programs if shutil.which(p) is None]
    if missing:
        reason = f"TeX programs not installed: {', '.join(missing)}"
        if REQUIRE_TEX:
            pytest.fail(reason + " (PITH_REQUIRE_TEX=1: CI must have TeX)")
        pytest.skip(reason)


class _Collect(logging.Handler):
    def __init__(self, records: list[logging.LogRecord]) -> None:
        super().__init__(logging.ERROR)
        self.records = records

    def emit(self, record: logging.LogRecord) -> None:
        self.records.append(record)


@pytest.fixture(autouse=True)
def registry_500s() -> Iterator[list[logging.LogRecord]]:
    """A 500 from an in-process local registry is a bug: it fails the test that caused it
    (a test that makes one on purpose empties this list)."""
    records: list[logging.LogRecord] = []
    handler = _Collect(records)
    logger = logging.getLogger("pithauthor.registry")
    logger.addHandler(handler)
    try:
        yield records
    finally:
        logger.removeHandler(handler)
    if records:
        pytest.fail("the local registry answered 500: " + records[0].getMessage())


def pytest_terminal_summary(terminalreporter: Any) -> None:
    """The tamper suites' counts (tried / refused / accepted and reported), when any ran."""
    from tamper_counts import lines

    rows = lines()
    if rows:
        terminalreporter.section("tamper counts")
        for row in rows:
            terminalreporter.write_line(row)
