"""Every console example of README.md and docs/*.md runs as written.

A console example is a `$ ` line of a ```console block (with its `\\` continuation lines); the
lines under it, up to the next `$ `, are what the docs show it printing. Each page runs as one
session, in order, in a fresh folder and a fresh PITH_HOME and HOME (nothing in them a reader's
fresh account lacks), through bash (so `export`, `VAR=x` prefixes and redirections work as an
author's shell runs them), with `pith` on PATH and:

- no registry but the one the page itself sets up: a page whose examples talk to a registry
  says once, as a reader would type it, `pith registry serve --examples &` and `export
  PITH_REGISTRY=http://127.0.0.1:8787 PITH_TRUST_LOCAL_REGISTRY=1` (LOCAL_REGISTRY). The
  test's registry is that command's (on a free port: tests listen on ephemeral ports only, so
  that address is replaced by the test registry's, the one change made to what a page says).
  Before a page sets it, PITH_REGISTRY names a port where nothing listens: an example that
  needs a registry the page did not set up fails, and nothing reaches pith.science;
- no event or key id from somebody's machine: an example may not name one (the ids a run makes
  are its own; an example gets them from an earlier command, as a reader does);
- a local arXiv API and a local ORCID API in place of the real ones (PITH_ARXIV_API,
  PITH_ORCID_API): what those examples need of the internet, without it;
- the repository's `tests/`, `docs/` and `pithauthor/` beside the session (the docs name
  `tests/fixtures/...`, as in a checkout);
- the files a page shows under an `<!-- file: NAME -->` comment (e.g. docs/cite.md's refs.bib)
  written into the folder before the session starts;
- stdin and stderr on a terminal (a pty) that answers `y`, as an author at a prompt would.

An example must exit 0, unless what the docs show it printing is an error (`pith: error:`),
then it must fail with that error; the lines the docs show that carry no elision (`…`, `...`)
must appear in what it printed. The few examples that need the real internet (an install from
PyPI, real arXiv's answers) are listed in NEEDS_INTERNET with the reason, and counted apart.
"""

from __future__ import annotations

import os
import pty
import re
import select
import shutil
import subprocess
import sys
import termios
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
PAGES = [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]
LAUNCHER = Path(__file__).parent / "support" / "pith_launcher.py"

# (page, command) pairs that need the real internet; each with why it cannot run here.
LOOKUP = (
    "what it shows is real arXiv's answers (export.arxiv.org) for a bibliography the page shows "
    "only by its rows; the lookup itself is tested against a local arXiv API "
    "(tests/cli/test_bibliography_lookup_cli.py)"
)
INSTALL = (
    "it installs pithauthor's build backend and dependencies from PyPI; tests/test_packaging.py "
    "installs the wheel with pip into a fresh venv and with pipx, offline, and runs that `pith`"
)
NEEDS_INTERNET: dict[tuple[str, str], str] = {
    ("docs/cite.md", "pith bib scan refs.bib --lookup"): LOOKUP,
    ("docs/cite.md", "pith bib scan refs.bib --lookup --write-back"): LOOKUP,
    **{
        ("README.md", command): INSTALL
        for command in (
            "pipx install .",
            "uv tool install .",
            "pipx install --python python3.11 .",
            "python3 -m venv ~/.venvs/pith && ~/.venvs/pith/bin/pip install .",
            "python3 -m pip wheel --no-deps -w dist .",
            "pipx install dist/pithauthor-0.1.0-py3-none-any.whl",
        )
    },
}
# What a page types to try its examples on a local registry instead of pith.science (README.md,
# Your paper in five steps); the test serves that registry itself, on a free port.
SERVE = "pith registry serve --examples &"
LOCAL_URL = "http://127.0.0.1:8787"
LOCAL_REGISTRY = f"export PITH_REGISTRY={LOCAL_URL} PITH_TRUST_LOCAL_REGISTRY=1"
NOBODY = "http://127.0.0.1:9"  # the discard port: nothing listens, a connection is refused
# an id that only one machine's run printed: no reader can type it as written
FOREIGN_ID = re.compile(r"sha256:[0-9a-f]{8,}|ed25519:[A-Z2-7]{26}")
PASSPHRASE = "correct horse battery staple"
ORCID = "0000-0002-1825-0097"


