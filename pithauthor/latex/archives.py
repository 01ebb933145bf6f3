r"""Archives a manuscript comes in or goes out as: a project's source archive (an Overleaf
"Download → Source" zip, or an arXiv source tarball) unpacked into a folder beside it, a project
written back as a zip ready to upload to Overleaf, and the package's LaTeX files as one zip.

Every archive is unpacked under the one set of rules of `pithauthor.fs.unpack_archive` (the
arXiv proof build's too): names inside the folder only, regular files only, caps on the count,
the size and a zip member's ratio, `__MACOSX/` left out, all or nothing. A refusal here is one
line (ManuscriptError, exit 2) naming the archive and the member.
"""

from __future__ import annotations

import contextlib
import shutil
import stat
import time
import zipfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from pithauthor.errors import ManuscriptError
from pithauthor.fs import publishing, unpack_archive
from pithauthor.latex.sources import ensure_writable_folder, find_main_file, source_files

ARCHIVE_SUFFIXES = (".zip", ".tar.gz", ".tgz", ".tar")
"""The archives `inject` and `arxiv` take in place of a folder."""


def is_archive(path: Path) -> bool:
    """Whether `path` names a project archive (by its name: .zip, .tar.gz, .tgz, .tar; a
    folder of such a name is a folder)."""
    return path.name.lower().endswith(ARCHIVE_SUFFIXES) and not path.is_dir()


def unpacked_name(archive: Path) -> Path:
    """The folder beside `archive` that it unpacks into: `paper.zip` -> `paper/`."""
    lower = archive.name.lower()
    for suffix in ARCHIVE_SUFFIXES:
        if lower.endswith(suffix):
            return archive.with_name(archive.name[: -len(suffix)] or "project")
    return archive.with_name(archive.name + ".unpacked")


def unpack(archive: Path, destination: Path) -> list[str]:
    """Unpack `archive` into the new folder `destination` (`fs.unpack_archive`'s rules, a
    refusal as ManuscriptError); it appears whole or not at all."""
    if destination.exists() or destination.is_symlink():
        raise ManuscriptError(f"{destination} already exists; nothing was unpacked")
    ensure_writable_folder(destination.parent, f"{archive.name} cannot be unpacked there")
    return unpack_archive(archive, destination, ManuscriptError)


@dataclass(frozen=True, slots=True)
class Unpacked:
    """A project archive unpacked beside itself: the archive, the folder, what it holds."""

    archive: Path
    folder: Path  # the folder written beside the archive
    project: Path  # the paper's folder in it (the one top folder, when it wraps everything)
    files: int


def unpack_project(archive: Path, folder: Path | None = None) -> Unpacked:
    """Unpack a project archive into `folder`, by default the folder beside it
    (`unpacked_name`); the project is that folder, or its one subfolder when the archive wraps
    everything in one (as GitHub's do; Overleaf's zips do not)."""
    archive = Path(archive)
    if not archive.is_file():
        raise ManuscriptError(f"{archive}: no such file")
    folder = folder or unpacked_name(archive)
    if folder.exists():
        raise ManuscriptError(
            f"{folder} already exists (unpacked from {archive.name} before?): give that folder "
            f"instead of the archive, or remove it to unpack again"
        )
    names = unpack(archive, folder)
    project = folder
    tops = {PurePosixPath(n).parts[0] for n in names}
    if len(tops) == 1 and not (folder / next(iter(tops))).is_file():
        project = folder / next(iter(tops))
    return Unpacked(archive, folder, project, len(names))


@contextlib.contextmanager
def unpacked_project(archive: Path) -> Iterator[Unpacked]:
    """`unpack_project(archive)` for the block, the folder removed again when the block raises
    (it was made for a paper that was then refused), but for one case: a project whose main
    file cannot be chosen among several .tex files at its top (Overleaf keeps the choice in its
    settings, not in the zip) keeps its folder, for the author to name the main file there;
    the error says where it is."""
    unpacked = unpack_project(archive)
    try:
        find_main_file(unpacked.project)
    except ManuscriptError as exc:
        if len(list(unpacked.project.glob("*.tex"))) > 1:
            note = f"{archive.name} stays unpacked in {unpacked.folder}"
            raise ManuscriptError(f"{exc} ({note})") from None
        shutil.rmtree(unpacked.folder, ignore_errors=True)
        raise
    except BaseException:
        shutil.rmtree(unpacked.folder, ignore_errors=True)
        raise
    try:
        yield unpacked
    except BaseException:
        shutil.rmtree(unpacked.folder, ignore_errors=True)
        raise


# --- writing ----------------------------------------------------------------------------------


def _write_zip(path: Path, members: dict[str, bytes]) -> int:
    """A zip of `members` (sorted, deflated, mode 0644, one time stamp) written to `path`
    (`fs.publishing`: a complete file or none); returns its size."""
    stamp = time.localtime()[:6]
    with publishing(path, mode=0o644) as tmp:
        with zipfile.ZipFile(tmp, "w", compression=zipfile.ZIP_DEFLATED) as out:
            for name in sorted(members):
                info = zipfile.ZipInfo(name, date_time=stamp)
                info.external_attr = (stat.S_IFREG | 0o644) << 16
                info.compress_type = zipfile.ZIP_DEFLATED
                out.writestr(info, members[name])
        size = tmp.stat().st_size
    return size


@dataclass(frozen=True, slots=True)
class ProjectZip:
    """A project written as a zip: where, which files, its size, and what was left out."""

    path: Path
    files: list[str]
    size: int
    left_out: list[str]  # links that lead outside the project (never packed)


def write_project_zip(folder: Path, output: Path) -> ProjectZip:
    """The sources of the project at `folder` (its main file found there) as a zip at `output`,
    ready to upload to Overleaf ("New Project → Upload Project", or a project's "Upload"):
    every source file (`sources.source_files`: no build products, no `.pith-backup` copies, no
    version control), names relative to the folder. A symbolic link is packed as the file it
    leads to when that is inside the folder, and left out (and named) when not: a project zip
    is uploaded, and must not carry a file from elsewhere on this machine."""
    folder = Path(folder).resolve()
    main = find_main_file(folder)
    members: dict[str, bytes] = {}
    left_out: list[str] = []
    for relative, real in source_files(folder, main):
        if folder not in real.parents:
            left_out.append(relative)
            continue
        members[relative] = real.read_bytes()
    output = Path(output).resolve()
    if folder == output.parent or folder in output.parents:
        members.pop(output.relative_to(folder).as_posix(), None)  # never the zip itself
    size = _write_zip(output, members)
    return ProjectZip(output, sorted(members), size, left_out)


def write_files_zip(output: Path, files: list[Path]) -> ProjectZip:
    """`files` (by their names, at the top) as one zip at `output`: `pith latex sty --zip`."""
    members = {f.name: f.read_bytes() for f in files}
    size = _write_zip(Path(output), members)
    return ProjectZip(Path(output).resolve(), sorted(members), size, [])
