"""Build a manuscript from its sources in a private folder (latexmk, fresh, with -recorder), sort
what the build read, and when a build with the badge fails, say whose fault it is.
"""

from __future__ import annotations

import itertools
import os
import re
import shutil
import signal
import subprocess
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

from pithauthor.errors import BuildError, CompileFailed
from pithauthor.latex.clock import DEFAULT_LIMIT, BuildClock
from pithauthor.latex.sources import copy_sources, link_outside
from pithauthor.latex.sty import STY_NAME

# Build a manuscript from its sources in a private folder (latexmk, fresh, with -recorder) and
# sort what the build read: the paper's own files, TeX Live's, and anything else (refused).
#
# Used by `pith latex inject --check` and `pith latex arxiv` alike, so that both fail the same way.

ENGINE_FLAGS = {
    "pdflatex": ["-pdf"],
    "xelatex": ["-pdfxe"],
    "lualatex": ["-pdflua"],
    "latex": ["-pdfps"],
}

_GRACE = 10.0  # seconds TeX has, once interrupted, to write where it was into its log

# TeX's answer to SIGINT (with -file-line-error), then the line it was reading: `l.5 \x`
_INTERRUPTED = re.compile(r"^(.+?):(\d+): Interruption\.$\n(?:l\.\d+ (.*))?", re.M)

_FILE_LINE_ERROR = re.compile(r"^\S.*?:\d+: ")

_NEEDS_UNICODE_ENGINE = re.compile(r"XeTeX|LuaTeX|XeLaTeX|LuaLaTeX|fontspec|unicode-math", re.I)

_CONTINUED = re.compile(r"^\([A-Za-z0-9@_.-]+\)\s+")  # a package error's next line

_LATEXMK_NOT_FOUND = re.compile(
    r"^Latexmk: I WON'T RUN '([^']+)' because I don't find the following files:\n"
    r"((?:[ \t]+\S.*\n?)+)",
    re.MULTILINE,
)

_LATEXMK_SUMMARY = re.compile(
    r"^Collected error summary.*\n[ \t]+(\S[^:\n]*): .*?(?:See file '([^']+\.blg)')?$", re.M
)

_BLG_ERROR = re.compile(r"^(?:.*---line \d+ of file .*|.*> ERROR - .*|I couldn't open .*)$", re.M)

_LATEXMK_FAILURE = re.compile(r"^Latexmk: (Failure in processing file .*)\n[ \t]+(\S.*)$", re.M)

_FIRST_PASS = re.compile(r"^No file \S+\.$")  # LaTeX's word for an .aux, .bbl or .toc not yet made

_MISSING = re.compile(r"(?:File `([^']+)' not found|I can't find file `([^']+)')")

# the TeX installation's trees; TEXMFHOME and TEXMFLOCAL hold the user's or the site's own
# additions, which arXiv does not have (warned about, not packed)
_TREE_VARS = (
    "TEXMFROOT",
    "TEXMFDIST",
    "TEXMFMAIN",
    "TEXMFSYSVAR",
    "TEXMFSYSCONFIG",
    "TEXMFVAR",
    "TEXMFCONFIG",
)

_PERSONAL_VARS = ("TEXMFHOME", "TEXMFLOCAL")

_SYSTEM_TREES = (
    "/usr/share/texlive",
    "/usr/share/texmf",
    "/usr/share/texmf-dist",
    "/var/lib/texmf",
    "/etc/texmf",
    "/usr/share/fonts",
    "/usr/local/share/fonts",
    "/usr/share/ghostscript",
)


class _Stopped(Exception):
    """A program was stopped at its time limit (its output so far attached)."""

    def __init__(self, completed: subprocess.CompletedProcess[str]) -> None:
        super().__init__(completed.args[0])
        self.completed = completed


