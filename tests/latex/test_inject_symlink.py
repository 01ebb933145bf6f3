"""`pith latex inject` on a symlinked main file (or pith.sty): a link out of the paper's folder
is refused as `pith latex arxiv` refuses it, unless `--follow-links` (then the target is changed
in place, the link stays a link, and the backup stays in the folder); a link inside the folder is
written through; a link that leads nowhere is refused before anything is written."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from support.cli import RunPith, assert_one_line_error
from support.latex.inject import NUMBER

from pithauthor import PithNumber
from pithauthor.errors import ManuscriptError
from pithauthor.latex.injection import inject
from pithauthor.latex.sty import pith_sty_path

PAPER = "\\documentclass{article}\n\\begin{document}\nx\n\\end{document}\n"


def _linked_project(tmp_path: Path) -> tuple[Path, Path]:
    """A shared source folder and a project whose main.tex is a relative link into it."""
    shared = tmp_path / "shared"
    shared.mkdir()
    target = shared / "paper.tex"
    target.write_text(PAPER, encoding="utf-8")
    project = tmp_path / "project"
    project.mkdir()
    (project / "main.tex").symlink_to(Path("..") / "shared" / "paper.tex")
    return project, target


def _files(root: Path) -> list[tuple[str, bool]]:
    return sorted((str(p.relative_to(root)), p.is_symlink()) for p in root.rglob("*"))


def test_a_main_file_linked_out_of_the_folder_is_refused_as_arxiv_refuses_it(
    pith: RunPith, tmp_path: Path
) -> None:
    """Before: inject wrote through the link to a file outside the folder, and left its
    backup there, where `pith latex arxiv` refuses the same folder."""
    project, target = _linked_project(tmp_path)
    before = _files(tmp_path)
    result = pith("latex", "inject", str(project), "--pith", NUMBER, "--offline")
    assert_one_line_error(result, 2)
    assert "outside the paper's folder" in result.stderr and "--follow-links" in result.stderr
    assert _files(tmp_path) == before  # no backup, no pith.sty, nothing anywhere
    assert target.read_text("utf-8") == PAPER


def test_follow_links_writes_through_the_link_and_keeps_the_backup_in_the_folder(
    tmp_path: Path,
) -> None:
    project, target = _linked_project(tmp_path)
    link = project / "main.tex"
    result = inject(link, PithNumber.parse(NUMBER), follow_links=True)
    assert link.is_symlink() and os.readlink(link) == os.path.join("..", "shared", "paper.tex")
    assert f"\\pithnumber{{{NUMBER}}}" in target.read_text("utf-8")
    assert result.backup == project / "main.tex.pith-backup"
    assert result.backup.read_text("utf-8") == PAPER
    assert sorted(p.name for p in target.parent.iterdir()) == ["paper.tex"]  # no backup there
    assert (project / "pith.sty").read_bytes() == pith_sty_path().read_bytes()
    assert any("symbolic link" in note for note in result.notes)


def test_a_link_inside_the_folder_is_written_through_and_kept(tmp_path: Path) -> None:
    project = tmp_path / "p"
    (project / "src").mkdir(parents=True)
    target = project / "src" / "paper.tex"
    target.write_text(PAPER, encoding="utf-8")
    (project / "main.tex").symlink_to(Path("src") / "paper.tex")
    result = inject(project / "main.tex", PithNumber.parse(NUMBER))
    assert (project / "main.tex").is_symlink()
    assert "\\pithnumber" in target.read_text("utf-8")
    assert result.backup == project / "src" / "paper.tex.pith-backup"


def test_inject_through_the_cli_keeps_the_link(pith: RunPith, tmp_path: Path) -> None:
    project, target = _linked_project(tmp_path)
    result = pith(
        "latex",
        "inject",
        str(project / "main.tex"),
        "--pith",
        NUMBER,
        "--offline",
        "--follow-links",
    )
    assert result.returncode == 0, result.stderr
    assert (project / "main.tex").is_symlink()
    assert "\\pithnumber" in target.read_text("utf-8")


def test_an_input_linked_out_of_the_folder_is_refused(pith: RunPith, tmp_path: Path) -> None:
    shared = tmp_path / "shared"
    shared.mkdir()
    (shared / "preamble.tex").write_text("\\usepackage{amsmath}\n", encoding="utf-8")
    project = tmp_path / "p"
    project.mkdir()
    paper = PAPER.replace("\\begin{document}", "\\input{preamble}\n\\begin{document}")
    (project / "main.tex").write_text(paper, encoding="utf-8")
    (project / "preamble.tex").symlink_to(shared / "preamble.tex")
    before = _files(tmp_path)
    result = pith("latex", "inject", str(project), "--pith", NUMBER, "--offline")
    assert_one_line_error(result, 2)
    assert "\\input{preamble}" in result.stderr and "outside the paper's folder" in result.stderr
    assert _files(tmp_path) == before


def test_a_symlinked_pith_sty_is_replaced_through_its_link(tmp_path: Path) -> None:
    project = tmp_path / "p"
    project.mkdir()
    (project / "main.tex").write_text(PAPER, encoding="utf-8")
    shared_sty = tmp_path / "old-pith.sty"
    shared_sty.write_text("% an older pith.sty\n", encoding="utf-8")
    (project / "pith.sty").symlink_to(shared_sty)
    with pytest.raises(ManuscriptError, match="outside the paper's folder"):
        inject(project / "main.tex", PithNumber.parse(NUMBER), force=True)
    with pytest.raises(ManuscriptError, match="another version"):
        inject(project / "main.tex", PithNumber.parse(NUMBER), follow_links=True)
    inject(project / "main.tex", PithNumber.parse(NUMBER), force=True, follow_links=True)
    assert (project / "pith.sty").is_symlink()
    assert shared_sty.read_bytes() == pith_sty_path().read_bytes()


@pytest.mark.parametrize("kind", ["dangling", "loop"])
def test_a_link_that_leads_nowhere_is_refused_and_nothing_is_written(
    pith: RunPith, tmp_path: Path, kind: str
) -> None:
    project = tmp_path / "p"
    project.mkdir()
    (project / "main.tex").write_text(PAPER, encoding="utf-8")
    sty = project / "pith.sty"
    if kind == "dangling":
        sty.symlink_to(tmp_path / "gone.sty")
    else:
        (project / "other.sty").symlink_to(sty)
        sty.symlink_to(project / "other.sty")
    before = sorted((p.name, p.is_symlink()) for p in project.iterdir())
    result = pith("latex", "inject", str(project / "main.tex"), "--pith", NUMBER, "--offline")
    assert_one_line_error(result, 2)
    assert "symbolic link" in result.stderr
    assert sorted((p.name, p.is_symlink()) for p in project.iterdir()) == before
    assert (project / "main.tex").read_text("utf-8") == PAPER


def test_inject_and_arxiv_refuse_a_main_file_linked_out_of_the_folder_by_one_rule(
    pith: RunPith, tmp_path: Path
) -> None:
    """The same folder, the same sentence: `arxiv` (after its build, exit 1) and `inject`
    (before anything is written, exit 2) both say the main file links out of the folder."""
    project, target = _linked_project(tmp_path)
    packed = pith("latex", "arxiv", str(project), "-o", str(tmp_path / "a.tar.gz"), "--no-badge")
    injected = pith("latex", "inject", str(project), "--pith", NUMBER, "--offline")
    assert_one_line_error(packed, 1)
    assert_one_line_error(injected, 2)
    rule = f"main.tex is a link to {target}, outside the paper's folder"
    assert rule in packed.stderr and rule in injected.stderr
    assert not (tmp_path / "a.tar.gz").exists() and target.read_text("utf-8") == PAPER
