"""`pith bib scan --lookup` and `pith cite --lookup`: the real command against a local arXiv API
(and a local registry for `cite`); exit codes, cache, --offline, --write-back."""

from __future__ import annotations

import json
import os
import pty
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from support.arxiv_server import ArxivServer, Paper
from support.cite import CITING, number_of
from support.cli import RunPith, assert_one_line_error
from support.lookup_corpus import SCHOLAR
from support.lookup_corpus import SCHOLAR_PAPERS as PAPERS
from support.registry import free_port

LOOKED_UP = {
    "vaswani2017attention", "devlin2019bert", "witten1998anti", "li2018deep", "maldacena1999large"
}  # fmt: skip


def _scan(pith: RunPith, url: str, *args: str, bib: Path = SCHOLAR) -> Any:
    return pith("bib", "scan", str(bib), "--lookup", "--arxiv-api", url, *args)


def test_scan_with_lookup_reports_each_entry_and_counts_the_sources(pith: RunPith) -> None:
    with ArxivServer(PAPERS) as server:
        result = _scan(pith, server.url, "--json")
        assert len(server.state.requests) == 1
    assert result.returncode == 0, result.stderr
    doc = json.loads(result.stdout)
    rows = {row["key"]: row for row in doc["rows"]}
    assert {k for k, r in rows.items() if r["source"] == "lookup"} == LOOKED_UP
    assert rows["vaswani2017attention"]["identifier"] == "1706.03762"
    assert rows["khan2022transformers"]["status"] == "ambiguous"
    assert "2101.01169" in rows["khan2022transformers"]["detail"]
    assert rows["knuth1984texbook"]["status"] == "not_found"
    assert doc["sources"] == {"lookup": 5, "journal": 1}
    assert doc["lookup"] == {"looked_up": 9, "requests": 1, "cached": 0}
    assert doc["counts"]["found"] == 6 and doc["counts"]["not_found"] == 3
    assert "arXiv lookup: 9 entries looked up (1 request(s) to arXiv, 0 cached" in result.stderr


def test_second_run_and_offline_run_ask_nothing(pith: RunPith) -> None:
    with ArxivServer(PAPERS) as server:
        first = _scan(pith, server.url)
        second = pith("bib", "scan", str(SCHOLAR), "--lookup", env={"PITH_ARXIV_API": server.url})
        offline = _scan(pith, server.url, "--offline")
        assert len(server.state.requests) == 1
    assert first.returncode == second.returncode == offline.returncode == 0
    assert "(0 request(s) to arXiv, 9 cached answer(s))" in second.stderr
    assert "(offline, 9 cached answer(s))" in offline.stderr
    assert first.stdout == second.stdout == offline.stdout
    assert "identifiers from 5 lookup, 1 journal" in first.stdout


def test_write_back_then_plain_scan_reads_the_eprints(pith: RunPith, tmp_path: Path) -> None:
    bib = tmp_path / "refs.bib"
    bib.write_bytes(SCHOLAR.read_bytes())
    with ArxivServer(PAPERS) as server:
        result = _scan(pith, server.url, "--write-back", bib=bib)
    assert result.returncode == 0, result.stderr
    assert "eprint added to 5 entries (backup: " in result.stderr
    assert (tmp_path / "refs.bib.pith-backup").read_bytes() == SCHOLAR.read_bytes()
    plain = pith("bib", "scan", str(bib), "--json")
    rows = {row["key"]: row for row in json.loads(plain.stdout)["rows"]}
    assert {k for k, r in rows.items() if r["source"] == "eprint"} == LOOKED_UP
    with ArxivServer(PAPERS) as server:
        again = _scan(pith, server.url, "--write-back", bib=bib)
    assert "write-back: nothing to add" in again.stderr
    assert not (tmp_path / "refs.bib.pith-backup.1").exists()


def test_bad_lookup_options_exit_2(pith: RunPith) -> None:
    bib = str(SCHOLAR)
    assert_one_line_error(pith("bib", "scan", bib, "--offline"), 2)
    assert_one_line_error(pith("bib", "scan", bib, "--write-back"), 2)
    assert_one_line_error(
        pith("bib", "scan", bib, "--lookup", "--arxiv-api", "http://export.arxiv.org/api"), 2
    )
    assert_one_line_error(pith("cite", "--to", "2101.99903", "--from", CITING, "--lookup"), 2)