@dataclass(frozen=True, slots=True)
class BuildResult:
    """A successful build: the PDF, and the files it read, sorted by where they lie."""

    pdf: Path
    project: Path
    log: Path
    inputs: list[Path]  # relative to `project`: the paper's own files (to pack)
    outside: list[Path]  # absolute: neither the paper's nor TeX Live's (refused)
    personal: list[Path]  # absolute: from TEXMFHOME / TEXMFLOCAL (arXiv lacks them)
    subfolder_outputs: list[Path]  # relative: written in a subfolder (\include{sub/x})


@dataclass(frozen=True, slots=True)
class SourceBuild:
    """A build of the sources in a private copy, and where each copied file came from."""

    result: BuildResult
    origins: dict[str, Path]
    warnings: list[str] = field(default_factory=list)


@contextmanager
def build_sources(
    main: Path,
    engine: str,
    overrides: dict[str, bytes] | None = None,
    clock: BuildClock | None = None,
) -> Iterator[SourceBuild]:
    """Copy the sources of `main`'s folder (with `overrides`: name -> bytes) to a private
    folder and build there, within `clock`'s limit; refuse files read from outside the
    folder."""
    folder = main.parent.resolve()
    with tempfile.TemporaryDirectory(prefix="pith-build-") as tmp:
        # a private copy: the author's folder gets no aux files, and the build sees the folder's
        # sources without the products of earlier runs (`copy_sources`), as a fresh upload would
        project = Path(tmp) / "paper"
        project.mkdir()
        origins = copy_sources(folder, project, main)
        for name, data in (overrides or {}).items():
            (project / name).write_bytes(data)
            origins.pop(name, None)
        result = compile_project(project, project / main.name, engine, clock)
        _refuse_outside(result, origins, folder)
        warnings = [
            f"{path} is read from your own TeX tree, which arXiv does not have; "
            "copy it into the paper's folder"
            for path in result.personal
        ]
        yield SourceBuild(result=result, origins=origins, warnings=warnings)


def _refuse_outside(result: BuildResult, origins: dict[str, Path], folder: Path) -> None:
    if result.outside:
        raise BuildError(
            f"the paper reads {result.outside[0]}, outside its folder: arXiv will not have it; "
            "copy the file into the folder and name it by a relative path"
        )
    for relative in result.inputs:
        origin = origins.get(relative.as_posix())
        outside = link_outside(relative.as_posix(), origin, folder) if origin is not None else None
        if outside is not None:
            raise BuildError(outside)


def compile_project(
    project: Path, main: Path, engine: str, clock: BuildClock | None = None
) -> BuildResult:
    """Run latexmk on `main` (inside `project`) within `clock`'s limit; raise BuildError with
    the first error line (CompileFailed when the engine failed on the manuscript)."""
    if shutil.which("latexmk") is None:
        raise BuildError("latexmk is not installed; it is needed to compile the manuscript")
    command = [
        "latexmk",
        *ENGINE_FLAGS[engine],
        "-interaction=nonstopmode",
        "-halt-on-error",
        "-file-line-error",
        "-recorder",
        "-norc",  # not the user's ~/.latexmkrc: the build must be the one arXiv will see
        str(main.relative_to(project)),
    ]
    # the outputs are named after the whole stem: `paper.lncs.tex` makes `paper.lncs.pdf`, where
    # Path.with_suffix would make `paper.pdf` (and a build that succeeded would look failed)
    stem = main.with_name(main.stem)
    pdf = _output(stem, ".pdf")
    limit = clock.limit() if clock else DEFAULT_LIMIT
    with clock.timed() if clock else _untimed():
        try:
            completed = _run(command, project, limit)
        except _Stopped as stopped:
            raise BuildError(_stopped(_output(stem, ".log"), stopped, limit, clock)) from None
        if completed.returncode != 0 or not pdf.is_file():
            raise _failure(stem, completed, engine)
    return read_recorder(_output(stem, ".fls"), project, pdf)


def _output(stem: Path, suffix: str) -> Path:
    """The file TeX writes for the job `stem` (a path without the `.tex`, dots kept)."""
    return stem.with_name(stem.name + suffix)


@contextmanager
def _untimed() -> Iterator[None]:
    yield


