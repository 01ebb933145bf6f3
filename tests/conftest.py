"""Shared test set-up: an isolated PITH_HOME per test, the `pith` command run in-process
(`pith`) or as a real process (`pith_process`, for tests of the process itself), the `tex`
marker (skip without TeX; fail instead under CI, where PITH_REQUIRE_TEX=1), and `slow` tests
left out unless asked for (`-m slow`, any -m expression, or PITH_SLOW=1, as `make test-all`
sets): `make test` runs every other test, TeX included."""

from __future__ import annotations

import io
import json
import logging
import os
import pty
import select
import shutil
import subprocess
import sys
import tempfile
import threading
import traceback
import warnings
from collections.abc import Callable, Iterator, Sequence
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

import pytest

if TYPE_CHECKING:
    from pithauthor.registry.local.server import RegistryServer

FIXTURES = Path(__file__).parent / "fixtures"

# Test modules that share data import each other by name (`from test_registry_merge import
# make_state`), and the tests live in folders by subject (tests/unit/<package>/, tests/cli/,
# tests/security/, tests/latex/): every test folder is on sys.path, after the test's own.
for _folder in (
    "cli",
    "security",
    "latex",
    *(f"unit/{p.name}" for p in (Path(__file__).parent / "unit").glob("*")),
):
    if str(Path(__file__).parent / _folder) not in sys.path:
        sys.path.append(str(Path(__file__).parent / _folder))
LAUNCHER = str(Path(__file__).parent / "pith_launcher.py")
"""`pith` as the tests start it: `python -m pithauthor` plus the test-only KDF switch."""
FAST_KDF_ENV = "PITH_TEST_FAST_KDF"
"""Read by tests/pith_launcher.py only: never by the package."""
REPO = Path(__file__).resolve().parent.parent
REQUIRE_TEX = os.environ.get("PITH_REQUIRE_TEX") == "1"

_CLEARED_ENV = ("PITH_PASSPHRASE", "PITH_REGISTRY", "PITH_TOKEN", "PITH_DEBUG", "PITH_TRUST")


NO_REGISTRY = "http://127.0.0.1:9"  # the discard port: nothing listens, a connection is refused


