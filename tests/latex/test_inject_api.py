"""`pithauthor.latex.injection.inject` on small hand-made preambles: where the lines go, what
stays."""

from __future__ import annotations

from pathlib import Path

import pytest
from support.latex.inject import NUMBER, OTHER

from pithauthor import PithNumber
from pithauthor.errors import InputError, ManuscriptError
from pithauthor.latex.injection import inject
from pithauthor.latex.sources import find_main_file
from pithauthor.latex.sty import pith_sty_path

OLD = "pith:2020:AAAAAAAAAAAAAAAAAAAAAAAAAA"
LINES = f"\\usepackage{{pith}}\n\\pithnumber{{{NUMBER}}}\n"


def write(tmp_path: Path, text: str, name: str = "paper.tex") -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8", newline="")
    return path


def run(path: Path, number: str = NUMBER, **kw: bool) -> str:
    inject(path, PithNumber.parse(number), **kw)
    return path.read_bytes().decode("utf-8")


def test_lines_go_right_after_the_documentclass_line(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        "\\documentclass{article}\n\\usepackage{amsmath}\n\\begin{document}\nx\n\\end{document}\n",
    )
    assert run(path) == (
        "\\documentclass{article}\n"
        + LINES
        + "\\usepackage{amsmath}\n\\begin{document}\nx\n\\end{document}\n"
    )


def test_lines_go_after_the_last_hyperref_load_and_document_metadata_stays_first(
    tmp_path: Path,
) -> None:
    text = (
        "\\DocumentMetadata{pdfversion=1.7}\n\\documentclass[11pt]{article}\n"
        "\\usepackage{hyperref}\n\\usepackage{amsmath,hyperref}\n\\usepackage{xcolor}\n"
        "\\begin{document}\nx\n\\end{document}\n"
    )
    result = run(write(tmp_path, text))
    assert result.startswith("\\DocumentMetadata{pdfversion=1.7}\n\\documentclass")
    assert "\\usepackage{amsmath,hyperref}\n" + LINES + "\\usepackage{xcolor}\n" in result


def test_commented_disabled_and_verbatim_loads_are_not_mistaken_for_real_ones(
    tmp_path: Path,
) -> None:
    text = (
        f"\\documentclass{{article}}\n% \\usepackage{{pith}}\\pithnumber{{{OLD}}}\n"
        f"\\iffalse\n\\usepackage[x]{{hyperref}}\n\\usepackage{{pith}}\n\\pithnumber{{{OLD}}}\n\\fi\n"
        "\\begin{comment}\n\\usepackage{hyperref}\n\\end{comment}\n"
        "\\begin{verbatim}\n\\usepackage{hyperref}\\begin{document}\n\\end{verbatim}\n"
        "\\begin{document}\nx\n\\end{document}\n"
    )
    result = run(write(tmp_path, text))
    assert result == text.replace(
        "\\documentclass{article}\n", "\\documentclass{article}\n" + LINES, 1
    )


def test_not_inserted_inside_a_conditional_branch(tmp_path: Path) -> None:
    text = (
        "\\documentclass{article}\n\\ifdefined\\pdfoutput\n\\usepackage{hyperref}\n\\fi\n"
        "\\begin{document}\nx\n\\end{document}\n"
    )
    result = run(write(tmp_path, text))
    assert "\\fi\n" + LINES + "\\begin{document}" in result


def test_one_line_preamble_gets_its_own_lines(tmp_path: Path) -> None:
    path = write(tmp_path, "\\documentclass{article}\\begin{document}x\\end{document}\n")
    assert run(path) == "\\documentclass{article}\n" + LINES + "\\begin{document}x\\end{document}\n"


@pytest.mark.parametrize(
    ("encoding", "bom", "newline"),
    [
        ("utf-8", b"", "\r\n"),
        ("utf-8", b"\xef\xbb\xbf", "\n"),
        ("latin-1", b"", "\n"),
        ("latin-1", b"", "\r\n"),
    ],
)
def test_every_other_byte_is_kept(tmp_path: Path, encoding: str, bom: bytes, newline: str) -> None:
    body = [
        "% Caf\u00e9 na\u00efve r\u00e9sum\u00e9   ",
        "\\documentclass{article}  ",
        "\\usepackage[T1]{fontenc}\t",
        "\\begin{document}",
        "\u00c9t\u00e9 \u00e0 Z\u00fcrich.  ",
        "\\end{document}",
        "",
    ]
    raw = bom + newline.join(body).encode(encoding)
    path = tmp_path / "paper.tex"
    path.write_bytes(raw)
    inject(path, PithNumber.parse(NUMBER))
    inserted = newline.join(["\\usepackage{pith}", f"\\pithnumber{{{NUMBER}}}", ""]).encode(
        encoding
    )
    anchor = ("\\documentclass{article}  " + newline).encode(encoding)
    expected = raw.replace(anchor, anchor + inserted, 1)
    assert path.read_bytes() == expected


def test_second_run_changes_nothing_and_writes_no_backup(tmp_path: Path) -> None:
    path = write(tmp_path, "\\documentclass{article}\n\\begin{document}\nx\n\\end{document}\n")
    first = inject(path, PithNumber.parse(NUMBER))
    assert first.changed and first.backup is not None
    before = {p.name: (p.read_bytes(), p.stat().st_mtime_ns) for p in tmp_path.iterdir()}
    second = inject(path, PithNumber.parse(NUMBER))
    assert not second.changed and second.backup is None and second.sty_action == "unchanged"
    assert {p.name: (p.read_bytes(), p.stat().st_mtime_ns) for p in tmp_path.iterdir()} == before


