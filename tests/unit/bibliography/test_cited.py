"""`cited_keys`: what a manuscript cites, from its LaTeX source or its .aux file."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest
from support.cli import RunPith

from pithauthor.bibliography.cited import cited_keys, read_citations
from pithauthor.errors import ManuscriptError

FIXTURES = Path(__file__).parents[2] / "fixtures" / "bib"


def _write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def test_natbib_and_biblatex_commands_with_optional_arguments(tmp_path: Path) -> None:
    tex = _write(
        tmp_path / "main.tex",
        r"""
\documentclass{article}
\begin{document}
As shown \cite{plain} and \citep[see][p.~3]{natA, natB}, \citet*{star}.
\citeauthor{author}\citeyear{year} \Citet{capital} \citealp{alp}
\parencite[12]{paren} \textcite{text} \autocite[cf.][]{auto} \footcite{foot}
\cites[see][1]{multiA}[2]{multiB} \supercite{sup} \cite <e.g.>[p.~5]{apa}
\nocite{noc}
\citestyle{ieee}
\end{document}
""",
    )
    assert cited_keys(tex) == {
        "plain", "natA", "natB", "star", "author", "year", "capital", "alp", "paren", "text",
        "auto", "foot", "multiA", "multiB", "sup", "apa", "noc",
    }  # fmt: skip


def test_comments_and_verbatim_are_not_citations(tmp_path: Path) -> None:
    tex = _write(
        tmp_path / "main.tex",
        "\\cite{real} % \\cite{commented}\n"
        "50\\% of \\cite{afterpercent}\n"
        "a line ending in a backslash pair \\\\% \\cite{alsocommented}\n"
        "\\begin{verbatim}\\cite{verb}\\end{verbatim}\n"
        "\\begin{comment}\n\\cite{commentenv}\n\\end{comment}\n"
        "\\verb|\\cite{inline}| \\verb+\\cite{plus}+\n",
    )
    assert cited_keys(tex) == {"real", "afterpercent"}


def test_every_verbatim_environment_hides_citations_but_alltt_runs_them(tmp_path: Path) -> None:
    from pithauthor.latex.verbatim import COMMANDS_STAY_ACTIVE, VERBATIM_ENVIRONMENTS

    body = "".join(
        f"\\begin{{{env}}}\\cite{{in{i}}}\\end{{{env}}}\n"
        for i, env in enumerate(VERBATIM_ENVIRONMENTS)
    )
    tex = _write(tmp_path / "main.tex", "\\cite{real}\n" + body)
    expected = {"real"} | {
        f"in{i}" for i, env in enumerate(VERBATIM_ENVIRONMENTS) if env in COMMANDS_STAY_ACTIVE
    }
    assert "alltt" in COMMANDS_STAY_ACTIVE
    assert cited_keys(tex) == expected


def test_inputs_and_includes_are_followed_inside_the_folder(tmp_path: Path) -> None:
    _write(tmp_path / "sections" / "intro.tex", "\\cite{fromintro}\\input{sections/deeper}")
    _write(tmp_path / "sections" / "deeper.tex", "\\citep{fromdeeper}\\input{main}")
    _write(tmp_path / "chapter.tex", "\\parencite{fromchapter}")
    _write(tmp_path.parent / "outside.tex", "\\cite{outside}")
    tex = _write(
        tmp_path / "main.tex",
        "\\input{sections/intro}\n\\include{chapter}\n\\input{../outside}\n"
        "\\input{missing}\n\\input sections/intro.tex\n% \\input{commented}\n",
    )
    assert cited_keys(tex) == {"fromintro", "fromdeeper", "fromchapter"}


def test_nocite_star_means_everything(tmp_path: Path) -> None:
    tex = _write(tmp_path / "main.tex", "\\nocite{*}\\cite{a}")
    assert cited_keys(tex) == {"*", "a"}


def test_bibtex_and_biblatex_aux_files(tmp_path: Path) -> None:
    _write(tmp_path / "chap.aux", "\\citation{inchapter}\n")
    aux = _write(
        tmp_path / "main.aux",
        "\\relax\n\\citation{a,b}\n\\citation{c}\n\\abx@aux@cite{0}{d}\n"
        "\\abx@aux@segm{0}{0}{d}\n\\@input{chap.aux}\n\\bibdata{refs}\n",
    )
    assert cited_keys(aux) == {"a", "b", "c", "d", "inchapter"}


def test_missing_manuscript_is_one_clear_error(tmp_path: Path) -> None:
    with pytest.raises(ManuscriptError, match="no such file"):
        cited_keys(tmp_path / "main.tex")


@pytest.mark.tex("pdflatex", "bibtex")
def test_aux_written_by_real_latex_matches_the_source(tmp_path: Path) -> None:
    shutil.copy(FIXTURES / "google-scholar.bib", tmp_path / "refs.bib")
    tex = _write(
        tmp_path / "main.tex",
        "\\documentclass{article}\\usepackage{natbib}\\begin{document}\n"
        "\\citep{he2022rethinking} and \\citet{witten1998anti}, % \\cite{devlin2019bert}\n"
        "\\nocite{schrodinger1926}\n\\bibliographystyle{plainnat}\\bibliography{refs}\n"
        "\\end{document}\n",
    )
    subprocess.run(
        ["pdflatex", "-interaction=nonstopmode", "main.tex"],
        cwd=tmp_path,
        capture_output=True,
        check=True,
        timeout=120,
    )
    expected = {"he2022rethinking", "witten1998anti", "schrodinger1926"}
    assert cited_keys(tmp_path / "main.aux") == expected
    assert cited_keys(tex) == expected


MACROS = r"""\documentclass{article}
\usepackage{natbib}
\usepackage{xparse}
\newcommand{\refref}[1]{\cite{#1}}
\newcommand\seeref[2][see]{\citep[#1]{#2}}
\newcommand*{\twocite}[2]{\citet{#1} and \citet{#2}}
\providecommand{\seep}[2]{\citep[p.~#1]{#2}}
\newcommand{\mycite}[2]{\cite[#1]{#2}}
\newcommand{\knuth}{\cite{fixed}}
\newcommand{\rr}[1]{\refref{#1}}
\def\pair#1#2{\cite{#1,#2}}
\let\kcite\cite
\NewDocumentCommand{\pcite}{s O{} m}{\citep[#2]{#3}}
\begin{document}
\refref{ref1} \seeref{ref2} \seeref[cf.]{ref3, ref4} \twocite{ref5}{ref6}
\seep{12}{ref7} \mycite{p.~3}{ref8} \knuth{} \rr{ref9} \pair{ref10}{ref11}
\kcite{ref12} \pcite*[p.~1]{ref13} \pcite{ref14}
\bibliographystyle{plainnat}
\end{document}
"""
MACRO_KEYS = {f"ref{i}" for i in range(1, 15)} | {"fixed"}


def test_citation_macros_defined_in_the_preamble_are_followed(tmp_path: Path) -> None:
    tex = _write(tmp_path / "main.tex", MACROS)
    found = read_citations(tex)
    assert found.keys == MACRO_KEYS  # "p.~3" is \mycite's page, not a key; no "#1"
    assert found.unfollowed == {}


@pytest.mark.tex("pdflatex")
def test_the_macros_cite_what_real_latex_writes_in_the_aux(tmp_path: Path) -> None:
    tex = _write(tmp_path / "main.tex", MACROS)
    subprocess.run(
        ["pdflatex", "-interaction=nonstopmode", "main.tex"],
        cwd=tmp_path, capture_output=True, check=False, timeout=120,
    )  # fmt: skip
    assert cited_keys(tmp_path / "main.aux") == MACRO_KEYS
    assert cited_keys(tex) == MACRO_KEYS


def test_macros_that_build_keys_are_named_not_guessed(tmp_path: Path) -> None:
    tex = _write(
        tmp_path / "main.tex",
        "\\newcommand{\\secref}[1]{\\cite{sec:#1}}\n"
        "\\def\\delimited#1;{\\cite{#1}}\n"
        "\\NewDocumentCommand{\\odd}{r<>}{\\cite{#1}}\n"
        "\\newcommand{\\refref}[1]{\\cite{#1}}\n"
        "\\secref{intro} \\delimited key; \\odd<k> \\refref{followed} \\cite{plain}\n",
    )
    found = read_citations(tex)
    assert found.keys == {"followed", "plain"}
    assert set(found.unfollowed) == {"secref", "delimited", "odd"}
    assert "builds keys from its arguments" in found.unfollowed["secref"]


def test_macros_defined_in_an_input_file_are_followed_in_another(tmp_path: Path) -> None:
    _write(tmp_path / "macros.tex", "\\newcommand{\\refref}[1]{\\cite{#1}}\n")
    _write(tmp_path / "body.tex", "\\refref{inbody}\n")
    tex = _write(tmp_path / "main.tex", "\\input{macros}\n\\begin{document}\\input{body}\n")
    assert cited_keys(tex) == {"inbody"}


def test_scan_warns_about_the_macros_it_could_not_follow(pith: RunPith, tmp_path: Path) -> None:
    bib = tmp_path / "refs.bib"
    bib.write_text(
        "".join(f"@misc{{{k}, title={{T}}, eprint={{2302.1244{i}}}}}\n"
                for i, k in enumerate(["followed", "sec:intro", "other"])),
        encoding="utf-8",
    )  # fmt: skip
    tex = _write(
        tmp_path / "main.tex",
        "\\newcommand{\\refref}[1]{\\cite{#1}}\\newcommand{\\secref}[1]{\\cite{sec:#1}}\n"
        "\\refref{followed} \\secref{intro}\n",
    )
    result = pith("bib", "scan", str(bib), "--only-cited", str(tex), "--json")
    assert result.returncode == 0, result.stderr
    rows = {row["key"]: row["status"] for row in json.loads(result.stdout)["rows"]}
    assert rows == {"followed": "found", "sec:intro": "skipped", "other": "skipped"}
    (line,) = result.stderr.splitlines()
    assert line.startswith("pith: warning: --only-cited ") and "\\secref: " in line
    assert "give the .aux" in line