@pytest.fixture(scope="session")
def one_ca_bundle(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A CA bundle of one certificate (the first of certifi's), for SSL_CERT_FILE.

    httpx reads the CA bundle named by SSL_CERT_FILE (else certifi's, about 150 certificates:
    40-90 ms) for every new Client, and an in-process `pith` run makes one per command. The
    tests speak plain HTTP to loopback, so the context is never used: one certificate keeps it
    valid and cheap (under 1 ms), through httpx's public environment setting rather than a
    patch of its internals. Stricter, not looser: a test that reached a real HTTPS host would
    fail verification instead of passing. Clients made with trust_env=False (the identity
    fetcher) ignore the variable and still read certifi's bundle."""
    import certifi

    bundle = Path(certifi.where()).read_text("ascii")
    end = "-----END CERTIFICATE-----\n"
    first = bundle[bundle.index("-----BEGIN CERTIFICATE-----") : bundle.index(end) + len(end)]
    path = tmp_path_factory.mktemp("ca") / "one-ca.pem"
    path.write_text(first, "ascii")
    return path


@pytest.fixture(autouse=True)
def isolated_home(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    request: pytest.FixtureRequest,
    one_ca_bundle: Path,
) -> Iterator[Path]:
    """Every test gets its own PITH_HOME and no keyring unless it registers one itself.

    The LaTeX tests' registry is NO_REGISTRY: `pith latex inject --pith` and `pith badge`
    check a full Pith Number with its record, asking the registry when none is cached, and no
    test may reach pith.science (tests/unit/protocol/test_number_checks.py checks with a local
    registry)."""
    home = tmp_path / "pith-home"
    monkeypatch.setenv("PITH_HOME", str(home))
    monkeypatch.setenv("PYTHON_KEYRING_BACKEND", "keyring.backends.fail.Keyring")
    monkeypatch.setenv("SSL_CERT_FILE", str(one_ca_bundle))
    monkeypatch.delenv("SSL_CERT_DIR", raising=False)
    for name in _CLEARED_ENV:
        monkeypatch.delenv(name, raising=False)
    if "latex" in request.path.parent.parts[-1:]:
        monkeypatch.setenv("PITH_REGISTRY", NO_REGISTRY)
    yield home


@pytest.fixture
def no_backoff(monkeypatch: pytest.MonkeyPatch) -> None:
    """Retries without the waits between them (0.5-8 s each): the same six attempts, at once.
    The in-process `pith` reads it; what is tested is the outcome, not the back-off. (Every
    test's default registry is NO_REGISTRY: a command that asks it first waited 6-12 s.)"""
    skip_backoff(monkeypatch)


def skip_backoff(monkeypatch: pytest.MonkeyPatch) -> None:
    """What `no_backoff` does, for a test that sets it up in its own helper."""
    from pithauthor.net import RetryPolicy

    monkeypatch.setattr(RetryPolicy, "delay", lambda self, attempt, retry_after=None: 0.0)


def use_fast_kdf(monkeypatch: pytest.MonkeyPatch) -> None:
    """TEST ONLY: the cheap KDF in this process, and in `pith` processes the test starts."""
    from pithauthor.keys import secrets

    monkeypatch.setattr(secrets, "TEST_FAST_KDF", True)
    monkeypatch.setenv(FAST_KDF_ENV, "1")


def load_fixture(name: str) -> Any:
    """A JSON fixture from tests/fixtures (a .jsonl file gives a list)."""
    path = FIXTURES / name
    if name.endswith(".jsonl"):
        return [json.loads(line) for line in path.read_text("utf-8").splitlines() if line]
    return json.loads(path.read_text("utf-8"))


RunPith = Callable[..., subprocess.CompletedProcess[str]]


@pytest.fixture
def pith_process() -> RunPith:
    """Run the real `pith` command in a subprocess; returns the CompletedProcess.

    For tests where the process is what is tested: start-up, timeouts and hangs, signals,
    terminals, environment read at import time, several processes at once."""

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
            # no input: no terminal either, even under `pytest -s` at one (`--submit` asks there)
            stdin=subprocess.DEVNULL if input is None else None,
            capture_output=True,
            text=True,
            env=full_env,
            cwd=cwd,
            timeout=timeout,
        )

    return run


@pytest.fixture
def pith() -> RunPith:
    """Run the `pith` command in this process, as a pipe would see it (no terminal, stdin from
    `input` or empty); returns a CompletedProcess like `pith_process` does. `timeout` is
    accepted and ignored (pytest-timeout still guards the test)."""

    def run(
        *args: str,
        input: str | None = None,
        env: dict[str, str] | None = None,
        cwd: Path | None = None,
        timeout: float = 120,
    ) -> subprocess.CompletedProcess[str]:
        return run_in_process(list(args), input=input, env=env, cwd=cwd)

    return run


def run_in_process(
    args: list[str],
    *,
    input: str | None = None,
    env: dict[str, str] | None = None,
    cwd: Path | None = None,
) -> subprocess.CompletedProcess[str]:
    """`pith ARGS` through `pithauthor._cli.main.main` with its own stdin/stdout/stderr,
    environment and working directory, all restored afterwards."""
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
                main(args)
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
    if code is None:
        returncode = 0
    elif isinstance(code, int):
        returncode = code
    else:  # sys.exit("message"): printed on stderr, exit 1
        stderr.write(f"{code}\n")
        returncode = 1
    return subprocess.CompletedProcess(["pith", *args], returncode, _text(stdout), _text(stderr))


OnTerminal = Callable[..., tuple[int, str]]


@pytest.fixture
def terminal() -> OnTerminal:
    """Run a real process with stdin and stderr on a pseudo-terminal (stdout discarded),
    typing `answers[i]` at the (i+1)th time `prompt` shows. More questions than answers, a
    question when none was expected, or fewer than expected fail the test; so does a process
    that neither asks nor ends within 60 s. Returns the exit code and what the terminal
    showed. `terminal(argv, answers=(), prompt=b"[y/N]", env=None)`; `env` adds to os.environ.
    """

    def run(
        argv: list[str],
        answers: Sequence[bytes] = (),
        prompt: bytes = b"[y/N]",
        env: dict[str, str] | None = None,
    ) -> tuple[int, str]:
        return on_terminal(argv, answers, prompt=prompt, env=env)

    return run


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
    a run that never used it has nothing to forget, and loading it costs ~50 ms)."""
    core = sys.modules.get("keyring.core")
    if core is not None:
        core.init_backend()


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


class _ServeChosenDocuments(BaseHTTPRequestHandler):
    """GET PATH: the JSON document the test put at PATH (query ignored), else a 404."""

    docs: ClassVar[dict[str, Any]] = {}

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def do_GET(self) -> None:
        doc = self.docs.get(self.path.split("?")[0])
        body = json.dumps(doc).encode()
        self.send_response(200 if doc is not None else 404)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


@pytest.fixture
def hostile_registry() -> Iterator[tuple[str, dict[str, Any]]]:
    """A hostile registry: a real HTTP server on loopback serving whatever documents the test
    puts in the dict, by path. Yields (base URL, that dict)."""
    docs: dict[str, Any] = {}
    # a subclass per test: each server reads its own dict
    handler = type("Handler", (_ServeChosenDocuments,), {"docs": docs})
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}", docs
    finally:
        server.shutdown()
        server.server_close()


StartRegistry = Callable[..., "RegistryServer"]


@pytest.fixture
def local_registry(tmp_path: Path) -> Iterator[StartRegistry]:
    """Start the project's own local registry on loopback (a free port, in a thread, with the
    example papers): `local_registry(data_dir=None, **RegistryServer options)` returns the
    running server; each one started is stopped when the test ends, whatever happened."""
    from registry_helpers import start_server

    started: list[RegistryServer] = []

    def start(data_dir: Path | None = None, **kwargs: Any) -> RegistryServer:
        server = start_server(data_dir or tmp_path / f"registry-{len(started)}", **kwargs)
        started.append(server)
        return server

    yield start
    for server in started:  # stop() again after a test stopped it is harmless
        server.stop()


def assert_one_line_error(result: subprocess.CompletedProcess[str], code: int) -> None:
    """A user error: the documented exit code, exactly one line on stderr (the error, ending
    with its next step when it names one), no traceback."""
    assert result.returncode == code, (result.returncode, result.stdout, result.stderr)
    lines = error_lines(result.stderr)
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith("pith: error: "), result.stderr
    assert "Traceback" not in result.stderr


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "tex(*programs): needs these TeX programs")
    if os.environ.get(TEX_CACHE_ENV) is None:  # the controller: its workers inherit the folder
        folder = tempfile.mkdtemp(prefix="pith-tex-builds-")
        os.environ[TEX_CACHE_ENV] = folder
        config.stash[_TEX_CACHE_OWNED] = folder


def pytest_unconfigure(config: pytest.Config) -> None:
    """The shared TeX builds (tests/latex/texbuild.py) go when the session that made them ends."""
    folder = config.stash.get(_TEX_CACHE_OWNED, None)
    if folder is not None:
        shutil.rmtree(folder, ignore_errors=True)
        os.environ.pop(TEX_CACHE_ENV, None)


TEX_CACHE_ENV = "PITH_TEST_TEX_CACHE"  # read by tests/latex/texbuild.py
_TEX_CACHE_OWNED = pytest.StashKey[str]()


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """`slow` tests (the full LaTeX matrices, the longest process tests) run only when asked:
    with a -m expression or PITH_SLOW=1 (`make test-all`, which CI runs)."""
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
    logger = logging.getLogger("pithauthor.registry.local")
    logger.addHandler(handler)
    try:
        yield records
    finally:
        logger.removeHandler(handler)
    if records:
        pytest.fail("the local registry answered 500: " + records[0].getMessage())


def pytest_sessionfinish(session: pytest.Session) -> None:
    """A pytest-xdist worker hands its tamper counts to the controller, which prints them."""
    output = getattr(session.config, "workeroutput", None)
    if output is not None:
        from tamper_counts import COUNTS

        output["tamper_counts"] = json.dumps(COUNTS)


@pytest.hookimpl(optionalhook=True)
def pytest_testnodedown(node: Any, error: Any) -> None:
    from tamper_counts import count

    rows = json.loads(getattr(node, "workeroutput", {}).get("tamper_counts", "{}"))
    for suite, row in rows.items():
        count(suite, **row)


def pytest_terminal_summary(terminalreporter: Any) -> None:
    """The tamper suites' counts (tried / refused / accepted and reported), when any ran."""
    from tamper_counts import lines

    rows = lines()
    if rows:
        terminalreporter.section("tamper counts")
        for row in rows:
            terminalreporter.write_line(row)