def _stopped(log: Path, stopped: _Stopped, limit: float, clock: BuildClock | None) -> str:
    """One line for a build stopped at its limit, naming the file and line TeX was at."""
    why = clock.why() if clock else "the default limit"
    text = log.read_text("utf-8", errors="replace") if log.is_file() else ""
    found = _INTERRUPTED.search(text)
    head = f"the build did not finish within {limit:g} s ({why}) and was stopped"
    if found is None:
        return f"{head} while {stopped.completed.args[0]} ran; TeX did not say where it was"
    name = found.group(1).removeprefix("./")
    context = (found.group(3) or "").strip()
    at = f"; TeX was at {name} line {found.group(2)}"
    return head + at + (f": {context}" if context else "") + " (a macro that never ends?)"


def _run(command: list[str], cwd: Path, limit: float) -> subprocess.CompletedProcess[str]:
    """Run `command` in its own process group; at `limit` seconds, interrupt the whole group
    (TeX then writes where it was into its log), and kill what is left. Killing latexmk alone
    would leave its pdflatex running, holding a core, with nobody waiting for it."""
    # max_print_line: TeX writes each log line whole (not wrapped at 79), so errors read whole.
    # openout_any=p (no file written outside the build folder, no dot files) and shell_escape=f
    # (no \write18): a manuscript is code, perhaps a co-author's or a template's.
    env = {**os.environ, "openout_any": "p", "shell_escape": "f", "max_print_line": "10000"}
    try:
        process = subprocess.Popen(
            command,
            cwd=cwd,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            errors="replace",
            env=env,
            stdin=subprocess.DEVNULL,  # TeX asking for a file name gets EOF, not a wait forever
            start_new_session=True,
            # a pith run in a script's background (`… &`) or by CI inherits SIGINT ignored, and
            # TeX would too: the interrupt at the limit could not make it say where it was. Only
            # then is the default restored in the child (preexec_fn: the one way to un-ignore)
            preexec_fn=_default_sigint if _sigint_ignored() else None,
        )
    except OSError as exc:
        raise BuildError(f"{command[0]} cannot be run ({exc.strerror})") from None
    try:
        out, err = process.communicate(timeout=limit)
    except subprocess.TimeoutExpired:
        _signal_group(process, signal.SIGINT)
        try:
            out, err = process.communicate(timeout=_GRACE)
        except subprocess.TimeoutExpired:
            _signal_group(process, signal.SIGKILL)
            out, err = process.communicate()
        _signal_group(process, signal.SIGKILL)  # whatever of the group is still there
        raise _Stopped(subprocess.CompletedProcess(command, process.returncode, out, err)) from None
    except BaseException:  # Ctrl-C in pith itself: the build goes with it
        _signal_group(process, signal.SIGKILL)
        process.wait()
        raise
    return subprocess.CompletedProcess(command, process.returncode, out, err)


def _sigint_ignored() -> bool:
    return signal.getsignal(signal.SIGINT) is signal.SIG_IGN


def _default_sigint() -> None:
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def _signal_group(process: subprocess.Popen[str], sig: int) -> None:
    with suppress(ProcessLookupError, PermissionError):  # the group is gone already
        os.killpg(process.pid, sig)


def _failure(stem: Path, completed: subprocess.CompletedProcess[str], engine: str) -> BuildError:
    """The error of a failed build, in one line: a file read from outside the folder or the
    engine the paper needs are named as such (whose fault that is is plain); any other error
    is a CompileFailed, which the callers look into further."""
    line = first_error(_output(stem, ".log"), completed)
    missing = _MISSING.search(line)
    if missing:
        name = missing.group(1) or missing.group(2)
        if name.startswith(("/", "~")) or ".." in Path(name).parts:
            return BuildError(
                f"the paper reads {name}, outside its folder: arXiv will not have it; "
                "copy the file into the folder and name it by a relative path"
            )
    if engine in ("pdflatex", "latex") and _NEEDS_UNICODE_ENGINE.search(line):
        return BuildError(
            f"the paper needs XeLaTeX or LuaLaTeX ({line}); arXiv compiles with pdfLaTeX only"
        )
    return CompileFailed(f"the manuscript does not compile: {line}", line)


