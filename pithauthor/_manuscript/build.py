"""Compile a manuscript with latexmk in a temporary copy, and read what the build read (.fls)."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

from pithauthor.errors import BuildError

ENGINE_FLAGS = {
    "pdflatex": ["-pdf"],
    "xelatex": ["-pdfxe"],
    "lualatex": ["-pdflua"],
    "latex": ["-pdfps"],
}
_TIMEOUT = 600
_FILE_LINE_ERROR = re.compile(r"^\S.*?:\d+: ")


@dataclass(frozen=True, slots=True)
class BuildResult:
    """A successful build: the PDF, and the files (inside the project) that the build read."""

    pdf: Path
    project: Path
    inputs: list[Path]  # relative to `project`, sorted
    outside: list[Path]  # absolute inputs outside the project and outside the TeX trees


def copy_project(source: Path, destination: Path) -> Path:
    """Copy the folder `source` to `destination` (symlinks followed; caches left out)."""
    ignore = shutil.ignore_patterns(".git", "__pycache__", "*.pith-backup*", ".*.tmp")
    shutil.copytree(source, destination, ignore=ignore, dirs_exist_ok=True)
    return destination


def compile_project(project: Path, main: Path, engine: str) -> BuildResult:
    """Run latexmk on `main` (inside `project`); raise BuildError with the first error line."""
    if shutil.which("latexmk") is None:
        raise BuildError("latexmk is not installed; it is needed to compile the manuscript")
    command = [
        "latexmk",
        *ENGINE_FLAGS[engine],
        "-interaction=nonstopmode",
        "-halt-on-error",
        "-file-line-error",
        "-recorder",
        "-norc",
        str(main.relative_to(project)),
    ]
    env = {**os.environ, "openout_any": "p", "shell_escape": "f"}
    try:
        completed = subprocess.run(
            command,
            cwd=project,
            capture_output=True,
            text=True,
            errors="replace",
            timeout=_TIMEOUT,
            env=env,
            stdin=subprocess.DEVNULL,
        )
    except subprocess.TimeoutExpired:
        raise BuildError(f"latexmk took longer than {_TIMEOUT} s and was stopped") from None
    stem = main.with_suffix("")
    pdf = stem.with_suffix(".pdf")
    if completed.returncode != 0 or not pdf.is_file():
        raise BuildError(f"the manuscript does not compile: {_first_error(stem, completed)}")
    inputs, outside = read_recorder(stem.with_suffix(".fls"), project)
    return BuildResult(pdf=pdf, project=project, inputs=inputs, outside=outside)


def _first_error(stem: Path, completed: subprocess.CompletedProcess[str]) -> str:
    log = stem.with_suffix(".log")
    lines: list[str] = []
    if log.is_file():
        lines = log.read_text("utf-8", errors="replace").splitlines()
    for line in lines:
        if line.startswith("!") or _FILE_LINE_ERROR.match(line):
            return line.strip()
    tail = [line for line in completed.stdout.splitlines() + completed.stderr.splitlines() if line]
    return tail[-1].strip() if tail else f"latexmk exited with {completed.returncode}"


def _tex_roots() -> list[Path]:
    """Folders of the TeX installation (files read from there need not be shipped)."""
    roots = [Path("/usr/share/texlive"), Path("/usr/share/texmf"), Path("/etc/texmf")]
    roots.append(Path("/var/lib/texmf"))
    kpsewhich = shutil.which("kpsewhich")
    if kpsewhich:
        for var in ("SELFAUTOPARENT", "TEXMFDIST", "TEXMFLOCAL", "TEXMFSYSVAR", "TEXMFSYSCONFIG"):
            try:
                out = subprocess.run(
                    [kpsewhich, f"-var-value={var}"], capture_output=True, text=True, timeout=30
                ).stdout.strip()
            except (OSError, subprocess.TimeoutExpired):
                continue
            if out:
                roots.append(Path(out).resolve())
    return roots


def read_recorder(fls: Path, project: Path) -> tuple[list[Path], list[Path]]:
    """Files read by the build (INPUT lines of the .fls) that it did not write itself."""
    if not fls.is_file():
        raise BuildError(f"latexmk wrote no recorder file {fls.name}")
    project = project.resolve()
    cwd = project
    read: dict[Path, None] = {}
    written: set[Path] = set()
    for line in fls.read_text("utf-8", errors="replace").splitlines():
        kind, _, name = line.partition(" ")
        if kind == "PWD":
            cwd = Path(name)
            continue
        if kind not in ("INPUT", "OUTPUT"):
            continue
        path = (cwd / name).resolve()
        if kind == "OUTPUT":
            written.add(path)
        else:
            read[path] = None
    inside: list[Path] = []
    outside: list[Path] = []
    roots: list[Path] | None = None
    for path in read:
        if path in written or not path.is_file():
            continue
        if path.is_relative_to(project):
            inside.append(path.relative_to(project))
            continue
        roots = roots if roots is not None else _tex_roots()
        if not any(path.is_relative_to(root) for root in roots):
            outside.append(path)
    return sorted(set(inside)), sorted(set(outside))
