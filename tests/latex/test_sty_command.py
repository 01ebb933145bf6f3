"""`pith latex sty`: where authors get pith.sty without a manuscript to inject into (Overleaf
uploads, a TEXMFHOME install for every local project)."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest
from support.cli import RunPith, assert_one_line_error
from support.latex.pdfcheck import info
from support.latex.texbuild import NUMBER, STY

from pithauthor.latex.sty import COMPANIONS, copy_sty, install_sty, shipped_files


def test_path_names_a_real_file_identical_to_latex_pith_sty(pith: RunPith) -> None:
    result = pith("latex", "sty", "--path")
    assert result.returncode == 0, result.stderr
    path = Path(result.stdout.splitlines()[0])
    assert path.name == "pith.sty"
    assert not path.is_symlink()
    assert path.read_bytes() == STY.read_bytes()


def test_the_packaged_pith_sty_is_not_a_link_in_git() -> None:
    tracked = subprocess.run(
        ["git", "ls-files", "-s", "pithauthor/data"],
        cwd=STY.parents[1], capture_output=True, text=True, check=True,
    ).stdout  # fmt: skip
    assert "120000" not in tracked  # git's mode for a symbolic link
    assert shipped_files()[0].resolve() == STY.resolve()


def test_copy_puts_real_files_and_refuses_another_version_without_force(tmp_path: Path) -> None:
    first = copy_sty(tmp_path)
    assert first[0].action == "copied"
    copied = tmp_path / "pith.sty"
    assert not copied.is_symlink() and copied.read_bytes() == STY.read_bytes()
    assert copy_sty(tmp_path)[0].action == "unchanged"
    copied.write_text("% an older pith.sty\n", encoding="utf-8")
    from pithauthor.errors import ManuscriptError

    with pytest.raises(ManuscriptError, match="another version"):
        copy_sty(tmp_path)
    assert copied.read_text("utf-8") == "% an older pith.sty\n"  # untouched
    assert copy_sty(tmp_path, force=True)[0].action == "replaced"
    assert copied.read_bytes() == STY.read_bytes()


def test_copy_into_a_missing_folder_is_one_line_exit_2(pith: RunPith, tmp_path: Path) -> None:
    assert_one_line_error(pith("latex", "sty", "--copy", str(tmp_path / "nowhere")), 2)
    assert_one_line_error(pith("latex", "sty", "--copy", str(tmp_path), "--install"), 2)


@pytest.mark.tex("pdflatex", "kpsewhich")
def test_install_lets_a_manuscript_outside_any_project_compile(
    pith: RunPith, tmp_path: Path
) -> None:
    env = {"TEXMFHOME": str(tmp_path / "texmf")}
    result = pith("latex", "sty", "--install", env=env)
    assert result.returncode == 0, result.stderr
    installed = tmp_path / "texmf" / "tex" / "latex" / "pith" / "pith.sty"
    assert installed.read_bytes() == STY.read_bytes()
    assert "warning" not in result.stderr
    paper = tmp_path / "elsewhere"
    paper.mkdir()
    (paper / "paper.tex").write_text(
        "\\documentclass{article}\\usepackage{pith}\\pithnumber{" + NUMBER + "}\n"
        "\\title{T}\\author{A}\\begin{document}\\maketitle Text.\\end{document}\n",
        encoding="utf-8",
    )
    build = subprocess.run(
        ["pdflatex", "-interaction=nonstopmode", "-halt-on-error", "paper.tex"],
        cwd=paper, env={**os.environ, **env}, capture_output=True, text=True, timeout=240,
    )  # fmt: skip
    assert build.returncode == 0, build.stdout[-2000:]
    assert not (paper / "pith.sty").exists()
    assert info(paper / "paper.pdf")["/PithNumber"] == NUMBER


@pytest.mark.tex("kpsewhich")
def test_install_api_returns_the_installed_path(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TEXMFHOME", str(tmp_path / "t"))
    (done,) = [c for c in install_sty() if c.path.name == "pith.sty"]
    assert done.path == tmp_path / "t" / "tex" / "latex" / "pith" / "pith.sty"
    assert done.action == "copied"


def test_copy_refuses_another_pith_sty_naming_both_versions(pith: RunPith, tmp_path: Path) -> None:
    theirs = "\\ProvidesPackage{pith}[2020/01/01 v0.1 someone else's]\n"
    (tmp_path / "pith.sty").write_text(theirs, encoding="utf-8")
    result = pith("latex", "sty", "--copy", str(tmp_path))
    assert_one_line_error(result, 2)
    assert "v0.1 someone else's" in result.stderr and "this pithauthor's (" in result.stderr
    assert (tmp_path / "pith.sty").read_text("utf-8") == theirs
    assert not any((tmp_path / name).exists() for name in COMPANIONS)


@pytest.mark.parametrize(
    "how", ["copy", pytest.param("install", marks=pytest.mark.tex("kpsewhich"))]
)
def test_a_read_only_folder_is_refused_by_its_mode_bits_even_for_root(
    pith: RunPith, tmp_path: Path, how: str
) -> None:
    folder = tmp_path / "read-only"
    folder.mkdir()
    folder.chmod(0o555)
    try:
        if how == "copy":
            result = pith("latex", "sty", "--copy", str(folder))
        else:
            result = pith("latex", "sty", "--install", env={"TEXMFHOME": str(folder)})
        assert_one_line_error(result, 74)  # an output failure, not bad input
        assert "not writable" in result.stderr
        assert list(folder.iterdir()) == []
    finally:
        folder.chmod(0o755)
