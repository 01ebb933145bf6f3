"""Shell completion through Click's own machinery: key names where a key goes, the eight
relationships where a relationship goes, never file names there. The cases run `pith`
in-process (the same `main`, reading the same environment variables a shell sets); one test
asks a real `pith` process, so the installed entry point is proven to answer the same."""

from __future__ import annotations

from pathlib import Path

import pytest
from support.cli import RunPith, use_fast_kdf

from pithauthor.protocol.payloads import RELATIONSHIPS

PASSPHRASE = {"PITH_PASSPHRASE": "completion passphrase"}


def _complete(run: RunPith, words: str, cwd: Path) -> list[str]:
    """What bash is offered for the last word of `words`, asked the way the script of
    `pith completion bash` asks (Typer's complete_bash protocol): one candidate a line. An
    empty answer is where bash would fall back to file names. `run`: the `pith` fixture or
    `pith_process` (a real process costs ~0.5 s of CPU, an in-process run a few ms)."""
    argv = words.split(" ")
    result = run(
        env={
            "_PITH_COMPLETE": "complete_bash",
            "COMP_WORDS": words,
            "COMP_CWORD": str(len(argv) - 1),
        },
        cwd=cwd,
    )
    assert result.returncode == 0, result.stderr
    return result.stdout.split()


@pytest.fixture
def two_keys(pith: RunPith, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    """Keys "alice" and "albert" in this test's PITH_HOME, and a folder whose files start
    like them (what a file-name completion would offer instead)."""
    use_fast_kdf(monkeypatch)
    for name in ("alice", "albert"):
        made = pith(
            "keys", "generate", "--name", name, "--public-name", name.title(), env=PASSPHRASE
        )
        assert made.returncode == 0, made.stderr
    folder = tmp_path / "cwd"
    folder.mkdir()
    for name in ("alpha.txt", "cites.bib", "supports.tex"):
        (folder / name).write_text("x", "utf-8")
    return folder


@pytest.mark.parametrize(
    "words",
    ["pith cite --key al", "pith claim -k al", "pith keys show al", "pith keys delete al",
     "pith keys prove orcid --key al", "pith latex inject --key al"],
)  # fmt: skip
def test_a_key_completes_to_the_key_names_of_the_store(
    pith: RunPith, two_keys: Path, words: str
) -> None:
    assert sorted(_complete(pith, words, two_keys)) == ["albert", "alice"]


def test_a_key_id_prefix_completes_to_that_key_id(pith: RunPith, two_keys: Path) -> None:
    listed = pith("keys", "list", "--json")
    import json

    key_id = json.loads(listed.stdout)[0]["key_id"]
    assert _complete(pith, f"pith keys backup {key_id[:12]}", two_keys) == [key_id]


def test_with_no_key_store_a_key_completes_to_nothing(pith: RunPith, tmp_path: Path) -> None:
    assert _complete(pith, "pith cite --key ", tmp_path) == []


@pytest.mark.parametrize("command", ["pith cite --relationship", "pith bib scan --relationship"])
def test_a_relationship_completes_to_the_eight(pith: RunPith, tmp_path: Path, command: str) -> None:
    assert _complete(pith, f"{command} ", tmp_path) == list(RELATIONSHIPS)
    assert _complete(pith, f"{command} s", tmp_path) == ["supports"]
    assert _complete(pith, f"{command} c", tmp_path) == ["compares", "cites"]


def test_a_map_value_completes_its_relationship_after_the_equals_sign(
    pith: RunPith, tmp_path: Path
) -> None:
    got = _complete(pith, "pith cite --map knuth84=c", tmp_path)
    assert got == ["knuth84=compares", "knuth84=cites"]
    assert _complete(pith, "pith cite --map knu", tmp_path) == []


def test_a_real_pith_process_completes_keys_and_relationships_from_its_environment(
    pith_process: RunPith, two_keys: Path
) -> None:
    """The installed entry point (`python -m pithauthor`, as the completion script runs it)
    answers from the variables the shell sets, before and instead of running a command."""
    assert sorted(_complete(pith_process, "pith cite --key al", two_keys)) == ["albert", "alice"]
    assert _complete(pith_process, "pith bib scan --relationship c", two_keys) == [
        "compares",
        "cites",
    ]


def _detected(monkeypatch: pytest.MonkeyPatch, found: str | None) -> None:
    """Make the process's ancestors show `found` as the nearest shell (None: no shell), as a
    CI job or a shell that ran `pith` with exec does."""
    from pithauthor._cli import completion_cmd

    monkeypatch.setattr(completion_cmd, "ancestor_shell", lambda: found)


@pytest.mark.parametrize("found", ["sh", None])
def test_install_completion_takes_the_login_shell_where_no_completing_shell_is_found(
    pith: RunPith, monkeypatch: pytest.MonkeyPatch, tmp_path: Path, found: str | None
) -> None:
    _detected(monkeypatch, found)
    done = pith("--install-completion", env={"HOME": str(tmp_path), "SHELL": "/usr/bin/zsh"})
    assert done.returncode == 0, done.stderr
    assert "zsh completion installed" in done.stderr
    assert "_PITH_COMPLETE" in (tmp_path / ".zfunc" / "_pith").read_text("utf-8")


def test_install_completion_prefers_the_shell_it_runs_in_to_the_login_shell(
    pith: RunPith, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    _detected(monkeypatch, "bash")
    done = pith("--install-completion", env={"HOME": str(tmp_path), "SHELL": "/usr/bin/zsh"})
    assert done.returncode == 0, done.stderr
    assert (tmp_path / ".bash_completions" / "pith.sh").is_file()
    assert not (tmp_path / ".zfunc").exists()


def test_no_shell_to_complete_in_is_one_usage_line_naming_pith_completion(
    pith: RunPith, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    _detected(monkeypatch, "sh")
    monkeypatch.delenv("SHELL", raising=False)
    done = pith("--install-completion", env={"HOME": str(tmp_path)})
    assert done.returncode == 2
    assert done.stdout == ""
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and "pith completion bash" in lines[0], done.stderr
    assert list(tmp_path.iterdir()) == []


def test_show_completion_prints_the_script_of_pith_completion_for_the_login_shell(
    pith: RunPith, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    _detected(monkeypatch, None)
    shown = pith("--show-completion", env={"SHELL": "/usr/bin/fish"})
    assert shown.returncode == 0, shown.stderr
    assert shown.stdout == pith("completion", "fish").stdout


def test_a_real_pith_run_from_bash_completes_in_bash_whatever_the_login_shell(
    tmp_path: Path,
) -> None:
    """The ancestors are asked first: a `pith` that bash starts (not by exec) sees bash."""
    import os
    import shlex
    import shutil
    import subprocess
    import sys

    from support.cli import LAUNCHER

    if shutil.which("bash") is None:
        pytest.skip("bash is not installed")
    command = f"{shlex.join([sys.executable, LAUNCHER, '--show-completion'])} | cat"
    shown = subprocess.run(
        ["bash", "-c", command],
        capture_output=True,
        text=True,
        env={**os.environ, "SHELL": "/usr/bin/fish", "HOME": str(tmp_path)},
        timeout=60,
    )
    assert shown.returncode == 0, shown.stderr
    assert "complete -o default -F _pith_completion pith" in shown.stdout  # bash's, not fish's