@dataclass
class Example:
    page: str
    line: int
    command: str
    shown: list[str] = field(default_factory=list)


@dataclass
class Page:
    name: str
    examples: list[Example]
    files: dict[str, str]


def read_page(path: Path) -> Page:
    """The console examples of one Markdown page and the files it shows by name."""
    lines = path.read_text("utf-8").splitlines()
    examples: list[Example] = []
    files: dict[str, str] = {}
    name = path.relative_to(REPO).as_posix()
    i = 0
    while i < len(lines):
        fence = re.match(r"^(`{3,})(\w*)", lines[i])
        if not fence:
            i += 1
            continue
        before = lines[i - 1].strip() if i else ""
        wanted = re.fullmatch(r"<!-- file: (\S+) -->", before)
        end = next(j for j in range(i + 1, len(lines)) if lines[j].startswith(fence.group(1)))
        body = lines[i + 1 : end]
        if wanted:
            files[wanted.group(1)] = "\n".join(body) + "\n"
        elif fence.group(2) == "console":
            k = 0
            while k < len(body):
                if body[k].startswith("$ "):
                    start = k
                    command = body[k][2:]
                    while command.endswith("\\") and k + 1 < len(body):
                        k += 1
                        command = command[:-1] + " " + body[k].strip()
                    examples.append(Example(name, i + 2 + start, command.strip()))
                elif examples and examples[-1].page == name and not body[k].startswith("#"):
                    examples[-1].shown.append(body[k])
                k += 1
        i = end + 1
    return Page(name, examples, files)


def test_every_page_with_commands_has_console_examples() -> None:
    """The parser finds examples where the docs have them (a renamed fence would hide them)."""
    found = {p.name: len(read_page(p).examples) for p in PAGES}
    print(f"\n{sum(found.values())} console examples: {found}")
    assert found["README.md"] >= 15
    assert sum(found.values()) >= 43  # as many as the docs had when this test was written
    # a fenced block that is not `console` and shows a `$ pith` prompt would not be run
    for path in PAGES:
        text = path.read_text("utf-8")
        for block in re.findall(r"^```(\w*)\n(.*?)^```", text, flags=re.S | re.M):
            if block[0] != "console":
                assert not re.search(r"^\$ pith", block[1], flags=re.M), (path.name, block[1])


def test_no_example_names_an_id_from_somebodys_machine() -> None:
    """A reader cannot type an event or key id another machine printed (fast, in `make check`:
    the slow run below says the same)."""
    foreign = [
        f"{e.page}:{e.line}: {e.command}"
        for path in PAGES
        for e in read_page(path).examples
        if FOREIGN_ID.search(e.command)
    ]
    assert foreign == []
    internet = {
        (p.relative_to(REPO).as_posix(), bare(e.command))
        for p in PAGES
        for e in read_page(p).examples
    }
    assert set(NEEDS_INTERNET) <= internet, "a NEEDS_INTERNET entry names no example"
    assert FOREIGN_ID.search("pith withdraw sha256:147e0a4b --submit")  # the check sees one


def test_each_page_sets_up_its_local_registry_once_as_a_reader_types_it() -> None:
    """Where a page tries its examples on a local registry, it says so once: the serve line,
    then the export, before the first example (README.md's pair, word for word)."""
    for path in PAGES:
        page = read_page(path)
        commands = [bare(e.command) for e in page.examples]
        serves, exports = commands.count(SERVE), commands.count(LOCAL_REGISTRY)
        assert (serves, exports) in ((0, 0), (1, 1)), (page.name, serves, exports)
        if serves:
            at = commands.index(SERVE)
            assert commands[at + 1] == LOCAL_REGISTRY, page.name
    assert LOCAL_REGISTRY in [bare(e.command) for e in read_page(REPO / "README.md").examples]


