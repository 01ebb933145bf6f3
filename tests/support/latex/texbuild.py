"""Compile a LaTeX source for real, in a temporary folder, the way arXiv would: no shell
escape, nonstop, halting on the first error. pith.sty is copied beside the source.

`shared_build` builds a (source, engine, runs) once per test session, across pytest-xdist
workers, and hands the same Build to every test that asks for it; `shared_folder` does the same
for any folder of builds. Tests read a shared build and never write into its folder."""

from __future__ import annotations

import atexit
import hashlib
import os
import shutil
import subprocess
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache, lru_cache
from pathlib import Path

from filelock import FileLock

REPO = Path(__file__).resolve().parents[3]
STY = REPO / "latex" / "pith.sty"
TEMPLATES = REPO / "templates"
NUMBER = "pith:2023:NFG5PAOXQUVIWDX5F7YSYYL7EW"  # the real record of arXiv:2302.12445
BODY = NUMBER.split(":")[2]
SHORT = "pith:" + BODY[:8]
URL = "https://pith.science/pith/" + BODY

# engine name -> TeX program; "dvips" means latex, then dvips, then ps2pdf, and "dvipdfmx"
# latex then dvipdfmx (the document passes the dvipdfmx class option itself)
ENGINES = {
    "pdflatex": "pdflatex",
    "xelatex": "xelatex",
    "lualatex": "lualatex",
    "dvips": "latex",
    "dvipdfmx": "latex",
}
AFTER_DVI = {
    "dvips": [["dvips", "-q", "paper.dvi", "-o", "paper.ps"], ["ps2pdf", "paper.ps"]],
    "dvipdfmx": [["dvipdfmx", "-q", "paper.dvi"]],
}
TEX_FLAGS = ["-interaction=nonstopmode", "-halt-on-error", "-no-shell-escape"]


@dataclass
class Build:
    """What a build left: whether it worked, the PDF, and the log of the last TeX run."""

    ok: bool
    pdf: Path
    log: str
    output: str


def build(
    source: str,
    workdir: Path,
    engine: str = "pdflatex",
    runs: int = 1,
    halt: bool = True,
    compat: bool = True,
    recorder: bool = False,
    placement_def: bool = True,
    authorkeys_def: bool = True,
) -> Build:
    """Write `source` as paper.tex in `workdir` (with pith.sty, pith-compat.def unless `compat`
    is false, pith-placement.def unless `placement_def` is false, pith-authorkeys.def unless
    `authorkeys_def` is false) and build it with `engine`;
    `halt=False` lets TeX go on after an error (so that the log shows the error's help);
    `recorder` writes paper.fls (the files read)."""
    workdir.mkdir(parents=True, exist_ok=True)
    shutil.copy(STY, workdir / "pith.sty")
    if placement_def:
        shutil.copy(STY.with_name("pith-placement.def"), workdir / "pith-placement.def")
    if compat:
        shutil.copy(STY.with_name("pith-compat.def"), workdir / "pith-compat.def")
    if authorkeys_def:
        shutil.copy(STY.with_name("pith-authorkeys.def"), workdir / "pith-authorkeys.def")
    (workdir / "paper.tex").write_text(source, encoding="utf-8")
    output = ""
    result = None
    for _ in range(runs):
        flags = TEX_FLAGS if halt else [f for f in TEX_FLAGS if f != "-halt-on-error"]
        flags = [*flags, "-recorder"] if recorder else flags
        result = _run([ENGINES[engine], *flags, "paper.tex"], workdir)
        output += result.stdout
        if result.returncode != 0:
            break
    assert result is not None
    ok = result.returncode == 0
    if ok:
        for cmd in AFTER_DVI.get(engine, []):
            step = _run(cmd, workdir)
            output += step.stdout + step.stderr
            ok = ok and step.returncode == 0
    log_path = workdir / "paper.log"
    log = log_path.read_text("latin-1") if log_path.exists() else ""
    return Build(ok=ok, pdf=workdir / "paper.pdf", log=log, output=output)


