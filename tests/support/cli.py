"""Running `pith` from a test: in this process (`run_in_process`, behind the `pith` fixture),
on a pseudo-terminal (`on_terminal`, behind `terminal`), and what a test checks of its errors
(`assert_one_line_error`, `error_lines`, `next_step`); the test-only KDF and back-off switches.
The fixtures themselves are in tests/conftest.py."""

from __future__ import annotations

import gc
import io
import os
import pty
import select
import subprocess
import sys
import traceback
import warnings
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from pithauthor.registry.local.server import RegistryServer

LAUNCHER = str(Path(__file__).parent / "pith_launcher.py")
"""`pith` as the tests start it: `python -m pithauthor` plus the test-only KDF switch."""
FAST_KDF_ENV = "PITH_TEST_FAST_KDF"
"""Read by tests/support/pith_launcher.py only: never by the package."""

NO_REGISTRY = "http://127.0.0.1:9"  # the discard port: nothing listens, a connection is refused

RunPith = Callable[..., subprocess.CompletedProcess[str]]
"""The type of the `pith` and `pith_process` fixtures."""
OnTerminal = Callable[..., tuple[int, str]]
"""The type of the `terminal` fixture."""
StartRegistry = Callable[..., "RegistryServer"]
"""The type of the `local_registry` fixture."""


def skip_backoff(monkeypatch: pytest.MonkeyPatch) -> None:
    """What `no_backoff` does, for a test that sets it up in its own helper."""
    from pithauthor.net import RetryPolicy

    monkeypatch.setattr(RetryPolicy, "delay", lambda self, attempt, retry_after=None: 0.0)


def use_fast_kdf(monkeypatch: pytest.MonkeyPatch) -> None:
    """TEST ONLY: the cheap KDF in this process, and in `pith` processes the test starts."""
    from pithauthor.keys import secrets

    monkeypatch.setattr(secrets, "TEST_FAST_KDF", True)
    monkeypatch.setenv(FAST_KDF_ENV, "1")


def run_in_process(
    args: list[str],
    *,
    input: str | None = None,
    env: dict[str, str] | None = None,
    cwd: Path | None = None,
    through: Callable[[list[str]], object] | None = None,
) -> subprocess.CompletedProcess[str]:
    """`pith ARGS` through `pithauthor._cli.main.main` (or `through`, given ARGS) with its own
    stdin/stdout/stderr, environment and working directory, all restored afterwards."""
    from pithauthor._cli.main import main
    from pithauthor.keys import secrets

    saved_fast_kdf = secrets.TEST_FAST_KDF

    stdin = io.TextIOWrapper(io.BytesIO((input or "").encode("utf-8")), encoding="utf-8")
    stdout = io.TextIOWrapper(io.BytesIO(), encoding="utf-8", write_through=True)
    stderr = io.TextIOWrapper(
        io.BytesIO(), encoding="utf-8", errors="backslashreplace", write_through=True
    )
    saved_streams = (sys.stdin, sys.stdout, sys.stderr)
    saved_env, saved_cwd, saved_path = dict(os.environ), os.getcwd(), list(sys.path)
    collecting = gc.isenabled()  # a plain `pith status` pauses it for the rest of its process
    code: int | str | None = 0
    try:
        os.environ.update(env or {})
        os.environ.setdefault("COLUMNS", "80")  # as wide as a pipe, even under `pytest -s`
        extra_paths = os.environ.get("PYTHONPATH", "").split(os.pathsep)
        sys.path[:0] = [p for p in extra_paths if p and p not in sys.path]
        if cwd is not None:
            os.chdir(cwd)
        _reset_process_state()
        secrets.TEST_FAST_KDF = os.environ.get(FAST_KDF_ENV) == "1"  # as pith_launcher.py does
        sys.stdin, sys.stdout, sys.stderr = stdin, stdout, stderr
        with warnings.catch_warnings():
            _interpreter_warnings()
            try:
                (through or main)(args)
            except SystemExit as exc:
                code = exc.code
            except BaseException:  # what the interpreter would print before exit 1
                traceback.print_exc(file=sys.stderr)
                code = 1
    finally:
        sys.stdin, sys.stdout, sys.stderr = saved_streams
        secrets.TEST_FAST_KDF = saved_fast_kdf
        os.chdir(saved_cwd)
        os.environ.clear()
        os.environ.update(saved_env)
        sys.path[:] = saved_path
        _reset_process_state()
        if collecting:
            gc.enable()
    if code is None:
        returncode = 0
    elif isinstance(code, int):
        returncode = code
    else:  # sys.exit("message"): printed on stderr, exit 1
        stderr.write(f"{code}\n")
        returncode = 1
    return subprocess.CompletedProcess(["pith", *args], returncode, _text(stdout), _text(stderr))


