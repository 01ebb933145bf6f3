"""`pith latex arxiv` tried as an author would: the publishers' templates built in their folder
first, then packed; the archive unpacked into an empty folder and built with pdfLaTeX alone
(no BibTeX, no Biber) must give the author's page count, the badge and the metadata. Then the
folders that go wrong: stale build files, absolute and `..` inputs, symlinks in and out,
fontspec, `%` in URLs and verbatim, a proof that fails.

Two templates are packed by default: revtex4-ijqc (a BibTeX .bbl, parts in subfolders) and
article (pith.sty found in the author's TeX tree, the packaged one packed); the other six
(Biber's .bbl, acmart's 00README, elsarticle's title on page 3, ...) are marked slow. Each
template is built and packed once per session (texbuild.shared_folder) and read by both
template tests."""

from __future__ import annotations

import shutil
import tarfile
from dataclasses import dataclass
from pathlib import Path

import pytest
from support.cli import RunPith, assert_one_line_error
from support.latex.arxiv import (
    BODY,
    NUMBER,
    article,
    latexmk,
    pages,
    pdflatex_alone,
    run_pith,
    unpack,
)
from support.latex.inject import MAINS, copy_manuscript, snapshot
from support.latex.pdfcheck import info, link_uris, page_text
from support.latex.texbuild import STY, shared_folder

from pithauthor import PithNumber
from pithauthor.errors import VerificationError
from pithauthor.latex.arxiv import build_arxiv_archive
from pithauthor.latex.injection import inject
from pithauthor.latex.pdf import check_pdf
from pithauthor.latex.sty import BUILD_FILES
from pithauthor.protocol.canonical_json import parse_json

REPO = Path(__file__).resolve().parents[2]
NUMBER_OBJ = PithNumber.parse(NUMBER)
TEX = pytest.mark.tex("latexmk", "pdflatex", "bibtex", "biber")
# the templates whose references are made by BibTeX or Biber: their .bbl must be packed
WITH_BBL = {"amsart-amsrefs", "revtex4-ijqc", "acmart-sigconf", "revtex4-2-aps", "llncs-biblatex"}
NEEDS_README = {"acmart-sigconf"}
# pith-compat.def is packed where the build reads it: on pdfLaTeX, for hyperxmp's Info keys and
# XMP (acmart loads it); pith.sty itself links and writes the Info keys otherwise
NEEDS_COMPAT = {"acmart-sigconf"}
# besides the multi-file fixtures, two single-file templates with the badge already in them and
# no pith.sty beside them: the author's TeX finds it elsewhere; the packaged one is packed
SINGLE = {"IEEEtran": "IEEEtran.tex", "article": "article.tex"}
ALL = {**MAINS, **SINGLE}
FIGURES = {"acmart-sigconf": ("sampleteaser.pdf", "figures/sample-franklin.png")}
FAST = {"revtex4-ijqc", "article"}
TEMPLATES = [
    pytest.param(
        name,
        marks=[] if name in FAST else [pytest.mark.slow],
        id=name,
    )
    for name in sorted(ALL)
]
DEBRIS = (".aux", ".log", ".fls", ".fdb_latexmk", ".out", ".blg", ".bcf", ".run.xml", ".bib")


@dataclass
class Packed:
    name: str
    folder: Path
    author_pdf: Path
    archive: Path
    stdout: str
    stderr: str


@pytest.fixture(params=TEMPLATES)
def packed(request: pytest.FixtureRequest) -> Packed:
    """A template with the badge, built by its author in its folder, then packed (once per
    session, shared by the tests that read it)."""
    name = request.param

    def fill(tmp: Path) -> None:
        if name in SINGLE:
            folder = tmp / name
            folder.mkdir()
            text = (REPO / "templates" / SINGLE[name]).read_text("utf-8")
            text = text.replace("pith:2023:NFG5PAOXQUVIWDX5F7YSYYL7EW", NUMBER)
            (folder / SINGLE[name]).write_text(text, "utf-8")
        else:
            folder = copy_manuscript(name, tmp)
            inject(folder, NUMBER_OBJ)
        (folder / "stray-notes.txt").write_text("not part of the paper")
        latexmk(folder, ALL[name], sty_installed=name in SINGLE)
        result = run_pith(
            "latex", "arxiv", str(folder), "-o", str(tmp / "upload.tar.gz"), home=tmp / "home"
        )
        assert result.returncode == 0, result.stderr
        (tmp / "stdout").write_text(result.stdout, "utf-8")
        (tmp / "stderr").write_text(result.stderr, "utf-8")

    tmp = shared_folder("\0".join(("arxiv", name, STY.read_text("utf-8"))), fill)
    folder = tmp / name
    return Packed(
        name,
        folder,
        folder / Path(ALL[name]).with_suffix(".pdf"),
        tmp / "upload.tar.gz",
        (tmp / "stdout").read_text("utf-8"),
        (tmp / "stderr").read_text("utf-8"),
    )


