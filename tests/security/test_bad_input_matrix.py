"""The bad-input matrix: every command of the `pith` app, every file or value it reads, fed the
inputs a careless author or a hostile party gives. Each must end in the documented exit code
(2), exactly one line on stderr, no "internal error", no traceback, no hang, and every input
file byte-identical afterwards.

The commands and their parameters are enumerated from the Typer app, and each parameter must
be classified below, so a new command or option cannot be forgotten: the test fails on an
unclassified one. One test per command and parameter, so that pytest-xdist spreads them; each
case runs in this process (conftest's runner) in a thread with a timeout, since a hang (a FIFO
read, a server that starts) is exactly what is being tested. The default run feeds each
parameter a few of its bad inputs, taking turns so that every bad input meets some command;
`slow` feeds the rest (`make test` runs both: the whole cross product, once).
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import os
import shutil
import socket
import threading
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import typer
from support.cli import error_lines, next_step, run_in_process, skip_backoff, use_fast_kdf
from support.paths import FIXTURES
from support.tamper_counts import count

from pithauthor._cli.main import app
from pithauthor.fs import MAX_JSON_BYTES

PASSPHRASE = "matrix passphrase"
NUMBER = "pith:2023:NFG5PAOXQUVIWDX5F7YSYYL7EW"  # the record fixture's paper
CITING = "pith:2024:ABCDEFGHIJKLMNOPQRSTUVWXYZ"
ORCID = "0000-0002-1825-0097"  # ada's key's iD (ORCID's test researcher)
DEAD_REGISTRY = "http://127.0.0.1:9"  # nothing listens: a case that reaches the network fails
HUGE = MAX_JSON_BYTES + 1  # over every input size limit (the JSON one is the largest)

# --- classification: what each parameter of each command is --------------------------------
# kind of input file a parameter names (the bad files below are fed to each)
FILE_PARAMS = {
    "file",  # verify, submit, number from-arxiv
    "files",  # bib scan, registry add
    "bibfiles",  # cite
    "backup_file",  # keys import
    "record",  # claim, cite, replicate
    "citing_record",  # cite --from-record
    "passphrase_file",
    "backup_passphrase_file",
    "ia_keys",  # archive --ia-keys
    "token_file",  # auth login
    "require_token",  # registry serve
    "trust_manifest",
    "only_cited",  # bib scan, cite
    "target",  # latex inject, latex arxiv
    "abstract_file",  # number from-arxiv --next-version
    "paper_pdf",  # verify --paper-pdf FILE|URL (its URLs are in VALUE_PARAMS too)
}
SECRET_PARAMS = {  # text files whose content may well look like JSON
    "passphrase_file",
    "ia_keys",
    "backup_passphrase_file",
    "token_file",
    "require_token",
    "abstract_file",
}
JSON_KINDS = {"deep-json", "nan-json", "big-int-json", "dup-key-json", "json-array", "json-null"}
# files written: a folder, FIFO or device is refused (zip_out: latex inject --zip-out; zip_file:
# latex sty --zip)
OUTPUT_PARAMS = {"out", "output", "zip_out", "zip_file"}
# folders (--data is created on demand, latex sty --copy): a file, FIFO or loop is refused
FOLDER_PARAMS = {"data", "copy"}
# values with a documented form, and bad examples of it
REFERENCE = ["pith:2023:NFG5PAOX!UVIWDX5F7YSYYL7EW", "2313.12345", "", "pith:" + "A" * 5000]
# addresses pith would fetch from: none may reach the internet (refused first), and the closed
# loopback port (DEAD_REGISTRY) is the one that is tried
BAD_URLS = [
    "http://[::1",
    "https://127.0.0.1:99999",
    "http://127.0.0.1:0",
    "ftp://127.0.0.1/x",
    "http://example.com",
    "https://user:pw@127.0.0.1:9",
    "https://exa mple.com",
    "javascript:alert(1)",
    "",
]
VALUE_PARAMS: dict[str, list[str]] = {
    "port": ["-1", "70000", "x"],
    "parallel": ["0", "-3", "100000", "x"],
    "retries": ["0", "1000", "x"],
    "timeout": ["0", "-1", "nan", "inf", "x"],
    "registry": [
        "http://[::1",
        "http://127.0.0.1:99999",
        "http://127.0.0.1:0",
        "ftp://127.0.0.1",
        "http://example.com",
        "https://user:pw@example.com",
        "https://example.com/?q=1",
        "https://exa mple.com",
        "",
    ],
    "position": ["0", "-1", "x", "99999999999999999999999"],
    "public_name": ["", "  ", "Ada\x1b[2JLovelace", "A" * 300],  # keys generate, keys set
    "orcid": ["0000-0002-1825-0098", "x"],  # a wrong check digit
    "subject": REFERENCE,
    "number": REFERENCE,
    "ref": REFERENCE,
    "citing": REFERENCE,  # cite --from
    "cited": REFERENCE,  # cite --to
    "pith": REFERENCE,  # latex inject --pith
    "paper": REFERENCE,  # withdraw --paper
    "refs": REFERENCE,  # papers [PAPER]...
    "what": ["nope", ""],
    "fmt": ["nope", ""],
    "placement": ["nope", ""],
    "state": ["nope"],
    "backend": ["nope", ""],
    "relationship": ["nope", ""],
    "kind": ["nope"],
    "outcome": ["nope"],
    "sha256": ["xyz", "00" * 31],
    "mapping": ["novalue", "=supports"],
    # withdraw EVENT_ID: not an id, too short, and one the outbox does not hold
    "event_id": [
        "1234",
        "sha256:xyz",
        "sha256:abc",
        "",
        "sha256:" + "0" * 64,
        "sha256:" + "a" * 5000,
    ],  # an unknown relationship is a row, exit 1 (cite.md)
    "proof_timeout": ["-1", "nan", "1000", "x"],
    "base_url": [  # registry serve --base-url
        "ftp://mirror.example",
        "http://",
        "https://m.example/?a=1",
        "m",
        "http://[::1",
        "https://127.0.0.1:99999",
        "http://127.0.0.1:0",
        "https://user:pw@m.example",
        "https://exa mple.com",
        "",
    ],
    "arxiv_api": ["http://[::1", "https://127.0.0.1:99999", "ftp://x", "http://example.com/q"],
    "image": ["x.svg\n[a](b)", "javascript:alert(1)"],
    "shell": ["nope", "", "sh"],  # pith completion SHELL
    "signer": [  # verify --signer KEY_ID
        "nope",
        "",
        "ed25519:",
        "ed25519:" + "A" * 25,
        "ed25519:" + "A" * 27,
        "ed25519:" + "1" * 26,
        "rsa:" + "A" * 26,
        "ed25519:" + "A" * 5000,
        "ed25519:AAAAAAAAAAAAAAAAAAAAAAAAAA/x",
    ],
    "orcid_api": [*BAD_URLS, DEAD_REGISTRY],  # verify, keys prove orcid --check
    "url": BAD_URLS,  # keys prove web URL
    "code": BAD_URLS,  # archive --code URL (a repository Software Heritage is to save)
    "wait": ["-1", "nan", "inf", "x"],  # archive --wait SECONDS
    "poll": ["-1", "nan", "inf", "x"],  # archive --poll SECONDS
    "paper_pdf": [*BAD_URLS, DEAD_REGISTRY + "/paper.pdf"],
    "proof": [  # claim --proof orcid|web:URL|paper[:URL]
        "",
        "nope",
        "orcid:x",
        "web:",
        "web:http://[::1",
        "web:https://127.0.0.1:99999",
        "web:http://example.com",
        "web:https://user:pw@127.0.0.1",
        "paper:ftp://127.0.0.1/x.pdf",
        "paper:https://exa mple.com/x.pdf",
        "paper:javascript:alert(1)",
        "web:https://" + "a" * 3000 + ".org",
    ],
}
# the bad inputs whose next step is obvious, by parameter: a malformed paper reference (a Pith
# Number or an arXiv id of the wrong form) must be followed by the line that shows the form
NEXT_STEP_BAD: dict[str, set[str]] = {
    name: {repr(REFERENCE[0]), repr(REFERENCE[1]), repr(REFERENCE[3])}
    for name, values in VALUE_PARAMS.items()
    if values is REFERENCE
}
# free text or names any value of which is accepted (or refused by the key store, exit 4)
FREE_PARAMS = {
    "statement",
    "summary_text",
    "context",
    "citation_key",
    "proof_system",
    "artifact",
    "artifact_file",  # any bytes are an artifact: its SHA-256 is signed (test_events_cli.py)
    "event_ids",
    "name",
    "key",
    "host",  # validated by `registry serve` (its own tests)
    "title",  # number from-arxiv --next-version: the new metadata
    "categories",
    "license",
}


# documented exceptions to exit 2: `latex arxiv` compiles the file it is given, and a file that
# is not LaTeX "does not compile" (exit 1, docs/cli.md); unreadable ones are still exit 2
EXIT_1_ALLOWED = {("latex arxiv", "target")}
# documented answers other than 2, by case (docs/identity.md): a readable file that is not a
# PDF is a failed paper proof (exit 1); a paper URL nobody answers is unverifiable, which
# --strict fails (exit 1); an ORCID API nobody answers is exit 3
NOT_A_PDF = {"empty", "binary", "non-utf8", "truncated-pdf", *JSON_KINDS}
EXPECTED_EXIT: dict[tuple[str, str], dict[str, int]] = {
    ("verify", "paper_pdf"): {
        **{kind: 1 for kind in NOT_A_PDF},
        repr(DEAD_REGISTRY + "/paper.pdf"): 1,
    },
    ("verify", "orcid_api"): {repr(DEAD_REGISTRY): 3},
    ("keys prove orcid", "orcid_api"): {repr(DEAD_REGISTRY): 3},
    # a backup of a key with an ORCID iD asks ORCID whether it was retired (docs/keys.md)
    ("keys import", "orcid_api"): {repr(DEAD_REGISTRY): 3},
}
VERDICT_LINE = "FAILED"  # exit 1 of `pith verify`: the failed checks on stdout, one line here


# --- a valid value for every parameter a command needs, so that only one thing is wrong ----
def _baseline(command: str, under_test: str, paths: dict[str, str]) -> dict[str, Any]:
    record, passphrase = paths["record"], paths["passphrase"]
    signing = {"record": record, "passphrase_file": passphrase, "registry": DEAD_REGISTRY}
    network = {"registry": DEAD_REGISTRY, "retries": "1", "timeout": "1"}
    bases: dict[str, dict[str, Any]] = {
        "verify": {"file": record},
        # --offline: a full number no record checks is refused otherwise (exit 3, registry dead)
        "badge": {"number": NUMBER, "fmt": "markdown", "offline": True},
        "claim": {"subject": NUMBER, "name": "Chengjian Liu", **signing},
        "archive": {"subject": NUMBER, **signing},
        "cite": {"citing": CITING, "cited": NUMBER, "offline": True, **signing},
        "replicate": {
            "subject": NUMBER,
            "kind": "replication",
            "outcome": "reproduced",
            "summary_text": "ok",
            **signing,
        },
        "withdraw": {
            "event_id": "sha256:" + "0" * 64,
            "passphrase_file": passphrase,
            "registry": DEAD_REGISTRY,
        },
        "submit": {**network},
        "fetch": {"ref": NUMBER, **network},
        "status": {"ref": NUMBER, **network},
        "keys generate": {"name": "second", "backend": "file", "passphrase_file": passphrase},
        "keys show": {"name": "ada", "check": True, "passphrase_file": passphrase},
        "keys set": {"name": "ada", "public_name": "Chengjian Liu"},
        "keys export": {"name": "ada"},
        "keys backup": {
            "name": "ada",
            "out": paths["fresh"],
            "passphrase_file": passphrase,
            "backup_passphrase_file": passphrase,
        },
        "keys import": {
            "backup_file": paths["record"],
            "passphrase_file": passphrase,
            "backup_passphrase_file": passphrase,
        },
        "keys rotate": {"name": "ada", "backend": "file", "passphrase_file": passphrase},
        "keys delete": {"name": "nobody"},
        "number from-arxiv": {"file": paths["xml"]},
        "latex sty": {"copy": paths["data"]},
        "number parse": {"ref": NUMBER},
        "bib scan": {"files": paths["bib"]},
        "latex inject": {"target": paths["tex"], "pith": NUMBER, "dry_run": True, "offline": True},
        "latex arxiv": {"target": paths["tex"], "output": paths["fresh"]},
        "auth login": {"registry": DEAD_REGISTRY, "token_file": paths["token"]},
        "auth logout": {"registry": DEAD_REGISTRY},
        "registry serve": {"port": "0", "data": paths["data"]},
        "registry add": {"files": paths["xml"], "data": paths["data"]},
        "keys prove orcid": {"key": "ada", "check": True, "as_json": True},
        "keys prove web": {"key": "ada"},
    }
    base = dict(bases.get(command, {}))
    if command == "cite" and under_test in ("bibfiles", "mapping", "only_cited", "citing_record"):
        base.pop("cited")
        base.pop("record")
        base["bibfiles"] = paths["bib"]
        if under_test == "citing_record":
            base["citing"] = NUMBER
    if under_test == "arxiv_api":
        base.update(lookup=True, offline=True)  # the URL is checked; nothing is asked
    if under_test == "abstract_file":
        base["next_version"] = True
    if under_test == "zip_out":
        base.pop("dry_run")  # --zip-out writes: a dry run refuses it whatever the file
    if command == "keys import" and under_test != "backup_file":
        base["backup_file"] = paths["backup"]
    if command == "keys import" and under_test == "orcid_api":
        base["backup_file"] = paths["orcid_backup"]  # only a key with an iD asks ORCID
    if command == "verify" and under_test in ("signer", "paper_pdf", "orcid_api"):
        base["file"] = paths["claim"]  # a signed claim by ada, carrying no proofs
        base["strict"] = under_test == "paper_pdf"  # a proof nobody answers then fails
        if under_test == "orcid_api":
            base["orcid"] = ORCID  # ada's iD: its ORCID record is asked for
    return base


# --- the bad inputs ------------------------------------------------------------------------
BAD_FILES = [
    "missing",
    "folder",
    "fifo",
    "dev-zero",
    "socket",
    "empty",
    "binary",
    "non-utf8",
    "huge",
    "deep-json",
    "nan-json",
    "big-int-json",
    "dup-key-json",
    "json-array",
    "json-null",
    "symlink-loop",
    "dangling-link",
    "truncated-pdf",
]
BAD_OUTPUTS = ["folder", "fifo", "dev-zero", "no-parent", "symlink-loop"]
BAD_FOLDERS = ["a-file", "fifo", "symlink-loop"]


def _make_inputs(root: Path) -> dict[str, str]:
    root.mkdir()
    made: dict[str, str] = {}

    def write(name: str, data: bytes) -> str:
        path = root / name
        path.write_bytes(data)
        path.chmod(0o600)
        return str(path)

    made["missing"] = str(root / "no-such-file.json")
    (root / "a-folder").mkdir()
    made["folder"] = str(root / "a-folder")
    os.mkfifo(root / "a-fifo")
    made["fifo"] = str(root / "a-fifo")
    made["dev-zero"] = "/dev/zero"
    made["empty"] = write("empty.json", b"")
    made["binary"] = write("binary.json", bytes(range(256)) * 8)
    made["non-utf8"] = write("latin.txt", b'caf\xe9 \xff\xfe {"a": "\xe9"}\n@ \xc3\x28\n')
    huge = root / "huge.json"
    with huge.open("wb") as handle:  # sparse: no disk, no time
        handle.truncate(HUGE)
    made["huge"] = str(huge)
    made["deep-json"] = write("deep.json", b"[" * 100_000 + b"]" * 100_000)
    made["nan-json"] = write("nan.json", b'{"a": NaN, "b": [Infinity]}')
    made["big-int-json"] = write("bigint.json", b'{"a": ' + b"9" * 5000 + b"}")
    made["dup-key-json"] = write("dup.json", b'{"a": 1, "a": 2}')
    made["json-array"] = write("array.json", b"[]")
    made["json-null"] = write("null.json", b"null")
    made["truncated-pdf"] = write("cut.pdf", b"%PDF-1.7\n1 0 obj\n<< /Type /Catalog /Pages")
    os.symlink(root / "loop-b", root / "loop-a")
    os.symlink(root / "loop-a", root / "loop-b")
    made["symlink-loop"] = str(root / "loop-a")
    os.symlink(root / "gone", root / "dangling")
    made["dangling-link"] = str(root / "dangling")
    made["no-parent"] = str(root / "no-such-folder" / "out.jsonl")
    made["a-file"] = made["nan-json"]
    sock = socket.socket(socket.AF_UNIX)
    sock.bind(str(root / "sock"))
    made["socket"] = str(root / "sock")
    made["_socket_handle"] = str(sock.fileno())
    _SOCKETS.append(sock)
    return made


_SOCKETS: list[socket.socket] = []


# --- enumerating the app --------------------------------------------------------------------
@functools.cache
def _commands() -> tuple[tuple[str, Any], ...]:
    """Every command of the app with its click command, built once per test process: Typer
    builds the whole tree afresh on each get_command (all 230 options), and every case of the
    matrix looked its command up: about 60% of the matrix's CPU. The cases only read it."""

    def walk(command: Any, path: list[str]) -> Iterator[tuple[str, Any]]:
        if hasattr(command, "commands"):
            for name, sub in command.commands.items():
                yield from walk(sub, [*path, name])
        else:
            yield " ".join(path), command

    return tuple(walk(typer.main.get_command(app), []))


