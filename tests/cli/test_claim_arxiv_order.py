"""A claim's `--position` is a place in arXiv's author order, never in the registry's list.

pith.science's record of DeAR (2302.12445v2) lists its authors sorted by given name ("Bo Li,
Chengjian Liu, Lin Zhang, Shaohuai Shi, Wei Wang, Xiaowen Chu"); arXiv lists "Lin Zhang,
Shaohuai Shi, Xiaowen Chu, Wei Wang, Bo Li, Chengjian Liu". Against the project's local
registry (which holds DeAR with the record's sorted list) and a local stand-in for arXiv's API
(tests/support/arxiv_server.py, serving DeAR's entry in arXiv's order), over loopback: Lin
Zhang signs at 1 and is refused at 3 (where the sorted list has her); the preview shows arXiv's
order; with arXiv's API away a position is refused (signed with --force, saying so) and a claim
without one is signed after its name is checked against the record's list."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from support.arxiv_server import ArxivServer, Paper, known_papers
from support.cli import RunPith, assert_one_line_error, use_fast_kdf
from support.registry import free_port, manifest_file, start_server

from pithauthor.verify import read_documents

ORDER_SHOWN = (
    "authors    1 Lin Zhang (you), 2 Shaohuai Shi, 3 Xiaowen Chu, 4 Wei Wang, 5 Bo Li, "
    "6 Chengjian Liu (arXiv's order)"
)


@pytest.fixture
def arxiv() -> Iterator[ArxivServer]:
    """A stand-in arXiv API of its own (its requests are counted here)."""
    with ArxivServer(known_papers()) as server:
        yield server


@pytest.fixture
def registry(tmp_path: Path) -> Iterator[list[str]]:
    server = start_server(tmp_path / "registry")
    manifest = manifest_file(server.url, tmp_path / "registry", tmp_path / "manifest.json")
    try:
        yield ["--registry", server.url, "--trust-manifest", str(manifest)]
    finally:
        server.stop()


@pytest.fixture
def lin_zhang(monkeypatch: pytest.MonkeyPatch) -> None:
    """A key whose public name is DeAR's first author on arXiv (third in the record's list)."""
    from pithauthor.keys.author import generate

    use_fast_kdf(monkeypatch)
    monkeypatch.setenv("PITH_PASSPHRASE", "arxiv order passphrase")
    generate("lin", public_name="Lin Zhang", backend="file", note=lambda _: None)


def _claim(pith: RunPith, out: Path, registry: list[str], api: str, *args: str) -> Any:
    return pith("claim", "2302.12445", "-o", str(out), *registry, "--arxiv-api", api, *args)


def _signed(out: Path) -> list[Any]:
    return read_documents(str(out)) if out.exists() else []


def _dead_api() -> str:
    return f"http://127.0.0.1:{free_port()}/api/query"


def test_the_first_author_on_arxiv_signs_at_1_and_is_refused_at_the_record_s_place(
    pith: RunPith, lin_zhang: None, registry: list[str], arxiv: ArxivServer, tmp_path: Path
) -> None:
    out = tmp_path / "events.jsonl"
    refused = _claim(pith, out, registry, arxiv.url, "--position", "3")
    assert_one_line_error(refused, 2)
    assert "author 3 on arXiv is 'Xiaowen Chu', not 'Lin Zhang' (author 1)" in refused.stderr
    assert _signed(out) == []

    signed = _claim(pith, out, registry, arxiv.url, "--position", "1")
    assert signed.returncode == 0, signed.stderr
    (event,) = _signed(out)
    assert event["payload"]["author"] == {"name": "Lin Zhang", "position": 1}
    # the preview: arXiv's order, the signer's place marked; never the record's sorted list
    assert ORDER_SHOWN in signed.stderr
    assert "position   1 of 6 on arXiv (Lin Zhang)" in signed.stderr
    assert "Bo Li, Chengjian Liu, Lin Zhang" not in signed.stderr
    # the version the record is of, asked by id, once: the refused claim's answer was cached
    assert [r.query for r in arxiv.state.requests] == ["id_list=2302.12445v2"]


def test_arxiv_s_answer_is_cached_so_a_later_claim_checks_the_position_with_arxiv_away(
    pith: RunPith, lin_zhang: None, registry: list[str], arxiv: ArxivServer, tmp_path: Path
) -> None:
    first = _claim(pith, tmp_path / "a.jsonl", registry, arxiv.url, "--position", "1")
    assert first.returncode == 0, first.stderr
    asked = len(arxiv.state.requests)
    second = _claim(pith, tmp_path / "b.jsonl", registry, arxiv.url, "--position", "3")
    assert_one_line_error(second, 2)
    assert "author 3 on arXiv is 'Xiaowen Chu'" in second.stderr
    assert len(arxiv.state.requests) == asked == 1  # the second one asked nothing


def test_with_arxiv_away_a_position_is_refused_unless_forced(
    pith: RunPith, lin_zhang: None, registry: list[str], tmp_path: Path
) -> None:
    out = tmp_path / "events.jsonl"
    dead = _dead_api()
    refused = _claim(pith, out, registry, dead, "--position", "1")
    assert_one_line_error(refused, 2)
    assert "--position 1 cannot be checked: arXiv's author order of arXiv 2302.12445v2 could " \
        "not be had" in refused.stderr  # fmt: skip
    assert "leave out --position, or --force signs it unchecked" in refused.stderr
    assert _signed(out) == []

    forced = _claim(pith, out, registry, dead, "--position", "1", "--force")
    assert forced.returncode == 0, forced.stderr
    assert "position   NOT CHECKED (--force): --position 1 cannot be checked" in forced.stderr
    # no order to show: the record's list, said to be no order
    assert "(the record's list, not the paper's order)" in forced.stderr
    (event,) = _signed(out)
    assert event["payload"]["author"]["position"] == 1


def test_with_arxiv_away_a_claim_without_position_is_signed_after_the_name_check(
    pith: RunPith, lin_zhang: None, registry: list[str], tmp_path: Path
) -> None:
    out = tmp_path / "events.jsonl"
    dead = _dead_api()
    signed = _claim(pith, out, registry, dead)
    assert signed.returncode == 0, signed.stderr
    assert "none signed; the name is one of the record's 6 authors" in signed.stderr
    (event,) = _signed(out)
    assert event["payload"]["author"] == {"name": "Lin Zhang"}
    # the name is still checked: a stranger is refused, arXiv or not
    renamed = pith("keys", "set", "lin", "--public-name", "Ada Lovelace")
    assert renamed.returncode == 0, renamed.stderr
    stranger = _claim(pith, tmp_path / "other.jsonl", registry, dead)
    assert_one_line_error(stranger, 2)
    assert "'Ada Lovelace' is not among the paper's authors" in stranger.stderr
    assert _signed(tmp_path / "other.jsonl") == []


def test_arxiv_s_full_names_match_initials_and_accents(
    pith: RunPith, lin_zhang: None, registry: list[str], tmp_path: Path
) -> None:
    """arXiv's API gives names as the authors wrote them (here with accents); the claim's
    `--name` may write them with initials, without accents (the one rule, `same_person`)."""
    accented = ["Lín Zhāng", "Sháohuài Shī", "Xiaowen Chu", "Wei Wang", "Bo Li", "Chengjian Liu"]
    dear = Paper("2302.12445", "DeAR", accented, "2023-02-24T04:11:18Z", version=2)
    out = tmp_path / "events.jsonl"
    with ArxivServer([dear]) as server:
        signed = _claim(pith, out, registry, server.url, "--name", "L. Zhang", "--position", "1")
    assert signed.returncode == 0, signed.stderr
    assert "1 of 6 on arXiv (Lín Zhāng)" in signed.stderr
    (event,) = _signed(out)
    assert event["payload"]["author"] == {"name": "L. Zhang", "position": 1}


def test_an_arxiv_entry_of_another_version_is_no_answer(
    pith: RunPith, lin_zhang: None, registry: list[str], tmp_path: Path
) -> None:
    """The record is of v2; an API that only knows v1 has no order for it: not checked."""
    v1 = Paper("2302.12445", "DeAR", ["Lin Zhang"], "2023-02-24T04:11:18Z", version=1)
    out = tmp_path / "events.jsonl"
    with ArxivServer([v1]) as server:
        refused = _claim(pith, out, registry, server.url, "--position", "1")
    assert_one_line_error(refused, 2)
    assert "has no entry with authors for it" in refused.stderr
