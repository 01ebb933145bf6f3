"""`pith bib scan`: the rows on stdout, exit codes 0 / 1 / 2."""

from __future__ import annotations

import json
from pathlib import Path

from support.cli import RunPith, assert_one_line_error

FIXTURES = Path(__file__).parents[1] / "fixtures" / "bib"


def test_clean_file_exits_0_with_a_table(pith: RunPith) -> None:
    result = pith("bib", "scan", str(FIXTURES / "arxiv-export.bib"))
    assert result.returncode == 0, result.stderr
    assert "shi2023dear" in result.stdout and "2302.12445" in result.stdout
    assert result.stdout.rstrip().endswith("3 entries: 3 found; identifiers from 2 eprint, 1 doi")


def test_problem_entries_exit_1_and_json_has_every_row(pith: RunPith) -> None:
    result = pith("bib", "scan", str(FIXTURES / "messy.bib"), "--json")
    assert result.returncode == 1, result.stderr
    document = json.loads(result.stdout)
    assert len(document["rows"]) == 17
    assert document["counts"]["parse_error"] == 1
    assert document["counts"]["invalid_identifier"] == 2
    keys = {row["key"] for row in document["rows"] if row["status"] == "found"}
    assert "Shouting2020" in keys and "Broken2021" not in keys


def test_only_cited_map_and_warnings(pith: RunPith, tmp_path: Path) -> None:
    tex = tmp_path / "main.tex"
    tex.write_text("\\cite{shi2023dear,nothere}", encoding="utf-8")
    result = pith(
        "bib", "scan", str(FIXTURES / "arxiv-export.bib"), "--only-cited", str(tex),
        "--map", "shi2023dear=extends", "--map", "ghost=cites", "--json",
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    rows = {row["key"]: row for row in json.loads(result.stdout)["rows"]}
    assert rows["shi2023dear"]["status"] == "found"
    assert rows["shi2023dear"]["detail"].startswith("extends")
    assert rows["maldacena1997largen"]["status"] == "skipped"
    assert "nothere" in result.stderr and "ghost" in result.stderr


def test_unreadable_file_exits_2_with_one_line(pith: RunPith, tmp_path: Path) -> None:
    assert_one_line_error(pith("bib", "scan", str(tmp_path / "missing.bib")), 2)
    binary = tmp_path / "x.bib"
    binary.write_bytes(b"\x00\x01")
    assert_one_line_error(pith("bib", "scan", str(binary)), 2)


def test_bad_options_exit_2_with_one_line(pith: RunPith) -> None:
    bib = str(FIXTURES / "arxiv-export.bib")
    assert_one_line_error(pith("bib", "scan", bib, "--relationship", "likes"), 2)
    assert_one_line_error(pith("bib", "scan", bib, "--map", "nokey"), 2)
    assert_one_line_error(pith("bib", "scan", bib, "--only-cited", "/nonexistent/main.tex"), 2)


def test_bib_group_is_listed_in_the_main_help(pith: RunPith) -> None:
    result = pith("--help")
    assert result.returncode == 0
    assert "bib " in result.stdout


def test_the_worked_example_in_docs_prints_what_the_docs_show(
    pith: RunPith, tmp_path: Path
) -> None:
    import re

    doc = (Path(__file__).parents[2] / "docs" / "cite.md").read_text("utf-8")
    bib = re.search(r"<!-- file: refs.bib -->\n```bibtex\n(.*?)```", doc, re.S)
    tex = re.search(r"<!-- file: main.tex -->\n```latex\n(.*?)```", doc, re.S)
    shown = re.search(r"```console\n\$ pith (.*?)(?:  # exit 1)?\n(.*?)```", doc, re.S)
    assert bib and tex and shown
    (tmp_path / "refs.bib").write_text(bib.group(1), encoding="utf-8")
    (tmp_path / "main.tex").write_text(tex.group(1), encoding="utf-8")
    result = pith(*shown.group(1).split(), cwd=tmp_path)
    assert result.returncode == 1  # the parse error
    assert result.stdout == shown.group(2)
    assert "warning" not in result.stderr  # `broken` is cited and is in the file