def test_a_different_number_is_refused_and_force_replaces_it_in_place(tmp_path: Path) -> None:
    path = write(tmp_path, "\\documentclass{article}\n\\begin{document}\nx\n\\end{document}\n")
    injected = run(path)
    with pytest.raises(ManuscriptError, match="--force"):
        inject(path, PithNumber.parse(OTHER))
    assert path.read_text("utf-8") == injected
    assert run(path, OTHER, force=True) == injected.replace(NUMBER, OTHER)


def test_backup_keeps_the_original_and_is_never_overwritten(tmp_path: Path) -> None:
    original = "\\documentclass{article}\n\\begin{document}\nx\n\\end{document}\n"
    path = write(tmp_path, original)
    (tmp_path / "paper.tex.pith-backup").write_text("older backup")
    result = inject(path, PithNumber.parse(NUMBER))
    assert result.backup == tmp_path / "paper.tex.pith-backup.1"
    assert result.backup.read_text("utf-8") == original
    assert (tmp_path / "paper.tex.pith-backup").read_text() == "older backup"


def test_dry_run_returns_the_diff_and_writes_nothing(tmp_path: Path) -> None:
    path = write(tmp_path, "\\documentclass{article}\n\\begin{document}\nx\n\\end{document}\n")
    result = inject(path, PithNumber.parse(NUMBER), dry_run=True)
    assert f"+\\pithnumber{{{NUMBER}}}\n" in result.diff and "+\\usepackage{pith}\n" in result.diff
    assert sorted(p.name for p in tmp_path.iterdir()) == ["paper.tex"]


def test_pith_sty_is_copied_and_another_version_needs_force(tmp_path: Path) -> None:
    path = write(tmp_path, "\\documentclass{article}\n\\begin{document}\nx\n\\end{document}\n")
    (tmp_path / "pith.sty").write_text("\\ProvidesPackage{pith}[2001/01/01 v0.0 old]\n")
    with pytest.raises(ManuscriptError, match=r"2001/01/01 v0\.0"):
        inject(path, PithNumber.parse(NUMBER))
    assert "pith" not in path.read_text("utf-8").split("\\begin{document}")[0].replace(
        "documentclass", ""
    )
    inject(path, PithNumber.parse(NUMBER), force=True)
    assert (tmp_path / "pith.sty").read_bytes() == pith_sty_path().read_bytes()


def test_existing_usepackage_pith_gets_only_the_number(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        "\\documentclass{article}\n\\usepackage{pith}\n\\begin{document}\nx\n\\end{document}\n",
    )
    assert run(path) == (
        f"\\documentclass{{article}}\n\\usepackage{{pith}}\n\\pithnumber{{{NUMBER}}}\n"
        "\\begin{document}\nx\n\\end{document}\n"
    )


def test_tex_root_comment_leads_to_the_main_file(tmp_path: Path) -> None:
    main = write(
        tmp_path, "\\documentclass{article}\n\\begin{document}\n\\input{sec/a}\n\\end{document}\n"
    )
    (tmp_path / "sec").mkdir()
    part = write(tmp_path / "sec", "% !TEX root = ../paper.tex\nText.\n", "a.tex")
    assert find_main_file(part) == main
    result = inject(part, PithNumber.parse(NUMBER))
    assert result.main == main and part.read_text("utf-8") == "% !TEX root = ../paper.tex\nText.\n"


def test_tex_program_comment_chooses_the_engine(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        "% !TEX program = xelatex\n\\documentclass{article}\n"
        "\\begin{document}\nx\n\\end{document}\n",
    )
    assert inject(path, PithNumber.parse(NUMBER), dry_run=True).engine == "xelatex"


def test_a_number_without_year_is_refused(tmp_path: Path) -> None:
    path = write(tmp_path, "\\documentclass{article}\n\\begin{document}\nx\n\\end{document}\n")
    with pytest.raises(InputError, match="pith:YYYY:"):
        inject(path, PithNumber.parse(NUMBER.split(":")[2]))


def test_a_standalone_figure_beside_the_paper_is_not_a_main_file_candidate(
    tmp_path: Path,
) -> None:
    body = "\\begin{document}\nx\n\\end{document}\n"
    write(tmp_path, "\\documentclass[border=2pt,\n  varwidth]{standalone}\n" + body, "fig.tex")
    paper = write(tmp_path, "\\documentclass[twocolumn]{article}\n" + body, "paper.tex")
    assert find_main_file(tmp_path) == paper
    write(tmp_path, "\\documentclass{amsart}\n" + body, "other.tex")  # two papers: ambiguous
    with pytest.raises(ManuscriptError, match="several main-file candidates"):
        find_main_file(tmp_path)


def test_a_pithnumber_in_an_input_preamble_file_is_seen_not_added_twice(tmp_path: Path) -> None:
    main = write(
        tmp_path,
        "\\documentclass{article}\n\\input{preamble}\n\\begin{document}\nx\n\\end{document}\n",
        "main.tex",
    )
    write(tmp_path, f"\\usepackage{{pith}}\n\\pithnumber{{{NUMBER}}}\n", "preamble.tex")
    before = main.read_bytes()
    assert not inject(tmp_path, PithNumber.parse(NUMBER)).changed
    assert main.read_bytes() == before
    with pytest.raises(ManuscriptError, match=r"preamble.tex \(read by main.tex\) already has"):
        inject(tmp_path, PithNumber.parse(OTHER), force=True)
    assert main.read_bytes() == before
