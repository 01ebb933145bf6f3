"""Real manuscripts (publishers' classes, multi-file): inject, compile, check the PDF. Packing them
for arXiv is tested in test_arxiv_upload.py."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from support.cli import RunPith, assert_one_line_error
from support.latex.arxiv import latexmk
from support.latex.inject import MAINS, NUMBER, copy_manuscript, snapshot
from support.latex.pdfcheck import link_uris, page_text

from pithauthor import PithNumber
from pithauthor.latex.arxiv import build_arxiv_archive
from pithauthor.latex.injection import inject
from pithauthor.latex.pdf import check_pdf

NUMBER_OBJ = PithNumber.parse(NUMBER)
SHORT = "pith:" + NUMBER_OBJ.body[:8]
TEX = pytest.mark.tex("latexmk", "pdflatex", "bibtex", "biber")


@TEX
@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(MAINS))
def test_inject_compile_check_and_second_inject_is_byte_identical(
    name: str, tmp_path: Path, pith: RunPith
) -> None:
    folder = copy_manuscript(name, tmp_path)
    parts_before = {p: b for p, (b, _) in snapshot(folder).items() if p != MAINS[name]}
    result = pith("latex", "inject", str(folder), "--pith", NUMBER, "--offline", "--check")
    assert result.returncode == 0, result.stderr
    assert "checked" in result.stderr
    after = snapshot(folder)
    # only the main file changed; the parts in subfolders are untouched; pith.sty + backup added
    changed = {p for p, (b, _) in after.items() if parts_before.get(p) != b}
    assert changed == {
        MAINS[name],
        "pith.sty",
        "pith.sty.ltxml",  # the LaTeXML binding, for arXiv's HTML view
        "pith-compat.def",  # pith.sty's back-end code (copied whether used or not)
        "pith-placement.def",  # pith.sty's title-block code (placement=title)
        "pith-authorkeys.def",  # pith.sty's author-key code (copied whether used or not)
        MAINS[name] + ".pith-backup",
    }
    again = pith("latex", "inject", str(folder), "--pith", NUMBER, "--offline")
    assert again.returncode == 0, again.stderr
    assert snapshot(folder) == after
    build = tmp_path / "build"
    shutil.copytree(folder, build)
    assert_badge_on_title_page(latexmk(build, MAINS[name]), TITLE_PAGE.get(name, 1))


# elsarticle's template sets a graphical abstract page and a highlights page before the title
# page: the badge belongs on the title page (page 3), not on the graphical abstract.
TITLE_PAGE = {"elsarticle-num": 3}


def assert_badge_on_title_page(pdf: Path, page: int) -> None:
    check_pdf(pdf, NUMBER_OBJ)
    assert NUMBER_OBJ.url() in link_uris(pdf, page=page - 1)
    assert SHORT in page_text(pdf, page=page)
    assert all(SHORT not in page_text(pdf, page=p) for p in range(1, page))


@TEX
@pytest.mark.slow
@pytest.mark.parametrize("variant", ["crlf", "bom", "latin-1"])
def test_encodings_and_line_endings_survive_and_compile(variant: str, tmp_path: Path) -> None:
    folder = copy_manuscript("amsart-amsrefs", tmp_path)
    main = folder / "main.tex"
    text = main.read_text("utf-8").replace("Michael Downes", "Michael Downes (\u00e9d.)")
    if variant == "crlf":
        raw = text.replace("\n", "\r\n").encode("utf-8")
    elif variant == "bom":
        raw = b"\xef\xbb\xbf" + text.encode("utf-8")
    else:
        text = text.replace(
            "\\documentclass{amsart}", "\\documentclass{amsart}\n\\usepackage[latin1]{inputenc}"
        )
        raw = text.encode("latin-1")
    main.write_bytes(raw)
    inject(folder, NUMBER_OBJ, check=True)
    new = main.read_bytes()
    nl = b"\r\n" if variant == "crlf" else b"\n"
    lines = b"\\usepackage{pith}" + nl + b"\\pithnumber{" + NUMBER.encode() + b"}" + nl
    assert new.replace(lines, b"", 1) == raw
    check_pdf(latexmk(folder, "main.tex"), NUMBER_OBJ)


@TEX  # it runs latexmk: without TeX it skipped nothing and failed
def test_arxiv_refuses_a_manuscript_that_does_not_compile(tmp_path: Path, pith: RunPith) -> None:
    (tmp_path / "paper.tex").write_text(
        "\\documentclass{article}\n\\begin{document}\n\\undefinedmacro\n\\end{document}\n"
    )
    archive = tmp_path / "paper.tar.gz"
    # --no-badge: a paper without \pithnumber is otherwise refused before any build
    result = pith("latex", "arxiv", str(tmp_path), "-o", str(archive), "--no-badge")
    assert_one_line_error(result, 1)
    assert "Undefined control sequence" in result.stderr
    assert not archive.exists()


@TEX
def test_arxiv_archive_api_lists_subfolder_inputs(tmp_path: Path) -> None:
    folder = copy_manuscript("amsart-amsrefs", tmp_path)
    inject(folder, NUMBER_OBJ)
    result = build_arxiv_archive(folder, tmp_path / "out.tar.gz")
    assert {"sections/transversality.tex", "parts/surgery.tex", "main.bbl"} <= set(result.files)


@TEX
def test_check_failure_writes_nothing(tmp_path: Path, pith: RunPith) -> None:
    (tmp_path / "paper.tex").write_text(
        "\\documentclass{article}\n\\begin{document}\n\\undefinedmacro\n\\end{document}\n"
    )
    before = snapshot(tmp_path)
    result = pith("latex", "inject", str(tmp_path), "--pith", NUMBER, "--offline", "--check")
    assert_one_line_error(result, 1)
    assert snapshot(tmp_path) == before
