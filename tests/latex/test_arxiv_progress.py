"""`pith latex arxiv` tells what it is doing: each build step with its time on stderr,
a spinner while a step runs when stderr is a terminal (a real pty), plain lines otherwise; and
`--no-badge` packs the v1 upload (no `\\pithnumber` yet), proven like any other upload minus
the badge checks. Real pith processes, real pdflatex and latexmk."""

from __future__ import annotations

import json
import re
import shutil
import sys
import tarfile
import time
from pathlib import Path

import pytest
from support.cli import LAUNCHER, OnTerminal, RunPith, assert_one_line_error
from support.latex.arxiv import NUMBER, article, pages, pdflatex_alone, unpack
from support.latex.pdfcheck import info

from pithauthor.errors import VerificationError
from pithauthor.latex.arxiv import build_arxiv_archive
from pithauthor.latex.injection import Step

REPO = Path(__file__).resolve().parents[2]
TEX = pytest.mark.tex("latexmk", "pdflatex")
STEP_LINE = re.compile(r"^(?P<text>.+) … (?P<seconds>\d+\.\d) s$", re.M)
BUILDING = "building (pdflatex, latexmk)"
PROVING = "proving the upload builds from the tarball (pdflatex alone)"
# rich's "dots" spinner frames, and the control sequences a spinner needs (hide the cursor,
# go back to the start of the line and erase it)
SPINNER_FRAMES = "⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏"
CONTROL = ("\x1b[?25l", "\r\x1b[2K")
V1 = r"""\documentclass{article}
\usepackage{hyperref}
%s
\title{A Small Paper}\author{Ada Author}
\begin{document}
\maketitle
The first version, before arXiv has it.
\end{document}
"""


def _badged(folder: Path) -> Path:
    folder.mkdir(parents=True)
    # no hyperref: one pdfLaTeX run per build instead of two; the steps are the same
    (folder / "paper.tex").write_text(article("Hello.", hyperref=False))
    shutil.copy(REPO / "latex" / "pith.sty", folder / "pith.sty")
    return folder


def _v1(folder: Path, preamble: str = "") -> Path:
    folder.mkdir(parents=True)
    (folder / "paper.tex").write_text(V1 % preamble)
    return folder


def _as_seen(terminal: str) -> str:
    """What stays on the screen: control sequences dropped, and of each line what was written
    after its last carriage return (the spinner's frames are overwritten)."""
    text = re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", terminal).replace("\r\n", "\n")
    return "\n".join(line.rsplit("\r", 1)[-1] for line in text.split("\n"))


def _members(archive: Path) -> list[str]:
    with tarfile.open(archive) as tar:
        return sorted(tar.getnames())


def _steps(stderr: str) -> dict[str, float]:
    return {m["text"]: float(m["seconds"]) for m in STEP_LINE.finditer(stderr)}


@TEX
def test_on_a_terminal_each_step_spins_while_it_runs_then_stays_as_a_line_with_its_time(
    tmp_path: Path, terminal: OnTerminal
) -> None:
    folder = _badged(tmp_path / "paper")
    out = tmp_path / "stdout.txt"
    argv = [
        "sh",
        "-c",
        'exec "$0" "$@" > "$OUT"',  # stdout to a file, as a script would read it
        sys.executable,
        LAUNCHER,
        "latex",
        "arxiv",
        str(folder),
        "-o",
        str(tmp_path / "upload.tar.gz"),
    ]
    env = {"OUT": str(out), "PITH_HOME": str(tmp_path / "home"), "TERM": "xterm-256color"}
    with pytest.MonkeyPatch.context() as patch:
        for name, value in env.items():
            patch.setenv(name, value)
        start = time.monotonic()
        code, shown = terminal(argv, [])
        took = time.monotonic() - start
    assert code == 0, shown
    # the spinner ran on the terminal, for the build and for the proof
    assert all(control in shown for control in CONTROL), repr(shown[:400])
    for step in (BUILDING, PROVING):
        spinning = re.search(
            f"[{SPINNER_FRAMES}]" + r"\S* \S*0:00:\d\d\S* " + re.escape(step[:40]), shown
        )
        assert spinning, (step, repr(shown[:400]))
    # and each finished step stays as one plain line with its time, in order
    lines = _as_seen(shown)
    steps = _steps(lines)
    packed = _members(tmp_path / "upload.tar.gz")
    assert list(steps) == [BUILDING, f"packing {len(packed)} files", PROVING], lines[-800:]
    assert steps[BUILDING] > 0 and steps[PROVING] > 0
    assert sum(steps.values()) <= took  # the times are what the steps took, not made up
    # stdout (what scripts read) is the file list alone: no spinner, no step lines
    assert out.read_text("utf-8").splitlines() == packed
    assert {"paper.tex", "pith.sty", "pith.sty.ltxml"} <= set(packed)


