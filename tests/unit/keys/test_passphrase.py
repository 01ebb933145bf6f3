"""The passphrase prompt, on a real terminal (a pty): a mistyped passphrase is asked again
(three tries in all), two differing new ones are typed again, and a new passphrase under 12
characters gets a warning. From PITH_PASSPHRASE or a file, a wrong one stops at once."""

from __future__ import annotations

import os
import pty
import select
import subprocess
import sys

from support.cli import FAST_KDF_ENV, LAUNCHER, RunPith, error_lines

GOOD = "a long passphrase for the prompt test"


def converse(args: list[str], answers: list[tuple[bytes, str]]) -> tuple[int, str]:
    """Run `pith ARGS` on a pty (its own session: getpass reads the pty, never /dev/tty of
    whoever runs the tests); at each prompt, in order, type its answer. Returns the exit code
    and everything the terminal showed."""
    main, child = pty.openpty()
    env = {k: v for k, v in os.environ.items() if k != "PITH_PASSPHRASE"}
    env[FAST_KDF_ENV] = "1"
    proc = subprocess.Popen(
        [sys.executable, LAUNCHER, *args],
        stdin=child,
        stdout=child,
        stderr=child,
        env=env,
        start_new_session=True,
    )
    os.close(child)
    seen, at, pending = b"", 0, list(answers)
    try:
        while True:
            ready, _, _ = select.select([main], [], [], 60)
            assert ready, f"no prompt and no end: {seen!r}"
            try:
                chunk = os.read(main, 4096)
            except OSError:  # EIO: the command ended
                break
            if not chunk:
                break
            seen += chunk
            if pending and pending[0][0] in seen[at:]:
                prompt, answer = pending.pop(0)
                at = seen.index(prompt, at) + len(prompt)
                os.write(main, answer.encode() + b"\n")
        code = proc.wait(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
        os.close(main)
    assert not pending, f"never asked {pending[0][0]!r}: {seen!r}"
    return code, seen.decode("utf-8", "replace").replace("\r\n", "\n")


def _generate(passphrase: str) -> tuple[int, str]:
    return converse(
        ["keys", "generate", "--name", "ada", "--backend", "file", "--public-name", "Ada Lovelace"],
        [(b"New key passphrase: ", passphrase), (b"Repeat passphrase: ", passphrase)],
    )


def test_a_mistyped_passphrase_is_asked_again_and_the_right_one_unlocks() -> None:
    assert _generate(GOOD)[0] == 0
    code, shown = converse(
        ["keys", "show", "ada", "--check"],
        [(b"Passphrase for key 'ada': ", "typo"), (b"Passphrase for key 'ada': ", GOOD)],
    )
    assert code == 0, shown
    assert "pith: wrong passphrase; try again (2 more)" in shown
    assert "typo" not in shown and GOOD not in shown  # no echo of either


def _generate_in_process(pith: RunPith) -> None:
    """Key "ada" under GOOD, from PITH_PASSPHRASE in this process: for the tests of the unlock
    prompt (the new-passphrase prompt has its own tests here; a process on a pty costs about
    0.5 s of CPU, this run a few ms)."""
    made = pith(
        "keys", "generate", "--name", "ada", "--backend", "file", "--public-name", "Ada Lovelace",
        env={"PITH_PASSPHRASE": GOOD, FAST_KDF_ENV: "1"},
    )  # fmt: skip
    assert made.returncode == 0, made.stderr


def test_three_wrong_passphrases_end_with_one_line_exit_4(pith: RunPith) -> None:
    _generate_in_process(pith)
    prompt = b"Passphrase for key 'ada': "
    code, shown = converse(
        ["keys", "show", "ada", "--check"], [(prompt, "one"), (prompt, "two"), (prompt, "three")]
    )
    assert code == 4
    assert shown.count("try again") == 2
    assert error_lines(shown)[-1].startswith("pith: error: wrong passphrase for key file")


def test_differing_new_passphrases_are_typed_again() -> None:
    code, shown = converse(
        ["keys", "generate", "--name", "ada", "--backend", "file", "--public-name", "Ada Lovelace"],
        [
            (b"New key passphrase: ", GOOD),
            (b"Repeat passphrase: ", GOOD + "x"),
            (b"New key passphrase: ", GOOD),
            (b"Repeat passphrase: ", GOOD),
        ],
    )
    assert code == 0, shown
    assert "the two passphrases differ; type them again" in shown
    assert "warning: the new passphrase" not in shown


def test_a_short_new_passphrase_gets_a_warning() -> None:
    code, shown = _generate("short")
    assert code == 0, shown  # a warning, not a refusal: the author decides
    assert "pith: warning: the new passphrase has 5 characters; one of 12 or more" in shown


def test_a_wrong_passphrase_from_the_environment_is_not_asked_again(pith: RunPith) -> None:
    _generate_in_process(pith)
    # no terminal (stdin a pipe): in this process, as a script piping into pith would run it
    result = pith(
        "keys", "show", "ada", "--check", env={"PITH_PASSPHRASE": "wrong", FAST_KDF_ENV: "1"}
    )
    assert result.returncode == 4
    assert "try again" not in result.stderr
    assert len(error_lines(result.stderr)) == 1 and "wrong passphrase" in result.stderr
