"""What an author sees while pith works: a request being retried is one line on stderr
(what, why, how long, Ctrl-C to stop), the references `cite` looks up are a progress bar on a
terminal and nothing on a pipe, Ctrl-C says that nothing was lost and how to go on (and the next
run does go on), and the passphrase is asked only after the preview and the author's yes. Real
processes on real pseudo-terminals, real signals, the project's own registry on loopback."""

from __future__ import annotations

import json
import os
import pty
import select
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator, Sequence
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from support.cite import CITING, PASSPHRASE, write_bib
from support.cli import LAUNCHER, NO_REGISTRY, RunPith, assert_one_line_error

from pithauthor.registry.local.server import FaultPlan

RETRY_LINE = (
    "did not answer (HTTP 503): trying again, attempt 2 of 2, for at most 1.0 s (Ctrl-C to stop)"
)
LOOKING_UP = b"looking the references up in the registry"
PROMPT = b"Passphrase for key 'ada': "


# --- the retry line ---------------------------------------------------------------------------


class _Busy(BaseHTTPRequestHandler):
    """A registry that is always busy: 503 with Retry-After: 1, to every GET."""

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def do_GET(self) -> None:
        body = b'{"error": "busy"}'
        self.send_response(503)
        self.send_header("Retry-After", "1")
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


@pytest.fixture
def busy_registry() -> Iterator[str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Busy)
    thread = threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


def test_a_retried_request_is_one_line_naming_the_server_the_wait_and_ctrl_c(
    pith: RunPith, busy_registry: str
) -> None:
    started = time.monotonic()
    result = pith("fetch", "2302.12445", "--registry", busy_registry, "--retries", "2")
    waited = time.monotonic() - started
    assert result.returncode == 3, result.stderr
    lines = result.stderr.splitlines()
    # the retry, said before the wait (on a pipe too: a log shows why the command waited),
    # then the one error line
    assert lines[0] == f"pith: the registry at {busy_registry} {RETRY_LINE}", result.stderr
    assert lines[1].startswith("pith: error: ") and len(lines) == 2, result.stderr
    assert waited >= 1.0  # the Retry-After the line announced was honoured


def test_retries_that_cannot_wait_a_second_pass_without_a_line(pith: RunPith) -> None:
    # two quick tries (the back-off before the second is at most 0.5 s): the error line alone,
    # as every refusal is one line
    result = pith("fetch", "2302.12445", "--registry", NO_REGISTRY, "--retries", "2")
    assert_one_line_error(result, 3)
    assert "trying again" not in result.stderr


# --- progress on a terminal, none on a pipe --------------------------------------------------


def _read_until(fd: int, seen: bytearray, markers: Sequence[bytes], timeout: float = 60) -> bytes:
    """Read from `fd` into `seen` until one of `markers` appears; returns the first that did
    (by position), or b"" when the other side closed."""
    deadline = time.monotonic() + timeout
    while True:
        found = [(seen.find(m), m) for m in markers if m in seen]
        if found:
            return min(found)[1]
        left = deadline - time.monotonic()
        ready, _, _ = select.select([fd], [], [], max(left, 0))
        if not ready:
            raise AssertionError(f"none of {markers} within {timeout} s: {bytes(seen)!r}")
        try:
            chunk = os.read(fd, 4096)
        except OSError:  # EIO: the child closed the terminal
            return b""
        if not chunk:
            return b""
        seen += chunk


def _on_terminal(
    args: Sequence[str], env: dict[str, str], script: Sequence[tuple[bytes, bytes]]
) -> tuple[int, str, list[bytes]]:
    """`pith ARGS` with stdin, stdout and stderr on a new pseudo-terminal. For each (marker,
    answer) of `script`: wait for the marker, then type the answer; returns the exit code, all
    the terminal showed, and which marker came first at each step (among those still due)."""
    pid, fd = pty.fork()
    if pid == 0:  # the child: the real `pith`
        os.execve(sys.executable, [sys.executable, LAUNCHER, *args], env)
    seen = bytearray()
    firsts: list[bytes] = []
    try:
        for i, (_, answer) in enumerate(script):
            first = _read_until(fd, seen, [m for m, _ in script[i:]])
            firsts.append(first)
            if first != script[i][0]:
                break
            os.write(fd, answer + b"\n")
        while _read_until(fd, seen, [b"\x00never"], timeout=120):
            pass
    finally:
        os.close(fd)
    _, status = os.waitpid(pid, 0)
    return os.waitstatus_to_exitcode(status), seen.decode("utf-8", "replace"), firsts