@TEX
def test_in_a_pipe_the_steps_are_plain_lines_without_spinner_or_control_characters(
    tmp_path: Path, pith_process: RunPith
) -> None:
    folder = _badged(tmp_path / "paper")
    start = time.monotonic()
    result = pith_process(
        "latex",
        "arxiv",
        str(folder),
        "-o",
        str(tmp_path / "upload.tar.gz"),
        env={"PITH_HOME": str(tmp_path / "home"), "TERM": "xterm-256color"},
    )
    took = time.monotonic() - start
    assert result.returncode == 0, result.stderr
    assert "\x1b" not in result.stderr and "\r" not in result.stderr
    assert not set(SPINNER_FRAMES) & set(result.stderr)
    steps = _steps(result.stderr)
    packed = _members(tmp_path / "upload.tar.gz")
    assert list(steps) == [BUILDING, f"packing {len(packed)} files", PROVING], result.stderr
    assert steps[BUILDING] > 0 and sum(steps.values()) <= took
    assert result.stdout.splitlines() == packed


@TEX
def test_the_api_tells_each_step_when_it_starts_and_when_it_ends(tmp_path: Path) -> None:
    told: list[Step] = []
    build_arxiv_archive(_badged(tmp_path / "paper"), tmp_path / "a.tar.gz", progress=told.append)
    packing = f"packing {len(_members(tmp_path / 'a.tar.gz'))} files"
    assert [(s.text, s.seconds is None) for s in told] == [
        (BUILDING, True),
        (BUILDING, False),
        (packing, True),
        (packing, False),
        (PROVING, True),
        (PROVING, False),
    ]


@TEX
def test_a_step_that_fails_is_not_told_as_finished_so_the_error_stays_one_line(
    tmp_path: Path,
) -> None:
    # no badge, and no --no-badge; `\pithnumber` named in a comment only, so that the paper is
    # let through to the build (a paper that names it nowhere is refused before any build)
    folder = _v1(tmp_path / "paper", "% \\pithnumber{...} once arXiv has v1")
    told: list[Step] = []
    with pytest.raises(Exception, match="no Pith Number"):
        build_arxiv_archive(folder, tmp_path / "a.tar.gz", progress=told.append)
    assert told == [Step(BUILDING)]
    # the command's error, one line naming both next steps (inject, --no-badge):
    # test_arxiv_upload.py's test_paper_without_a_pith_number_is_refused, on a cheaper paper


@TEX
def test_no_badge_packs_the_v1_upload_proven_to_build_alone_without_pith(
    tmp_path: Path, pith: RunPith
) -> None:
    folder = _v1(tmp_path / "paper")
    archive = tmp_path / "v1.tar.gz"
    result = pith("latex", "arxiv", str(folder), "-o", str(archive), "--no-badge", "--json")
    assert result.returncode == 0, result.stderr
    packed = json.loads(result.stdout)
    assert packed["number"] is None and packed["files"] == ["paper.tex"]
    # no pith.sty, no LaTeXML binding: the paper does not load pith
    members = unpack(archive, tmp_path / "arxiv")
    assert sorted(members) == ["paper.tex"]
    pdf = pdflatex_alone(tmp_path / "arxiv", "paper.tex")
    assert pages(pdf) == packed["pages"] == 1
    assert "/PithNumber" not in info(pdf)
    assert list(_steps(result.stderr)) == [BUILDING, "packing 1 file", PROVING]
    # the human summary of a --no-badge upload: test_no_badge_packs_pith_sty_when_... (one
    # build of the paper less here)


