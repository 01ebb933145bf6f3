"""A process that holds an unlocked key makes no core dump: after a key is unlocked,
made or restored, RLIMIT_CORE is 0 and the process is not dumpable, and a crash then leaves no
core file, where the same crash before any key was touched does. Real processes, real crashes."""

from __future__ import annotations

import json
import os
import resource
import subprocess
import sys
from pathlib import Path

import pytest
from support.cli import FAST_KDF_ENV, use_fast_kdf
from support.keys import PASSPHRASE, SENTINEL_SEED, assert_no_seed, write_backup

from pithauthor.keys import author

LINUX = sys.platform.startswith("linux")

# the child: switch on the test-only cheap KDF (as tests/support/pith_launcher.py does), do
# ACTION, then report its core-dump settings (before and after) on stdout, then crash with
# SIGABRT if asked
CHILD = """
import ctypes, json, os, resource, sys
from pithauthor.keys import secrets
secrets.TEST_FAST_KDF = True
from pithauthor.keys import author

def settings():
    linux = sys.platform.startswith("linux")
    dumpable = ctypes.CDLL(None).prctl(3, 0, 0, 0, 0) if linux else None  # PR_GET_DUMPABLE
    return {"core_limit": resource.getrlimit(resource.RLIMIT_CORE), "dumpable": dumpable}

action, crash = sys.argv[1], sys.argv[2] == "crash"
before = settings()
if action == "load":
    author.load_signing_key()
elif action == "generate":
    author.generate(f"key-{os.getpid()}", backend="file")
elif action == "import":
    author.import_backup(sys.argv[3], backend="file", orcid_retirement=None)
elif action == "list":
    author.list_keys()  # public records only: no secret in memory
print(json.dumps({"before": before, "after": settings()}))
sys.stdout.flush()
if crash:
    os.abort()
"""


def _allow_core_files() -> None:
    """In the child, before it runs: core files as large as the hard limit allows."""
    _, hard = resource.getrlimit(resource.RLIMIT_CORE)
    resource.setrlimit(resource.RLIMIT_CORE, (hard, hard))


def _child(action: str, cwd: Path, *extra: str, crash: bool = False) -> tuple[dict, int]:
    env = {**os.environ, "PITH_PASSPHRASE": PASSPHRASE, FAST_KDF_ENV: "1"}
    proc = subprocess.run(
        [sys.executable, "-c", CHILD, action, "crash" if crash else "report", *extra],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        preexec_fn=_allow_core_files,
    )
    assert proc.stdout, proc.stderr
    assert_no_seed(proc.stdout + proc.stderr)
    return json.loads(proc.stdout.splitlines()[0]), proc.returncode


@pytest.fixture
def stored_key(monkeypatch: pytest.MonkeyPatch) -> None:
    """An encrypted key in this test's PITH_HOME (the children raise their soft core limit
    again, which this process lowers now: the hard limit stays)."""
    use_fast_kdf(monkeypatch)
    monkeypatch.setenv("PITH_PASSPHRASE", PASSPHRASE)
    author.generate("first", backend="file")


@pytest.mark.skipif(not hasattr(os, "fork"), reason="POSIX only")
@pytest.mark.parametrize("action", ["load", "generate", "import"])
def test_once_a_secret_is_in_memory_the_process_forbids_core_dumps(
    tmp_path: Path, stored_key: None, action: str
) -> None:
    backup = tmp_path / "sentinel.backup"
    if action == "import":
        write_backup(backup, SENTINEL_SEED, PASSPHRASE)
    hard = resource.getrlimit(resource.RLIMIT_CORE)[1]
    seen, _ = _child(action, tmp_path, str(backup))
    assert seen["before"]["core_limit"] == [hard, hard]  # as the child was started
    assert seen["after"]["core_limit"] == [0, hard]
    if LINUX:
        assert (seen["before"]["dumpable"], seen["after"]["dumpable"]) == (1, 0)


def test_a_process_that_touched_no_secret_keeps_its_core_dump_settings(
    tmp_path: Path, stored_key: None
) -> None:
    seen, _ = _child("list", tmp_path)
    assert seen["after"] == seen["before"]


def _core_files(folder: Path) -> list[Path]:
    return [p for p in folder.iterdir() if p.name == "core" or p.name.startswith("core.")]


@pytest.mark.skipif(not hasattr(os, "fork"), reason="POSIX only")
def test_a_crash_with_a_key_unlocked_writes_no_core_file(tmp_path: Path, stored_key: None) -> None:
    control, unlocked = tmp_path / "control", tmp_path / "unlocked"
    control.mkdir()
    unlocked.mkdir()
    _, code = _child("list", control, crash=True)
    assert code < 0  # killed by SIGABRT
    if not _core_files(control):
        pytest.skip("this system writes no core file in the working folder (core_pattern)")
    _, code = _child("load", unlocked, crash=True)
    assert code < 0
    assert _core_files(unlocked) == []


@pytest.mark.skipif(not Path("/proc/self/limits").exists(), reason="needs /proc (Linux)")
def test_a_serving_registry_holds_its_key_with_core_dumps_off(tmp_path: Path) -> None:
    cmd = [sys.executable, "-m", "pithauthor", "registry", "serve", "--port", "0"]
    proc = subprocess.Popen(
        [*cmd, "--data", str(tmp_path / "reg")],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
        preexec_fn=_allow_core_files,
    )
    try:
        assert proc.stdout is not None and proc.stdout.readline().startswith("http://")
        limits = Path(f"/proc/{proc.pid}/limits").read_text()
        (line,) = [x for x in limits.splitlines() if x.startswith("Max core file size")]
        assert line.split()[4] == "0", line  # the soft limit
    finally:
        proc.terminate()
        proc.wait(10)