def on_terminal(
    argv: list[str],
    answers: Sequence[bytes],
    *,
    prompt: bytes = b"[y/N]",
    env: dict[str, str] | None = None,
) -> tuple[int, str]:
    """The `terminal` fixture's runner (tests/test_docs_commands.py has its own: it drives a
    shell with several kinds of prompt)."""
    main, child = pty.openpty()
    full_env = {**os.environ, **(env or {})}
    proc = subprocess.Popen(
        argv, stdin=child, stdout=subprocess.DEVNULL, stderr=child, env=full_env
    )
    os.close(child)
    seen, asked = b"", 0
    try:
        while True:
            ready, _, _ = select.select([main], [], [], 60)
            if not ready:
                raise AssertionError(f"the command neither asked nor ended: {seen!r}")
            try:
                chunk = os.read(main, 4096)
            except OSError:  # EIO: the child closed the terminal
                break
            if not chunk:
                break
            seen += chunk
            # count the prompts shown so far: each new one gets the next answer
            if seen.count(prompt) > asked:
                if asked >= len(answers):
                    expected = len(answers)
                    raise AssertionError(f"asked {asked + 1} times, {expected} expected: {seen!r}")
                os.write(main, answers[asked] + b"\n")
                asked += 1
        code = proc.wait(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
        os.close(main)
    assert asked == len(answers), (f"asked {asked} times, {len(answers)} expected", seen)
    return code, seen.decode("utf-8", "replace")


def _text(stream: io.TextIOWrapper) -> str:
    """What `subprocess.run(text=True)` would read: decoded, universal newlines."""
    stream.flush()
    data = stream.buffer.getvalue()  # type: ignore[attr-defined]
    return data.decode("utf-8", errors="replace").replace("\r\n", "\n").replace("\r", "\n")


def _interpreter_warnings() -> None:
    """Warnings as a fresh `python -m pithauthor` shows them: on (our) stderr, default filters."""
    warnings.resetwarnings()
    warnings.simplefilter("default")
    for category in (DeprecationWarning, PendingDeprecationWarning, ImportWarning, ResourceWarning):
        warnings.filterwarnings("ignore", category=category)
    warnings.showwarning = _SHOW_WARNING


# the interpreter's own (pytest swaps warnings.showwarning): writes to sys.stderr when called
_SHOW_WARNING = getattr(warnings, "_showwarning_orig", warnings.showwarning)


def _reset_process_state() -> None:
    """Forget what a process would not carry over between `pith` runs: the keyring backend
    chosen from PYTHON_KEYRING_BACKEND. `keyring` keeps the backend it chose first; its public
    `init_backend()` chooses again from the environment as it is now (once keyring is loaded:
    a run that never used it has nothing to forget, and loading it costs ~50 ms). And the
    collector as a process starts with it: the entry point's plain `pith cite` pauses it and
    freezes the heap before it exits (`pithauthor.collector`, `entry.leave_heap_to_the_system`),
    which a test process goes on from."""
    core = sys.modules.get("keyring.core")
    if core is not None:
        core.init_backend()
    from pithauthor.collector import resume_collector

    resume_collector()
    gc.unfreeze()


NEXT_STEP = "; next: "
"""How the next step after an error is named, at the end of the one error line
(errors.PithError.hint)."""


def error_lines(stderr: str) -> list[str]:
    """The non-blank lines of stderr (the next step, if any, ends the error line itself)."""
    return [line for line in stderr.splitlines() if line.strip()]


def next_step(stderr: str) -> str | None:
    """The next step a failing command named at the end of its error line, or None."""
    lines = error_lines(stderr)
    if lines and lines[-1].startswith("pith: error: ") and NEXT_STEP in lines[-1]:
        return lines[-1].split(NEXT_STEP, 1)[1]
    return None


def assert_one_line_error(result: subprocess.CompletedProcess[str], code: int) -> None:
    """A user error: the documented exit code, exactly one line on stderr (the error, ending
    with its next step when it names one), no traceback."""
    assert result.returncode == code, (result.returncode, result.stdout, result.stderr)
    lines = error_lines(result.stderr)
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith("pith: error: "), result.stderr
    assert "Traceback" not in result.stderr