@pytest.fixture(scope="module")
def registry(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, Path]]:
    """A local registry with the example papers, and its trust manifest."""
    root = tmp_path_factory.mktemp("docs-registry")
    env = {k: v for k, v in os.environ.items() if not k.startswith("PITH_")}
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "pithauthor",
            "registry",
            "serve",
            "--port",
            "0",
            "--examples",
            "--data",
            str(root / "data"),
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        env=env,
    )
    url = ""
    assert proc.stdout is not None
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and not url:
        line = proc.stdout.readline()
        found = re.search(r"http://127\.0\.0\.1:\d+", line)
        url = found.group(0) if found else ""
    assert url, "the local registry did not start"
    manifest = root / "manifest.json"
    import httpx

    manifest.write_bytes(httpx.get(f"{url}/pith-mirrors.json").content)
    try:
        yield url, manifest
    finally:
        proc.terminate()
        proc.wait(10)


def _bin(folder: Path) -> Path:
    """A `pith` on PATH that is this checkout's (real key derivation: `pith doctor` checks it)."""
    bin_dir = folder / "bin"
    bin_dir.mkdir()
    script = bin_dir / "pith"
    script.write_text(f'#!/bin/sh\nexec "{sys.executable}" "{LAUNCHER}" "$@"\n')
    script.chmod(0o755)
    return bin_dir


def run_on_terminal(
    command: str, cwd: Path, env: dict[str, str], answer: str = "y"
) -> tuple[int, str, str]:
    """`bash -c COMMAND` with stdin and stderr on a pty; stdout piped. A `[y/N]:` question is
    answered `answer`, a passphrase prompt with PASSPHRASE, any other prompt (ending in `: `)
    with Enter (its default)."""
    master, slave = pty.openpty()
    attrs = termios.tcgetattr(slave)
    attrs[3] &= ~termios.ECHO  # the answers are not echoed into what the command printed
    termios.tcsetattr(slave, termios.TCSANOW, attrs)
    proc = subprocess.Popen(
        ["bash", "-c", command],
        stdin=slave,
        stdout=subprocess.PIPE,
        stderr=slave,
        cwd=cwd,
        env=env,
        start_new_session=True,
    )
    os.close(slave)
    terminal = b""
    assert proc.stdout is not None
    out = b""
    deadline = time.monotonic() + 120
    streams = [master, proc.stdout.fileno()]
    while streams and time.monotonic() < deadline:
        ready, _, _ = select.select(streams, [], [], 1)
        for fd in ready:
            try:
                chunk = os.read(fd, 65536)
            except OSError:  # the pty is closed when the last process on it ends
                chunk = b""
            if not chunk:
                streams.remove(fd)
            elif fd == master:
                terminal += chunk
                if re.search(rb"\[y/N\]: ?$", terminal):
                    os.write(master, answer.encode() + b"\n")
                elif re.search(rb"passphrase[^\n]*: $", terminal, flags=re.I):
                    os.write(master, PASSPHRASE.encode() + b"\n")  # the author types it
                elif terminal.endswith((b": ", b"? ")):
                    os.write(master, b"\n")
            else:
                out += chunk
    code = proc.wait(10)
    os.close(master)
    text = terminal.decode("utf-8", "replace").replace("\r\n", "\n")
    return code, out.decode("utf-8", "replace"), text


