"""`pith latex arxiv`: an arXiv-ready archive of a manuscript whose build shows its badge."""

from __future__ import annotations

import contextlib
import io
import os
import tarfile
import tempfile
import time
from contextlib import ExitStack
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING

from pithauthor.errors import (
    CompileFailed,
    ManuscriptError,
    PithNumberError,
    VerificationError,
)
from pithauthor.fs import publishing, unpack_plain_files
from pithauthor.latex import upload
from pithauthor.latex.archives import is_archive, unpacked_project
from pithauthor.latex.build import build_like_arxiv, build_sources, whose_fault
from pithauthor.latex.clock import BuildClock, check_timeout
from pithauthor.latex.injection import (
    Progress,
    inputs_of,
    step,
)
from pithauthor.latex.pdf import (
    check_badge_visible,
    check_pdf,
    page_count,
    pdf_facts,
)
from pithauthor.latex.preamble import Preamble, locate
from pithauthor.latex.sources import (
    TextFile,
    engine_of,
    ensure_writable_folder,
    find_main_file,
    read_text_file,
    source_files,
)
from pithauthor.latex.sty import (
    BUILD_FILES,
    LTXML_NAME,
    STY_NAME,
    pith_build_files,
    shipped_bytes,
)
from pithauthor.latex.upload import strip_comments
from pithauthor.protocol.ids import PithNumber

if TYPE_CHECKING:
    pass

__all__ = [
    "ArchiveResult",
    "build_arxiv_archive",
]


@dataclass(frozen=True, slots=True)
class ArchiveResult:
    """An arXiv archive that was written and proven: where, what went in, what was checked."""

    archive: Path
    main: Path
    engine: str
    files: list[str]
    number: str | None  # None: packed without a badge (no_badge, the v1 upload)
    pages: int
    size: int
    comments_removed: int  # comments stripped from the .tex files (0 with keep_comments)
    comment_lines_removed: int  # of which comments that had their line to themselves
    readme: bool  # whether a 00README.json names the top-level file
    warnings: list[str] = field(default_factory=list)
    unpacked: Path | None = None  # the folder an archive given as `target` was unpacked into


def build_arxiv_archive(
    target: str | os.PathLike[str],
    output: str | os.PathLike[str],
    *,
    keep_comments: bool = False,
    timeout: float | None = None,
    no_badge: bool = False,
    progress: Progress | None = None,
) -> ArchiveResult:
    """Pack the arXiv upload of the manuscript at `target` into `output` (a .tar.gz), and prove
    it before writing: the sources are built in a private copy (latexmk, fresh); exactly the
    files that build read inside the folder are packed (real files, comments stripped unless
    `keep_comments`), with the .bbl, `pith.sty` and `pith.sty.ltxml`; the archive is unpacked
    into an empty folder and built as arXiv does (pdfLaTeX alone), and must give the same page
    count, the /PithNumber and the link. Raises BuildError or VerificationError otherwise.
    `timeout` (seconds) bounds each of the two builds; without it the first build's limit comes
    from the paper's earlier builds and the proof build's from the first (docs/latex.md).

    `no_badge` packs a paper that carries no Pith Number (the v1 upload: its number does not
    exist before arXiv has v1), proven the same way minus the badge checks; its PDF and the
    archive's must then carry no /PithNumber, and pith.sty is packed only when the paper loads
    it (e.g. for `\\pithauthorkey`). `progress` is told each step (`Step`) as it starts and ends.

    `target` may be a project's source archive (an Overleaf zip): it is unpacked into the
    folder beside it (`pithauthor.latex.archives`), which is removed again when the upload is
    refused. The output folder's permission and the badge are checked before any build."""
    check_timeout(timeout)  # refused before anything else
    # the cheap checks first: a read-only output folder or a paper without its badge is
    # refused in a second, not after the two builds
    output = Path(output).resolve()
    if not output.parent.is_dir():
        raise ManuscriptError(f"{output.parent}: no such folder for the archive")
    ensure_writable_folder(output.parent, f"the archive {output.name} cannot be written there")
    if not is_archive(Path(target)):
        return _build(
            Path(target),
            output,
            keep_comments,
            timeout=timeout,
            no_badge=no_badge,
            progress=progress,
        )
    # a project's source zip (Overleaf's download): unpacked beside it, then packed as a folder;
    # the folder goes again when the upload is refused (it was made for nothing)
    with unpacked_project(Path(target)) as unpacked:
        result = _build(
            unpacked.project,
            output,
            keep_comments,
            timeout=timeout,
            no_badge=no_badge,
            progress=progress,
        )
    return replace(result, unpacked=unpacked.folder)