CACHE_ENV = "PITH_TEST_TEX_CACHE"
"""The folder of this session's shared builds: set by tests/conftest.py before the pytest-xdist
workers start, so that they all share it; removed when the session ends."""


def shared_folder(key: str, fill: Callable[[Path], None]) -> Path:
    """A folder that `fill` fills once per test session, whichever worker asks first (the others
    wait on its lock, then read it); keyed by `key`. Readers must never write into it."""
    root = Path(os.environ.get(CACHE_ENV) or _private_root())
    root.mkdir(parents=True, exist_ok=True)
    folder = root / hashlib.sha256(key.encode("utf-8")).hexdigest()[:24]
    with FileLock(str(folder) + ".lock"):
        if not (folder / ".done").exists():
            shutil.rmtree(folder, ignore_errors=True)
            folder.mkdir()
            fill(folder)
            (folder / ".done").touch()
    return folder


@lru_cache(maxsize=1)
def _private_root() -> str:
    """Outside a pytest session (tests/support/latex/pictures.py): a folder of this process's
    own."""
    root = tempfile.mkdtemp(prefix="pith-tex-")
    atexit.register(shutil.rmtree, root, ignore_errors=True)
    return root


def save_build(result: Build, folder: Path) -> None:
    """Write beside a build what `load_build` needs besides its PDF and log."""
    (folder / ".output").write_text(result.output, "utf-8")
    if result.ok:
        (folder / ".ok").touch()


def load_build(folder: Path, stem: str = "paper") -> Build:
    """The Build of `save_build` from its folder; `stem`: the main file's name without .tex."""
    log = folder / f"{stem}.log"
    return Build(
        ok=(folder / ".ok").exists(),
        pdf=folder / f"{stem}.pdf",
        log=log.read_text("latin-1") if log.exists() else "",
        output=(folder / ".output").read_text("utf-8"),
    )


@cache
def shared_build(source: str, engine: str = "pdflatex", runs: int = 1) -> Build:
    """`build(source, folder, engine, runs)`, done once per test session and shared (keyed by
    the source, the engine, the runs and pith.sty's bytes)."""
    key = "\0".join(("build", source, engine, str(runs), STY.read_text("utf-8")))
    folder = shared_folder(key, lambda f: save_build(build(source, f, engine, runs), f))
    return load_build(folder)


def _run(cmd: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        cmd, cwd=cwd, capture_output=True, text=True, errors="replace", timeout=240
    )


def template(name: str, *, hyperref: str = "", extra_preamble: str = "") -> str:
    """A template from templates/, with hyperref loaded 'before' or 'after' pith, or not."""
    text = (TEMPLATES / f"{name}.tex").read_text("utf-8")
    use = "\\usepackage{pith}\n"
    assert use in text
    if hyperref == "before":
        text = text.replace(use, "\\usepackage{hyperref}\n" + use)
    elif hyperref == "after":
        text = text.replace(use, use + "\\usepackage{hyperref}\n")
    return text.replace(use, use + extra_preamble)


def without_pith(source: str) -> str:
    """The same document without the package and its number."""
    lines = [
        line
        for line in source.splitlines(keepends=True)
        if not line.startswith(("\\usepackage{pith}", "\\usepackage[", "\\pithnumber"))
        or (line.startswith("\\usepackage[") and "{pith}" not in line)
    ]
    return "".join(lines)


def paper(number: str, options: str = "", preamble: str = "") -> str:
    """A one-page article that loads pith with `options` and sets `number`."""
    opts = f"[{options}]" if options else ""
    return (
        "\\documentclass{article}\n"
        f"\\usepackage{opts}{{pith}}\n"
        f"\\pithnumber{{{number}}}\n{preamble}"
        "\\title{T}\\author{A}\n"
        "\\begin{document}\n\\maketitle\nText.\n\\end{document}\n"
    )