# What differs from run to run in what a command prints: event ids and key ids (fresh keys,
# fresh timestamps), fingerprints, times. The docs show them; the run prints others of the same
# shape. An id a later example uses (`pith withdraw sha256:147e0a4b`) is replaced by the one the
# run printed where the docs show it (so it must be shown first).
_VARIABLE = re.compile(
    r"(?P<event>sha256:[0-9a-f]{8,})|(?P<key>ed25519:[A-Z2-7]{4,})|(?P<hex>\b[0-9a-f]{32}\b)"
    r"|(?P<time>\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ)|(?P<elided>…|\.\.\.)|(?P<space>\s+)"
)
_SHAPES = {
    "event": "(sha256:[0-9a-f]{%d,})",
    "key": "(ed25519:[A-Z2-7]{%d,})",
    "hex": "[0-9a-f]{32}",
    "time": r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ",
    "elided": ".*?",
    "space": r"\s+",
}


def shown_in(line: str, printed: str, seen: dict[str, str]) -> bool:
    """Whether `printed` has `line` as the docs show it (ids, times and `…` as wildcards; any
    run of spaces for any other, since columns widen with their values); notes the ids."""
    pattern, ids = "", []
    at = 0
    text = line.strip()
    for match in _VARIABLE.finditer(text):
        pattern += re.escape(text[at : match.start()])
        kind = match.lastgroup or ""
        shape = _SHAPES[kind]
        if kind in ("event", "key"):
            shape %= len(match.group()) - match.group().index(":") - 1
            ids.append(match.group())
        pattern += shape
        at = match.end()
    pattern += re.escape(text[at:])
    found = re.search(pattern, printed)
    if found is None:
        return False
    for doc_id, run_id in zip(ids, found.groups(), strict=True):
        seen.setdefault(doc_id, run_id)
    return True


def bare(command: str) -> str:
    """The command without its trailing `# comment` (how NEEDS_INTERNET names it)."""
    return re.sub(r"\s+#[^'\"]*$", "", command).strip()


def _expects_failure(example: Example) -> bool:
    """The docs show this example failing: an error line, or a FAILED verdict."""
    return any(
        line.startswith(("pith: error:", "FAILED")) for line in map(str.strip, example.shown)
    )


