"""An `ambiguous` entry is settled by its author: a line to paste for each candidate, or
(`--choose`, on a terminal) a question whose answer is then used like a certain match."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from support.arxiv_server import ArxivServer
from support.cli import OnTerminal, RunPith
from support.lookup_corpus import PAPERS

from pithauthor.bibliography.arxiv_api import ArxivApi
from pithauthor.bibliography.lookup import LookupCache, lookup_identifiers, settle
from pithauthor.bibliography.reading import read_bibliographies
from pithauthor.errors import InputError

MATHS = Path(__file__).parents[2] / "fixtures" / "bib" / "lookup" / "mathscinet.bib"
GREEN_TAO = "MR2415383"  # the preprint (math/0404188) and a later decoy (0805.4417)


def _copy(tmp_path: Path) -> Path:
    bib = tmp_path / "refs.bib"
    bib.write_bytes(MATHS.read_bytes())
    return bib


def test_each_candidate_gets_a_line_to_paste_that_settles_the_entry(
    pith: RunPith, tmp_path: Path
) -> None:
    bib = _copy(tmp_path)
    env = {"PITH_HOME": str(tmp_path / "home")}
    with ArxivServer(PAPERS) as server:
        result = pith("bib", "scan", str(bib), "--lookup", "--arxiv-api", server.url, env=env)
    assert result.returncode == 0, result.stderr
    lines = result.stderr.splitlines()
    start = lines.index(f'{GREEN_TAO} ({bib}:1) is ambiguous: "The primes contain arbitrarily '
                        'long arithmetic progressions"')  # fmt: skip
    block = lines[start : start + 6]
    # the preprint first (oldest first), and the decoy's line says why it is suspect: the
    # first line to paste is not the wrong paper, and no line reads as "this one fits"
    assert "math/0404188" in block[1] and "arXiv year 2004, entry year 2008" in block[1]
    assert "0805.4417" in block[3] and "(Laura Tao; arXiv 2008)" in block[3]
    assert "likely a namesake's later paper, check before taking it" in block[3]
    assert not any("fits the title, author and year rules" in line for line in block)
    paste = block[2].strip()
    assert paste == "eprint = {math/0404188}, archivePrefix = {arXiv},"
    # the author pastes it after the entry's first line; the next scan reads it
    text = bib.read_text(encoding="utf-8")
    bib.write_text(text.replace("@article {MR2415383,\n", f"@article {{MR2415383,\n{paste}\n"))
    again = {e.key: e for e in read_bibliographies([bib]).entries}[GREEN_TAO]
    assert (str(again.identifier), again.identifier_source) == ("math/0404188", "eprint")


@pytest.mark.parametrize(("answers", "written"), [
    ([b"1"], "math/0404188"),
    pytest.param([b"7", b""], None, marks=pytest.mark.slow),  # a wrong answer, then Enter
])  # fmt: skip
def test_choose_on_a_terminal_asks_and_the_answer_is_written_back(
    tmp_path: Path, terminal: OnTerminal, answers: list[bytes], written: str | None
) -> None:
    """A real process on a pseudo-terminal (about a second)."""
    bib = _copy(tmp_path)
    with ArxivServer(PAPERS) as server:
        argv = [sys.executable, "-m", "pithauthor", "bib", "scan", str(bib), "--lookup",
                "--choose", "--write-back", "--arxiv-api", server.url]  # fmt: skip
        code, shown = terminal(
            argv, answers, prompt=b"Which paper is", env={"PITH_HOME": str(tmp_path / "home")}
        )
    assert code == 0, shown
    assert f"Which paper is {GREEN_TAO}? [1-2, Enter: none of them]" in shown
    assert "eprint = {" not in shown  # asked, so no lines to paste
    entry = {e.key: e for e in read_bibliographies([bib]).entries}[GREEN_TAO]
    if written is None:
        assert "answer a number from 1 to 2" in shown
        assert entry.identifier is None
    else:
        assert (str(entry.identifier), entry.identifier_source) == (written, "eprint")


def test_settle_takes_only_one_of_the_candidates(tmp_path: Path) -> None:
    cache = LookupCache(tmp_path / "cache")
    cache.folder.mkdir()
    with ArxivServer(PAPERS) as server, ArxivApi(server.url) as api:
        reading = lookup_identifiers(read_bibliographies([MATHS]), api, cache=cache).reading
    entry = {e.key: e for e in reading.entries}[GREEN_TAO]
    assert [c.arxiv_id for c in entry.lookup_choices] == ["math/0404188", "0805.4417"]
    with pytest.raises(InputError, match="not one of its lookup candidates"):
        settle(reading, entry, "1111.4914")
    settled = {e.key: e for e in settle(reading, entry, "math/0404188").entries}[GREEN_TAO]
    assert (settled.status, str(settled.identifier), settled.source) == (
        "found", "math/0404188", "lookup"
    )  # fmt: skip
    assert "chosen by the author among 2" in settled.row().detail


def test_choose_without_a_terminal_prints_the_lines_instead(pith: RunPith, tmp_path: Path) -> None:
    with ArxivServer(PAPERS) as server:
        result = pith("bib", "scan", str(MATHS), "--lookup", "--choose", "--arxiv-api",
                      server.url, env={"PITH_HOME": str(tmp_path / "home")})  # fmt: skip
    assert result.returncode == 0, result.stderr
    assert "pith: warning: --choose needs a terminal to ask on" in result.stderr
    assert "eprint = {math/0404188}, archivePrefix = {arXiv}," in result.stderr
    refused = pith("bib", "scan", str(MATHS), "--choose")
    assert refused.returncode == 2 and "go with --lookup" in refused.stderr