def first_error(log: Path, completed: subprocess.CompletedProcess[str]) -> str:
    """The first error line of a TeX log (or the last line the program printed)."""
    lines: list[str] = []
    if log.is_file():
        lines = log.read_text("utf-8", errors="replace").splitlines()
    for at, line in enumerate(lines):
        if line.startswith("!") or _FILE_LINE_ERROR.match(line):
            more = itertools.takewhile(_CONTINUED.match, lines[at + 1 :])  # \MessageBreak lines
            return " ".join([line.strip(), *(_CONTINUED.sub("", m).strip() for m in more)])
    said = f"{completed.stdout}\n{completed.stderr}"
    missing = _LATEXMK_NOT_FOUND.search(said)
    if missing:
        names = ", ".join(missing.group(2).split())
        rule = missing.group(1)
        return f"{names} not found, so '{rule}' cannot run, and the folder has no {log.stem}.bbl"
    summary = _LATEXMK_SUMMARY.search(said)
    if summary:
        return _bibliography_error(log.parent, summary.group(1), summary.group(2))
    failure = _LATEXMK_FAILURE.search(said)
    if failure:
        return f"{failure.group(1)} {failure.group(2)}"
    # a first pass's "No file paper.bbl." (or .aux, .toc) is what a fresh build says, never why
    # it failed: it is passed over for the line before it
    tail = [
        line
        for line in completed.stdout.splitlines() + completed.stderr.splitlines()
        if line.strip() and not _FIRST_PASS.match(line.strip())
    ]
    return tail[-1].strip() if tail else f"{completed.args[0]} exited with {completed.returncode}"


def _bibliography_error(folder: Path, rule: str, blg_name: str | None) -> str:
    """The first error of a failed BibTeX or Biber run, from its .blg."""
    blg = folder / blg_name if blg_name else None
    text = blg.read_text("utf-8", errors="replace") if blg and blg.is_file() else ""
    error = _BLG_ERROR.search(text)
    if error is None:
        return f"'{rule}' failed" + (f" (see {blg_name})" if blg_name else "")
    line = re.sub(r"^\[\d+\] \S+> ERROR - ", "", error.group(0).strip())
    return f"'{rule}' failed: {line}"


def _kpse_paths(names: tuple[str, ...]) -> list[Path]:
    """The folders named by kpathsea variables (one kpsewhich call each: it answers only
    the last -var-value it is given)."""
    kpsewhich = shutil.which("kpsewhich")
    if kpsewhich is None:
        return []
    paths = []
    for name in names:
        try:
            out = subprocess.run(
                [kpsewhich, f"-var-value={name}"], capture_output=True, text=True, timeout=30
            ).stdout
        except (OSError, subprocess.TimeoutExpired):
            continue
        for part in re.split(r"[,:;{}]", out.strip()):
            part = part.strip().lstrip("!")
            if part.startswith(("/", "~")):
                paths.append(Path(part).expanduser().resolve())
    return paths


@lru_cache(maxsize=1)
def _tex_trees() -> tuple[tuple[Path, ...], tuple[Path, ...]]:
    """(TeX Live's own trees, the user's and the site's own trees). SELFAUTOPARENT is not
    used: on Debian it is `/`, which would make every file look like TeX Live's."""
    personal = tuple(_kpse_paths(_PERSONAL_VARS))
    system = [Path(p) for p in _SYSTEM_TREES] + _kpse_paths(_TREE_VARS)
    system = [p for p in system if p != Path("/") and p not in personal]
    return tuple(system), personal


