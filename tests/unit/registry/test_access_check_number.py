"""A full Pith Number is checked with its record before it is written into a paper or signed:
`pith latex inject --pith`, `pith badge` and the signing commands compare it with the record
(the record cache, or the registry's) and refuse a wrong year naming the right number. A number
no record can check (the registry unreachable, or without a record of it) is refused too,
suggesting the arXiv id, unless `--offline` says to use it unchecked (then stderr says so).
Against a real local registry over loopback, which holds DeAR (arXiv 2302.12445v2,
pith:2023:NFG5PAOX…) among its example papers."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from support.cli import RunPith, assert_one_line_error, use_fast_kdf
from support.paths import FIXTURES
from support.registry import REAL_NUMBER, free_port, manifest_file, start_server

from pithauthor.verify import read_documents

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


def test_inject_refuses_a_wrong_year_it_cannot_check_and_writes_it_only_offline(
    pith: RunPith, paper: Path
) -> None:
    """No registry reachable, no record cached: the number is not written (exit 3, one line
    that suggests the arXiv id and --offline); with --offline it is, and stderr says so."""
    dead = f"http://127.0.0.1:{free_port()}"
    refused = pith("latex", "inject", str(paper), "--pith", WRONG_YEAR, "--registry", dead)
    assert_one_line_error(refused, 3)
    assert f"{WRONG_YEAR} could not be checked against its record: the registry at {dead} " \
        "did not answer" in refused.stderr  # fmt: skip
    assert "give the paper's arXiv id instead" in refused.stderr
    assert f"--offline to use {WRONG_YEAR} unchecked" in refused.stderr
    _untouched(paper)

    offline = pith("latex", "inject", str(paper), "--pith", WRONG_YEAR, "--offline")
    assert offline.returncode == 0, offline.stderr
    assert f"no record of {WRONG_YEAR} at hand: its year is unchecked" in offline.stderr
    assert f"\\pithnumber{{{WRONG_YEAR}}}" in (paper / "main.tex").read_text("utf-8")


def test_badge_refuses_a_number_it_cannot_check_unless_offline(pith: RunPith) -> None:
    dead = f"http://127.0.0.1:{free_port()}"
    refused = pith("badge", WRONG_YEAR, "--registry", dead)
    assert_one_line_error(refused, 3)
    assert refused.stdout == "" and "arXiv id" in refused.stderr
    offline = pith("badge", WRONG_YEAR, "--offline", "--registry", dead)
    assert offline.returncode == 0, offline.stderr
    assert "its year is unchecked" in offline.stderr and "pith:NFG5PAOX" in offline.stdout


def test_a_number_the_registry_has_no_record_of_is_refused_unless_offline(
    pith: RunPith, paper: Path, registry: list[str]
) -> None:
    unknown = "pith:2023:ABCDEFGHIJKLMNOPQRSTUVWXYZ"
    refused = pith("latex", "inject", str(paper), "--pith", unknown, *registry)
    assert_one_line_error(refused, 2)
    assert f"has no record of {unknown}, so it could not be checked" in refused.stderr
    _untouched(paper)
    offline = pith("latex", "inject", str(paper), "--pith", unknown, "--offline", *registry)
    assert offline.returncode == 0, offline.stderr


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
    result = pith("claim", WRONG_YEAR, "--position", "6", "-o", str(out), *registry)
    assert_one_line_error(result, 2)
    assert RIGHT in result.stderr and not out.exists()


def test_a_citation_from_a_number_no_record_checks_is_refused_unless_offline(
    pith: RunPith, author: None, tmp_path: Path
) -> None:
    """The citing number is signed into the event: unchecked, it is refused (the registry
    unreachable), naming the arXiv id, --from-record and --offline; --offline signs it."""
    out = tmp_path / "events.jsonl"
    record = str(FIXTURES / "record-2302.12445v2.json")
    dead = ["--registry", f"http://127.0.0.1:{free_port()}"]
    args = ("cite", "--from", WRONG_YEAR, "--to", REAL_NUMBER, "--record", record, "-o", str(out))
    refused = pith(*args, *dead)
    assert_one_line_error(refused, 3)
    assert "--from-record FILE" in refused.stderr and "--offline" in refused.stderr
    assert not out.exists()
    signed = pith(*args, "--offline", *dead)
    assert signed.returncode == 0, signed.stderr
    assert "its year is unchecked" in signed.stderr
    (event,) = read_documents(str(out))
    assert event["payload"]["citing_pith_number"] == WRONG_YEAR


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