def _child_env(**extra: str) -> dict[str, str]:
    env = {**os.environ, **extra}
    env.pop("COLUMNS", None)
    return env


def test_cite_shows_the_lookups_as_a_bar_on_a_terminal(
    tmp_path: Path, cite_registry: dict[str, Any], cite_author: str, pith: RunPith
) -> None:
    bib = write_bib(tmp_path)
    out = tmp_path / "signed.jsonl"
    args = ["cite", str(bib), "--from", CITING, "--registry", cite_registry["url"],
            "--trust-manifest", cite_registry["manifest"], "--out", str(out)]  # fmt: skip
    code, shown, _ = _on_terminal(args, _child_env(), [(b"[y/N]", b"y")])
    assert code == 1, shown  # the bibliography has unresolvable entries: exit 1, as documented
    assert LOOKING_UP.decode() in shown
    assert len(out.read_text().splitlines()) == 4  # and it signed what it could
    # signed for real: the key was opened after the yes, and every pending signature put in
    assert pith("verify", str(out)).returncode == 0


def test_cite_shows_no_progress_on_a_pipe(
    tmp_path: Path, cite_registry: dict[str, Any], cite_author: str, pith_process: RunPith
) -> None:
    bib = write_bib(tmp_path)
    out = tmp_path / "signed.jsonl"
    where = ["--registry", cite_registry["url"], "--trust-manifest", cite_registry["manifest"]]
    result = pith_process("cite", str(bib), "--from", CITING, *where, "--out", str(out))
    assert result.returncode == 1, result.stderr
    assert LOOKING_UP.decode() not in result.stderr
    assert "\x1b" not in result.stderr  # no control sequence of a bar or spinner
    assert len(out.read_text().splitlines()) == 4


# --- Ctrl-C: nothing lost, the next run goes on ----------------------------------------------


def _interrupt_during_post(
    args: Sequence[str], plan: FaultPlan, env: dict[str, str]
) -> subprocess.CompletedProcess[str]:
    """Run `pith ARGS` as a real process, send it SIGINT once the registry holds its POST
    (the plan stalls it), and return how it ended."""
    proc = subprocess.Popen(
        [sys.executable, LAUNCHER, *args],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )
    deadline = time.monotonic() + 60
    while plan._count == 0 and proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.05)
    assert plan._count > 0, proc.communicate()
    time.sleep(0.3)
    proc.send_signal(signal.SIGINT)
    stdout, stderr = proc.communicate(timeout=60)
    return subprocess.CompletedProcess(list(args), proc.returncode, stdout, stderr)


def _interrupted_line(stderr: str, command: str) -> None:
    """The last line says it was interrupted, that nothing was lost, and what to run again (a
    long command by its first words)."""
    lines = [line for line in stderr.splitlines() if line.strip()]
    assert lines[-1] == f"pith: interrupted: nothing was lost; run `{command}` again to go on", (
        stderr
    )
    assert "Traceback" not in stderr


def test_ctrl_c_during_submit_loses_nothing_and_the_next_submit_goes_on(
    tmp_path: Path, cite_registry: dict[str, Any], cite_author: str, pith: RunPith
) -> None:
    where = ["--registry", cite_registry["url"], "--trust-manifest", cite_registry["manifest"]]
    signed = pith("cite", "--to", "2101.99903", "--from", CITING, *where)
    assert signed.returncode == 0, signed.stderr  # into the outbox, pending
    plan = FaultPlan(every=1, kinds=("stall",), stall_seconds=3)
    cite_registry["server"].faults = plan
    ended = _interrupt_during_post(["submit", *where], plan, dict(os.environ))
    assert ended.returncode == 130, ended.stderr
    _interrupted_line(ended.stderr, "pith submit …")  # a long command: its words only
    cite_registry["server"].faults = None
    # the POST in flight was let finish (its answer recorded, or the next run sends it again:
    # the registry keeps one event either way); nothing is left pending, nothing is doubled
    again = pith("submit", *where, "--json")
    assert again.returncode == 0, again.stderr
    assert json.loads(again.stdout)["pending"] == [], again.stdout
    assert cite_registry["server"].store.event_count() == 1