def _is_flag(param: Any) -> bool:
    return bool(getattr(param, "is_flag", False)) or param.name in ("help", "version")


def _argv(command: str, params: list[Any], values: dict[str, Any]) -> list[str]:
    argv = command.split()
    for param in params:
        if param.name not in values:
            continue
        value = values[param.name]
        if _is_flag(param):
            if value:
                argv.append(param.opts[0])
            continue
        if param.param_type_name == "argument":
            argv.append(str(value))
        else:
            argv += [param.opts[0], str(value)]
    return argv


@dataclass
class Case:
    command: str
    param: str
    bad: str
    argv: list[str]

    def label(self) -> str:
        return f"{self.command} [{self.param}={self.bad}]"


@dataclass
class Outcome:
    code: int | None
    stdout: str
    stderr: str


def _run(argv: list[str], timeout: float = 15, fifo: str | None = None) -> Outcome:
    """`pith ARGV` in this process (conftest's runner), in a thread: None as the code if it
    has not ended after `timeout` seconds (a hang: a FIFO read, a server that started). A run
    hung on `fifo` is then released (a writer opens and closes it) so that it does not linger."""
    box: dict[str, Outcome] = {}

    def target() -> None:
        result = run_in_process(argv)
        box["outcome"] = Outcome(result.returncode, result.stdout, result.stderr)

    worker = threading.Thread(target=target, daemon=True)
    worker.start()
    worker.join(timeout)
    if worker.is_alive():
        if fifo is not None:
            with contextlib.suppress(OSError):
                os.close(os.open(fifo, os.O_WRONLY | os.O_NONBLOCK))
            worker.join(5)
        return Outcome(None, "", "HANG")
    return box["outcome"]