def test_unreachable_or_refusing_api_exits_3_and_writes_nothing(
    pith: RunPith, tmp_path: Path
) -> None:
    bib = tmp_path / "refs.bib"
    bib.write_bytes(SCHOLAR.read_bytes())
    dead = f"http://127.0.0.1:{free_port()}/api/query"
    result = _scan(pith, dead, "--write-back", bib=bib)
    assert_one_line_error(result, 3)
    assert "did not answer" in result.stderr
    with ArxivServer(PAPERS) as server:
        server.state.error = "max_results must be an integer"
        refused = _scan(pith, server.url, "--write-back", bib=bib)
    assert_one_line_error(refused, 3)
    assert "refused the query: max_results must be an integer" in refused.stderr
    assert bib.read_bytes() == SCHOLAR.read_bytes()
    assert not list(tmp_path.glob("*.pith-backup*"))


@pytest.mark.slow
def test_progress_bar_on_a_terminal_only(tmp_path: Path) -> None:
    """Slow: a real process on a pseudo-terminal (the bar is drawn on a terminal only)."""
    with ArxivServer(PAPERS) as server:
        argv = [sys.executable, "-m", "pithauthor", "bib", "scan", str(SCHOLAR), "--lookup",
                "--arxiv-api", server.url]  # fmt: skip
        main, child = pty.openpty()
        proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=child, env=os.environ)
        os.close(child)
        chunks = []
        while True:
            try:
                chunk = os.read(main, 4096)
            except OSError:
                break
            if not chunk:
                break
            chunks.append(chunk)
        proc.wait(timeout=60)
        os.close(main)
        piped = subprocess.run(argv, capture_output=True, text=True, timeout=60)
    on_terminal = b"".join(chunks).decode("utf-8", "replace")
    assert "arXiv lookup" in on_terminal and "requests" in on_terminal
    assert "requests" not in piped.stderr.replace("request(s)", "")


CITE_PAPERS = [
    Paper("2101.99903", "Example paper 2101.99903 for the cite tests", ["Ada Lovelace"],
          "2021-01-04T10:00:00Z"),
    Paper("2101.99904", "Example paper 2101.99904 for the cite tests: a survey",
          ["Ada Lovelace"], "2021-01-04T10:00:00Z"),
]  # fmt: skip
CITE_BIB = """@article{lovelace2021example,
  title={Example paper 2101.99903 for the cite tests},
  author={Lovelace, Ada},
  journal={Journal of examples},
  year={2021}
}

@article{lovelace2021near,
  title={Example paper 2101.99904 for the cite tests},
  author={Lovelace, Ada},
  journal={Journal of examples},
  year={2021}
}
"""


def test_cite_signs_the_entries_found_by_lookup_and_only_those(
    pith: RunPith,
    cite_registry: dict[str, Any],
    cite_author: str,
    tmp_path: Path,
) -> None:
    bib = tmp_path / "refs.bib"
    bib.write_text(CITE_BIB, encoding="utf-8")
    out = tmp_path / "citations.jsonl"
    with ArxivServer(CITE_PAPERS) as server:
        result = pith(
            "cite", str(bib), "--from", CITING, "--registry", cite_registry["url"],
            "--trust-manifest", cite_registry["manifest"], "--lookup", "--arxiv-api", server.url,
            "--out", str(out), "--json", "--write-back",
        )  # fmt: skip
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout)
    rows = {row["key"]: row for row in report["rows"]}
    assert rows["lovelace2021example"]["status"] == "signed"
    assert rows["lovelace2021example"]["source"] == "lookup"
    assert rows["lovelace2021example"]["identifier"] == number_of("2101.99903")
    assert rows["lovelace2021near"]["status"] == "ambiguous"  # "...: a survey" is not it
    assert report["events"] == 1 and report["sources"] == {"lookup": 1}
    (event,) = [json.loads(line) for line in out.read_text("utf-8").splitlines()]
    assert event["payload"]["citation_key"] == "lovelace2021example"
    text = bib.read_text("utf-8")
    assert text.count("eprint={2101.99903}") == 1 and "eprint" not in text.split("near")[1]