@TEX
def test_template_archive_holds_the_real_files_the_build_read_and_no_debris(
    packed: Packed,
) -> None:
    main = ALL[packed.name]
    with tarfile.open(packed.archive) as tar:
        members = {m.name: m for m in tar.getmembers()}
        sty = tar.extractfile("pith.sty").read()  # type: ignore[union-attr]
        ltxml = tar.extractfile("pith.sty.ltxml").read()  # type: ignore[union-attr]
        placement = tar.extractfile("pith-placement.def").read()  # type: ignore[union-attr]
        if packed.name in NEEDS_COMPAT:
            compat = tar.extractfile("pith-compat.def").read()  # type: ignore[union-attr]
            assert compat == (REPO / "latex" / "pith-compat.def").read_bytes()
    names = set(members)
    assert ("pith-compat.def" in names) == (packed.name in NEEDS_COMPAT)
    assert sorted(names) == packed.stdout.split()
    assert all(m.isreg() for m in members.values())  # never a link
    assert not any(n.startswith("/") or ".." in n.split("/") for n in names)
    if packed.name in SINGLE:  # the main file, and pith's files at the top
        assert names == {
            main,
            "pith.sty",
            "pith-placement.def",
            "pith.sty.ltxml",
        }
    else:  # the parts in their subfolders too
        assert main in names and len(names) > 4
    assert sty == (REPO / "latex" / "pith.sty").read_bytes()
    assert ltxml == (REPO / "latex" / "pith.sty.ltxml").read_bytes()
    assert placement == (REPO / "latex" / "pith-placement.def").read_bytes()
    assert (Path(main).with_suffix(".bbl").name in names) == (packed.name in WITH_BBL)
    assert set(FIGURES.get(packed.name, ())) <= names
    assert not any(n.endswith(DEBRIS) for n in names)
    assert Path(main).with_suffix(".pdf").name not in names
    assert "stray-notes.txt" not in names and not any(".pith-backup" in n for n in names)
    # acmart's introduction shows `\documentclass[STYLE]{acmart}` in a verbatim block: arXiv would
    # have to guess the top-level file, so the archive names it; the others need nothing
    assert ("00README.json" in names) == (packed.name in NEEDS_README)
    assert "proven: builds alone with pdflatex" in packed.stderr
    if packed.name == "llncs-biblatex":  # Biber's .bbl, in a format arXiv's TeX Live reads
        with tarfile.open(packed.archive) as tar:
            bbl = tar.extractfile(Path(main).with_suffix(".bbl").name).read()  # type: ignore[union-attr]
        assert b"biblatex bbl format version 3." in bbl
        assert "biblatex .bbl format" not in packed.stderr


# the page that holds the title (pith puts the badge there), where it is not page 1
TITLE_PAGE = {"elsarticle-num": 3}


@TEX
def test_template_archive_builds_alone_to_the_authors_pages_with_badge_and_metadata(
    packed: Packed, tmp_path: Path
) -> None:
    main = ALL[packed.name]
    unpack(packed.archive, tmp_path / "arxiv")
    pdf = pdflatex_alone(tmp_path / "arxiv", main)
    assert pages(pdf) == pages(packed.author_pdf)
    check_pdf(pdf, NUMBER_OBJ)
    assert info(pdf)["/PithNumber"] == NUMBER
    title_page = TITLE_PAGE.get(packed.name, 1)  # elsarticle: after the graphical abstract
    assert NUMBER_OBJ.url() in link_uris(pdf, page=title_page - 1)
    assert "pith:" + BODY[:8] in page_text(pdf, page=title_page)