def test_ctrl_c_during_cite_loses_nothing_and_the_next_cite_goes_on(
    tmp_path: Path, cite_registry: dict[str, Any], cite_author: str, pith: RunPith
) -> None:
    bib = write_bib(tmp_path)
    where = ["--registry", cite_registry["url"], "--trust-manifest", cite_registry["manifest"]]
    args = ["cite", str(bib), "--from", CITING, *where, "--submit", "--yes"]
    plan = FaultPlan(every=1, kinds=("stall",), stall_seconds=3)
    cite_registry["server"].faults = plan
    ended = _interrupt_during_post(args, plan, dict(os.environ))
    assert ended.returncode == 130, ended.stderr
    _interrupted_line(ended.stderr, "pith cite …")  # a long command: its words only
    cite_registry["server"].faults = None
    # the next run signs nothing anew (the four citations were stored before the POST) and
    # sends them
    again = pith(*args)
    assert again.returncode == 1, again.stderr  # exit 1: unresolvable entries, as before
    assert "0 citation(s) signed" in again.stderr, again.stderr
    done = pith("submit", *where, "--json")
    assert json.loads(done.stdout)["pending"] == [], done.stdout
    assert cite_registry["server"].store.event_count() == 4


class _Slow(BaseHTTPRequestHandler):
    """A registry that takes two seconds to answer each read, and knows no paper."""

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def do_GET(self) -> None:
        time.sleep(2)
        body = b'{"error": "not found"}'
        self.send_response(404)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


def test_ctrl_c_during_the_lookups_of_cite_stops_without_waiting_for_the_rest(
    tmp_path: Path, cite_author: str
) -> None:
    # 20 references, two look-ups at a time, two seconds each: 20 s in all. Ctrl-C after the
    # first ones started ends the command once those two are answered, not after all twenty
    bib = tmp_path / "refs.bib"
    bib.write_text(
        "".join(
            f"@misc{{r{i}, title = {{R{i}}}, eprint = {{2101.{99000 + i}}}, "
            "archivePrefix = {arXiv}}\n"
            for i in range(20)
        )
    )
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Slow)
    threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True).start()
    record = Path(__file__).parents[1] / "fixtures" / "record-2302.12445v2.json"
    args = ["cite", str(bib), "--from", "pith:2023:NFG5PAOXQUVIWDX5F7YSYYL7EW",
            "--from-record", str(record), "--parallel", "2",
            "--registry", f"http://127.0.0.1:{server.server_address[1]}"]  # fmt: skip
    try:
        proc = subprocess.Popen(
            [sys.executable, LAUNCHER, *args],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        time.sleep(3)  # pith has started, the first look-ups are in flight
        proc.send_signal(signal.SIGINT)
        interrupted = time.monotonic()
        _, stderr = proc.communicate(timeout=60)
        stopped = time.monotonic() - interrupted
    finally:
        server.shutdown()
        server.server_close()
    assert proc.returncode == 130, stderr
    _interrupted_line(stderr, "pith cite …")
    assert stopped < 6, f"{stopped:.1f} s after Ctrl-C"


# --- the passphrase after the preview and the yes --------------------------------------------


def _cite_one_args(registry: dict[str, Any]) -> list[str]:
    return ["cite", "--to", "2101.99903", "--from", CITING, "--registry", registry["url"],
            "--trust-manifest", registry["manifest"]]  # fmt: skip


def test_the_passphrase_is_asked_after_the_preview_and_the_yes(
    cite_registry: dict[str, Any], cite_author: str
) -> None:
    env = _child_env()
    env.pop("PITH_PASSPHRASE")  # typed at the terminal
    script = [(b"[y/N]", b"y"), (PROMPT, PASSPHRASE.encode())]
    code, shown, firsts = _on_terminal(_cite_one_args(cite_registry), env, script)
    assert firsts == [b"[y/N]", PROMPT], shown  # the question came first
    assert code == 0, shown
    preview = shown.index("A citation to sign")
    assert preview < shown.index("[y/N]") < shown.index(PROMPT.decode()), shown
    assert "signed citation_signature" in shown


def test_no_passphrase_is_asked_when_the_author_says_no(
    cite_registry: dict[str, Any], cite_author: str, pith: RunPith
) -> None:
    env = _child_env()
    env.pop("PITH_PASSPHRASE")
    code, shown, firsts = _on_terminal(_cite_one_args(cite_registry), env, [(b"[y/N]", b"n")])
    assert firsts == [b"[y/N]"] and code == 2, shown
    assert "Passphrase" not in shown and "nothing was stored or sent" in shown
    where = ["--registry", cite_registry["url"], "--trust-manifest", cite_registry["manifest"]]
    listed = pith("submit", *where, "--json")
    assert json.loads(listed.stdout)["pending"] == [], listed.stdout  # nothing in the outbox


def test_a_wrong_passphrase_without_a_terminal_is_still_one_line(
    cite_registry: dict[str, Any], cite_author: str, pith: RunPith, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PITH_PASSPHRASE", "not it")
    result = pith(*_cite_one_args(cite_registry))
    assert_one_line_error(result, 4)