def _session(page: Page, folder: Path, servers: tuple[str, Path, str, str]) -> list[str]:
    """Run the page's examples in order; the faults found, one line each."""
    url, _manifest, arxiv, orcid = servers  # the manifest: only the page says whom to trust
    work = folder / "work"
    work.mkdir()
    for shipped in ("tests", "docs", "pithauthor"):  # the docs run at the root of a checkout
        (work / shipped).symlink_to(REPO / shipped)
    for name, text in page.files.items():
        (work / name).parent.mkdir(parents=True, exist_ok=True)
        (work / name).write_text(text, "utf-8")
    env = {k: v for k, v in os.environ.items() if not k.startswith("PITH_")}
    env.update(
        PATH=f"{_bin(folder)}:{env['PATH']}",
        PITH_HOME=str(folder / "home"),
        PITH_REGISTRY=NOBODY,  # until the page sets up its own (LOCAL_REGISTRY)
        PITH_ARXIV_API=arxiv,
        PITH_ORCID_API=orcid,
        PITH_PASSPHRASE=PASSPHRASE,
        # no public trusted-time source is asked: the tests reach only this machine
        PITH_TSA="none",
        PITH_OTS_CALENDARS="none",
        PITH_BTC_HEADERS="none",
        # nor the Internet Archive, Software Heritage or arXiv's PDFs: a closed loopback port
        PITH_WAYBACK_URL=NOBODY,
        PITH_SWH_URL=NOBODY,
        PITH_ARXIV_PDF=f"{NOBODY}/pdf",
        PYTHON_KEYRING_BACKEND="keyring.backends.fail.Keyring",
        COLUMNS="200",
        HOME=str(folder),
        SHELL="/bin/bash",  # a terminal's login shell (`pith --install-completion` reads it)
        # what a CI runner provides to docs/keys.md's CI example (its secrets)
        RUNNER_TEMP=str(folder / "runner"),
        BACKUP_PW=PASSPHRASE,
        KEY_PW=PASSPHRASE,
        ALICE_PITHKEY_FILE=str(work / "alice.pithkey"),
    )
    (folder / "runner").mkdir()
    faults = []
    seen: dict[str, str] = {}  # event and key ids the docs show -> what the commands printed
    for example in page.examples:
        if (page.name, bare(example.command)) in NEEDS_INTERNET:
            continue
        if bare(example.command) == SERVE:
            continue  # the test's registry is this one (the `registry` fixture, a free port)
        foreign = FOREIGN_ID.search(example.command)
        if foreign:
            faults.append(
                f"{example.page}:{example.line}: $ {example.command}: {foreign.group()} is an "
                "id from one machine's run; a reader's differs (take it from a command)"
            )
            continue
        command = example.command.replace(LOCAL_URL, url)
        if command.startswith("export "):  # it changes the session: keep what it set
            # (on a line of its own: the example may end in a comment)
            command += '\ncode=$?; env -0 > "$HOME/.env-after"; exit $code'
        # the answer the docs show after a `[y/N]:` question, else yes
        answers = [a for line in example.shown for a in re.findall(r"\[y/N\]: (\w+)$", line)]
        code, out, err = run_on_terminal(command, work, env, (answers or ["y"])[0])
        if command.startswith("export ") and code == 0:
            pairs = (folder / ".env-after").read_bytes().decode().split("\0")
            env = dict(p.split("=", 1) for p in pairs if "=" in p)
        where = f"{example.page}:{example.line}: $ {example.command}"
        declared = re.search(r"#.*\bexit (\d)\b", example.command)
        if declared:  # `# exit 1` after a command: the docs say what it exits with
            if code != int(declared.group(1)):
                faults.append(f"{where}: exit {code}, the docs say {declared.group(1)}")
                continue
        elif _expects_failure(example):
            if code == 0:
                faults.append(f"{where}: the docs show it failing, it exited 0")
            continue
        elif code != 0:
            last = (err.strip().splitlines() or ["(nothing on stderr)"])[-1]
            faults.append(f"{where}: exit {code}: {last}")
            continue
        printed = out + err
        for line in example.shown:
            # the docs show pith.science where this session has its local registry; the
            # answer typed at a question is not part of what was printed
            line = line.replace("https://pith.science", url).replace(LOCAL_URL, url)
            line = re.sub(r"(\[y/N\]:) \w+$", r"\1", line)
            if line.strip() and not shown_in(line, printed, seen):
                faults.append(f"{where}: the docs show {line.strip()!r}; it printed:\n{printed}")
                break
    return faults


@pytest.fixture(scope="module")
def servers(registry: tuple[str, Path]) -> Iterator[tuple[str, Path, str, str]]:
    """The local registry, its manifest, a local arXiv API (the registry's papers, authors in
    arXiv's order: `pith claim --position` is checked with it) and a local ORCID API where the
    docs' ORCID iD (ORCID's own example) has a record with no links."""
    from support.arxiv_server import ArxivServer, known_papers
    from support.identity_server import IdentityServer, Site

    with ArxivServer(known_papers()) as arxiv, IdentityServer(Site(records={ORCID: []})) as orcid:
        yield (*registry, arxiv.url, orcid.orcid_api)


@pytest.mark.slow  # about 3 s an example on a busy machine (real keys, real processes)
@pytest.mark.parametrize("path", PAGES, ids=[p.name for p in PAGES])
def test_console_examples_run_as_written(
    path: Path, tmp_path: Path, servers: tuple[str, Path, str, str]
) -> None:
    """Each page's console examples, run in order in a fresh folder and PITH_HOME."""
    if shutil.which("bash") is None:
        pytest.skip("bash is not installed")
    page = read_page(path)
    if not page.examples:
        pytest.skip(f"{page.name} has no console examples")
    faults = _session(page, tmp_path, servers)
    skipped = sum((page.name, bare(e.command)) in NEEDS_INTERNET for e in page.examples)
    ran = len(page.examples) - skipped
    print(f"\n{page.name}: ran {ran} console examples ({skipped} need the internet)")
    assert not faults, "\n".join(faults)
