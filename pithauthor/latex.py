"""The LaTeX badge: add `\\usepackage{pith}` + `\\pithnumber{...}` to a manuscript without
touching anything else, check that it compiles, and pack an arXiv-ready archive.

Public API: `inject`, `find_main_file`, `check_pdf`, `build_arxiv_archive`.
"""

from __future__ import annotations

import difflib
import os
import tarfile
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from pithauthor._core.pith_number import PithNumber
from pithauthor._manuscript.authorkeys import add_author_keys
from pithauthor._manuscript.build import compile_project, copy_project
from pithauthor._manuscript.finder import engine_of, find_main_file
from pithauthor._manuscript.pdfcheck import check_pdf
from pithauthor._manuscript.preamble import Preamble, locate
from pithauthor._manuscript.sty_files import copy_sty, install_sty
from pithauthor._manuscript.sty_files import found_by_tex as sty_found_by_tex
from pithauthor._manuscript.sty_files import shipped_files as pith_sty_files
from pithauthor._manuscript.textfile import (
    TextFile,
    atomic_write,
    backup_path,
    ensure_writable,
    read_text_file,
)
from pithauthor.errors import BuildError, InputError, ManuscriptError, PithNumberError

__all__ = [
    "ArchiveResult",
    "InjectResult",
    "build_arxiv_archive",
    "check_pdf",
    "copy_sty",
    "find_main_file",
    "inject",
    "install_sty",
    "pith_sty_files",
    "sty_found_by_tex",
]

STY_NAME = "pith.sty"


@dataclass(frozen=True, slots=True)
class InjectResult:
    """What `inject` did (or, with dry_run, would do)."""

    main: Path
    changed: bool
    diff: str
    backup: Path | None
    sty: Path
    sty_action: str  # "copied", "replaced" or "unchanged"
    engine: str
    checked: bool
    dry_run: bool
    notes: list[str] = field(default_factory=list)


@dataclass(frozen=True, slots=True)
class ArchiveResult:
    """An arXiv archive that was written: where, and which files went in."""

    archive: Path
    main: Path
    engine: str
    files: list[str]


def _require_year(number: PithNumber) -> str:
    if number.year is None:
        raise InputError(f"{number.body}: give the full Pith Number, pith:YYYY:{number.body}")
    return number.full


def _same_number(existing: str, number: PithNumber) -> bool:
    try:
        parsed = PithNumber.parse(existing)
    except PithNumberError:
        return False
    return parsed.year == number.year and parsed.body == number.body


def _edits(source: TextFile, pre: Preamble, number: PithNumber, force: bool) -> list[str]:
    """Apply the edits to the text; returns [new_text, note, ...]."""
    text, nl, full = source.text, source.newline, _require_year(number)
    name = source.path.name
    package_line = "\\usepackage{pith}" + nl
    number_line = f"\\pithnumber{{{full}}}" + nl
    edits: list[tuple[int, int, str]] = []
    notes: list[str] = []
    if len(pre.pith_numbers) > 1:
        raise ManuscriptError(f"{name}: \\pithnumber appears more than once; keep one")
    if pre.pith_numbers:
        use = pre.pith_numbers[0]
        if not _same_number(use.text, number):
            if not force:
                raise ManuscriptError(
                    f"{name} already has \\pithnumber{{{use.text}}}; "
                    f"use --force to replace it with {full}"
                )
            edits.append((use.value.start, use.value.end, full))
            notes.append(f"replaced \\pithnumber{{{use.text}}} with {full}")
        if pre.pith_package is None:
            at = use.macro.start
            if at not in pre.boundaries:
                raise ManuscriptError(
                    f"{name}: \\pithnumber is used without \\usepackage{{pith}}; "
                    "add \\usepackage{pith} on the line before it"
                )
            edits.append((at, at, package_line))
    elif pre.pith_package is not None:
        after = pre.line_start_after(pre.pith_package.end)
        if after is None:
            raise ManuscriptError(f"{name}: no safe line after \\usepackage{{pith}}")
        edits.append((after, after, number_line))
    else:
        anchor = pre.documentclass
        if pre.hyperref is not None and pre.hyperref.end > anchor.end:
            anchor = pre.hyperref
        line = pre.line_start_after(anchor.end)
        if line is None:
            edits.append((anchor.end, anchor.end, nl + package_line + number_line))
        else:
            edits.append((line, line, package_line + number_line))
    for start, end, replacement in sorted(edits, reverse=True):
        text = text[:start] + replacement + text[end:]
    return [text, *notes]


def _diff(path: Path, old: str, new: str, edited_until: int) -> str:
    """The unified diff; only the text up to a few lines past the last edit is compared
    (everything after it is the same), so that a long body costs nothing."""
    cut = edited_until
    for _ in range(4):
        found = old.find("\n", cut)
        cut = len(old) if found == -1 else found + 1
    grown = len(new) - len(old)
    lines = difflib.unified_diff(
        old[:cut].splitlines(keepends=True),
        new[: cut + grown].splitlines(keepends=True),
        fromfile=f"a/{path.name}",
        tofile=f"b/{path.name}",
    )
    return "".join(line if line.endswith("\n") else line + "\n" for line in lines)


def _sty_plan(main: Path, force: bool) -> tuple[str, bytes]:
    """What to do with `pith.sty` next to `main`: copy, replace (force) or nothing."""
    from pithauthor._resources import pith_sty_path, pith_sty_version

    ours = pith_sty_path().read_bytes()
    dest = main.parent / STY_NAME
    if not dest.exists():
        return "copied", ours
    theirs = dest.read_bytes()
    if theirs == ours:
        return "unchanged", ours
    if not force:
        raise ManuscriptError(
            f"{dest} is another version ({_sty_version(theirs)}) than this pithauthor's "
            f"({pith_sty_version()}); use --force to replace it"
        )
    return "replaced", ours


