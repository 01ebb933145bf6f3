"""`pith latex inject --placement title|margin|none`: the option lands on the package line,
an existing plain load is switched in place (once), an author's own options are left alone,
and --check accepts placement=none, whose PDF has metadata but no badge link."""

from __future__ import annotations

from pathlib import Path

import pytest
from support.cli import RunPith, assert_one_line_error
from support.latex.inject import NUMBER, snapshot

from pithauthor import PithNumber
from pithauthor.errors import InputError
from pithauthor.latex.injection import inject

BODY = "\\begin{document}\nx\n\\end{document}\n"


def write(tmp_path: Path, preamble: str) -> Path:
    path = tmp_path / "paper.tex"
    path.write_text("\\documentclass{article}\n" + preamble + BODY, encoding="utf-8")
    return path


def test_margin_placement_is_written_on_the_new_package_line(tmp_path: Path) -> None:
    path = write(tmp_path, "")
    inject(path, PithNumber.parse(NUMBER), placement="margin")
    expected = f"\\usepackage[placement=margin]{{pith}}\n\\pithnumber{{{NUMBER}}}\n"
    assert path.read_text("utf-8") == "\\documentclass{article}\n" + expected + BODY


def test_title_placement_writes_the_plain_line(tmp_path: Path) -> None:
    path = write(tmp_path, "")
    inject(path, PithNumber.parse(NUMBER), placement="title")
    assert "\\usepackage{pith}\n" in path.read_text("utf-8")


def test_an_existing_plain_load_is_switched_once_then_nothing_changes(tmp_path: Path) -> None:
    path = write(tmp_path, f"\\usepackage{{pith}}\n\\pithnumber{{{NUMBER}}}\n")
    first = inject(path, PithNumber.parse(NUMBER), placement="margin")
    assert first.changed
    text = path.read_text("utf-8")
    assert text.count("{pith}") == 1 and "\\usepackage[placement=margin]{pith}\n" in text
    again = inject(path, PithNumber.parse(NUMBER), placement="margin")
    assert not again.changed
    back = inject(path, PithNumber.parse(NUMBER), placement="title")
    assert back.changed and "\\usepackage{pith}\n" in path.read_text("utf-8")


def test_an_authors_own_options_are_left_alone_with_a_note(tmp_path: Path) -> None:
    path = write(tmp_path, f"\\usepackage[style=compact]{{pith}}\n\\pithnumber{{{NUMBER}}}\n")
    before = path.read_bytes()
    result = inject(path, PithNumber.parse(NUMBER), placement="margin")
    assert not result.changed and path.read_bytes() == before
    assert any("placement=margin" in note for note in result.notes)


def test_an_unknown_placement_is_refused_before_anything_is_written(tmp_path: Path) -> None:
    path = write(tmp_path, "")
    before = snapshot(tmp_path)
    with pytest.raises(InputError, match="placement"):
        inject(path, PithNumber.parse(NUMBER), placement="sideways")
    assert snapshot(tmp_path) == before


def test_cli_placement_option_and_its_bad_value(tmp_path: Path, pith: RunPith) -> None:
    write(tmp_path, "")
    before = snapshot(tmp_path)
    bad = pith(
        "latex", "inject", str(tmp_path), "--pith", NUMBER, "--offline", "--placement", "sideways"
    )
    assert_one_line_error(bad, 2)
    assert snapshot(tmp_path) == before
    shown = pith(
        "latex",
        "inject",
        str(tmp_path),
        "--pith",
        NUMBER,
        "--offline",
        "--placement",
        "margin",
        "--dry-run",
    )
    assert shown.returncode == 0, shown.stderr
    assert "+\\usepackage[placement=margin]{pith}" in shown.stdout


@pytest.mark.tex("pdflatex", "latexmk")
def test_check_accepts_placement_none_whose_pdf_has_no_badge_link(tmp_path: Path) -> None:
    path = write(tmp_path, "")
    result = inject(path, PithNumber.parse(NUMBER), placement="none", check=True)
    assert result.checked and result.changed
    assert "\\usepackage[placement=none]{pith}" in path.read_text("utf-8")


@pytest.mark.tex("pdflatex", "latexmk")
def test_check_says_in_one_line_when_no_title_block_was_found(
    tmp_path: Path, pith: RunPith
) -> None:
    """BODY has no \\maketitle: pith.sty puts the badge in the top margin and warns; --check
    repeats that as one line on stderr. With a title block there is no such line."""
    (tmp_path / "bare").mkdir()
    write(tmp_path / "bare", "")
    bare = pith("latex", "inject", str(tmp_path / "bare"), "--pith", NUMBER, "--offline", "--check")
    assert bare.returncode == 0, bare.stderr
    lines = [line for line in bare.stderr.splitlines() if "no title block" in line]
    assert len(lines) == 1 and "top margin" in lines[0]
    titled = tmp_path / "titled"
    titled.mkdir()
    (titled / "paper.tex").write_text(
        "\\documentclass{article}\n\\title{T}\\author{A}\n"
        "\\begin{document}\n\\maketitle\nx\n\\end{document}\n",
        encoding="utf-8",
    )
    result = pith("latex", "inject", str(titled), "--pith", NUMBER, "--offline", "--check")
    assert result.returncode == 0, result.stderr
    assert "no title block" not in result.stderr