@TEX
@pytest.mark.slow
def test_stale_build_files_from_a_failed_build_and_another_machine_are_not_used(
    tmp_path: Path, pith: RunPith
) -> None:
    folder = copy_manuscript("amsart-amsrefs", tmp_path)
    inject(folder, NUMBER_OBJ)
    latexmk(folder, "main.tex")
    # another machine's recorder and latexmk database, saying only pith.sty was read and that
    # everything is up to date; a .aux left broken by a failed build; an old .bbl is rebuilt
    (folder / "main.fls").write_text(
        "PWD /home/someone/paper\nINPUT /home/someone/paper/main.tex\nINPUT pith.sty\n"
    )
    fdb = folder / "main.fdb_latexmk"
    fdb.write_text(fdb.read_text().replace(str(folder), "/home/someone/paper"))
    (folder / "main.aux").write_text("\\relax\n\\bibcite{broken\n\\@writefile{toc}{\\contentsline")
    (folder / "parts" / "surgery.aux").write_text("\\relax \\undefinedmacro{")
    archive = tmp_path / "upload.tar.gz"
    result = pith("latex", "arxiv", str(folder), "-o", str(archive), timeout=600)
    assert result.returncode == 0, result.stderr
    with tarfile.open(archive) as tar:
        names = set(tar.getnames())
    assert {"main.tex", "main.bbl", "sections/transversality.tex", "parts/surgery.tex"} <= names
    assert not any(n.endswith((".aux", ".fls", ".fdb_latexmk")) for n in names)


