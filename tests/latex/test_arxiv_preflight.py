"""The arXiv preflight rules, as pure functions: file names arXiv renames or deletes, biblatex
.bbl formats, the size limit, \\include in subfolders, the 00README.json and when it is needed."""

from __future__ import annotations

import pytest

from pithauthor.latex.upload import (
    SIZE_LIMIT,
    bbl_warnings,
    name_warnings,
    other_main_files,
    readme,
    size_warning,
    subfolder_warnings,
)
from pithauthor.protocol.canonical_json import parse_json


@pytest.mark.parametrize(
    "name", ["my figure.png", "a&b.tex", "sec:intro.tex", "dir with space/x.tex"]
)
def test_names_arxiv_would_rename_are_warned_about(name: str) -> None:
    (warning,) = name_warnings([name])
    assert name in warning and "'_'" in warning


def test_hidden_files_are_warned_about_and_plain_names_are_not() -> None:
    assert name_warnings(["figs/plot-1_a.pdf", "main.tex", "v1,2=x+y.tex"]) == []
    (warning,) = name_warnings([".minted-cache/x.pygtex"])
    assert "hidden" in warning


BBL = b"%% $ biblatex auxiliary file $\n%% $ biblatex bbl format version %s $\n"


@pytest.mark.parametrize("version", ["3.2", "3.3"])
def test_biblatex_bbl_formats_arxiv_reads_pass(version: str) -> None:
    assert bbl_warnings("main.bbl", BBL % version.encode(), "main") == []


@pytest.mark.parametrize("version", ["3.1", "3.4"])
def test_other_biblatex_bbl_formats_are_warned_about(version: str) -> None:
    (warning,) = bbl_warnings("main.bbl", BBL % version.encode(), "main")
    assert f"format {version}" in warning and "3.2 and 3.3" in warning


def test_bibtex_bbl_has_no_format_but_must_be_named_after_the_main_file() -> None:
    bibtex = b"\\begin{thebibliography}{1}\n\\bibitem{a} A.\n\\end{thebibliography}\n"
    assert bbl_warnings("paper.bbl", bibtex, "paper") == []
    (warning,) = bbl_warnings("refs.bbl", bibtex, "paper")
    assert "paper.bbl" in warning


def test_size_over_arxivs_limit_is_warned_about() -> None:
    assert size_warning(SIZE_LIMIT) == []
    (warning,) = size_warning(SIZE_LIMIT + 1)
    assert "50 MB" in warning


def test_include_in_a_subfolder_is_warned_about() -> None:
    (warning,) = subfolder_warnings(["parts/surgery.aux", "figs/x.pdf"])
    assert "parts/surgery.aux" in warning


def test_readme_is_needed_only_when_another_file_holds_a_live_documentclass() -> None:
    texts = {
        "main.tex": "\\documentclass{article}",
        "sec.tex": "% \\documentclass{article} in a comment\nText.",
        "standalone.tex": "\\documentclass{standalone}",
    }
    assert other_main_files("main.tex", texts) == ["standalone.tex"]
    assert other_main_files("main.tex", {"main.tex": texts["main.tex"]}) == []
    assert parse_json(readme("main.tex", "pdflatex").decode("utf-8")) == {
        "process": {"compiler": "pdflatex"},
        "sources": [{"filename": "main.tex", "usage": "toplevel"}],
    }
