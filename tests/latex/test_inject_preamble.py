"""The preamble reader takes what real preambles hold: macros whose bodies open or
close environments, `\\def`/`\\let` of `\\begin`/`\\end`, `\\makeatletter` blocks, `\\iffalse`
tricks and `\\input` chains; when it cannot place the lines, it says what it found and where."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from pypdf import PdfReader
from support.cli import RunPith, assert_one_line_error
from support.latex.arxiv import latexmk
from support.latex.inject import NUMBER, copy_manuscript, snapshot
from support.latex.pdfcheck import link_uris, log_problems

from pithauthor import PithNumber
from pithauthor.errors import ManuscriptError
from pithauthor.latex.injection import inject
from pithauthor.latex.pdf import check_pdf
from pithauthor.latex.preamble import locate

NUMBER_OBJ = PithNumber.parse(NUMBER)
TAIL = "\\usepackage{amsmath}\n\\begin{document}\nx\n\\end{document}\n"
HEAD = "\\documentclass{article}\n"
TEX = pytest.mark.tex("latexmk", "pdflatex")

# each preamble construct that once hid `\begin{document}` from the reader
CONSTRUCTS = {
    "newcommand-opens-environment": "\\newcommand{\\beq}{\\begin{equation}}\n"
    "\\newcommand{\\eeq}{\\end{equation}}\n",
    "def-opens-environment": "\\def\\be{\\begin{equation}}\n\\def\\ee{\\end{equation}}\n",
    "let-of-begin-and-end": "\\let\\bea\\begin\n\\let\\eea\\end\n",
    "newenvironment-of-environments": "\\newenvironment{kp}{\\begin{quote}}{\\end{quote}}\n",
    "makeatletter-end-float": "\\makeatletter\n\\let\\old@endfloat\\end@float\n"
    "\\def\\end@float{\\old@endfloat}\n\\makeatother\n",
    "renewcommand-of-begin": "\\let\\oldbegin\\begin\n\\renewcommand{\\begin}[1]{\\oldbegin{#1}}\n",
    "iffalse-with-unbalanced-brace": "\\iffalse\n\\newcommand{\\x}{\n\\begin{document}\n\\fi\n",
    "iffalse-nested-conditionals": "\\iffalse\n\\ifx\\a\\b\n\\begin{document}\n\\fi\n{\n\\fi\n",
    "iffalse-else-branch-runs": "\\iffalse\n{\n\\else\n\\newcommand{\\y}{z}\n\\fi\n",
    "newif-inside-iffalse": "\\newif\\ifdraft\n\\iffalse\n\\ifdraft{\\fi\n"
    "\\begin{document}\n\\fi\n",
}


@pytest.mark.parametrize("name", sorted(CONSTRUCTS))
def test_the_real_begin_document_is_found_after_the_construct(name: str) -> None:
    text = HEAD + CONSTRUCTS[name] + TAIL
    preamble = locate(text, "paper.tex")
    assert preamble.begin_document == text.rindex("\\begin{document}")
    # the line after \documentclass is a safe place for the two pith lines
    assert len(HEAD) in preamble.boundaries


@pytest.mark.parametrize("name", sorted(CONSTRUCTS))
def test_inject_adds_the_lines_after_documentclass_despite_the_construct(
    name: str, tmp_path: Path
) -> None:
    paper = tmp_path / "paper.tex"
    paper.write_text(HEAD + CONSTRUCTS[name] + TAIL)
    inject(tmp_path, NUMBER_OBJ)
    expected = HEAD + f"\\usepackage{{pith}}\n\\pithnumber{{{NUMBER}}}\n" + CONSTRUCTS[name] + TAIL
    assert paper.read_text() == expected


@pytest.mark.parametrize(
    "switch",
    ["\\let\\ifanon\\iffalse", "\\let\\ifanon=\\iffalse", "\\global\\let\\ifanon\\iffalse"],
)
def test_a_switch_let_to_iffalse_opens_no_branch_and_its_own_branch_is_skipped(
    switch: str, tmp_path: Path
) -> None:
    paper = tmp_path / "paper.tex"
    text = (
        HEAD + switch + "\n\\usepackage{hyperref}\n\\ifanon\n{\\usepackage{xcolor}\n\\fi\n" + TAIL
    )
    paper.write_text(text)
    preamble = locate(text, paper.name)
    assert preamble.hyperref is not None  # after the \let, not inside a branch
    inject(tmp_path, NUMBER_OBJ)
    after_hyperref = "\\usepackage{hyperref}\n\\usepackage{pith}\n"
    assert after_hyperref in paper.read_text()


def test_a_switch_let_back_to_iftrue_runs_its_branch(tmp_path: Path) -> None:
    text = (
        HEAD
        + "\\let\\ifanon\\iffalse\n\\let\\ifanon\\iftrue\n\\ifanon\n\\usepackage{hyperref}\n\\fi\n"
        + TAIL
    )
    assert locate(text, "paper.tex").hyperref is not None


def test_a_pith_load_inside_iffalse_is_not_taken_for_a_real_one(tmp_path: Path) -> None:
    paper = tmp_path / "paper.tex"
    paper.write_text(HEAD + "\\iffalse\n{\\usepackage{pith}\n\\fi\n" + TAIL)
    preamble = locate(paper.read_text(), paper.name)
    assert preamble.pith_package is None


@pytest.mark.parametrize(
    ("preamble", "message"),
    [
        (
            "\\newcommand{\\foo}{\\textbf{x}\n",
            "the one at line 3 is inside an argument of \\newcommand (line 2), not closed",
        ),
        ("{\\bfseries\n", "the one at line 3 is inside the { opened at line 2"),
        ("\\iffalse\n", "the one at line 3 is inside the \\iffalse of line 2"),
        ("\\iftrue\\else\n", "the one at line 3 is inside the disabled branch of the conditional"),
        ("\\begin{comment}\n", "inside \\begin{comment} of line 2, which TeX does not run"),
        ("$x\n", "the one at line 3 is inside math opened at line 2"),
    ],
)
def test_an_unplaceable_preamble_names_what_swallowed_begin_document_and_its_line(
    preamble: str, message: str
) -> None:
    text = HEAD + preamble + "\\begin{document}\nx\n"
    with pytest.raises(ManuscriptError) as caught:
        locate(text, "paper.tex")
    assert str(caught.value).startswith("paper.tex: no \\begin{document} that TeX reaches")
    assert message in str(caught.value)


def test_a_folder_whose_only_paper_has_an_open_brace_says_so_in_one_line(
    tmp_path: Path, pith: RunPith
) -> None:
    (tmp_path / "paper.tex").write_text(HEAD + "\\newcommand{\\foo}{\n\\begin{document}\nx\n")
    before = snapshot(tmp_path)
    result = pith("latex", "inject", str(tmp_path), "--pith", NUMBER, "--offline")
    assert_one_line_error(result, 2)
    assert "paper.tex: no \\begin{document} that TeX reaches" in result.stderr
    assert "argument of \\newcommand (line 2)" in result.stderr
    assert snapshot(tmp_path) == before


def test_a_pithnumber_at_the_end_of_an_input_chain_is_seen(tmp_path: Path) -> None:
    paper = tmp_path / "paper.tex"
    paper.write_text(HEAD + "\\input{a}\n" + TAIL)
    (tmp_path / "a.tex").write_text("\\input{b}\n")
    (tmp_path / "b.tex").write_text(f"\\usepackage{{pith}}\n\\pithnumber{{{NUMBER}}}\n")
    before = paper.read_bytes()
    assert not inject(tmp_path, NUMBER_OBJ).changed
    assert paper.read_bytes() == before


def test_an_input_chain_that_loops_is_followed_once(tmp_path: Path) -> None:
    paper = tmp_path / "paper.tex"
    paper.write_text(HEAD + "\\input{a}\n" + TAIL)
    (tmp_path / "a.tex").write_text("\\input{b}\n")
    (tmp_path / "b.tex").write_text("\\input{a}\n")
    assert inject(tmp_path, NUMBER_OBJ).changed


def test_pith_loaded_down_an_input_chain_gets_only_the_number_after_that_input(
    tmp_path: Path,
) -> None:
    paper = tmp_path / "paper.tex"
    paper.write_text(HEAD + "\\input{setup/a}\n\\newcommand{\\z}{z}\n" + TAIL)
    (tmp_path / "setup").mkdir()
    (tmp_path / "setup" / "a.tex").write_text("% c\n\\input{setup/b}\n")
    (tmp_path / "setup" / "b.tex").write_text("\\usepackage[placement=margin]{pith}\n")
    result = inject(tmp_path, NUMBER_OBJ)
    assert paper.read_text() == (
        HEAD + f"\\input{{setup/a}}\n\\pithnumber{{{NUMBER}}}\n\\newcommand{{\\z}}{{z}}\n" + TAIL
    )
    assert any("b.tex loads pith" in note for note in result.notes)


# -- the project's own physics manuscript (tests/fixtures/manuscripts/mnras-physics) ---------


@TEX
def test_physics_preamble_takes_the_badge_and_builds_with_pages_and_warnings_unchanged(
    tmp_path: Path, pith: RunPith
) -> None:
    folder = copy_manuscript("mnras-physics", tmp_path)
    plain = tmp_path / "plain"
    shutil.copytree(folder, plain)
    plain_pdf = latexmk(plain, "paper.tex")
    result = pith("latex", "inject", str(folder), "--pith", NUMBER, "--offline", "--check")
    assert result.returncode == 0, result.stderr
    text = (folder / "paper.tex").read_text()
    lines = text.splitlines()
    assert lines[2:4] == ["\\usepackage{pith}", f"\\pithnumber{{{NUMBER}}}"]
    built = tmp_path / "built"
    shutil.copytree(folder, built)
    pdf = latexmk(built, "paper.tex")
    check_pdf(pdf, NUMBER_OBJ)
    assert NUMBER_OBJ.url() in link_uris(pdf, page=0)
    assert len(PdfReader(pdf).pages) == len(PdfReader(plain_pdf).pages)
    pith_free = {p for p in log_problems((built / "paper.log").read_text()) if "pith" not in p}
    assert pith_free == log_problems((plain / "paper.log").read_text())


@TEX
def test_physics_paper_whose_macro_file_loads_pith_builds_without_an_option_clash(
    tmp_path: Path, pith: RunPith
) -> None:
    folder = copy_manuscript("mnras-physics", tmp_path)
    units = folder / "setup" / "units.tex"
    units.write_text(units.read_text() + "\\usepackage[placement=margin]{pith}\n")
    result = pith("latex", "inject", str(folder), "--pith", NUMBER, "--offline", "--check")
    assert result.returncode == 0, result.stderr
    text = (folder / "paper.tex").read_text()
    assert "\\usepackage{pith}" not in text
    assert f"\\input{{setup/macros}}\n\\pithnumber{{{NUMBER}}}\n" in text
    built = tmp_path / "built"
    shutil.copytree(folder, built)
    check_pdf(latexmk(built, "paper.tex"), NUMBER_OBJ)


@TEX
def test_physics_paper_with_its_badge_packs_for_arxiv_with_the_whole_input_chain(
    tmp_path: Path, pith: RunPith
) -> None:
    folder = copy_manuscript("mnras-physics", tmp_path)
    assert inject(folder, NUMBER_OBJ).changed
    out = tmp_path / "paper.tar.gz"
    result = pith("latex", "arxiv", str(folder), "-o", str(out))
    assert result.returncode == 0, result.stderr
    files = set(result.stdout.split())
    assert {"paper.tex", "setup/macros.tex", "setup/units.tex", "pith.sty"} <= files
    assert "warning" not in result.stderr  # the badge is not hidden, nothing is missing


@pytest.mark.parametrize("construct", sorted(CONSTRUCTS))
def test_the_preamble_rewritten_up_to_a_cut_is_the_whole_rewrite_cut_there(construct: str) -> None:
    """Only the text before a candidate `\\begin{document}` is rewritten (a long body
    cost more than the parse). Cut after any `}` or line end (as after `\\begin{document}`), it
    must equal the whole text's rewrite cut there, with the blanked regions that start before
    the cut, each ending at the cut at the latest."""
    from pithauthor.latex.preamble import _prepare

    text = HEAD + CONSTRUCTS[construct] + TAIL + "\\iffalse{\\fi\n\\begin{verbatim}\\end\n"
    whole, regions = _prepare(text)
    cuts = [i + 1 for i, char in enumerate(text) if char in "}\n"]
    assert len(cuts) > 10
    for cut in cuts:
        part, part_regions = _prepare(text, cut)
        assert part == whole[:cut], cut
        clipped = [(a, min(b, cut), at) for a, b, at in regions if at < cut and a <= cut]
        assert part_regions == clipped, cut


# definitions whose bodies are read by counting braces, not parsed node by node
DEFINITIONS = {
    **CONSTRUCTS,
    "star-optional-and-nested-groups": "\\newcommand*{\\x}[2][d]{#1 {#2} {{x}}}\n",
    "bare-name": "\\newcommand\\y{y}\n\\renewcommand*\\z[1]{#1}\n",
    "blanks-between-arguments": "\\newcommand {\\d} [1]\n  {d}\n",
    "paragraph-before-the-body": "\\newcommand{\\p}\n\n{p}\n",
    "brace-in-a-comment": "\\renewcommand{\\a}{% a } in a comment\n}\n\\usepackage{xcolor}\n",
    "comment-between-arguments": "\\newcommand{\\c}% why\n{c}\n",
    "escaped-braces": "\\providecommand{\\b}{\\{ escaped \\} braces}\n",
    "environment-definition": "\\newenvironment{e}[1][x]{\\begin{center}#1}{\\end{center}}\n",
    "hyperref-inside-a-body": "\\newcommand{\\h}{\\usepackage{hyperref}}\n",
    "conditional-inside-a-body": "\\newcommand{\\e}{\\iffalse}\n\\newcommand{\\f}{\\fi}\n",
    "unclosed-body": "\\newcommand{\\u}{\\textbf{unclosed}\n",
    "unclosed-inside-a-comment": "\\newcommand{\\v}{% }\n",
}


def _facts(text: str) -> object:
    try:
        return locate(text, "paper.tex")
    except ManuscriptError as exc:
        return str(exc)


@pytest.mark.parametrize("name", sorted(DEFINITIONS))
def test_definitions_read_by_counting_braces_give_what_pylatexenc_full_parse_gives(
    name: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The fast reading of `\\newcommand`-like arguments must find the same preamble (every span,
    every safe line, the same refusal) as pylatexenc parsing each body node by node."""
    from pithauthor.latex import preamble

    text = HEAD + DEFINITIONS[name] + "\\usepackage{hyperref}\n" + TAIL
    fast = _facts(text)
    monkeypatch.setattr(preamble, "_DEFINITIONS", {})  # pylatexenc's own `\newcommand`
    preamble._context.cache_clear()
    try:
        full = _facts(text)
    finally:
        preamble._context.cache_clear()  # rebuilt with the fast reading once restored
    assert fast == full


def test_a_definitions_body_is_one_group_of_plain_characters() -> None:
    """Proves the comparison above compares two readings: the fast one leaves bodies unparsed."""
    from pithauthor.latex.preamble import _parse_to_document

    text = HEAD + "\\newcommand*{\\x}[1]{\\textbf{#1} %}\n}\n" + TAIL
    nodes, _ = _parse_to_document(text, "paper.tex")
    definition = next(n for n in nodes if getattr(n, "macroname", "") == "newcommand")
    body = definition.nodeargd.argnlist[-1]
    assert [type(n).__name__ for n in body.nodelist] == ["LatexCharsNode"]
    assert body.nodelist[0].chars == "\\textbf{#1} %}\n"
    assert text[body.pos : body.pos + body.len] == "{\\textbf{#1} %}\n}"