def _sty_version(data: bytes) -> str:
    import re

    match = re.search(rb"\\ProvidesPackage\{pith\}\[([^\]]*)\]", data)
    return match.group(1).decode("latin-1").strip() if match else "no version line"


def _compile_and_check(
    main: Path,
    new_bytes: bytes,
    sty: bytes,
    engine: str,
    number: PithNumber | None,
    author_keys: Sequence[str] = (),
) -> None:
    with tempfile.TemporaryDirectory(prefix="pith-check-") as tmp:
        project = copy_project(main.parent, Path(tmp) / "project")
        copy = project / main.name
        copy.write_bytes(new_bytes)
        (project / STY_NAME).write_bytes(sty)
        result = compile_project(project, copy, engine)
        if number is not None:
            check_pdf(result.pdf, number)
        if author_keys:
            _check_pdf_keys(result.pdf, author_keys)


def _check_pdf_keys(pdf: Path, author_keys: Sequence[str]) -> None:
    from pithauthor._core.identity import pdf_key_ids
    from pithauthor.identity import read_pdf_author_keys

    found, _ = read_pdf_author_keys(pdf.read_bytes())
    missing = [k for k in author_keys if k not in pdf_key_ids(found or "")]
    if missing:
        raise BuildError(f"the PDF's /PithAuthorKeys lacks {', '.join(missing)}")


def inject(
    target: str | os.PathLike[str],
    number: PithNumber | None,
    *,
    author_keys: Sequence[str] = (),
    dry_run: bool = False,
    check: bool = False,
    force: bool = False,
) -> InjectResult:
    """Add the badge to the manuscript at `target` (a folder or a .tex file), and a
    `\\pithauthorkey` line per key id in `author_keys` (docs/identity.md); `number` may be
    None when only keys are added (before the paper has a Pith Number).

    Nothing is written when anything is wrong, with `dry_run`, or when `check` fails.
    """
    if number is None and not author_keys:
        raise InputError("give a Pith Number, author keys, or both")
    if number is not None:
        _require_year(number)
    main = find_main_file(Path(target))
    source = read_text_file(main)
    engine = engine_of(source.text)
    preamble = locate(source.text, main.name)
    new_text, notes = source.text, []
    if number is not None:
        new_text, *notes = _edits(source, preamble, number, force)
    if author_keys:
        new_text, added = add_author_keys(new_text, main.name, source.newline, author_keys)
        if added:
            notes.append(f"added {added} \\pithauthorkey line(s)")
    new_bytes = source.raw if new_text == source.text else source.encode(new_text)
    changed = new_bytes != source.raw
    sty_action, sty = _sty_plan(main, force)
    if changed and not dry_run:
        ensure_writable(main)
    if check:
        _compile_and_check(main, new_bytes, sty, engine, number, author_keys)
    backup: Path | None = None
    if not dry_run:
        mode = main.stat().st_mode
        if changed:
            backup = backup_path(main)
            atomic_write(main, new_bytes, mode=mode, backup=backup)
        if sty_action != "unchanged":
            atomic_write(main.parent / STY_NAME, sty, mode=0o644)
    return InjectResult(
        main=main,
        changed=changed,
        diff=_diff(main, source.text, new_text, preamble.begin_document) if changed else "",
        backup=backup,
        sty=main.parent / STY_NAME,
        sty_action=sty_action,
        engine=engine,
        checked=check,
        dry_run=dry_run,
        notes=notes,
    )


def build_arxiv_archive(
    target: str | os.PathLike[str], output: str | os.PathLike[str]
) -> ArchiveResult:
    """Compile the manuscript in a temporary copy and pack what the build read into `output`
    (a .tar.gz): sources, figures, the .bbl, `pith.sty` at the top level; no build debris."""
    from pithauthor._resources import pith_sty_path

    main = find_main_file(Path(target))
    source = read_text_file(main)
    engine = engine_of(source.text)
    uses_pith = locate(source.text, main.name).pith_package is not None
    output = Path(output).resolve()
    with tempfile.TemporaryDirectory(prefix="pith-arxiv-") as tmp:
        project = copy_project(main.parent, Path(tmp) / "project")
        result = compile_project(project, project / main.name, engine)
        if result.outside:
            names = ", ".join(str(p) for p in result.outside[:5])
            raise BuildError(
                f"the build reads files outside the project, which arXiv will not have: {names}"
            )
        members = {p.as_posix(): project / p for p in result.inputs}
        if uses_pith and STY_NAME not in members:
            members[STY_NAME] = pith_sty_path()
        if not uses_pith:
            members.pop(STY_NAME, None)
        files = sorted(members)
        _write_tar(output, [(name, members[name]) for name in files])
    return ArchiveResult(archive=output, main=main, engine=engine, files=files)


def _write_tar(output: Path, members: list[tuple[str, Path]]) -> None:
    """A gzip tar of `members` (relative names only), written atomically."""
    if not output.parent.is_dir():
        raise ManuscriptError(f"{output.parent}: no such folder for the archive")
    fd, tmp_name = tempfile.mkstemp(prefix=f".{output.name}.", suffix=".tmp", dir=output.parent)
    os.close(fd)
    tmp = Path(tmp_name)
    try:
        with tarfile.open(tmp, "w:gz") as archive:
            for name, path in members:
                info = archive.gettarinfo(str(path), arcname=name)
                info.uid = info.gid = 0
                info.uname = info.gname = ""
                info.mode = 0o644
                with path.open("rb") as handle:
                    archive.addfile(info, handle)
        os.replace(tmp, output)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
