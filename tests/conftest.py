"""Shared test set-up: an isolated PITH_HOME per test, the `pith` command run in-process
(`pith`) or as a real process (`pith_process`, for tests of the process itself), the `tex`
marker (skip without TeX; fail instead under CI, where PITH_REQUIRE_TEX=1), and `slow` tests
left out unless asked for (`-m slow`, any -m expression, or PITH_SLOW=1, as `make test-all`
sets): `make test` runs every other test, TeX included."""

from __future__ import annotations

import gc
import itertools
import json
import logging
import os
import shutil
import subprocess
import sys
import tempfile
import threading
from collections.abc import Iterator, Sequence
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

import pytest

# the test keyring back-ends importable by the name PYTHON_KEYRING_BACKEND gives them
# (`pith_test_keyrings`), in this process too, before any test module imports them
import support.keys  # noqa: F401
from support.cite import EXTRA_IDS, PASSPHRASE, REAL_BIB_IDS
from support.cli import (
    LAUNCHER,
    NO_REGISTRY,
    OnTerminal,
    RunPith,
    StartRegistry,
    on_terminal,
    run_in_process,
    skip_backoff,
    use_fast_kdf,
)
from support.registry import arxiv_metadata, manifest_file, start_server

if TYPE_CHECKING:
    from pithauthor.registry.local.server import RegistryServer

REQUIRE_TEX = os.environ.get("PITH_REQUIRE_TEX") == "1"

DEAD_SERVICE = "http://127.0.0.1:9"
"""A service URL nothing answers (the discard port, closed): where a default would reach out."""

_CLEARED_ENV = ("PITH_PASSPHRASE", "PITH_REGISTRY", "PITH_TOKEN", "PITH_DEBUG", "PITH_TRUST")


_LOOPBACK_NAMES = {"localhost", "localhost.", "ip6-localhost"}


def _is_loopback_host(host: object) -> bool:
    """A host this machine answers itself: a loopback name or address (127/8, ::1)."""
    import ipaddress

    if host is None or (isinstance(host, str) and host.lower() in _LOOPBACK_NAMES):
        return True
    text = host.decode() if isinstance(host, bytes) else str(host)
    try:
        return ipaddress.ip_address(text.split("%", 1)[0]).is_loopback
    except ValueError:
        return False  # a name other than localhost: resolving it would ask the network


@pytest.fixture(scope="session", autouse=True)
def _only_loopback() -> Iterator[None]:
    """No test in this process resolves or connects to anything but this machine: a default
    that reaches a public service (pith.science, arXiv, ORCID, a time-stamp authority, a
    calendar) is refused here as a dead network is, and the test sees it. (Child processes get
    the environment's `none`s and NO_REGISTRY instead.)"""
    import socket

    real_getaddrinfo, real_connect = socket.getaddrinfo, socket.socket.connect

    def getaddrinfo(host: Any, *args: Any, **kwargs: Any) -> Any:
        if not _is_loopback_host(host):
            raise socket.gaierror(socket.EAI_NONAME, f"tests reach loopback only, not {host}")
        return real_getaddrinfo(host, *args, **kwargs)

    def connect(self: socket.socket, address: Any) -> Any:
        if self.family in (socket.AF_INET, socket.AF_INET6) and not _is_loopback_host(address[0]):
            raise ConnectionRefusedError(f"tests reach loopback only, not {address[0]}")
        return real_connect(self, address)

    socket.getaddrinfo = getaddrinfo  # type: ignore[assignment]
    socket.socket.connect = connect  # type: ignore[method-assign]
    try:
        yield
    finally:
        socket.getaddrinfo, socket.socket.connect = real_getaddrinfo, real_connect  # type: ignore[method-assign]


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


