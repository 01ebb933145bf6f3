"""Publishing needs the author's yes: `--submit` on a terminal asks before anything is signed,
`--yes` skips the question, and without a terminal `--submit` is refused unless `--yes` is given
(exit 2, one line, nothing signed, nothing sent). Against a real local registry over loopback,
with a real key store; the terminal is a real pseudo-terminal."""

from __future__ import annotations

import json
import os
import pty
import select
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from conftest import FIXTURES, LAUNCHER, RunPith, assert_one_line_error, use_fast_kdf
from registry_helpers import REAL_NUMBER, free_port, manifest_file, start_server

RECORD = str(FIXTURES / "record-2302.12445v2.json")
EXAMPLE = "2101.99901"  # an example paper of the local registry


@pytest.fixture
def author(monkeypatch: pytest.MonkeyPatch) -> str:
    """A real key in this test's PITH_HOME (test-only cheap KDF), unlocked by PITH_PASSPHRASE."""
    from pithauthor.keys import generate

    use_fast_kdf(monkeypatch)
    monkeypatch.setenv("PITH_PASSPHRASE", "confirm tests passphrase")
    return generate("ada", backend="file", note=lambda _: None).key_id


@pytest.fixture
def registry(tmp_path: Path) -> Iterator[list[str]]:
    """A local registry with the example papers: the options that name and trust it."""
    server = start_server(tmp_path / "registry")
    manifest = manifest_file(server.url, tmp_path / "registry", tmp_path / "manifest.json")
    try:
        yield ["--registry", server.url, "--trust-manifest", str(manifest)]
    finally:
        server.stop()


def _outbox(pith: RunPith) -> list[dict[str, Any]]:
    listed = pith("outbox", "list", "--json")
    assert listed.returncode == 0, listed.stderr
    rows: list[dict[str, Any]] = json.loads(listed.stdout)
    return rows


SIGNING_COMMANDS = {
    "claim": ["claim", REAL_NUMBER, "--record", RECORD, "--position", "2"],
    "replicate": ["replicate", REAL_NUMBER, "--record", RECORD, "--kind", "replication",
                  "--outcome", "reproduced", "--summary", "Re-ran it."],
    "cite --to": ["cite", "--from", REAL_NUMBER, "--to", REAL_NUMBER, "--record", RECORD],
    "cite REFS.bib": ["cite", "{bib}", "--from", REAL_NUMBER],
}  # fmt: skip


@pytest.mark.parametrize("command", SIGNING_COMMANDS)
def test_submit_without_a_terminal_is_refused_without_yes_before_anything_is_signed(
    command: str, pith: RunPith, author: str, tmp_path: Path
) -> None:
    bib = tmp_path / "refs.bib"
    bib.write_text("@misc{a, title = {A}, eprint = {2101.99901}, archivePrefix = {arXiv}}\n")
    args = [a.replace("{bib}", str(bib)) for a in SIGNING_COMMANDS[command]]
    dead = f"http://127.0.0.1:{free_port()}"  # refused before any look-up: exit 2, not 3
    result = pith(*args, "--submit", "--registry", dead)
    assert_one_line_error(result, 2)
    assert "--yes" in result.stderr and "nothing was signed or sent" in result.stderr
    assert _outbox(pith) == []


def test_without_submit_no_terminal_signs_into_the_outbox_without_asking(
    pith: RunPith, author: str
) -> None:
    result = pith("claim", REAL_NUMBER, "--record", RECORD, "--position", "2")
    assert result.returncode == 0, result.stderr
    assert "[y/N]" not in result.stderr
    assert [row["state"] for row in _outbox(pith)] == ["pending"]


def _on_terminal(argv: list[str], answer: bytes | None) -> tuple[int, str]:
    """Run `argv` with stdin and stderr on a pseudo-terminal; when it asks "[y/N]", type
    `answer` (None: expect no question). Returns the exit code and what the terminal showed."""
    main, child = pty.openpty()
    proc = subprocess.Popen(
        argv, stdin=child, stdout=subprocess.DEVNULL, stderr=child, env=dict(os.environ)
    )
    os.close(child)
    seen = b""
    asked = False
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
            if not asked and b"[y/N]" in seen:
                asked = True
                if answer is None:
                    raise AssertionError(f"asked although it should not: {seen!r}")
                os.write(main, answer + b"\n")
        code = proc.wait(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
        os.close(main)
    if answer is not None:
        assert asked, seen
    return code, seen.decode("utf-8", "replace")


def test_submit_on_a_terminal_asks_and_no_signs_nothing_yes_publishes(
    pith: RunPith, author: str, registry: list[str]
) -> None:
    argv = [sys.executable, LAUNCHER, "claim", EXAMPLE, "--position", "1", "--submit", *registry]
    code, shown = _on_terminal(argv, b"n")
    assert code == 2, shown
    assert "nothing was signed or sent" in shown and "Traceback" not in shown
    assert _outbox(pith) == []

    code, shown = _on_terminal(argv, b"y")
    assert code == 0, shown
    assert "accepted 1, rejected 0, pending 0" in shown
    assert [row["state"] for row in _outbox(pith)] == ["accepted"]


def test_yes_on_a_terminal_submits_without_asking(
    pith: RunPith, author: str, registry: list[str]
) -> None:
    argv = [sys.executable, LAUNCHER, "claim", EXAMPLE, "--position", "1", "--submit", "--yes",
            *registry]  # fmt: skip
    code, shown = _on_terminal(argv, None)
    assert code == 0, shown
    assert "accepted 1, rejected 0, pending 0" in shown
