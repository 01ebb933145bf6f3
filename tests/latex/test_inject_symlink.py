"""`pith latex inject` on a symlinked main file (or pith.sty): the target is changed in place and
the link stays a link; a link that leads nowhere is refused before anything is written."""

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


def test_inject_writes_through_the_link_and_keeps_it(tmp_path: Path) -> None:
    project, target = _linked_project(tmp_path)
    link = project / "main.tex"
    result = inject(link, PithNumber.parse(NUMBER))
    assert link.is_symlink() and os.readlink(link) == os.path.join("..", "shared", "paper.tex")
    assert f"\\pithnumber{{{NUMBER}}}" in target.read_text("utf-8")
    assert result.backup is not None and result.backup.parent == target.parent
    assert result.backup.read_text("utf-8") == PAPER
    assert (project / "pith.sty").read_bytes() == pith_sty_path().read_bytes()
    assert any("symbolic link" in note for note in result.notes)


def test_inject_through_the_cli_keeps_the_link(pith: RunPith, tmp_path: Path) -> None:
    project, target = _linked_project(tmp_path)
    result = pith("latex", "inject", str(project / "main.tex"), "--pith", NUMBER, "--offline")
    assert result.returncode == 0, result.stderr
    assert (project / "main.tex").is_symlink()
    assert "\\pithnumber" in target.read_text("utf-8")


def test_a_symlinked_pith_sty_is_replaced_through_its_link(tmp_path: Path) -> None:
    project = tmp_path / "p"
    project.mkdir()
    (project / "main.tex").write_text(PAPER, encoding="utf-8")
    shared_sty = tmp_path / "old-pith.sty"
    shared_sty.write_text("% an older pith.sty\n", encoding="utf-8")
    (project / "pith.sty").symlink_to(shared_sty)
    with pytest.raises(ManuscriptError, match="another version"):
        inject(project / "main.tex", PithNumber.parse(NUMBER))
    inject(project / "main.tex", PithNumber.parse(NUMBER), force=True)
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
