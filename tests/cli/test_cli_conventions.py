"""The command line follows its ecosystem (clig.dev, gh): one-line usage errors with a hint,
debug output that never changes the exit code, shell completion, no prompt without a
terminal, and the next step after signing."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from support.cli import RunPith, assert_one_line_error, use_fast_kdf

from pithauthor._cli.main import app


def _leaf_commands() -> list[list[str]]:
    """Every runnable command path of the app (`keys rotate`, `claim`, ...)."""
    import typer.main

    root = typer.main.get_command(app)
    paths: list[list[str]] = []

    def walk(group: object, prefix: list[str]) -> None:
        commands = getattr(group, "commands", None)
        if not commands:
            paths.append(prefix)
            return
        for name, command in commands.items():
            walk(command, [*prefix, name])

    walk(root, [])
    return paths


def test_every_command_answers_an_unknown_option_with_one_line_and_exit_2(
    capsys: pytest.CaptureFixture[str],
) -> None:
    from pithauthor._cli.main import main

    commands = _leaf_commands()
    assert len(commands) > 20
    for path in commands:
        with pytest.raises(SystemExit) as exit_info:
            main([*path, "--no-such-option"])
        out, err = capsys.readouterr()
        assert exit_info.value.code == 2, (path, err)
        assert out == "" and len(err.splitlines()) == 1, (path, err)
        assert err.startswith("pith: error: No such option: --no-such-option"), err
        assert f"see 'pith {' '.join(path)} --help'" in err, err


def test_a_missing_argument_is_one_line_naming_it(pith: RunPith) -> None:
    result = pith("claim")
    assert_one_line_error(result, 2)
    assert "Missing argument" in result.stderr and "pith claim --help" in result.stderr


def test_pith_debug_adds_a_traceback_but_keeps_the_exit_code(pith: RunPith) -> None:
    plain = pith("verify", "/nonexistent/record.json")
    debug = pith("verify", "/nonexistent/record.json", env={"PITH_DEBUG": "1"})
    assert plain.returncode == debug.returncode == 2
    assert "Traceback" not in plain.stderr
    assert "Traceback" in debug.stderr
    assert debug.stderr.splitlines()[-1] == plain.stderr.splitlines()[-1]


@pytest.mark.slow
def test_shell_completion_script_and_answers(tmp_path: Path) -> None:
    """Slow: real processes for three shells (completion answers at start-up)."""
    for shell, marker in (("bash", "_pith_completion"), ("zsh", "#compdef pith"),
                          ("fish", "complete --command pith")):  # fmt: skip
        script = subprocess.run(
            [sys.executable, "-m", "pithauthor", "completion", shell],
            capture_output=True, text=True, timeout=60,
        )  # fmt: skip
        assert script.returncode == 0 and marker in script.stdout, script.stdout
    env = {**os.environ, "_PITH_COMPLETE": "complete_bash", "COMP_WORDS": "pith keys ro",
           "COMP_CWORD": "2"}  # fmt: skip
    answer = subprocess.run(
        [sys.executable, "-m", "pithauthor"], env=env, capture_output=True, text=True, timeout=60
    )
    assert answer.stdout.split() == ["rotate"]


def test_keys_delete_never_prompts_without_a_terminal(
    pith: RunPith, monkeypatch: pytest.MonkeyPatch
) -> None:
    from pithauthor.keys.author import generate, show

    use_fast_kdf(monkeypatch)
    monkeypatch.setenv("PITH_PASSPHRASE", "a passphrase for this test")
    record = generate("ada", backend="file", note=lambda _: None)
    result = pith("keys", "delete", "ada", input="y\n")
    assert_one_line_error(result, 2)
    assert "--yes" in result.stderr and result.stdout == ""
    assert show("ada").key_id == record.key_id  # still there
    assert pith("keys", "delete", "ada", "--yes").returncode == 0


def test_signing_without_submit_names_the_next_step(
    pith: RunPith, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    from support.paths import REPO

    from pithauthor.keys.author import generate

    use_fast_kdf(monkeypatch)
    monkeypatch.setenv("PITH_PASSPHRASE", "a passphrase for this test")
    generate("ada", public_name="Chengjian Liu", backend="file", note=lambda _: None)
    record = str(REPO / "tests" / "fixtures" / "record-2302.12445v2.json")
    to_outbox = pith("claim", "2302.12445", "--record", record)
    assert to_outbox.returncode == 0, to_outbox.stderr
    assert "next: `pith submit --registry " in to_outbox.stderr
    out = tmp_path / "events.jsonl"
    to_file = pith("claim", "2302.12445", "--record", record, "--out", str(out))
    assert f"next: `pith submit {out} --registry " in to_file.stderr


def test_no_help_page_shows_python_types_and_one_output_flag_is_used(
    capsys: pytest.CaptureFixture[str],
) -> None:
    from pithauthor._cli.main import main

    for path in _leaf_commands():
        with pytest.raises(SystemExit) as exit_info:
            main([*path, "--help"])
        out, _ = capsys.readouterr()
        assert exit_info.value.code == 0, path
        for python_type in ("<str>", "<int", "<float", "<list[", "<path>"):
            assert python_type not in out, (path, python_type, out)
        assert "--output" not in out, path  # the one spelling is -o/--out
        if "--out " in out:
            assert "-o, --out" in out, (path, out)


def test_every_command_shows_examples_that_its_parser_accepts() -> None:
    import shlex

    import typer.main

    from pithauthor._cli.catalog import EXAMPLES

    root = typer.main.get_command(app)
    paths = {" ".join(p) for p in _leaf_commands()}
    assert paths == set(EXAMPLES), paths ^ set(EXAMPLES)  # every command, and no other
    for path, lines in EXAMPLES.items():
        for line in lines:
            words = shlex.split(line.split(" > ")[0])  # the command, not its redirection
            assert words[0] == "pith" and " ".join(words[1 : 1 + path.count(" ") + 1]) == path
            command: Any = root
            for name in path.split():
                command = command.commands[name]
            args = words[1 + path.count(" ") + 1 :]
            with command.make_context(f"pith {path}", args):  # raises on an unknown option
                pass