def _problems(case: Case, outcome: Outcome) -> str | None:
    if outcome.code is None:
        return "hangs"
    lines = error_lines(outcome.stderr)  # the next-step line after the error is not counted
    if "Traceback" in outcome.stderr:
        return f"traceback: {outcome.stderr[-300:]}"
    if "internal error" in outcome.stderr or "bug in pith" in outcome.stderr:
        return f"internal error: {outcome.stderr.strip()}"
    allowed = {1, 2} if (case.command, case.param) in EXIT_1_ALLOWED else {2}
    expected = EXPECTED_EXIT.get((case.command, case.param), {}).get(case.bad)
    allowed = {expected} if expected is not None else allowed
    if outcome.code not in allowed:
        return f"exit {outcome.code}, not {sorted(allowed)}: {outcome.stderr.strip()[:300]}"
    if case.bad in NEXT_STEP_BAD.get(case.param, ()) and next_step(outcome.stderr) is None:
        return f"no next step after the error: {outcome.stderr.strip()[:300]}"
    verdict = outcome.code == 1 and expected == 1 and lines and lines[0].startswith(VERDICT_LINE)
    if len(lines) != 1 or not (lines[0].startswith("pith: error: ") or verdict):
        return f"{len(lines)} lines on stderr: {outcome.stderr.strip()[:300]}"
    return None