@pytest.fixture(scope="session")
def _pith_homes(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """A fresh PITH_HOME path for each test: numbered under one folder per worker and made
    only when `pith` makes it. Not under the test's own tmp_path: most tests never ask for
    one, and pytest makes tmp_path anew for every test (a numbered folder, a link, a scan of
    the folders made before): about 0.7 ms of CPU a test, ~1 CPU-s of `make check`."""
    root = tmp_path_factory.mktemp("pith-homes")
    return (root / str(n) for n in itertools.count())


@pytest.fixture(scope="session")
def arxiv_api() -> Iterator[str]:
    """A local stand-in for arXiv's API (tests/support/arxiv_server.py) that knows every paper
    of the tests' registries, authors in arXiv's order (support.arxiv_server.known_papers):
    `pith claim` checks `--position` against it. Its URL is every test's PITH_ARXIV_API, so no
    test asks export.arxiv.org."""
    from support.arxiv_server import ArxivServer, known_papers

    with ArxivServer(known_papers()) as server:
        yield server.url


@pytest.fixture(autouse=True)
def isolated_home(
    _pith_homes: Iterator[Path],
    monkeypatch: pytest.MonkeyPatch,
    request: pytest.FixtureRequest,
    one_ca_bundle: Path,
    arxiv_api: str,
) -> Iterator[Path]:
    """Every test gets its own PITH_HOME and no keyring unless it registers one itself, the
    local arXiv API stand-in as PITH_ARXIV_API, and no trusted-time source (PITH_TSA,
    PITH_OTS_CALENDARS and PITH_BTC_HEADERS `none`).

    The LaTeX tests' registry is NO_REGISTRY: `pith latex inject --pith` and `pith badge`
    check a full Pith Number with its record, asking the registry when none is cached, and no
    test may reach pith.science (tests/unit/registry/test_access_check_number.py checks with a local
    registry)."""
    home = next(_pith_homes)
    monkeypatch.setenv("PITH_HOME", str(home))
    monkeypatch.setenv("PYTHON_KEYRING_BACKEND", "keyring.backends.fail.Keyring")
    monkeypatch.setenv("SSL_CERT_FILE", str(one_ca_bundle))
    monkeypatch.delenv("SSL_CERT_DIR", raising=False)
    monkeypatch.setenv("PITH_ARXIV_API", arxiv_api)
    # no test asks the public time-stamp authorities or OpenTimestamps calendars (signing
    # would, after every event), nor a public block explorer for headers: a test of trusted
    # time names its loopback ones (tests/support/tsa_server.py, ots_calendar.py)
    monkeypatch.setenv("PITH_TSA", "none")
    monkeypatch.setenv("PITH_OTS_CALENDARS", "none")
    monkeypatch.setenv("PITH_BTC_HEADERS", "none")
    # nor the Internet Archive or Software Heritage (`pith archive`): a dead loopback port; a
    # test of archiving names its stand-ins (tests/support/wayback.py, swh.py)
    monkeypatch.setenv("PITH_WAYBACK_URL", DEAD_SERVICE)
    monkeypatch.setenv("PITH_SWH_URL", DEAD_SERVICE)
    for name in ("PITH_IA_ACCESS_KEY", "PITH_IA_SECRET_KEY"):
        monkeypatch.delenv(name, raising=False)
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


@pytest.fixture
def local_registry(tmp_path: Path) -> Iterator[StartRegistry]:
    """Start the project's own local registry on loopback (a free port, in a thread, with the
    example papers): `local_registry(data_dir=None, **RegistryServer options)` returns the
    running server; each one started is stopped when the test ends, whatever happened."""
    from support.registry import start_server

    started: list[RegistryServer] = []

    def start(data_dir: Path | None = None, **kwargs: Any) -> RegistryServer:
        server = start_server(data_dir or tmp_path / f"registry-{len(started)}", **kwargs)
        started.append(server)
        return server

    yield start
    for server in started:  # stop() again after a test stopped it is harmless
        server.stop()


@pytest.fixture
def cite_registry(tmp_path: Path) -> Iterator[dict[str, Any]]:
    """The cite tests' local registry: the example papers and support.cite's EXTRA_IDS and
    REAL_BIB_IDS, on loopback; yields its url, trust manifest file and server."""
    from pithauthor.registry.local.run import add_paper

    server = start_server(tmp_path / "registry")
    for aid in EXTRA_IDS + REAL_BIB_IDS:
        path = tmp_path / f"{aid.replace('/', '_')}.json"
        path.write_text(json.dumps(arxiv_metadata(aid)), "utf-8")
        add_paper(server.store, server.key, path)
    manifest = manifest_file(server.url, tmp_path / "registry", tmp_path / "manifest.json")
    try:
        yield {"url": server.url, "manifest": str(manifest), "server": server}
    finally:
        server.stop()


@pytest.fixture
def cite_author(monkeypatch: pytest.MonkeyPatch) -> str:
    """A real key in this test's PITH_HOME (test-only cheap KDF), unlocked by PITH_PASSPHRASE."""
    from pithauthor.keys.author import generate

    use_fast_kdf(monkeypatch)
    monkeypatch.setenv("PITH_PASSPHRASE", PASSPHRASE)
    # author 2 of the DeAR record, author 1 of the records the registry fixture adds
    return generate("ada", public_name="Chengjian Liu", backend="file", note=lambda _: None).key_id


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "tex(*programs): needs these TeX programs")
    if os.environ.get(TEX_CACHE_ENV) is None:  # the controller: its workers inherit the folder
        folder = tempfile.mkdtemp(prefix="pith-tex-builds-")
        os.environ[TEX_CACHE_ENV] = folder
        config.stash[_TEX_CACHE_OWNED] = folder


