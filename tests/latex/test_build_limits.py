"""Builds that fail or never end: a manuscript that never ends is stopped at a
limit chosen from the paper's own builds (or `--timeout`), with the file and line TeX was at,
and nothing of it left running; a build that fails says whose fault it is, the paper's or the
badge's, by building the untouched sources too."""

from __future__ import annotations

import os
import stat
import tempfile
import time
from pathlib import Path

import pytest
from support.cli import RunPith, assert_one_line_error
from support.latex.inject import NUMBER, snapshot

import pithauthor.latex.sty
from pithauthor.latex.clock import DEFAULT_LIMIT, MIN_LIMIT, BuildClock
from pithauthor.latex.sty import pith_sty_path

TEX = pytest.mark.tex("latexmk", "pdflatex")
LOOP = "Some text.\n\n\\def\\x{\\x}\\x\n"
PAPER = "\\documentclass{article}\n%s\\begin{document}\nHello.\n\n%s\\end{document}\n"
BADGE = f"\\usepackage{{pith}}\n\\pithnumber{{{NUMBER}}}\n"


def paper(folder: Path, preamble: str = "", body: str = "") -> Path:
    folder.mkdir(exist_ok=True)
    main = folder / "main.tex"
    main.write_text(PAPER % (preamble, body))
    return main


def processes_inside(folder: Path) -> list[int]:
    """The processes whose working folder lies under `folder` (a build left running)."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            cwd = Path(os.readlink(entry / "cwd"))
        except OSError:
            continue
        if cwd.is_relative_to(folder):
            found.append(int(entry.name))
    return found


@pytest.fixture
def builds_here(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The private build folders go under this test's folder, so that what runs there is seen."""
    folder = tmp_path / "builds"
    folder.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(folder))
    return folder


# -- a manuscript that never ends ------------------------------------------------------------

# The --timeout of these tests: long enough that a loaded machine (CI's, two workers beside
# other TeX builds) gets latexmk and pdflatex started and into the loop, so TeX has a line to
# name; at 3 s a loaded run was stopped before TeX read a line ("TeX did not say where it was")
LOOP_LIMIT = "8"
# Each of these tests holds a worker for the whole limit while TeX spins in the loop: about 8 s
# of wall time and, on an idle machine, as much CPU. `make test` keeps the first (the limit, the
# file and line named through an \input, nothing left running, nothing written); the other two
# go through the same limit (pithauthor/latex/build.py) from `pith latex arxiv`, and run in
# `make test-all` and CI, where the SIGINT-ignored case came from.
LOOP_SLOW = pytest.mark.slow


@TEX
def test_inject_check_stops_a_never_ending_manuscript_naming_the_input_file_and_line(
    tmp_path: Path, pith: RunPith, builds_here: Path
) -> None:
    folder = tmp_path / "paper"
    paper(folder, body="\\input{sec}\n")
    (folder / "sec.tex").write_text(LOOP)
    before = snapshot(folder)
    start = time.monotonic()
    result = pith(
        "latex",
        "inject",
        str(folder),
        "--pith",
        NUMBER,
        "--offline",
        "--check",
        "--timeout",
        LOOP_LIMIT,
    )
    took = time.monotonic() - start
    assert_one_line_error(result, 1)
    assert (
        f"did not finish within {LOOP_LIMIT} s (the --timeout given) and was stopped"
        in result.stderr
    )
    assert "TeX was at sec.tex line 3: \\def\\x{\\x}\\x" in result.stderr
    assert took < int(LOOP_LIMIT) + 10 + 5  # the limit, TeX's grace to say where it was, start-up
    assert processes_inside(builds_here) == []  # neither latexmk nor its pdflatex left running
    assert snapshot(folder) == before