def _claim_by_ada(folder: Path, passphrase: str) -> str:
    """A claim signed by ada's key, carrying no identity proofs (nothing for verify to fetch
    but what a case names)."""
    out = folder / "claim.jsonl"
    record = str(FIXTURES / "record-2302.12445v2.json")
    argv = ["claim", NUMBER, "--record", record, "--passphrase-file", passphrase, "-o", str(out)]
    outcome = _run(argv)
    assert outcome.code == 0, outcome.stderr
    return str(out)


def _digest_inputs(root: Path) -> dict[str, object]:
    """What each input file holds: its SHA-256, or for the sparse 64 MiB one its size,
    modification time and allocated blocks (a write changes them; hashing it per test would
    cost more than the case)."""
    digests: dict[str, object] = {}
    for path in sorted(root.rglob("*")):
        if path.is_symlink() or not path.is_file():
            continue
        stat = path.stat()
        if stat.st_size > 1024 * 1024:
            digests[str(path)] = (stat.st_size, stat.st_mtime_ns, stat.st_blocks)
        else:
            digests[str(path)] = hashlib.sha256(path.read_bytes()).hexdigest()
    return digests


# --- the matrix: one test per command and parameter -------------------------------------------
DEFAULT_SAMPLE = 3
"""Bad inputs per parameter in the default run; the others of its class run under `slow`.
Parameters of one class take turns through its list, so every bad input is in the default run
for some command."""
COMPILED = {"empty", "binary", "non-utf8", *JSON_KINDS}
"""Files `latex arxiv` hands to pdfLaTeX (exit 1 allowed): those cases need TeX."""