def read_recorder(fls: Path, project: Path, pdf: Path) -> BuildResult:
    """Sort the files the build read (INPUT lines of the .fls) that it did not write itself."""
    if not fls.is_file():
        raise BuildError(f"latexmk wrote no recorder file {fls.name}")
    project = project.resolve()
    cwd = project
    read: dict[Path, None] = {}
    written: dict[Path, None] = {}
    for line in fls.read_text("utf-8", errors="replace").splitlines():
        kind, _, name = line.partition(" ")
        if kind == "PWD":
            cwd = Path(name)
            continue
        if kind not in ("INPUT", "OUTPUT"):
            continue
        path = Path(os.path.normpath(cwd / name))
        (written if kind == "OUTPUT" else read)[path] = None
    inside: set[Path] = set()
    outside: set[Path] = set()
    personal_reads: set[Path] = set()
    system, personal = _tex_trees()
    for path in read:
        if path in written or not path.exists() or path.is_dir():
            continue
        if path.is_relative_to(project) and not path.is_symlink():
            inside.add(path.relative_to(project))
            continue
        real = path.resolve()
        if any(real.is_relative_to(root) for root in personal):
            personal_reads.add(real)
        elif not any(real.is_relative_to(root) or path.is_relative_to(root) for root in system):
            outside.add(path)
    subfolder = {
        p.relative_to(project) for p in written if p.is_relative_to(project) and p.parent != project
    }
    return BuildResult(
        pdf=pdf,
        project=project,
        log=_output(fls.with_name(fls.stem), ".log"),
        inputs=sorted(inside),
        outside=sorted(outside),
        personal=sorted(personal_reads),
        subfolder_outputs=sorted(subfolder),
    )


_RERUN = re.compile(
    r"Rerun to get|Please rerun|Label\(s\) may have changed|rerun LaTeX|Rerun LaTeX", re.I
)

_RERUN_BIBER = re.compile(r"Please \(re\)run (Biber|BibTeX)")

_MAX_RUNS = 5  # labels that never settle (a page reference moving a page) must stop somewhere


def build_like_arxiv(
    folder: Path, main_name: str, engine: str, clock: BuildClock | None = None
) -> Path:
    """Build `main_name` in `folder` the way arXiv does: the engine alone, run until the labels
    settle (no BibTeX, no Biber: the packed .bbl must do); then dvips and ps2pdf for `latex`.
    All of it within `clock`'s limit. Returns the PDF; raises BuildError with the first error."""
    program = "latex" if engine == "latex" else engine
    stem = Path(main_name).with_suffix("").as_posix()
    log = folder / f"{stem}.log"
    flags = ["-interaction=nonstopmode", "-halt-on-error", "-file-line-error", "-no-shell-escape"]
    limit = clock.limit() if clock else DEFAULT_LIMIT
    deadline = time.monotonic() + limit

    def run(command: list[str]) -> subprocess.CompletedProcess[str]:
        try:
            return _run(command, folder, max(deadline - time.monotonic(), 1.0))
        except _Stopped as stopped:
            message = _stopped(log, stopped, limit, clock)
            raise BuildError(f"the archive's build: {message}") from None

    for _ in range(_MAX_RUNS):
        completed = run([program, *flags, main_name])
        if completed.returncode != 0:
            raise BuildError(f"the archive does not compile: {first_error(log, completed)}")
        text = log.read_text("utf-8", errors="replace") if log.is_file() else ""
        if not _RERUN.search(text):
            break
    biber = _RERUN_BIBER.search(text)
    if biber:
        raise BuildError(
            f"the archive's .bbl is not accepted: the log asks to run {biber.group(1)}, "
            "which arXiv does not run"
        )
    if engine == "latex":
        dvips = ["dvips", "-q", f"{stem}.dvi", "-o", f"{stem}.ps"]
        for command in (dvips, ["ps2pdf", f"{stem}.ps"]):
            completed = run(command)
            if completed.returncode != 0:
                error = first_error(log, completed)
                raise BuildError(f"{command[0]} failed on the archive: {error}")
    pdf = folder / f"{stem}.pdf"
    if not pdf.is_file():
        raise BuildError(f"the archive's build wrote no {pdf.name}")
    return pdf


# Whose fault a failed build is: when the paper with its badge does not compile, the same
# sources are built without the badge (with a `pith.sty` that defines pith's commands and does
# nothing), and the author is told which of the two it is.

