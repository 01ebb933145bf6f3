"""A full Pith Number is checked wherever its record is known: `pith latex inject --pith`,
`pith badge` and the signing commands compare it with the record (the record cache, or the
registry's), refuse a wrong year naming the right number, and say when the year could not be
checked (offline, or the registry unreachable). Against a real local registry over loopback,
which holds DeAR (arXiv 2302.12445v2, pith:2023:NFG5PAOX…) among its example papers."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from support.cli import RunPith, assert_one_line_error, use_fast_kdf
from support.paths import FIXTURES
from support.registry import REAL_NUMBER, free_port, manifest_file, start_server

WRONG_YEAR = REAL_NUMBER.replace("pith:2023:", "pith:2022:")
RIGHT = f"the record of arXiv 2302.12445v2 is {REAL_NUMBER}"
TEX = "\\documentclass{article}\n\\title{T}\n\\begin{document}\n\\maketitle\nx\n\\end{document}\n"


@pytest.fixture
def registry(tmp_path: Path) -> Iterator[list[str]]:
    server = start_server(tmp_path / "registry")
    manifest = manifest_file(server.url, tmp_path / "registry", tmp_path / "manifest.json")
    try:
        yield ["--registry", server.url, "--trust-manifest", str(manifest)]
    finally:
        server.stop()


@pytest.fixture
def paper(tmp_path: Path) -> Path:
    folder = tmp_path / "paper"
    folder.mkdir()
    (folder / "main.tex").write_text(TEX, "utf-8")
    return folder


def _untouched(folder: Path) -> None:
    assert [p.name for p in folder.iterdir()] == ["main.tex"]
    assert (folder / "main.tex").read_text("utf-8") == TEX


def test_inject_with_a_wrong_year_is_refused_naming_the_right_number_when_the_registry_knows(
    pith: RunPith, paper: Path, registry: list[str]
) -> None:
    result = pith("latex", "inject", str(paper), "--pith", WRONG_YEAR, *registry)
    assert_one_line_error(result, 2)
    assert f"{WRONG_YEAR} has the wrong year: {RIGHT}" in result.stderr
    _untouched(paper)


def test_inject_with_the_right_number_says_what_it_was_checked_with(
    pith: RunPith, paper: Path, registry: list[str]
) -> None:
    result = pith("latex", "inject", str(paper), "--pith", REAL_NUMBER, *registry)
    assert result.returncode == 0, result.stderr
    assert f"{REAL_NUMBER} is the record of arXiv 2302.12445v2 (checked with " in result.stderr
    assert f"\\pithnumber{{{REAL_NUMBER}}}" in (paper / "main.tex").read_text("utf-8")


def test_a_cached_record_catches_a_wrong_year_offline(
    pith: RunPith, paper: Path, registry: list[str]
) -> None:
    """The first look-up keeps the record; later, with no network, it still knows the year."""
    first = pith("badge", REAL_NUMBER, *registry)
    assert first.returncode == 0, first.stderr
    result = pith("latex", "inject", str(paper), "--pith", WRONG_YEAR, "--offline", *registry)
    assert_one_line_error(result, 2)
    assert RIGHT in result.stderr
    _untouched(paper)
    right = pith("badge", REAL_NUMBER, "--offline", *registry)
    assert f"(checked with {registry[1]}, cached)" in right.stderr


def test_offline_with_no_record_at_hand_says_the_year_is_unchecked(
    pith: RunPith, paper: Path, isolated_home: Path
) -> None:
    result = pith("latex", "inject", str(paper), "--pith", WRONG_YEAR, "--offline")
    assert result.returncode == 0, result.stderr
    assert f"offline and no record of {WRONG_YEAR} at hand: its year is unchecked" in result.stderr
    assert not (isolated_home / "cache").exists()  # nothing fetched, nothing kept


def test_an_unreachable_registry_leaves_the_year_unchecked_and_says_so(
    pith: RunPith, paper: Path
) -> None:
    dead = f"http://127.0.0.1:{free_port()}"
    result = pith("latex", "inject", str(paper), "--pith", REAL_NUMBER, "--registry", dead)
    assert result.returncode == 0, result.stderr
    assert f"{dead} could not be reached: the year of {REAL_NUMBER} is unchecked" in result.stderr


def test_badge_takes_an_arxiv_id_like_inject(pith: RunPith, registry: list[str]) -> None:
    result = pith("badge", "2302.12445", "--format", "latex", *registry)
    assert result.returncode == 0, result.stderr
    assert result.stdout == f"\\usepackage{{pith}}\n\\pithnumber{{{REAL_NUMBER}}}\n"
    assert f"{REAL_NUMBER} is the record of arXiv:2302.12445v2" in result.stderr
    assert_one_line_error(pith("badge", "2302.12445", "--offline"), 2)


def test_badge_with_a_wrong_year_is_refused(pith: RunPith, registry: list[str]) -> None:
    result = pith("badge", WRONG_YEAR, *registry)
    assert_one_line_error(result, 2)
    assert RIGHT in result.stderr and result.stdout == ""


@pytest.fixture
def author(monkeypatch: pytest.MonkeyPatch) -> None:
    from pithauthor.keys.author import generate

    use_fast_kdf(monkeypatch)
    monkeypatch.setenv("PITH_PASSPHRASE", "number checks passphrase")
    generate("ada", public_name="Chengjian Liu", backend="file", note=lambda _: None)


def test_a_claim_with_a_wrong_year_is_refused_naming_the_right_number(
    pith: RunPith, author: None, registry: list[str], tmp_path: Path
) -> None:
    out = tmp_path / "events.jsonl"
    result = pith("claim", WRONG_YEAR, "--position", "2", "-o", str(out), *registry)
    assert_one_line_error(result, 2)
    assert RIGHT in result.stderr and not out.exists()


def test_a_citation_from_a_wrong_year_is_refused_before_anything_is_signed(
    pith: RunPith, author: None, registry: list[str], tmp_path: Path
) -> None:
    out = tmp_path / "events.jsonl"
    record = str(FIXTURES / "record-2302.12445v2.json")
    result = pith("cite", "--from", WRONG_YEAR, "--to", REAL_NUMBER, "--record", record,
                  "-o", str(out), *registry)  # fmt: skip
    assert_one_line_error(result, 2)
    assert RIGHT in result.stderr and not out.exists()
    listed = json.loads(pith("outbox", "list", "--all", "--json").stdout)
    assert listed == []