def _paper(
    folder: Path, body: str, files: dict[str, str] | None = None, *, hyperref: bool = True
) -> Path:
    """paper.tex (an article with the badge), pith.sty and its .def files (as `pith latex
    inject` leaves them), and `files` (name: text). `hyperref=False`: the paper without
    hyperref, one pdfLaTeX run cheaper, where what is tested is the folder, not the links."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "paper.tex").write_text(article(body, hyperref=hyperref))
    for name in BUILD_FILES:
        shutil.copy(REPO / "latex" / name, folder / name)
    for name, text in (files or {}).items():
        path = folder / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return folder


@TEX
def test_absolute_input_is_refused_by_arxiv_and_by_inject_check_naming_the_file(
    tmp_path: Path, pith: RunPith
) -> None:
    outside = tmp_path / "elsewhere" / "chapter.tex"
    outside.parent.mkdir()
    outside.write_text("Text kept outside the paper's folder.\n")
    folder = _paper(tmp_path / "paper", f"\\input{{{outside.with_suffix('')}}}", hyperref=False)
    archive = tmp_path / "upload.tar.gz"
    result = pith("latex", "arxiv", str(folder), "-o", str(archive))
    assert_one_line_error(result, 1)
    assert str(outside) in result.stderr and "outside its folder" in result.stderr
    assert not archive.exists() and not list(tmp_path.glob(".upload*"))
    # inject --check builds too, and fails the same way, writing nothing
    plain = folder / "paper.tex"
    plain.write_text(
        plain.read_text()
        .replace("\\usepackage{pith}\n", "")
        .replace(f"\\pithnumber{{{NUMBER}}}\n", "")
    )
    (folder / "pith.sty").unlink()
    before = snapshot(folder)
    checked = pith("latex", "inject", str(folder), "--pith", NUMBER, "--offline", "--check")
    assert_one_line_error(checked, 1)
    assert str(outside) in checked.stderr and "outside its folder" in checked.stderr
    assert snapshot(folder) == before


@TEX
def test_input_through_dotdot_is_refused_naming_the_file(tmp_path: Path, pith: RunPith) -> None:
    (tmp_path / "shared").mkdir()
    (tmp_path / "shared" / "macros.tex").write_text("\\newcommand{\\shared}{S}\n")
    folder = _paper(tmp_path / "paper", "\\input{../shared/macros}\\shared", hyperref=False)
    result = pith("latex", "arxiv", str(folder), "-o", str(tmp_path / "upload.tar.gz"))
    assert_one_line_error(result, 1)
    assert "../shared/macros" in result.stderr and "outside its folder" in result.stderr


@TEX
@pytest.mark.parametrize("kind", ["file", "folder"])
def test_symlink_leaving_the_folder_is_refused_naming_its_target(
    kind: str, tmp_path: Path, pith: RunPith
) -> None:
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    (outside / "figure.tex").write_text("A part that lives elsewhere.\n")
    folder = _paper(tmp_path / "paper", "\\input{linked/figure}", hyperref=False)
    (folder / "linked").mkdir() if kind == "file" else (folder / "linked").symlink_to(outside)
    if kind == "file":
        (folder / "linked" / "figure.tex").symlink_to(outside / "figure.tex")
    result = pith("latex", "arxiv", str(folder), "-o", str(tmp_path / "upload.tar.gz"))
    assert_one_line_error(result, 1)
    assert "linked/figure.tex is a link to" in result.stderr
    assert str(outside / "figure.tex") in result.stderr


@TEX
def test_symlink_inside_the_folder_is_packed_as_the_real_file(
    tmp_path: Path, pith: RunPith
) -> None:
    folder = _paper(
        tmp_path / "paper",
        "\\input{alias}",
        {"sections/real.tex": "The real section's text.\n"},
        hyperref=False,
    )
    (folder / "alias.tex").symlink_to("sections/real.tex")
    (folder / "pith.sty").unlink()
    (folder / "pith.sty").symlink_to(REPO / "latex" / "pith.sty")  # as in an editable install
    archive = tmp_path / "upload.tar.gz"
    result = pith("latex", "arxiv", str(folder), "-o", str(archive))
    # pith.sty is a link out of the folder: refused like any other, with the way out
    assert_one_line_error(result, 1)
    assert "pith.sty is a link to" in result.stderr
    (folder / "pith.sty").unlink()  # without it, the packaged pith.sty is packed
    result = pith("latex", "arxiv", str(folder), "-o", str(archive))
    assert result.returncode == 0, result.stderr
    with tarfile.open(archive) as tar:
        alias = tar.getmember("alias.tex")
        assert alias.isreg()
        assert tar.extractfile(alias).read() == b"The real section's text.\n"  # type: ignore[union-attr]
        assert tar.getmember("pith.sty").isreg()


@TEX
def test_fontspec_paper_is_refused_as_needing_xelatex(tmp_path: Path, pith: RunPith) -> None:
    folder = _paper(tmp_path / "paper", "Text.")
    main = folder / "paper.tex"
    main.write_text(main.read_text().replace("\\usepackage{hyperref}", "\\usepackage{fontspec}"))
    result = pith("latex", "arxiv", str(folder), "-o", str(tmp_path / "upload.tar.gz"))
    assert_one_line_error(result, 1)
    assert "needs XeLaTeX or LuaLaTeX" in result.stderr and "fontspec" in result.stderr


@TEX
def test_paper_without_a_pith_number_is_refused(tmp_path: Path, pith: RunPith) -> None:
    folder = tmp_path / "paper"
    folder.mkdir()
    (folder / "paper.tex").write_text("\\documentclass{article}\\begin{document}x\\end{document}")
    result = pith("latex", "arxiv", str(folder), "-o", str(tmp_path / "upload.tar.gz"))
    assert_one_line_error(result, 2)  # the build step is not told as finished before it
    assert "no Pith Number" in result.stderr and "pith latex inject" in result.stderr
    assert "--no-badge" in result.stderr  # the v1 upload's way (test_arxiv_progress.py)


@TEX
def test_a_bib_file_missing_with_no_bbl_is_named_not_latexmks_last_line(
    tmp_path: Path, pith: RunPith
) -> None:
    folder = _paper(
        tmp_path / "paper",
        "See \\cite{knuth}.\n\\bibliographystyle{plain}\n\\bibliography{refs}",
        hyperref=False,
    )
    result = pith("latex", "arxiv", str(folder), "-o", str(tmp_path / "upload.tar.gz"))
    assert_one_line_error(result, 1)
    assert "refs.bib not found" in result.stderr and "no paper.bbl" in result.stderr
    assert not (tmp_path / "upload.tar.gz").exists()


@TEX
def test_a_broken_bib_is_named_with_bibtexs_first_error(tmp_path: Path, pith: RunPith) -> None:
    cites = "See \\cite{knuth}.\n\\bibliographystyle{plain}\n\\bibliography{refs}"
    folder = _paper(
        tmp_path / "paper", cites, {"refs.bib": "@book{knuth, title={x\n"}, hyperref=False
    )
    result = pith("latex", "arxiv", str(folder), "-o", str(tmp_path / "upload.tar.gz"))
    assert_one_line_error(result, 1)
    assert "'bibtex paper' failed" in result.stderr and "of file refs.bib" in result.stderr
    assert not (tmp_path / "upload.tar.gz").exists()


@TEX
def test_a_long_tex_error_is_reported_whole_not_cut_at_the_logs_79_columns(
    tmp_path: Path, pith: RunPith
) -> None:
    folder = _paper(tmp_path / "paper", "Text.")
    main = folder / "paper.tex"
    main.write_text(main.read_text().replace(NUMBER, "2302.12445"))  # an arXiv id, by hand
    result = pith("latex", "arxiv", str(folder), "-o", str(tmp_path / "upload.tar.gz"))
    assert_one_line_error(result, 1)
    whole = (
        "is not a Pith Number (pith:YYYY:, YYYY from 1991, then 26 characters from A-Z and 2-7)."
    )
    assert whole in result.stderr


def test_a_section_file_given_as_main_is_bad_input_before_any_build(
    tmp_path: Path, pith: RunPith
) -> None:
    folder = _paper(
        tmp_path / "paper", "\\input{intro}", {"intro.tex": "\\section{Intro}\nText.\n"}
    )
    result = pith("latex", "arxiv", str(folder / "intro.tex"), "-o", str(tmp_path / "up.tar.gz"))
    assert_one_line_error(result, 2)
    assert "intro.tex: no \\begin{document}; is this the main file?" in result.stderr


URL = "https://example.org/a%20b"
HREF = "https://example.org/%7Euser/"
BODY_WITH_COMMENTS = rf"""% SECRET whole-line remark
See \url{{{URL}}} and \href{{{HREF}}}{{a page}}.% SECRET trailing remark
Half is 50\% and \verb|%VERB| stays.
\input{{appendix}}
"""
APPENDIX = r"""\begin{verbatim}
% shown in the paper
\documentclass{article}
\end{verbatim}
  % SECRET indented remark