def _build(
    target: Path,
    output: Path,
    keep_comments: bool,
    *,
    timeout: float | None,
    no_badge: bool,
    progress: Progress | None,
) -> ArchiveResult:
    """`build_arxiv_archive` of a folder or a .tex file, `output` checked."""
    main = find_main_file(target)
    clock = BuildClock(main, timeout)
    source = read_text_file(main)
    text = source.text
    # a section given by mistake: one line, exit 2, before any build
    preamble = locate(text, main.name)
    asked = engine_of(text)
    warnings: list[str] = []
    engine = "latex" if asked == "latex" else "pdflatex"
    if asked != engine:
        warnings.append(
            f"{main.name} asks for {asked}; arXiv compiles with pdfLaTeX, so the upload is "
            "built and checked with pdfLaTeX"
        )
    if not no_badge and not _has_number(main, source, preamble):
        raise _no_number(f"{main.name} sets")
    # the paper's own pith.sty and .def files when it has them, else ours; the build's file
    # list then packs each .def file exactly when that pith.sty reads it
    overrides = pith_build_files(main.parent)
    try:
        with ExitStack() as stack:
            # the step is the build and the reading of its PDF: a paper refused for its number
            # is refused within it (nothing said of a build that led nowhere)
            with step(progress, f"building ({engine}, latexmk)"):
                built = stack.enter_context(build_sources(main, engine, overrides, clock))
                number = _number_of(built.result.pdf, no_badge)
                pages = page_count(built.result.pdf)
            warnings += built.warnings
            if number is not None:
                warnings += _hidden_badge(built.result.pdf, number)
            project, inputs = built.result.project, built.result.inputs
            members, removed, whole = _members(project, inputs, keep_comments)
            # the LaTeXML binding goes with pith.sty; a paper without the badge that does not
            # load pith at all gets neither (arXiv's HTML view needs no binding for it)
            if number is not None or STY_NAME in members:
                ltxml = main.parent / LTXML_NAME
                members[LTXML_NAME] = (
                    ltxml.read_bytes() if ltxml.is_file() else shipped_bytes(LTXML_NAME)
                )
            texts = {n: d.decode("latin-1") for n, d in members.items() if n.endswith(".tex")}
            readme = bool(upload.other_main_files(main.name, texts)) or engine == "latex"
            if readme:
                members[upload.README_NAME] = upload.readme(main.name, engine)
            warnings += _preflight(members, main, built.result.subfolder_outputs)
    except CompileFailed as failed:
        if preamble.pith_package is None and inputs_of(source, preamble).package is None:
            raise  # no badge to blame: the paper's own error as it is
        with step(progress, "building again without the badge, to tell whose fault it is"):
            raise whose_fault(failed, main, engine, {}, clock) from None
    files = sorted(members)
    size = _write_proven(output, members, main.name, engine, number, pages, clock, progress)
    warnings += upload.size_warning(size)
    return ArchiveResult(
        archive=output,
        main=main,
        engine=engine,
        files=files,
        number=number.full if number is not None else None,
        pages=pages,
        size=size,
        comments_removed=removed,
        comment_lines_removed=whole,
        readme=readme,
        warnings=warnings,
    )


# the next step for both cases: a paper that has its number, and the v1 upload, which cannot
# have one yet (docs/latex.md, "Which number to print")
def _no_number(what: str) -> ManuscriptError:
    return ManuscriptError(
        f"{what} no Pith Number: add \\usepackage{{pith}} and \\pithnumber{{...}} "
        "first (pith latex inject), or pack the v1 upload without it with --no-badge"
    )


_NUMBER_MACRO = b"\\pithnumber"

_MAY_SET_NUMBER = (".tex", ".sty", ".cls", ".def", ".ltx")


def _has_number(main: Path, source: TextFile, preamble: Preamble) -> bool:
    """Whether the paper may print a Pith Number, known before any build: its preamble (or a
    file it reads) sets one, or some source file at least names `\\pithnumber`. Only a
    paper none of whose files names it is refused here; whether the number really reaches
    the PDF is checked on the PDF after the build, as before."""
    if preamble.pith_numbers or inputs_of(source, preamble).number is not None:
        return True
    for relative, real in source_files(main.parent, main):
        if relative.lower().endswith(_MAY_SET_NUMBER) and relative not in BUILD_FILES:
            with contextlib.suppress(OSError):
                if _NUMBER_MACRO in real.read_bytes():
                    return True
    return False


