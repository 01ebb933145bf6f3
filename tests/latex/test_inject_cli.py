"""`pith latex inject` and `pith badge` through the real command."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from pathlib import Path

from support.cli import RunPith, assert_one_line_error
from support.latex.inject import NUMBER, OTHER, snapshot

from pithauthor.latex.sty import latex_file

GOOD = "\\documentclass{article}\n\\begin{document}\nx\n\\end{document}\n"


def test_dry_run_prints_a_unified_diff_and_writes_nothing(tmp_path: Path, pith: RunPith) -> None:
    (tmp_path / "paper.tex").write_text(GOOD)
    before = snapshot(tmp_path)
    result = pith("latex", "inject", str(tmp_path), "--pith", NUMBER, "--offline", "--dry-run")
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("--- a/paper.tex\n+++ b/paper.tex\n@@ ")
    assert f"+\\pithnumber{{{NUMBER}}}" in result.stdout
    assert snapshot(tmp_path) == before


def test_inject_then_again_is_idempotent_and_other_number_needs_force(
    tmp_path: Path, pith: RunPith
) -> None:
    (tmp_path / "paper.tex").write_text(GOOD)
    first = pith("latex", "inject", str(tmp_path), "--pith", NUMBER, "--offline", "--json")
    assert first.returncode == 0, first.stderr
    report = json.loads(first.stdout)
    assert report["changed"] and report["sty_action"] == "copied"
    assert (tmp_path / "pith.sty").is_file() and (tmp_path / "paper.tex.pith-backup").is_file()
    before = snapshot(tmp_path)
    again = pith("latex", "inject", str(tmp_path / "paper.tex"), "--pith", NUMBER, "--offline")
    assert again.returncode == 0 and "nothing to change" in again.stderr
    assert snapshot(tmp_path) == before
    refused = pith("latex", "inject", str(tmp_path), "--pith", OTHER, "--offline")
    assert_one_line_error(refused, 2)
    assert snapshot(tmp_path) == before
    forced = pith("latex", "inject", str(tmp_path), "--pith", OTHER, "--offline", "--force")
    assert forced.returncode == 0, forced.stderr
    assert f"\\pithnumber{{{OTHER}}}" in (tmp_path / "paper.tex").read_text("utf-8")


def test_inject_copies_pith_authorkeys_def_and_says_so(tmp_path: Path, pith: RunPith) -> None:
    # it travels with pith.sty like the other .def files: in the --json report and on stderr
    (tmp_path / "paper.tex").write_text(GOOD)
    first = pith("latex", "inject", str(tmp_path), "--pith", NUMBER, "--offline", "--json")
    assert first.returncode == 0, first.stderr
    assert json.loads(first.stdout)["authorkeys_def_action"] == "copied"
    assert (tmp_path / "pith-authorkeys.def").read_bytes() == latex_file(
        "pith-authorkeys.def"
    ).read_bytes()
    (tmp_path / "pith-authorkeys.def").write_text("% an old copy\n")
    again = pith("latex", "inject", str(tmp_path), "--pith", NUMBER, "--offline")
    assert again.returncode == 0, again.stderr
    assert f"{tmp_path / 'pith-authorkeys.def'}: replaced" in again.stderr


def test_an_arxiv_id_is_resolved_through_the_registry_and_its_version_named(
    tmp_path: Path, pith: RunPith
) -> None:
    from support.registry import REAL_NUMBER, start_server

    server = start_server(tmp_path / "registry")
    try:
        paper = tmp_path / "paper"
        paper.mkdir()
        (paper / "paper.tex").write_text(GOOD)
        result = pith(
            "latex", "inject", str(paper), "--pith", "arXiv:2302.12445",
            "--registry", server.url, "--trust-local-registry",
        )  # fmt: skip
    finally:
        server.stop()
    assert result.returncode == 0, result.stderr
    assert f"\\pithnumber{{{REAL_NUMBER}}}" in (paper / "paper.tex").read_text("utf-8")
    assert f"{REAL_NUMBER} is the record of arXiv:2302.12445v2" in result.stderr


def test_a_short_alias_or_a_number_without_year_is_refused_before_any_write(
    tmp_path: Path, pith: RunPith
) -> None:
    (tmp_path / "paper.tex").write_text(GOOD)
    body = NUMBER.split(":")[2]
    for ref in (f"pith:{body[:8]}", body):
        assert_one_line_error(pith("latex", "inject", str(tmp_path), "--pith", ref), 2)
    assert (tmp_path / "paper.tex").read_text() == GOOD


def test_badge_svg_is_well_formed_and_names_the_number(pith: RunPith) -> None:
    result = pith("badge", NUMBER, "--offline", "--format", "svg")
    assert result.returncode == 0, result.stderr
    root = ET.fromstring(result.stdout)
    assert root.tag == "{http://www.w3.org/2000/svg}svg"
    texts = [t.text for t in root.iter("{http://www.w3.org/2000/svg}text")]
    assert texts == ["pith", NUMBER.split(":")[2][:8]]


def test_badge_markdown_html_and_latex_link_to_the_record_page(pith: RunPith) -> None:
    body = NUMBER.split(":")[2]
    url = f"https://pith.science/pith/{body}"
    markdown = pith("badge", NUMBER, "--offline").stdout.strip()
    assert markdown == f"[![pith:{body[:8]}](pith-badge.svg)]({url})"
    html = pith("badge", NUMBER, "--offline", "--format", "html").stdout.strip()
    assert ET.fromstring(html).get("href") == url
    latex = pith("badge", NUMBER, "--offline", "--format", "latex").stdout
    assert latex == f"\\usepackage{{pith}}\n\\pithnumber{{{NUMBER}}}\n"


def test_badge_rejects_an_unknown_format_and_a_bad_number(pith: RunPith) -> None:
    assert_one_line_error(pith("badge", NUMBER, "--offline", "--format", "png"), 2)
    assert_one_line_error(pith("badge", "pith:2023:nope"), 2)