@TEX
@LOOP_SLOW
def test_arxiv_stops_a_never_ending_manuscript_once_with_its_line(
    tmp_path: Path, pith: RunPith, builds_here: Path
) -> None:
    folder = tmp_path / "paper"
    paper(folder, preamble=BADGE, body=LOOP)
    (folder / "pith.sty").write_bytes(pith_sty_path().read_bytes())
    out = tmp_path / "paper.tar.gz"
    start = time.monotonic()
    result = pith("latex", "arxiv", str(folder), "-o", str(out), "--timeout", LOOP_LIMIT)
    took = time.monotonic() - start
    assert_one_line_error(result, 1)
    assert "TeX was at main.tex line 9: \\def\\x{\\x}\\x" in result.stderr
    assert took < int(LOOP_LIMIT) + 10 + 5  # stopped once: no second build of what never ends
    assert processes_inside(builds_here) == []
    assert not out.exists()


@pytest.mark.parametrize("value", ["0", "-5", "nan", "inf", "100000"])
def test_a_timeout_that_is_not_a_positive_number_of_seconds_is_refused(
    value: str, tmp_path: Path, pith: RunPith
) -> None:
    paper(tmp_path / "paper")
    for command in (
        ["inject", "--pith", NUMBER, "--offline", "--check"],
        ["arxiv", "-o", "x.tar.gz"],
    ):
        result = pith(
            "latex", command[0], str(tmp_path / "paper"), *command[1:], "--timeout", value
        )
        assert_one_line_error(result, 2)
        assert "--timeout must be a number of seconds" in result.stderr


def test_inject_timeout_without_check_is_refused_before_anything_is_written(
    tmp_path: Path, pith: RunPith
) -> None:
    paper(tmp_path / "paper")
    before = snapshot(tmp_path / "paper")
    result = pith(
        "latex", "inject", str(tmp_path / "paper"), "--pith", NUMBER, "--offline", "--timeout", "5"
    )
    assert_one_line_error(result, 2)
    assert "--timeout bounds the --check build; give --check too" in result.stderr
    assert snapshot(tmp_path / "paper") == before


def test_a_paper_never_built_gets_the_first_build_limit(tmp_path: Path) -> None:
    clock = BuildClock(paper(tmp_path / "p"), None)
    assert clock.limit() == DEFAULT_LIMIT


def test_the_limit_follows_the_papers_last_build_and_is_remembered_per_paper(
    tmp_path: Path,
) -> None:
    main, other = paper(tmp_path / "p"), paper(tmp_path / "q")
    clock = BuildClock(main, None)
    with clock.timed():
        time.sleep(0.05)
    assert clock.first is not None and clock.first >= 0.05
    assert clock.limit() == MIN_LIMIT  # a fast build: the floor
    clock.first = 100.0  # as if the first build had taken 100 s
    assert clock.limit() == 500.0
    # the next command knows the paper from its recorded build; another paper does not
    assert BuildClock(main, None).limit() == MIN_LIMIT
    assert BuildClock(other, None).limit() == DEFAULT_LIMIT
    assert BuildClock(main, 7).limit() == 7  # --timeout wins
    record = Path(os.environ["PITH_HOME"]) / "cache" / "build-times.json"
    assert stat.S_IMODE(record.stat().st_mode) == 0o600
    assert str(tmp_path) not in record.read_text()  # paths are hashed, not written


def test_a_failed_build_is_not_remembered(tmp_path: Path) -> None:
    main = paper(tmp_path / "p")
    clock = BuildClock(main, None)
    with pytest.raises(RuntimeError), clock.timed():
        raise RuntimeError("the build failed")
    assert clock.first is None
    assert BuildClock(main, None).limit() == DEFAULT_LIMIT


def test_a_damaged_record_of_build_times_is_ignored(tmp_path: Path) -> None:
    main = paper(tmp_path / "p")
    with BuildClock(main, None).timed():
        pass
    record = Path(os.environ["PITH_HOME"]) / "cache" / "build-times.json"
    for damage in (b"\x00garbage", b"[1, 2]", b'{"x": "y"}'):
        record.write_bytes(damage)
        assert BuildClock(main, None).limit() == DEFAULT_LIMIT