Bad = tuple[str, str]
"""One bad input: ("file", a kind of BAD_FILES/BAD_OUTPUTS/BAD_FOLDERS) or ("value", text)."""


def _parts(name: str) -> list[list[Bad]] | None:
    """The bad inputs of a parameter of this name: its bad files, then its bad values (a
    FILE|URL has both); [] when it takes any value; None when it is not classified."""
    files = (
        BAD_FILES if name in FILE_PARAMS
        else BAD_OUTPUTS if name in OUTPUT_PARAMS
        else BAD_FOLDERS if name in FOLDER_PARAMS
        else []
    )  # fmt: skip
    if name in SECRET_PARAMS:  # such text is a valid passphrase, token or abstract
        files = [kind for kind in files if kind not in (*JSON_KINDS, "truncated-pdf")]
    parts = [[("file", kind) for kind in files], [("value", v) for v in VALUE_PARAMS.get(name, [])]]
    parts = [part for part in parts if part]
    if parts or name in FREE_PARAMS:
        return parts
    return None


def _matrix() -> tuple[list[Any], list[Any], list[str]]:
    """pytest params (command, parameter, bad inputs) for the default run and for `slow`, and
    the parameters nobody classified."""
    rows: list[tuple[str, str, list[list[Bad]], bool]] = []
    unclassified: list[str] = []
    for command, click_command in _commands():
        for param in click_command.params:
            if _is_flag(param):
                continue
            name = str(param.name)
            parts = _parts(name)
            if parts is None:
                unclassified.append(f"{command} {name}")
            elif parts:
                tex = (command, name) in EXIT_1_ALLOWED
                usable = [[b for b in part if not (tex and b[1] in COMPILED)] for part in parts]
                rows.append((command, name, usable, tex))
    sharing = Counter(tuple(part) for *_, parts, _ in rows for part in parts)
    turn: Counter[tuple[Bad, ...]] = Counter()
    default: list[Any] = []
    slow: list[Any] = []
    for command, name, parts, tex in rows:
        sample: list[Bad] = []
        for part in parts:  # parameters sharing a list take turns through it
            size = max(DEFAULT_SAMPLE, -(-len(part) // sharing[tuple(part)]))
            start = turn[tuple(part)]
            turn[tuple(part)] += size
            sample += dict.fromkeys(part[(start + i) % len(part)] for i in range(size))
        every = [b for part in _parts(name) or [] for b in part]
        rest = [b for b in every if b not in sample]
        test_id = f"{command.replace(' ', '-')}-{name}"
        default.append(pytest.param(command, name, sample, id=test_id))
        if rest:
            marks = [pytest.mark.slow, *([pytest.mark.tex] if tex else [])]
            slow.append(pytest.param(command, name, rest, id=test_id, marks=marks))
    return default, slow, unclassified


DEFAULT_CASES, SLOW_CASES, UNCLASSIFIED = _matrix()


@dataclass
class World:
    """The files every case needs, made once per test worker: good ones (so that only one
    thing is wrong), the bad ones, a key store with key "ada" and a backup of another key."""

    paths: dict[str, str]
    bad: dict[str, str]
    home: Path
    inputs: list[Path]
    digests: dict[str, object]


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> Iterator[World]:
    from pithauthor.keys.author import backup, generate
    from pithauthor.keys.passphrase import passphrase_source

    root = tmp_path_factory.mktemp("matrix")
    good = root / "good"
    good.mkdir()
    passphrase = good / "passphrase.txt"
    passphrase.write_text(PASSPHRASE + "\n", "utf-8")
    passphrase.chmod(0o600)
    source = passphrase_source(str(passphrase))
    backup_file = good / "bob.backup"  # a key of another PITH_HOME, so that import goes on
    orcid_backup = good / "carol.backup"  # the same, of a key with an ORCID iD
    with pytest.MonkeyPatch.context() as monkeypatch:
        use_fast_kdf(monkeypatch)
        monkeypatch.setenv("PYTHON_KEYRING_BACKEND", "keyring.backends.fail.Keyring")
        monkeypatch.setenv("PITH_HOME", str(root / "other-home"))
        generate("bob", backend="file", passphrase=source, note=lambda _: None)
        backup("bob", backup_file, passphrase=source, backup_passphrase=source, note=lambda _: None)
        generate("carol", orcid=ORCID, backend="file", passphrase=source, note=lambda _: None)
        backup(
            "carol", orcid_backup, passphrase=source, backup_passphrase=source, note=lambda _: None
        )
        monkeypatch.setenv("PITH_HOME", str(root / "home"))
        generate(
            "ada",
            orcid=ORCID,
            public_name="Chengjian Liu",  # author 2 of the record's paper
            backend="file",
            passphrase=source,
            note=lambda _: None,
        )
        claim = _claim_by_ada(good, str(passphrase))
    (good / "paper").mkdir()
    (good / "paper" / "main.tex").write_text(
        "\\documentclass{article}\n\\begin{document}\nx\n\\end{document}\n", "utf-8"
    )
    (good / "refs.bib").write_text("@article{a, title = {T}, eprint = {2302.12445}}\n", "utf-8")
    (good / "token.txt").write_text("secret-token\n", "utf-8")
    (good / "token.txt").chmod(0o600)
    paths = {
        "record": str(FIXTURES / "record-2302.12445v2.json"),
        "xml": str(FIXTURES / "arxivraw-2302.12445.xml"),
        "bib": str(good / "refs.bib"),
        "passphrase": str(passphrase),
        "backup": str(backup_file),
        "orcid_backup": str(orcid_backup),
        "tex": str(good / "paper" / "main.tex"),
        "token": str(good / "token.txt"),
        "claim": claim,
    }
    bad = _make_inputs(root / "bad")
    inputs = [good, root / "bad"]
    digests = {k: v for folder in inputs for k, v in _digest_inputs(folder).items()}
    yield World(paths, bad, root / "home", inputs, digests)
    for sock in _SOCKETS:
        sock.close()
    _SOCKETS.clear()


def _check(
    world: World, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, command: str, name: str,
    kinds: list[Bad],
) -> None:  # fmt: skip
    """Feed `kinds` to parameter `name` of `command`, the rest valid; each must be refused with
    one line and exit 2 (no hang, no traceback), and leave every input file as it was."""
    use_fast_kdf(monkeypatch)
    monkeypatch.setenv("PITH_REGISTRY", DEAD_REGISTRY)
    monkeypatch.setenv("PITH_ORCID_API", DEAD_REGISTRY)  # nothing ever asks the real ORCID
    # A command that reaches the dead registry before it meets the bad value (`cite` checks
    # its --from first) retried six times with its back-off: 6-12 s of sleep per run, most of
    # the matrix's time. The same six attempts, at once (the runs are in this process); what is
    # tested is the refusal, not the back-off (tests/cli/test_client_answers.py tests that).
    skip_backoff(monkeypatch)
    shutil.copytree(world.home, os.environ["PITH_HOME"])  # key "ada", this test's own copy
    paths = {**world.paths, "data": str(tmp_path / "registry-data")}
    paths["fresh"] = str(tmp_path / "fresh-output")
    click_command = dict(_commands())[command]
    failures: list[str] = []
    for where, bad in kinds:
        value = world.bad[bad] if where == "file" else bad
        values = {**_baseline(command, name, paths), name: value}
        case = Case(command, name, bad if where == "file" else repr(bad), [])
        case.argv = _argv(command, click_command.params, values)
        problem = _problems(case, _run(case.argv, fifo=world.bad["fifo"]))
        if problem:
            failures.append(f"{case.label()}: {problem}")
    count("bad-input matrix", tried=len(kinds), refused=len(kinds) - len(failures))
    after = {k: v for folder in world.inputs for k, v in _digest_inputs(folder).items()}
    changed = sorted(p for p in world.digests if after.get(p) != world.digests[p])
    assert not changed, f"input files changed: {changed}"
    assert not failures, f"{len(failures)} of {len(kinds)} cases:\n" + "\n".join(failures)


@pytest.mark.parametrize(("command", "name", "kinds"), DEFAULT_CASES)
def test_a_hostile_value_of_each_parameter_is_refused_with_one_line_and_exit_2(
    world: World, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, command: str, name: str,
    kinds: list[Bad],
) -> None:  # fmt: skip
    _check(world, tmp_path, monkeypatch, command, name, kinds)


@pytest.mark.parametrize(("command", "name", "kinds"), SLOW_CASES)
def test_every_other_bad_input_of_each_parameter_is_refused_with_one_line_and_exit_2(
    world: World, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, command: str, name: str,
    kinds: list[Bad],
) -> None:  # fmt: skip
    """Slow: the rest of the cross product (about 550 of 860 cases; the default run has a few bad
    inputs of every parameter, and every bad input for some command)."""
    _check(world, tmp_path, monkeypatch, command, name, kinds)


def test_every_parameter_of_every_command_is_classified() -> None:
    """A new command or option cannot slip past the matrix: each parameter is in a class."""
    assert not UNCLASSIFIED, f"classify these parameters in this test: {UNCLASSIFIED}"


def test_the_default_run_feeds_every_bad_input_to_some_command() -> None:
    covered: dict[tuple[Bad, ...], set[Bad]] = {}
    for param in DEFAULT_CASES:
        _, name, kinds = param.values
        for part in _parts(name) or []:
            covered.setdefault(tuple(part), set()).update(b for b in kinds if b in part)
    assert covered
    for part, tried in covered.items():
        assert tried == set(part), sorted(set(part) - tried)


def test_the_matrix_knows_every_command_of_the_app() -> None:
    """A guard for the guard: the enumeration sees the commands users know."""
    names = {name for name, _ in _commands()}
    assert {"verify", "cite", "keys import", "registry serve", "latex inject"} <= names
    assert len(names) >= 25


def test_a_json_reader_error_names_the_file_and_the_fault(tmp_path: Path) -> None:
    path = tmp_path / "deep.json"
    path.write_bytes(b"[" * 5000 + b"]" * 5000)
    outcome = _run(["verify", str(path)])
    assert outcome.code == 2
    # one plain line: the error prefix, the file and the fault, nothing else on stderr
    lines = [line for line in outcome.stderr.splitlines() if line.strip()]
    assert len(lines) == 1, outcome.stderr
    assert lines[0].startswith("pith: error: "), outcome.stderr
    assert str(path) in lines[0] and "nested deeper than" in lines[0], outcome.stderr