def pytest_unconfigure(config: pytest.Config) -> None:
    """The shared TeX builds (tests/support/latex/texbuild.py) go when the session that made
    them ends; the run's last line says how many TeX tests skipped, if any."""
    _say_tex_skipped(config)
    folder = config.stash.get(_TEX_CACHE_OWNED, None)
    if folder is not None:
        shutil.rmtree(folder, ignore_errors=True)
        os.environ.pop(TEX_CACHE_ENV, None)


TEX_CACHE_ENV = "PITH_TEST_TEX_CACHE"  # read by tests/support/latex/texbuild.py
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


TEX_MISSING = "TeX programs not installed"  # how a skipped TeX test says why (counted below)
TEX_INSTALL = "make tex"  # the Makefile's target holding the apt line (.ci/run uses it too)


def pytest_runtest_setup(item: pytest.Item) -> None:
    marker = item.get_closest_marker("tex")
    if marker is None:
        return
    programs = marker.args or ("pdflatex",)
    missing = [p for p in programs if shutil.which(p) is None]
    if missing:
        reason = f"{TEX_MISSING}: {', '.join(missing)}"
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
        from support.tamper_counts import COUNTS

        output["tamper_counts"] = json.dumps(COUNTS)


@pytest.hookimpl(optionalhook=True)
def pytest_testnodedown(node: Any, error: Any) -> None:
    from support.tamper_counts import count

    rows = json.loads(getattr(node, "workeroutput", {}).get("tamper_counts", "{}"))
    for suite, row in rows.items():
        count(suite, **row)


def pytest_terminal_summary(terminalreporter: Any) -> None:
    """The tamper suites' counts (tried / refused / accepted and reported), when any ran; and,
    on a machine without TeX, how many TeX tests skipped and the one command that installs
    what they need (a newcomer's `make test` passes, and says what it left out)."""
    from support.tamper_counts import lines

    rows = lines()
    if rows:
        terminalreporter.section("tamper counts")
        for row in rows:
            terminalreporter.write_line(row)
    skipped = [
        report
        for report in terminalreporter.stats.get("skipped", [])
        if TEX_MISSING in str(getattr(report, "longrepr", ""))
    ]
    if skipped:  # printed last (pytest_unconfigure), after pytest's own counts
        terminalreporter.config.stash[_TEX_SKIPPED] = len(skipped)


_TEX_SKIPPED = pytest.StashKey[int]()


def _say_tex_skipped(config: pytest.Config) -> None:
    skipped = config.stash.get(_TEX_SKIPPED, 0)
    reporter = config.pluginmanager.get_plugin("terminalreporter")
    if skipped and reporter is not None:
        reporter.write_line(
            f"{skipped} TeX test{'' if skipped == 1 else 's'} skipped (no TeX installed "
            f"here); `{TEX_INSTALL}` installs what they need (TeX Live from apt, as .ci/run "
            "does)",
            yellow=True,
            bold=True,
        )


def pytest_collection_finish(session: pytest.Session) -> None:
    """What collection made (the test modules, the items, the imported libraries: about 150,000
    objects a worker) lives until the session ends, so it goes to the garbage collector's
    permanent generation (gc.freeze, Python's own API for this): every full collection of the
    run would walk it again and find nothing. About 1 CPU-s of `make check`'s 2-3 s of full
    collections. Only what exists now is frozen: what the tests make is collected as
    before."""
    gc.freeze()
