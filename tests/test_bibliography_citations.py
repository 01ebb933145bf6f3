"""`cited_keys`: what a manuscript cites, from its LaTeX source or its .aux file."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from pithauthor.bibliography import cited_keys
from pithauthor.errors import ManuscriptError

FIXTURES = Path(__file__).parent / "fixtures" / "bib"


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
    from pithauthor._core.tex_verbatim import COMMANDS_STAY_ACTIVE, VERBATIM_ENVIRONMENTS

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