# -- whose fault a failed build is -------------------------------------------------------------


@TEX
def test_inject_check_on_a_paper_broken_on_its_own_says_it_fails_without_the_badge_too(
    tmp_path: Path, pith: RunPith
) -> None:
    folder = tmp_path / "paper"
    paper(folder, body="\\undefinedthing\n")
    before = snapshot(folder)
    result = pith("latex", "inject", str(folder), "--pith", NUMBER, "--offline", "--check")
    assert_one_line_error(result, 1)
    assert "the paper does not compile without the badge either: " in result.stderr
    assert "main.tex:5: Undefined control sequence" in result.stderr
    assert snapshot(folder) == before


@TEX
def test_inject_check_with_a_pith_sty_that_breaks_the_build_says_the_badge_is_the_cause(
    tmp_path: Path, pith: RunPith, monkeypatch: pytest.MonkeyPatch
) -> None:
    broken = tmp_path / "broken" / "pith.sty"  # a fault put in on purpose: pith.sty's first line
    broken.parent.mkdir()
    broken.write_bytes(b"\\pithbrokenonpurpose\n" + pith_sty_path().read_bytes())
    monkeypatch.setattr(pithauthor.latex.sty, "pith_sty_path", lambda: broken)
    folder = tmp_path / "paper"
    paper(folder)
    before = snapshot(folder)
    result = pith("latex", "inject", str(folder), "--pith", NUMBER, "--offline", "--check")
    assert_one_line_error(result, 1)
    assert "adding the badge breaks the build: ./pith.sty:1: Undefined control" in result.stderr
    assert "this is a bug in pith.sty" in result.stderr
    assert snapshot(folder) == before


@TEX
def test_arxiv_of_a_paper_whose_own_pith_sty_is_broken_blames_the_badge(
    tmp_path: Path, pith: RunPith
) -> None:
    folder = tmp_path / "paper"
    paper(folder, preamble=BADGE)
    (folder / "pith.sty").write_bytes(b"\\pithbrokenonpurpose\n" + pith_sty_path().read_bytes())
    result = pith("latex", "arxiv", str(folder), "-o", str(tmp_path / "a.tar.gz"))
    assert_one_line_error(result, 1)
    assert "adding the badge breaks the build: ./pith.sty:1: Undefined control" in result.stderr


@TEX
def test_arxiv_of_a_badged_paper_broken_on_its_own_says_so(tmp_path: Path, pith: RunPith) -> None:
    folder = tmp_path / "paper"
    paper(
        folder,
        preamble=BADGE + "\\pithsetup{style=compact}\n",
        body="\\pithbadge\n\\undefinedthing\n",
    )
    result = pith("latex", "arxiv", str(folder), "-o", str(tmp_path / "a.tar.gz"))
    assert_one_line_error(result, 1)
    assert "the paper does not compile without the badge either: " in result.stderr
    assert "main.tex:9: Undefined control sequence" in result.stderr


@TEX
@LOOP_SLOW
def test_a_pith_started_with_sigint_ignored_still_names_the_line_tex_was_at(
    tmp_path: Path, pith: RunPith, builds_here: Path
) -> None:
    """A script's background job (`pith latex arxiv … &`) or a CI runner starts pith with SIGINT
    ignored; TeX must still hear the interrupt at the limit."""
    import signal

    folder = tmp_path / "paper"
    paper(folder, preamble=BADGE, body=LOOP)
    (folder / "pith.sty").write_bytes(pith_sty_path().read_bytes())
    previous = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        result = pith("latex", "arxiv", str(folder), "-o", str(tmp_path / "a.tar.gz"),
                      "--timeout", LOOP_LIMIT)  # fmt: skip
    finally:
        signal.signal(signal.SIGINT, previous)
    assert_one_line_error(result, 1)
    assert "TeX was at main.tex line 9: \\def\\x{\\x}\\x" in result.stderr
    assert processes_inside(builds_here) == []