# pith.sty's public commands (docs/latex.md, "Usage"), each doing nothing: the paper builds as
# if pith had never been added, and a \pithbadge or \pithsetup of the author's stays harmless
NULL_STY = rb"""\ProvidesPackage{pith}[2000/01/01 doing nothing: the paper without its badge]
\DeclareOption*{}
\ProcessOptions\relax
\providecommand\pithnumber[1]{}
\providecommand\pithsetup[1]{}
\providecommand\pithbadge{}
\providecommand\pithbadgename{Pith Number}
\providecommand\pithauthorkey[1]{}
\providecommand\pithauthorkeys{}
\endinput
"""


def whose_fault(
    failed: CompileFailed,
    main: Path,
    engine: str,
    without_badge: dict[str, bytes],
    clock: BuildClock | None,
) -> BuildError:
    """The error to raise for `failed` (the build with the badge), once the sources of `main`
    are built with `without_badge` (name -> bytes; pith.sty becomes the one doing nothing)."""
    overrides = {**without_badge, STY_NAME: NULL_STY}
    try:
        with build_sources(main, engine, overrides, clock):
            pass
    except CompileFailed as plain:
        cause = arxiv_difference(main.parent, plain.reason)
        if cause is not None:
            return BuildError(f"the paper does not compile as arXiv builds it: {cause}")
        rc = latexmkrc(main.parent)
        hint = (
            f" (built as arXiv builds it, with latexmk -norc: your {rc.name} is not read)"
            if rc is not None
            else ""
        )
        return BuildError(
            f"the paper does not compile without the badge either: {plain.reason}{hint}"
        )
    except BuildError as plain:
        return BuildError(f"the paper does not build without the badge either: {plain}")
    return BuildError(
        f"adding the badge breaks the build: {failed.reason} (the paper compiles without it: "
        "this is a bug in pith.sty; please report it with this message and the preamble)"
    )


# Where pith's build differs from the author's: only where arXiv's does. latexmk runs with -norc
# (no latexmkrc: arXiv reads none) and TeX without shell escape (arXiv allows none). When a build
# fails for one of these, the message names the setting rather than blaming the paper's TeX.

LATEXMKRC_NAMES = ("latexmkrc", ".latexmkrc")

_SHELL_ESCAPE = re.compile(
    r"shell.?escape|write18|\\ShellEscape|runsystem|enable-write18|restricted shell", re.I
)


def arxiv_difference(folder: Path, reason: str) -> str | None:
    """Why the author's own build may succeed where pith's (and arXiv's) failed with `reason`:
    a file TeX did not find that lies in a subfolder (a latexmkrc adding it to TEXINPUTS), or a
    package asking for shell escape; None when neither is the cause."""
    rc = latexmkrc(folder)
    missing = _MISSING.search(reason)
    if missing:
        name = missing.group(1) or missing.group(2)
        found = _find_below(folder, name)
        if found is not None:
            where = found.relative_to(folder).as_posix()
            via = (
                f"your {rc.name} adds its folder to TEXINPUTS, but pith builds with latexmk "
                "-norc, as arXiv reads no latexmkrc"
                if rc is not None
                else "TeX searches only the main file's folder"
            )
            return (
                f"{name} not found: it is {where}, and {via}; move {Path(name).name} "
                "beside the main file"
            )
    if _SHELL_ESCAPE.search(reason):
        return (
            f"{reason} (pith builds without shell escape, as arXiv does: run the step that needs "
            "it yourself and include what it makes, such as the figures' PDFs)"
        )
    return None


def latexmkrc(folder: Path) -> Path | None:
    """The paper's own latexmkrc (which pith's build, like arXiv's, does not read), if any."""
    return next((folder / n for n in LATEXMKRC_NAMES if (folder / n).is_file()), None)


def _find_below(folder: Path, name: str) -> Path | None:
    """The first file called `name` (with TeX's default `.tex` too) in a subfolder of `folder`."""
    base = Path(name).name
    candidates = (base, base + ".tex") if not Path(base).suffix else (base,)
    for candidate in candidates:
        for found in sorted(folder.rglob(candidate)):
            if found.parent != folder and found.is_file():
                return found
    return None