@TEX
def test_no_badge_packs_pith_sty_when_the_v1_paper_loads_it_for_its_author_key(
    tmp_path: Path, pith: RunPith
) -> None:
    key = "ed25519:" + "A" * 26
    folder = _v1(tmp_path / "paper", "\\usepackage{pith}\n\\pithauthorkey{" + key + "}")
    archive = tmp_path / "v1.tar.gz"
    result = pith("latex", "arxiv", str(folder), "-o", str(archive), "--no-badge")
    assert result.returncode == 0, result.stderr
    # what a person reads (the --json run of the v1 upload above gives the figures to scripts)
    proven = "proven: builds alone with pdflatex to 1 page, without a Pith Number (--no-badge)"
    assert proven in result.stderr
    members = unpack(archive, tmp_path / "arxiv")
    # pith.sty with what goes with it (pith.sty.ltxml always, a .def file when it is read)
    assert {"paper.tex", "pith.sty", "pith.sty.ltxml", "pith-authorkeys.def"} <= set(members)
    assert "pith-placement.def" not in members  # no number: nothing to place, not read
    assert "/PithNumber" not in info(pdflatex_alone(tmp_path / "arxiv", "paper.tex"))


@TEX
def test_no_badge_on_a_paper_with_its_number_is_refused_naming_both_ways_out(
    tmp_path: Path, pith: RunPith
) -> None:
    folder = _badged(tmp_path / "paper")
    archive = tmp_path / "upload.tar.gz"
    result = pith("latex", "arxiv", str(folder), "-o", str(archive), "--no-badge")
    assert_one_line_error(result, 2)
    assert f"carries the Pith Number {NUMBER}" in result.stderr
    assert "remove \\pithnumber, or drop --no-badge" in result.stderr
    assert not archive.exists()


@TEX
def test_no_badge_proof_fails_when_the_archive_builds_a_number_the_paper_has_not(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The badge checks are off, the check that no number slips into v1 is not: a fault in the
    packing that writes a /PithNumber into the packed main file is caught by the proof build."""
    from pithauthor.latex import upload as comments

    real = comments.strip_comments

    def add_a_number(text: str) -> comments.Stripped:
        done = real(text)
        # pdfTeX's own Info primitive: a number in the PDF without pith.sty
        info_key = f"\\pdfinfo{{/PithNumber ({NUMBER})}}\n\\begin{{document}}"
        more = done.text.replace("\\begin{document}", info_key, 1)
        return comments.Stripped(more, done.comments, done.whole_lines)

    monkeypatch.setattr("pithauthor.latex.arxiv.strip_comments", add_a_number)
    folder = _v1(tmp_path / "paper")
    output = tmp_path / "v1.tar.gz"
    with pytest.raises(VerificationError, match=f"/PithNumber is '{NUMBER}', expected none"):
        build_arxiv_archive(folder, output, no_badge=True)
    assert not output.exists()


INJECT_CHECK = "checking: building a copy (pdflatex, latexmk)"


@TEX
def test_inject_check_shows_its_build_as_a_step_with_its_time(
    tmp_path: Path, pith: RunPith
) -> None:
    folder = _v1(tmp_path / "paper")
    start = time.monotonic()
    result = pith("latex", "inject", str(folder), "--pith", NUMBER, "--offline", "--check")
    took = time.monotonic() - start
    assert result.returncode == 0, result.stderr
    steps = _steps(result.stderr)
    assert list(steps) == [INJECT_CHECK], result.stderr
    assert 0 < steps[INJECT_CHECK] <= took + 0.05  # the line rounds to 0.1 s (1.6 for 1.58)
    # the step line comes before the lines that say what was written
    lines = result.stderr.splitlines()
    assert lines.index(next(ln for ln in lines if ln.startswith(INJECT_CHECK))) < lines.index(
        f"{folder / 'paper.tex'}: badge added"
    )


@TEX
def test_inject_check_tells_both_builds_of_a_failure_and_finishes_neither(
    tmp_path: Path,
) -> None:
    from pithauthor import PithError, PithNumber
    from pithauthor.latex.injection import inject

    folder = _v1(tmp_path / "paper")
    paper = folder / "paper.tex"
    paper.write_text(paper.read_text().replace("The first version", "\\undefinedmacro"))
    told: list[Step] = []
    with pytest.raises(PithError, match=r"[Uu]ndefined"):
        inject(folder, PithNumber.parse(NUMBER), check=True, progress=told.append)
    # neither finished: the command's error is then its one line (test_inject_manuscripts)
    assert told == [
        Step(INJECT_CHECK),
        Step("building the untouched sources, to tell whose fault it is"),
    ]
