"""Compile a LaTeX source for real, in a temporary folder, the way arXiv would: no shell
escape, nonstop, halting on the first error. pith.sty is copied beside the source.

`shared_build` builds a (source, engine, runs) once per test process and hands the same
Build to every test that asks for it: tests read a shared build, never write into its folder."""

from __future__ import annotations

import atexit
import hashlib
import shutil
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
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
    source: str, workdir: Path, engine: str = "pdflatex", runs: int = 1, halt: bool = True
) -> Build:
    """Write `source` as paper.tex in `workdir` (with pith.sty) and build it with `engine`;
    `halt=False` lets TeX go on after an error (so that the log shows the error's help)."""
    workdir.mkdir(parents=True, exist_ok=True)
    shutil.copy(STY, workdir / "pith.sty")
    (workdir / "paper.tex").write_text(source, encoding="utf-8")
    output = ""
    result = None
    for _ in range(runs):
        flags = TEX_FLAGS if halt else [f for f in TEX_FLAGS if f != "-halt-on-error"]
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


_SHARED: dict[str, Build] = {}
_SHARED_ROOT: list[Path] = []


def shared_build(source: str, engine: str = "pdflatex", runs: int = 1) -> Build:
    """`build(source, ..., engine, runs)`, done once per test process (keyed by the source,
    the engine, the runs and pith.sty's bytes) in a folder removed when the process ends."""
    digest = hashlib.sha256(
        "\0".join((source, engine, str(runs))).encode() + b"\0" + STY.read_bytes()
    ).hexdigest()[:24]
    if digest not in _SHARED:
        if not _SHARED_ROOT:
            root = Path(tempfile.mkdtemp(prefix="pith-tex-"))
            atexit.register(shutil.rmtree, root, ignore_errors=True)
            _SHARED_ROOT.append(root)
        _SHARED[digest] = build(source, _SHARED_ROOT[0] / digest, engine, runs)
    return _SHARED[digest]


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
