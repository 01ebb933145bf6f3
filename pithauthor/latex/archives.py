r"""Archives a manuscript comes in or goes out as: a project's source archive (an Overleaf
"Download → Source" zip, or an arXiv source tarball) unpacked into a folder beside it, a project
written back as a zip ready to upload to Overleaf, the package's LaTeX files as one zip, and the
arXiv upload unpacked to be proven (`pithauthor.latex.arxiv`).

Every archive pithauthor reads goes through `unpack` and its one set of rules, checked on the
archive's list of members before a byte is written, and again on the bytes as they come out:

- names are relative paths inside the folder: no absolute path, drive letter or `..` part, no
  NUL, no name given twice; `__MACOSX/` (the resource forks the macOS Finder adds to a zip)
  is left out;
- only regular files and folders: a symbolic or hard link, a device or a FIFO is refused (a
  link could point anywhere once unpacked);
- at most MAX_MEMBERS files and MAX_UNPACKED_BYTES in all, and no zip member that expands more
  than MAX_RATIO times (a zip bomb): the sizes the archive declares are checked first, and the
  bytes actually written are counted too, since a declared size can lie.

Anything else is one line (ManuscriptError, exit 2) naming the archive and the member, and
nothing is left behind: the files are written into a temporary folder beside the destination,
which is renamed into place only when the whole archive is unpacked.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import stat
import tarfile
import tempfile
import time
import zipfile
import zlib
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import IO

from pithauthor.errors import ManuscriptError
from pithauthor.fs import publishing
from pithauthor.latex.sources import ensure_writable_folder, find_main_file, source_files

MAX_MEMBERS = 5000
"""The most files an archive may unpack to (a paper has tens to hundreds)."""

MAX_UNPACKED_BYTES = 512 * 1024 * 1024
"""The most bytes an archive may unpack to, in all (arXiv takes 50 MB; Overleaf projects with
large figures are bigger, but not ten times)."""

MAX_RATIO = 200
"""How many times a zip member may expand (text compresses 3-10 times; a bomb, millions)."""

_RATIO_FLOOR = 1024 * 1024  # members smaller than this are not judged by their ratio

_IGNORED_TOP = "__MACOSX"

ARCHIVE_SUFFIXES = (".zip", ".tar.gz", ".tgz", ".tar")
"""The archives `inject` and `arxiv` take in place of a folder."""

_CHUNK = 1 << 16


@dataclass(frozen=True, slots=True)
class _Member:
    name: str  # the checked relative name (POSIX)
    size: int  # as the archive declares it
    open: object  # what `_open_member` needs: a ZipInfo or a TarInfo


def is_archive(path: Path) -> bool:
    """Whether `path` names a project archive (by its name: .zip, .tar.gz, .tgz, .tar)."""
    return path.name.lower().endswith(ARCHIVE_SUFFIXES)


def unpacked_name(archive: Path) -> Path:
    """The folder beside `archive` that it unpacks into: `paper.zip` -> `paper/`."""
    lower = archive.name.lower()
    for suffix in ARCHIVE_SUFFIXES:
        if lower.endswith(suffix):
            return archive.with_name(archive.name[: -len(suffix)] or "project")
    return archive.with_name(archive.name + ".unpacked")


def _refuse(archive: Path, why: str) -> ManuscriptError:
    return ManuscriptError(f"{archive}: {why}; nothing was unpacked")


def _checked_name(archive: Path, raw: str) -> str | None:
    """The member's relative POSIX name, None for one that is left out (`__MACOSX/`, a folder
    entry), or ManuscriptError for one that could land outside the folder."""
    if "\x00" in raw:
        raise _refuse(archive, f"a member's name holds a NUL byte ({raw!r})")
    name = raw.replace("\\", "/")  # a Windows tool's separator is a separator
    path = PurePosixPath(name)
    drive = len(name) > 1 and name[1] == ":"
    if name.startswith("/") or drive:
        raise _refuse(archive, f"{raw} is an absolute path")
    if ".." in path.parts:
        raise _refuse(archive, f"{raw} points outside the folder (..)")
    parts = [p for p in path.parts if p not in ("", ".")]
    if not parts or parts[0] == _IGNORED_TOP:
        return None
    return "/".join(parts)


def _zip_members(archive: Path, handle: zipfile.ZipFile) -> list[_Member]:
    members = []
    for info in handle.infolist():
        name = _checked_name(archive, info.filename)
        if name is None or info.is_dir():
            continue
        mode = info.external_attr >> 16
        # 3: made on Unix, where the high bits hold the file's type (none given: a file)
        if info.create_system == 3 and stat.S_IFMT(mode) and not stat.S_ISREG(mode):
            kind = "a symbolic link" if stat.S_ISLNK(mode) else "not a regular file"
            raise _refuse(archive, f"{name} is {kind}; only files and folders are unpacked")
        if info.file_size > _RATIO_FLOOR and info.file_size > MAX_RATIO * max(
            info.compress_size, 1
        ):
            raise _refuse(
                archive,
                f"{name} would expand {info.file_size // max(info.compress_size, 1)} times "
                f"(more than {MAX_RATIO}): a zip bomb, not a paper",
            )
        members.append(_Member(name, info.file_size, info))
    return members


def _tar_members(archive: Path, handle: tarfile.TarFile) -> list[_Member]:
    members = []
    total = 0
    # a tar is listed by reading through it (a .tar.gz: decompressing it): the sizes are
    # added up as it is listed, and listing stops at the caps, not at the end of a bomb
    for info in handle:
        total += info.size
        if total > MAX_UNPACKED_BYTES:
            raise _refuse(archive, f"it unpacks to more than {MAX_UNPACKED_BYTES // 2**20} MiB")
        name = _checked_name(archive, info.name)
        if name is None or info.isdir():
            continue
        if not info.isfile():
            kind = "a link" if info.issym() or info.islnk() else "not a regular file"
            raise _refuse(archive, f"{name} is {kind}; only files and folders are unpacked")
        members.append(_Member(name, info.size, info))
        if len(members) > MAX_MEMBERS:  # a tar is read as it is listed: stop early
            break
    return members


def _check_totals(archive: Path, members: list[_Member]) -> None:
    if len(members) > MAX_MEMBERS:
        raise _refuse(archive, f"more than {MAX_MEMBERS} files; is this a paper's project?")
    total = sum(m.size for m in members)
    if total > MAX_UNPACKED_BYTES:
        raise _refuse(
            archive,
            f"it unpacks to {total / 1e6:.0f} MB, more than {MAX_UNPACKED_BYTES // 2**20} MiB",
        )
    seen: set[str] = set()
    for member in members:
        # a name given twice, or a file where another member needs a folder
        if member.name in seen:
            raise _refuse(archive, f"{member.name} is in the archive twice")
        seen.add(member.name)
    for member in members:
        for parent in PurePosixPath(member.name).parents:
            if str(parent) in seen:
                raise _refuse(archive, f"{parent} is both a file and a folder")


# RuntimeError: an encrypted zip member; NotImplementedError: a compression zipfile lacks
_DAMAGED = (
    zipfile.BadZipFile,
    tarfile.TarError,
    EOFError,
    zlib.error,
    ValueError,
    RuntimeError,
    NotImplementedError,
)


def _opened(archive: Path, stack: contextlib.ExitStack) -> tuple[list[_Member], object]:
    """The archive's checked members, and the open archive (closed with `stack`) they are
    read from."""
    try:
        if zipfile.is_zipfile(archive):
            handle: object = stack.enter_context(zipfile.ZipFile(archive))
            assert isinstance(handle, zipfile.ZipFile)
            members = _zip_members(archive, handle)
        else:
            handle = stack.enter_context(tarfile.open(archive, "r:*"))  # noqa: SIM115
            assert isinstance(handle, tarfile.TarFile)
            members = _tar_members(archive, handle)
    except (*_DAMAGED, OSError) as exc:
        raise _refuse(archive, f"not a readable zip or tar archive ({exc})") from None
    _check_totals(archive, members)
    return members, handle


def _source(handle: object, member: _Member) -> IO[bytes]:
    if isinstance(handle, zipfile.ZipFile):
        assert isinstance(member.open, zipfile.ZipInfo)
        return handle.open(member.open)
    assert isinstance(handle, tarfile.TarFile) and isinstance(member.open, tarfile.TarInfo)
    stream = handle.extractfile(member.open)
    assert stream is not None  # a regular file: checked
    return stream


def _write_member(archive: Path, source: IO[bytes], target: Path, budget: int) -> int:
    """Copy one member to `target` (a new file: O_EXCL, never through a link); returns the
    bytes written, which may not pass `budget` whatever the archive declared."""
    target.parent.mkdir(parents=True, exist_ok=True)
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0)
    fd = os.open(target, flags, 0o644)
    written = 0
    with os.fdopen(fd, "wb") as out:
        while chunk := source.read(_CHUNK):
            written += len(chunk)
            if written > budget:
                raise _refuse(archive, "it unpacks to more bytes than it declares (a bomb)")
            out.write(chunk)
    return written


def unpack(archive: Path, destination: Path) -> list[str]:
    """Unpack `archive` (zip or tar, gzip or not) into the new folder `destination` under the
    module's rules; returns the names unpacked. `destination` must not exist: it appears whole
    or not at all."""
    if destination.exists() or destination.is_symlink():
        raise ManuscriptError(f"{destination} already exists; nothing was unpacked")
    parent = destination.parent
    ensure_writable_folder(parent, f"{archive.name} cannot be unpacked there")
    work = Path(tempfile.mkdtemp(prefix=".tmp-unpack-", dir=parent))
    try:
        with contextlib.ExitStack() as stack:
            members, handle = _opened(archive, stack)
            declared = sum(m.size for m in members)
            left = min(declared, MAX_UNPACKED_BYTES)
            for member in members:
                try:
                    with _source(handle, member) as source:
                        # a member may not write more than it declares, nor the whole more
                        # than the archive declares
                        left -= _write_member(
                            archive, source, work / member.name, min(member.size, left)
                        )
                except _DAMAGED as exc:
                    why = f"{member.name} cannot be read ({exc})"
                    raise _refuse(archive, why) from None
        os.rename(work, destination)
    except BaseException:
        shutil.rmtree(work, ignore_errors=True)
        raise
    return [m.name for m in members]


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