def _hidden_badge(pdf: Path, number: PithNumber) -> list[str]:
    """A warning when something is painted over the badge (the upload is still right: the
    number and link are in the PDF; where the badge sits is the author's choice)."""
    try:
        check_badge_visible(pdf, number.url(), "margin")  # "margin": wherever it was put
    except VerificationError as exc:
        return [str(exc)]
    return []


def _number_of(pdf: Path, no_badge: bool = False) -> PithNumber | None:
    """The Pith Number the author's build wrote into its PDF (checked with its link); with
    `no_badge`, None, after checking that the PDF carries none (a paper packed "without the
    badge" that has one would be uploaded with a number the author did not mean to publish)."""
    value, _ = pdf_facts(pdf)
    if no_badge:
        if value is not None:
            raise ManuscriptError(
                f"the paper's PDF carries the Pith Number {value}: --no-badge packs a paper "
                "without one; remove \\pithnumber, or drop --no-badge"
            )
        return None
    if value is None:
        raise _no_number("the paper's PDF has")
    try:
        number = PithNumber.parse(value)
    except PithNumberError as exc:
        raise VerificationError(f"the PDF's /PithNumber {value!r} is malformed: {exc}") from None
    check_pdf(pdf, number)
    return number


def _members(
    project: Path, inputs: list[Path], keep_comments: bool
) -> tuple[dict[str, bytes], int, int]:
    """{name: bytes} of the files the build read; .tex files stripped of their comments."""
    members: dict[str, bytes] = {}
    removed = whole = 0
    for relative in inputs:
        data = (project / relative).read_bytes()
        if not keep_comments and relative.suffix.lower() == ".tex":
            # Latin-1 maps bytes one to one, and `%` and `\\` are ASCII: any encoding survives
            stripped = strip_comments(data.decode("latin-1"))
            data = stripped.text.encode("latin-1")
            removed += stripped.comments
            whole += stripped.whole_lines
        members[relative.as_posix()] = data
    return members, removed, whole


def _preflight(members: dict[str, bytes], main: Path, subfolder: list[Path]) -> list[str]:
    warnings = upload.name_warnings(sorted(members))
    for name, data in sorted(members.items()):
        if name.endswith(".bbl"):
            warnings += upload.bbl_warnings(name, data, main.stem)
    warnings += upload.subfolder_warnings([p.as_posix() for p in subfolder])
    return warnings


def _write_proven(
    output: Path,
    members: dict[str, bytes],
    main_name: str,
    engine: str,
    number: PithNumber | None,
    pages: int,
    clock: BuildClock,
    progress: Progress | None = None,
) -> int:
    """Write the archive beside `output`, build it in an empty folder as arXiv would, and move
    it into place only when that build matches the author's (`number` None: the paper has no
    badge, and the archive's PDF must have none either). Returns its size."""
    with publishing(output) as tmp:
        with step(progress, f"packing {len(members)} file{'' if len(members) == 1 else 's'}"):
            _write_tar(tmp, members)
        proving = f"proving the upload builds from the tarball ({engine} alone)"
        with (
            step(progress, proving),
            tempfile.TemporaryDirectory(prefix="pith-arxiv-proof-") as proof,
        ):
            folder = Path(proof)
            unpack_plain_files(tmp, folder)  # on every 3.11: no `filter=` before 3.11.4
            pdf = build_like_arxiv(folder, main_name, engine, clock)
            proven_pages = page_count(pdf)
            if proven_pages != pages:
                raise VerificationError(
                    f"the archive builds to {proven_pages} pages, the paper's folder to {pages}: "
                    "something the paper needs is missing from the archive"
                )
            try:
                if number is not None:
                    check_pdf(pdf, number)
                elif (found := pdf_facts(pdf)[0]) is not None:
                    raise VerificationError(f"{pdf.name}: /PithNumber is {found!r}, expected none")
            except VerificationError as exc:
                raise VerificationError(f"the archive's own build: {exc}") from None
        return tmp.stat().st_size


def _write_tar(path: Path, members: dict[str, bytes]) -> None:
    """A gzip tar of `members` (relative names, regular files only, sorted, owner-neutral)."""
    with tarfile.open(path, "w:gz") as archive:
        for name in sorted(members):
            data = members[name]
            info = tarfile.TarInfo(name)
            info.size = len(data)
            info.mode = 0o644
            info.mtime = int(time.time())
            archive.addfile(info, io.BytesIO(data))