"""


@pytest.fixture
def commented() -> tuple[Path, Path, str]:
    """A paper with comments, `%` in URLs, \\verb and verbatim, packed once per session
    (stripped); the tests read it and never write into it."""

    def fill(tmp: Path) -> None:
        folder = _paper(tmp / "paper", BODY_WITH_COMMENTS, {"appendix.tex": APPENDIX})
        result = run_pith(
            "latex", "arxiv", str(folder), "-o", str(tmp / "upload.tar.gz"), home=tmp / "home"
        )
        assert result.returncode == 0, result.stderr
        (tmp / "stderr").write_text(result.stderr, "utf-8")

    compat = STY.with_name("pith-compat.def").read_text("utf-8")
    placement = STY.with_name("pith-placement.def").read_text("utf-8")
    authorkeys = STY.with_name("pith-authorkeys.def").read_text("utf-8")
    key = "\\0".join(("commented", STY.read_text("utf-8"), compat, placement, authorkeys))
    tmp = shared_folder(key, fill)
    return tmp / "paper", tmp / "upload.tar.gz", (tmp / "stderr").read_text("utf-8")


@TEX
def test_comments_are_stripped_but_urls_percent_and_verbatim_stay_and_are_counted(
    commented: tuple[Path, Path, str], tmp_path: Path
) -> None:
    folder, archive, stderr = commented
    unpack(archive, tmp_path / "arxiv")
    packed = (tmp_path / "arxiv" / "paper.tex").read_text() + (
        tmp_path / "arxiv" / "appendix.tex"
    ).read_text()
    assert "SECRET" not in packed
    for kept in (URL, HREF, "50\\%", "\\verb|%VERB|", "% shown in the paper"):
        assert kept in packed
    assert "comments removed: 3 (2 whole lines)" in stderr
    # the paper is unchanged: the archive alone gives the same pages, links and text
    pdf = pdflatex_alone(tmp_path / "arxiv", "paper.tex")
    author = latexmk(shutil.copytree(folder, tmp_path / "author"), "paper.tex")
    assert pages(pdf) == pages(author)
    assert {URL, HREF, NUMBER_OBJ.url()} <= set(link_uris(pdf, page=0))
    text = page_text(pdf, page=1)
    assert "% shown in the paper" in text and "%VERB" in text


@TEX
def test_a_second_documentclass_gets_a_00readme_naming_the_top_level_file(
    commented: tuple[Path, Path, str], tmp_path: Path
) -> None:
    _, archive, _ = commented
    members = unpack(archive, tmp_path / "arxiv")
    assert "00README.json" in members
    readme = parse_json((tmp_path / "arxiv" / "00README.json").read_text("utf-8"))
    assert readme == {
        "process": {"compiler": "pdflatex"},
        "sources": [{"filename": "paper.tex", "usage": "toplevel"}],
    }


@TEX
def test_keep_comments_packs_the_sources_as_they_are(
    commented: tuple[Path, Path, str], tmp_path: Path, pith: RunPith
) -> None:
    folder, _, _ = commented
    archive = tmp_path / "kept.tar.gz"
    result = pith("latex", "arxiv", str(folder), "-o", str(archive), "--keep-comments")
    assert result.returncode == 0, result.stderr
    assert "comments kept" in result.stderr
    unpack(archive, tmp_path / "arxiv")
    assert (tmp_path / "arxiv" / "paper.tex").read_bytes() == (folder / "paper.tex").read_bytes()


@TEX
def test_a_proof_build_that_differs_fails_keeping_the_old_archive_and_no_temp_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from pithauthor.latex import upload as comments

    real = comments.strip_comments

    def one_page_more(text: str) -> comments.Stripped:  # a fault: the stripper adds a page
        done = real(text)
        more = done.text.replace("\\end{document}", "\\clearpage\\null\n\\end{document}")
        return comments.Stripped(more, done.comments, done.whole_lines)

    monkeypatch.setattr("pithauthor.latex.arxiv.strip_comments", one_page_more)
    folder = _paper(tmp_path / "paper", "One page.", hyperref=False)
    output = tmp_path / "out" / "upload.tar.gz"
    output.parent.mkdir()
    output.write_bytes(b"yesterday's archive")  # the author's last good upload
    with pytest.raises(VerificationError, match="2 pages, the paper's folder to 1"):
        build_arxiv_archive(folder, output)
    # published only after the proof: the old archive is intact and no temporary file is left
    assert list(output.parent.iterdir()) == [output]
    assert output.read_bytes() == b"yesterday's archive"


# Two properties of one successful upload, checked on the same run (one build and proof, ~1.3
# CPU-s, instead of one each): neither the magic comment nor the missing .def file
# changes what the other checks.
@TEX
def test_a_folder_with_pith_sty_alone_gets_the_packaged_defs_it_reads_and_xelatex_is_warned_of(
    tmp_path: Path, pith: RunPith
) -> None:
    # an author who copied only pith.sty (Overleaf): the build needs pith-placement.def (the
    # badge under the title), so the packaged one is used and packed, and the archive builds
    # alone; pith-compat.def is not read on pdfLaTeX (pith.sty links with \pdfstartlink and
    # writes the Info keys with \pdfinfo itself), so it is not packed
    folder = _paper(tmp_path / "paper", "Text.", hyperref=False)
    (folder / "pith-compat.def").unlink()
    (folder / "pith-placement.def").unlink()
    # and whose paper asks for XeLaTeX in a magic comment: warned about, built with pdfLaTeX
    main = folder / "paper.tex"
    main.write_text("% !TEX program = xelatex\n" + main.read_text())
    archive = tmp_path / "upload.tar.gz"
    result = pith("latex", "arxiv", str(folder), "-o", str(archive))
    assert result.returncode == 0, result.stderr
    assert "warning: paper.tex asks for xelatex; arXiv compiles with pdfLaTeX" in result.stderr
    with tarfile.open(archive) as tar:
        placement = tar.extractfile("pith-placement.def").read()  # type: ignore[union-attr]
        assert "pith-compat.def" not in tar.getnames()
    assert placement == (REPO / "latex" / "pith-placement.def").read_bytes()
    assert not (folder / "pith-placement.def").exists()  # the author's folder is not touched
