"""Broken inputs: one clear error line, exit 2, and every file left exactly as it was."""

from __future__ import annotations

import os
import stat
from collections.abc import Callable
from pathlib import Path

import pytest
from support.cli import RunPith, assert_one_line_error
from support.latex.inject import NUMBER, snapshot

from pithauthor import PithNumber
from pithauthor.errors import ManuscriptError
from pithauthor.latex.injection import inject

GOOD = "\\documentclass{article}\n\\begin{document}\nx\n\\end{document}\n"


def no_documentclass(folder: Path) -> Path:
    path = folder / "paper.tex"
    path.write_text("\\usepackage{amsmath}\n\\begin{document}\nx\n\\end{document}\n")
    return path


def no_begin_document(folder: Path) -> Path:
    path = folder / "paper.tex"
    path.write_text("\\documentclass{article}\n\\usepackage{amsmath}\nx\n")
    return path


def begin_document_only_in_a_comment(folder: Path) -> Path:
    path = folder / "paper.tex"
    path.write_text("\\documentclass{article}\n% \\begin{document}\nx\n% \\end{document}\n")
    return path


def binary_file(folder: Path) -> Path:
    path = folder / "paper.tex"
    path.write_bytes(b"\\documentclass{article}\n\\begin{document}\x00\x01\x02\n\\end{document}\n")
    return path


def read_only_file(folder: Path) -> Path:
    path = folder / "paper.tex"
    path.write_text(GOOD)
    path.chmod(stat.S_IRUSR | stat.S_IRGRP | stat.S_IROTH)
    return path


def braces_nested_too_deep(folder: Path) -> Path:
    # found by fuzzing: pylatexenc recurses once per group, so a few hundred open braces
    # (here in \author) exhausted the stack: RecursionError, the "bug in pith" last resort
    path = folder / "paper.tex"
    path.write_text(GOOD.replace("\n", "\n\\author{" + "{" * 2000 + "}\n", 1))
    return path


def two_main_candidates(folder: Path) -> Path:
    (folder / "a.tex").write_text(GOOD)
    (folder / "b.tex").write_text(GOOD)
    return folder


CASES: dict[str, Callable[[Path], Path]] = {
    "no-documentclass": no_documentclass,
    "no-begin-document": no_begin_document,
    "begin-document-in-comment": begin_document_only_in_a_comment,
    "binary": binary_file,
    "read-only": read_only_file,
    "two-candidates": two_main_candidates,
    "deep-braces": braces_nested_too_deep,
}
MESSAGES = {
    "no-documentclass": "no \\documentclass",
    "no-begin-document": "no \\begin{document}",
    "begin-document-in-comment": "the one at line 2 is in a comment",
    "binary": "binary",
    "read-only": "read-only",
    "two-candidates": "a.tex, b.tex",
    "deep-braces": "paper.tex: braces or environments nested too deep",
}


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    folder = tmp_path / "paper"
    folder.mkdir()
    return folder


@pytest.mark.parametrize("case", sorted(CASES))
def test_cli_gives_one_line_exit_2_and_touches_nothing(
    case: str, folder: Path, pith: RunPith
) -> None:
    target = CASES[case](folder)
    before = snapshot(folder)
    result = pith("latex", "inject", str(target), "--pith", NUMBER, "--offline")
    assert_one_line_error(result, 2)
    assert MESSAGES[case] in result.stderr
    assert snapshot(folder) == before


@pytest.mark.parametrize("case", sorted(CASES))
def test_api_raises_manuscript_error_and_touches_nothing(case: str, folder: Path) -> None:
    target = CASES[case](folder)
    before = snapshot(folder)
    with pytest.raises(ManuscriptError):
        inject(target, PithNumber.parse(NUMBER))
    assert snapshot(folder) == before


def test_dry_run_also_refuses_broken_input(folder: Path, pith: RunPith) -> None:
    target = no_begin_document(folder)
    before = snapshot(folder)
    assert_one_line_error(
        pith("latex", "inject", str(target), "--pith", NUMBER, "--offline", "--dry-run"), 2
    )
    assert snapshot(folder) == before


def test_malformed_number_and_missing_year_are_exit_2(folder: Path, pith: RunPith) -> None:
    (folder / "paper.tex").write_text(GOOD)
    before = snapshot(folder)
    assert_one_line_error(pith("latex", "inject", str(folder), "--pith", "pith:2023:XYZ"), 2)
    result = pith("latex", "inject", str(folder), "--pith", NUMBER.split(":")[2])
    assert_one_line_error(result, 2)
    assert "pith:YYYY:" in result.stderr
    assert snapshot(folder) == before


def test_read_only_is_refused_even_for_root(folder: Path) -> None:
    target = read_only_file(folder)
    assert not os.stat(target).st_mode & stat.S_IWUSR
    with pytest.raises(ManuscriptError, match="read-only"):
        inject(target, PithNumber.parse(NUMBER))


def test_a_read_only_folder_is_refused_even_for_root(pith: RunPith, folder: Path) -> None:
    (folder / "main.tex").write_text(GOOD, encoding="utf-8")
    before = snapshot(folder)
    folder.chmod(0o555)
    try:
        result = pith("latex", "inject", str(folder), "--pith", NUMBER, "--offline")
        assert_one_line_error(result, 74)  # an output failure, not bad input
        assert "not writable" in result.stderr
        assert snapshot(folder) == before
    finally:
        folder.chmod(0o755)


def test_a_record_address_given_as_the_number_asks_for_the_full_number(
    pith: RunPith, folder: Path
) -> None:
    (folder / "main.tex").write_text(GOOD, encoding="utf-8")
    before = snapshot(folder)
    body = NUMBER.split(":")[2]
    result = pith("latex", "inject", str(folder), "--pith", f"https://pith.science/pith/{body}")
    assert_one_line_error(result, 2)
    assert f"pith:YYYY:{body}" in result.stderr and "arXiv identifier" not in result.stderr
    assert snapshot(folder) == before


def test_an_input_nested_too_deep_is_passed_over_as_any_unreadable_input(
    folder: Path, pith: RunPith
) -> None:
    # found by fuzzing, as braces_nested_too_deep: here in a file the preamble inputs, which
    # is read only to find a \pithnumber or \usepackage{pith} (one it cannot read is skipped)
    (folder / "macros.tex").write_text("\\newcommand\\x{" + "{" * 2000 + "}\n")
    (folder / "paper.tex").write_text(GOOD.replace("\n", "\n\\input{macros}\n", 1))
    before = snapshot(folder)
    result = pith("latex", "inject", str(folder), "--pith", NUMBER, "--offline", "--dry-run")
    assert result.returncode == 0, result.stderr
    assert "+\\pithnumber{" in result.stdout and snapshot(folder) == before
