"""Shell completion through Click's own machinery, in a real `pith` process: key names where a
key goes, the eight relationships where a relationship goes, never file names there."""

from __future__ import annotations

from pathlib import Path

import pytest
from support.cli import RunPith, use_fast_kdf

from pithauthor.protocol.payloads import RELATIONSHIPS

PASSPHRASE = {"PITH_PASSPHRASE": "completion passphrase"}


def _complete(pith_process: RunPith, words: str, cwd: Path) -> list[str]:
    """What bash is offered for the last word of `words`, asked the way the script of
    `pith completion bash` asks (Typer's complete_bash protocol): one candidate a line. An
    empty answer is where bash would fall back to file names."""
    argv = words.split(" ")
    result = pith_process(
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
    pith_process: RunPith, two_keys: Path, words: str
) -> None:
    assert sorted(_complete(pith_process, words, two_keys)) == ["albert", "alice"]


def test_a_key_id_prefix_completes_to_that_key_id(
    pith: RunPith, pith_process: RunPith, two_keys: Path
) -> None:
    listed = pith("keys", "list", "--json")
    import json

    key_id = json.loads(listed.stdout)[0]["key_id"]
    assert _complete(pith_process, f"pith keys backup {key_id[:12]}", two_keys) == [key_id]


def test_with_no_key_store_a_key_completes_to_nothing(
    pith_process: RunPith, tmp_path: Path
) -> None:
    assert _complete(pith_process, "pith cite --key ", tmp_path) == []


@pytest.mark.parametrize("command", ["pith cite --relationship", "pith bib scan --relationship"])
def test_a_relationship_completes_to_the_eight(
    pith_process: RunPith, tmp_path: Path, command: str
) -> None:
    assert _complete(pith_process, f"{command} ", tmp_path) == list(RELATIONSHIPS)
    assert _complete(pith_process, f"{command} s", tmp_path) == ["supports"]
    assert _complete(pith_process, f"{command} c", tmp_path) == ["compares", "cites"]


def test_a_map_value_completes_its_relationship_after_the_equals_sign(
    pith_process: RunPith, tmp_path: Path
) -> None:
    got = _complete(pith_process, "pith cite --map knuth84=c", tmp_path)
    assert got == ["knuth84=compares", "knuth84=cites"]
    assert _complete(pith_process, "pith cite --map knu", tmp_path) == []
