"""The one file-system module: where pithauthor keeps its data (PITH_HOME), private folders and
files, atomic and durable writes, and reading the files a user names (regular files only,
size-limited, one clear error each).
"""

from __future__ import annotations

import contextlib
import errno
import logging
import os
import stat
import sys
import threading
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path, PurePosixPath
from typing import Any

from pithauthor.errors import OutputError, PithError, UnsafePermissions
from pithauthor.protocol.canonical_json import JSONFault, parse_json

# Where pithauthor keeps its data: PITH_HOME, or the platform's user data folder (platformdirs,
# imported only when PITH_HOME is unset).
# Every private folder under it (keys, outbox, caches) is made with mode 0700 and is refused when
# others can reach it, with the command that fixes it.

APP_NAME = "pithauthor"


HOME_ENV = "PITH_HOME"


POSIX_MODES = os.name == "posix"


NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
"""os.open's flag that refuses a symbolic link as the last part of the path (0 where absent)."""


def home_path() -> Path:
    """Where the root data folder is: `$PITH_HOME`, else platformdirs' user data folder (not
    checked: `pith doctor` reports on it; everything else opens it by `pith_home`)."""
    override = os.environ.get(HOME_ENV)
    if override:
        return Path(override).expanduser()
    from platformdirs import user_data_dir

    return Path(user_data_dir(APP_NAME, appauthor=False))


def pith_home() -> Path:
    """The root data folder (`home_path`), checked each time a command opens it (`home_fault`):
    one owned by another user is refused (UnsafePermissions), one that others may write in is
    warned about, once per folder, where `report_home_warnings` says (the `pithauthor`
    logger unless told otherwise; `pith` prints `pith: warning: ...` on stderr)."""
    home = home_path()
    fault = home_fault(home)
    if fault is not None and fault[0] == "unsafe":
        raise UnsafePermissions(fault[1])
    if fault is not None and home not in _warned:
        _warned.add(home)
        _report[0](fault[1])
    return home


_warned: set[Path] = set()


_report: list[Callable[[str], None]] = [logging.getLogger("pithauthor").warning]


def report_home_warnings(to: Callable[[str], None]) -> None:
    """Send the warning about a root data folder others may write in to `to` from now on,
    once per folder (`pith` gives its stderr line, once per command)."""
    _report[0] = to
    _warned.clear()


def home_fault(home: Path) -> tuple[str, str] | None:
    """What is wrong with the root data folder: ("unsafe", why) when another user owns it (they
    can swap the keys folder or the outbox under it, whatever its mode); ("warn", why) when
    its group or others may write in it (they can rename or replace what is in it; the
    folders inside are 0700 and checked, so this is a warning, not a refusal); None when
    neither, when it does not exist yet, or without POSIX modes."""
    if not POSIX_MODES:
        return None
    try:
        st = home.stat()
    except OSError:
        return None  # not there yet: it is made 0700 when first needed
    if st.st_uid != os.getuid():
        return (
            "unsafe",
            f"{HOME_ENV} {home} is owned by another user (uid {st.st_uid}), who can change "
            f"what pith keeps there; use a folder of your own (set {HOME_ENV})",
        )
    mode = stat.S_IMODE(st.st_mode)
    if mode & 0o022:
        who = "others" if mode & 0o002 else "its group"
        return (
            "warn",
            f"{HOME_ENV} {home} has mode {oct(mode)[2:]}: {who} may rename or replace what "
            f"pith keeps there; fix it with: chmod 700 {home}",
        )
    return None


def private_dir(*parts: str) -> Path:
    """`pith_home()/parts...`, created with mode 0700; refused when others can reach it."""
    home = pith_home()
    with writing(home):
        if not home.exists():
            home.mkdir(parents=True, mode=0o700)
    path = home.joinpath(*parts)
    for depth in range(1, len(parts) + 1):
        folder = home.joinpath(*parts[:depth])
        if not folder.exists():
            with writing(folder):
                folder.mkdir(mode=0o700)
            if POSIX_MODES:  # mkdir's mode passes through the umask: set it exactly
                os.chmod(folder, 0o700)
    check_private(path, is_dir=True)
    return path


def loose_bits(path: Path) -> int:
    """The group/other permission bits of `path` (0 on systems without POSIX modes)."""
    if not POSIX_MODES:
        return 0
    return stat.S_IMODE(path.stat().st_mode) & 0o077


def check_private(path: Path, *, is_dir: bool) -> None:
    """Raise UnsafePermissions when `path` is reachable by others or owned by someone else."""
    if not POSIX_MODES:
        return
    st = path.stat()
    want = "700" if is_dir else "600"
    what = "folder" if is_dir else "file"
    if st.st_uid != os.getuid():
        raise UnsafePermissions(f"{what} {path} is owned by another user (uid {st.st_uid})")
    if stat.S_IMODE(st.st_mode) & 0o077:
        mode = oct(stat.S_IMODE(st.st_mode))[2:]
        raise UnsafePermissions(
            f"{what} {path} has mode {mode}, others can read it; fix it with: chmod {want} {path}"
        )


# Atomic file writes: a temp file in the same folder, fsync, then one rename (or link).
#
# A reader sees the old file or the new one, never a half-written one; a crash leaves at most a
# `.tmp-*` file behind, never a truncated target. Files are created with `mode` (0600 by default).
# `replace_file`/`create_file` write what is held in memory (`Data`: bytes, text as UTF-8, or
# pieces of bytes written in turn: `inject` writes a manuscript's new head, then a view of its
# untouched body); `publishing` lends the temp path to a writer that checks its file before it
# is published (`pith latex arxiv` proves its archive).

TEMP_PREFIX = ".tmp-"


# An output failure (errors.OutputError, exit 74) rather than bad input: the write itself was
# refused by the disk or the folder. EACCES and EPERM are output failures only where pithauthor
# writes (below); elsewhere (the CLI's last resort) they may be a file the user named to read.
OUTPUT_ERRNOS = frozenset(
    code
    for code in (errno.ENOSPC, getattr(errno, "EDQUOT", None), errno.EROFS, errno.EFBIG)
    if code is not None
)
_WRITE_ERRNOS = OUTPUT_ERRNOS | {errno.EACCES, errno.EPERM, errno.EIO}


def why_not_written(exc: OSError) -> str:
    """Why a write failed, as an author reads it (the system's own words after it)."""
    reason = {
        errno.ENOSPC: "the disk is full",
        getattr(errno, "EDQUOT", -1): "the disk quota is used up",
        errno.EROFS: "the file system is read-only",
        errno.EFBIG: "the file would be larger than this file system allows",
        errno.EACCES: "no permission to write there (a read-only folder?)",
        errno.EPERM: "no permission to write there",
    }.get(exc.errno or 0)
    told = exc.strerror or type(exc).__name__
    return f"{reason} ({told})" if reason else told


@contextlib.contextmanager
def writing(path: Path | str) -> Iterator[None]:
    """Turn a refused write of `path` (disk or quota full, read-only, no permission, an I/O
    error) into OutputError naming the file and why; other errors pass as they are (a caller
    acts on FileExistsError, FileNotFoundError, ...)."""
    try:
        yield
    except OSError as exc:
        if exc.errno not in _WRITE_ERRNOS:
            raise
        raise OutputError(f"cannot write {path}: {why_not_written(exc)}") from exc


Data = bytes | str | list[bytes | memoryview]


def _fsync_dir(folder: Path) -> None:
    """Make a rename in `folder` durable (a no-op where folders cannot be opened)."""
    with contextlib.suppress(OSError):
        _fsync_path(folder)


def _fsync_path(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _new_temp(folder: Path, mode: int) -> tuple[int, Path]:
    """A new, empty temp file in `folder` with exactly `mode`: (open descriptor, path)."""
    mode = stat.S_IMODE(mode)  # a file's st_mode may be given: keep its permission bits
    # os.urandom(8).hex() is what secrets.token_hex(8) returns; secrets loads hashlib and random
    tmp = folder / f"{TEMP_PREFIX}{os.urandom(8).hex()}"
    # O_EXCL: never a file (or a link) someone put there first; fchmod: the umask trimmed `mode`
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, mode)
    if hasattr(os, "fchmod"):
        os.fchmod(fd, mode)
    return fd, tmp


def _write_temp(folder: Path, data: Data, mode: int, durable: bool = True) -> Path:
    fd, tmp = _new_temp(folder, mode)
    try:
        with os.fdopen(fd, "wb") as handle:
            for piece in data if isinstance(data, list) else [data]:
                handle.write(piece.encode("utf-8") if isinstance(piece, str) else piece)
            handle.flush()
            if durable:
                os.fsync(handle.fileno())
    except BaseException:
        with contextlib.suppress(OSError):
            tmp.unlink()
        raise
    return tmp


def replace_file(
    path: Path, data: Data, *, mode: int = 0o600, backup: Path | None = None, durable: bool = True
) -> None:
    """Atomically replace `path` (or create it) with `data`.

    With `backup`, the old file is kept under that name first (a hard link when the file system
    allows, else a copy), so that at every moment one complete version exists. `durable=False`
    skips the two fsyncs, for what can be rebuilt (a cache whose unreadable file is a miss): a
    crash may then lose the new version, and readers still never see a half-written one."""
    replace_files([(Path(path), data, mode, backup)], durable=durable)


def replace_files(
    files: Sequence[tuple[Path, Data, int, Path | None]], *, durable: bool = True
) -> None:
    """`replace_file` for several (path, data, mode, backup): all written and synced before the
    first rename, each folder synced once after the last; a failed write renames nothing and
    leaves no temp. Why: ten fsyncs in a row were most of `pith latex inject`."""
    temps: list[Path] = []
    try:
        # a refused write names the file (several: their folder; none: nothing is written)
        with writing(files[0][0] if len(files) == 1 else files[0][0].parent if files else "-"):
            for path, data, mode, _ in files:
                temps.append(_write_temp(path.parent, data, mode, durable=False))
            if durable:
                _sync_files(temps)
            for (path, _, _, backup), tmp in zip(files, temps, strict=True):
                if backup is not None:
                    _keep(path, backup)
                os.replace(tmp, path)
    except BaseException:
        for tmp in temps:  # a temp already renamed is gone: nothing to remove
            with contextlib.suppress(OSError):
                tmp.unlink()
        raise
    if durable:
        for folder in dict.fromkeys(path.parent for path, *_ in files):
            _fsync_dir(folder)


def _sync_files(paths: list[Path]) -> None:
    """fsync every file at once, a thread each (fsync releases the GIL), so that the file
    system commits them together: about a third of the time of one after another on ext4."""
    errors: list[OSError] = []

    def sync(path: Path) -> None:
        try:
            _fsync_path(path)
        except OSError as exc:  # raised below, in the caller's thread
            errors.append(exc)

    threads = [threading.Thread(target=sync, args=(path,)) for path in paths[1:]]
    for thread in threads:
        thread.start()
    for path in paths[:1]:  # the first in this thread: one file (replace_file) starts none
        sync(path)
    for thread in threads:
        thread.join()
    if errors:
        raise errors[0]


def _keep(path: Path, backup: Path) -> None:
    try:
        os.link(path, backup)
    except OSError:
        import shutil  # here: it loads bz2 and lzma, and only a failed link needs it

        shutil.copy2(path, backup)


def create_file(path: Path, data: bytes | str, *, mode: int = 0o600) -> None:
    """Atomically create `path` holding `data`; FileExistsError if anything is already there."""
    path = Path(path)
    with writing(path):
        tmp = _write_temp(path.parent, data, mode)
        try:  # link, not rename: it fails when `path` exists, where a rename would replace it
            os.link(tmp, path)
        finally:
            with contextlib.suppress(OSError):
                tmp.unlink()
    _fsync_dir(path.parent)


@contextlib.contextmanager
def publishing(path: Path, *, mode: int = 0o600) -> Iterator[Path]:
    """A temp file beside `path` for the caller to write and check. When the block ends
    normally, the file is synced and replaces `path` in one rename; when it raises (a failed
    check included), the temp file is removed and `path` is left as it was."""
    path = Path(path)
    with writing(path):
        fd, tmp = _new_temp(path.parent, mode)
    os.close(fd)
    try:
        yield tmp  # the caller's writes: a refused one is the caller's to name (or fs's)
        with writing(path):
            _fsync_path(tmp)
            os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            tmp.unlink()
        raise
    _fsync_dir(path.parent)


def append_lines(path: Path, lines: bytes, *, mode: int = 0o600, durable: bool = True) -> int:
    """Append whole lines (`lines` ends with a newline) to `path` in one write, then fsync
    (unless not `durable`): a crash leaves whole lines or a torn last one, and a torn line left
    by an earlier crash is never glued to the first new one. A new file gets `mode`. Returns
    the file's size after the write."""
    with writing(path):
        fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, mode)
        try:
            size = os.fstat(fd).st_size
            if size:
                with open(path, "rb") as existing:
                    existing.seek(size - 1)
                    if existing.read(1) != b"\n":
                        lines = b"\n" + lines
            os.write(fd, lines)
            if durable:
                os.fsync(fd)
            return os.fstat(fd).st_size
        finally:
            os.close(fd)


# Unpacking an archive: one set of rules for every archive pithauthor reads (an author's project
# zip or tarball, `pithauthor.latex.archives`; the arXiv upload unpacked for its proof build),
# checked on the archive's list of members before a byte is written, and again on the bytes:
#
# - names are relative paths inside the folder: no absolute path, drive letter or `..` part,
#   no NUL, no name given twice, no file where another member needs a folder; `__MACOSX/` (the
#   resource forks the macOS Finder adds to a zip) is left out;
# - only regular files (and folder entries, skipped: folders are made for the files in them):
#   a symbolic or hard link, a device or a FIFO is refused (a link could point anywhere);
# - at most MAX_ARCHIVE_FILES files and MAX_UNPACKED_BYTES in all, and no zip member that
#   expands more than MAX_UNPACK_RATIO times (a bomb); a tar is refused as soon as its listing
#   passes the cap (listing a .tar.gz decompresses it), and the bytes written are counted,
#   since a declared size can lie;
# - files are written afresh (O_EXCL | O_NOFOLLOW), mode 0644 whatever the archive says, into a
#   temporary folder beside the destination, renamed into place only once all is unpacked.
#
# No `tarfile` extraction filter is used: they came in 3.11.4, and Debian 12's Python is 3.11.2
# (tests/test_platform.py).

MAX_ARCHIVE_FILES = 5000
"""The most files an archive may unpack to (a paper has tens to hundreds)."""

MAX_UNPACKED_BYTES = 512 * 1024 * 1024
"""The most bytes an archive may unpack to, in all (arXiv takes 50 MB; Overleaf projects with
large figures are bigger, but not ten times)."""

MAX_UNPACK_RATIO = 200
"""How many times a zip member may expand (text compresses 3-10 times; a bomb, millions)."""

_RATIO_FLOOR = 1024 * 1024  # members smaller than this are not judged by their ratio

_IGNORED_TOP = "__MACOSX"


class _Refused(Exception):
    """One member or the whole archive refused: `why`, and the member's name if any."""

    def __init__(self, why: str, name: str | None = None) -> None:
        super().__init__(why)
        self.why, self.name = why, name


def _member_name(raw: str) -> str | None:
    """The member's checked relative POSIX name; None for one left out (`__MACOSX/`)."""
    if "\x00" in raw:
        raise _Refused("its name holds a NUL byte", raw)
    name = raw.replace("\\", "/")  # a Windows tool's separator is a separator
    if name.startswith("/") or (len(name) > 1 and name[1] == ":"):
        raise _Refused("an absolute path", raw)
    parts = [p for p in PurePosixPath(name).parts if p not in ("", ".")]
    if ".." in parts:
        raise _Refused("it climbs out of the folder with ..", raw)
    if not parts or parts[0] == _IGNORED_TOP:
        return None
    return "/".join(parts)


def _zip_members(handle: Any, strict: bool) -> list[tuple[str, int, Any]]:
    members = []
    for info in handle.infolist():
        name = _member_name(info.filename)
        if name is None:
            continue
        if info.is_dir():
            if strict:
                raise _Refused("a folder entry", info.filename)
            continue
        mode = info.external_attr >> 16
        # 3: made on Unix, where the high bits hold the file's type (none given: a file)
        if info.create_system == 3 and stat.S_IFMT(mode) and not stat.S_ISREG(mode):
            kind = "a symbolic link" if stat.S_ISLNK(mode) else "not a regular file"
            raise _Refused(kind, info.filename)
        ratio = info.file_size // max(info.compress_size, 1)
        if info.file_size > _RATIO_FLOOR and ratio > MAX_UNPACK_RATIO:
            raise _Refused(
                f"it would expand {ratio} times (more than {MAX_UNPACK_RATIO}): a zip bomb",
                info.filename,
            )
        members.append((name, info.file_size, info))
    return members


def _tar_members(handle: Any, strict: bool) -> list[tuple[str, int, Any]]:
    members = []
    total = 0
    for info in handle:
        total += info.size
        if total > MAX_UNPACKED_BYTES:  # stop listing (decompressing) a bomb at the cap
            raise _Refused(f"it unpacks to more than {MAX_UNPACKED_BYTES // 2**20} MiB")
        name = _member_name(info.name)
        if name is None:
            continue
        if info.isdir() and not strict:
            continue
        if not info.isfile():
            kind = (
                "a symbolic link"
                if info.issym()
                else "a hard link"
                if info.islnk()
                else "a folder entry"
                if info.isdir()
                else "not a regular file"
            )
            raise _Refused(kind, info.name)
        members.append((name, info.size, info))
        if len(members) > MAX_ARCHIVE_FILES:
            break
    return members


def _check_totals(members: list[tuple[str, int, Any]]) -> None:
    if len(members) > MAX_ARCHIVE_FILES:
        raise _Refused(f"more than {MAX_ARCHIVE_FILES} files")
    total = sum(size for _, size, _ in members)
    if total > MAX_UNPACKED_BYTES:
        raise _Refused(f"it unpacks to more than {MAX_UNPACKED_BYTES // 2**20} MiB")
    names = {name for name, _, _ in members}
    if len(names) < len(members):
        twice = sorted(n for n in names if sum(1 for m in members if m[0] == n) > 1)[0]
        raise _Refused("it is in the archive twice", twice)
    for name in names:
        parent = name.rpartition("/")[0]
        while parent:
            if parent in names:
                raise _Refused("both a file and a folder", parent)
            parent = parent.rpartition("/")[0]


def unpack_archive(
    archive: Path,
    destination: Path,
    error: Callable[[str], Exception] = ValueError,
    *,
    strict: bool = False,
) -> list[str]:
    """Unpack `archive` (a zip, or a tar, gzip or not) into `destination`, which must not exist
    or be an empty folder, under the rules above; returns the names unpacked. `strict` refuses
    folder entries too (an archive pith packed itself has none). Anything refused is
    `error("ARCHIVE: 'NAME' is not a plain file inside it (WHY); nothing was unpacked")`, or
    without a name for the whole archive, and nothing is written. Folders outside this module
    (the LaTeX code) give their own error class, e.g. ManuscriptError."""
    import shutil
    import tarfile
    import tempfile  # (shutil) and zipfile (shutil, bz2, lzma): only an unpacking needs them
    import zipfile
    import zlib

    archive, destination = Path(archive), Path(destination)
    if destination.is_symlink() or (
        destination.exists() and (not destination.is_dir() or any(destination.iterdir()))
    ):
        raise error(
            f"{destination} already exists and is not an empty folder; nothing was unpacked"
        )
    # RuntimeError: an encrypted zip member; NotImplementedError: a compression zipfile lacks
    damaged = (
        zipfile.BadZipFile,
        tarfile.TarError,
        EOFError,
        zlib.error,
        ValueError,
        RuntimeError,
        NotImplementedError,
    )
    work = Path(tempfile.mkdtemp(prefix=f"{TEMP_PREFIX}unpack-", dir=destination.parent))
    try:
        with contextlib.ExitStack() as stack:
            try:
                if zipfile.is_zipfile(archive):
                    handle: Any = stack.enter_context(zipfile.ZipFile(archive))
                    members = _zip_members(handle, strict)
                else:
                    handle = stack.enter_context(tarfile.open(archive, "r:*"))
                    members = _tar_members(handle, strict)
            except (*damaged, OSError) as exc:
                raise _Refused(f"not a readable zip or tar archive ({exc})") from None
            _check_totals(members)
            left = min(sum(size for _, size, _ in members), MAX_UNPACKED_BYTES)
            for name, size, info in members:
                try:
                    source = (
                        handle.open(info)
                        if isinstance(handle, zipfile.ZipFile)
                        else handle.extractfile(info)
                    )
                    with source:
                        left -= _write_member(source, work / name, min(size, left), name)
                except damaged as exc:
                    raise _Refused(f"it cannot be read ({exc})", name) from None
        if destination.exists():
            destination.rmdir()  # empty, checked above: the unpacked folder takes its place
        os.rename(work, destination)
    except _Refused as refused:
        shutil.rmtree(work, ignore_errors=True)
        if refused.name is None:
            raise error(f"{archive}: {refused.why}; nothing was unpacked") from None
        raise error(
            f"{archive}: {refused.name!r} is not a plain file inside it ({refused.why}); "
            "nothing was unpacked"
        ) from None
    except BaseException:
        shutil.rmtree(work, ignore_errors=True)
        raise
    return [name for name, _, _ in members]


def _write_member(source: Any, target: Path, budget: int, name: str) -> int:
    """Copy one member to the new file `target` (O_EXCL | O_NOFOLLOW: never into a file or
    through a link already there); returns the bytes written, which may not pass `budget`."""
    target.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL | NOFOLLOW, 0o644)
    written = 0
    with os.fdopen(fd, "wb") as out:
        while chunk := source.read(1 << 16):
            written += len(chunk)
            if written > budget:
                raise _Refused("it holds more bytes than it declares (a bomb)", name)
            out.write(chunk)
    return written


def unpack_plain_files(archive: Path, folder: Path) -> list[str]:
    """Unpack the tar `archive` into the empty folder `folder` (`unpack_archive`, strict: the
    archive pith packed for arXiv, unpacked for its proof build): regular files only, each at
    a relative name inside `folder`, mode 0644, all or nothing; ValueError naming the entry
    otherwise. No tarfile filter: they came in 3.11.4 (tests/test_platform.py)."""
    return unpack_archive(archive, folder, ValueError, strict=True)


# Reading a file the user named: the one path every input file goes through.
#
# Only regular files are read (or standard input for `-`, where a command allows it). The file is
# opened without blocking and the opened descriptor is checked before a byte is read, so a FIFO,
# a device such as /dev/zero, a socket or a folder is refused at once instead of hanging or
# filling memory. Symbolic links are followed; a loop is one clear line. Each kind of input has a
# size limit (below), and at most limit + 1 bytes are ever read. Every fault becomes the caller's
# error class (an `InputError` for what the user names, the key store's own for its files)
# with one line that names the file and the fault.

_MIB = 1024 * 1024


MAX_JSON_BYTES = 256 * _MIB
"""JSON/JSONL documents: records, states, bundles, events (`verify`, `submit`, `--record`).
The one limit of a registry document: `pith` reads one up to it, from a file or a registry
(`net.MAX_ANSWER_BYTES`), and the local registry serves none larger (a merged state of some
250,000 citations; it served 64 MiB states `pith status` and `verify` refused)."""


MAX_METADATA_BYTES = 16 * _MIB
"""arXiv metadata (arXivRaw XML or JSON) and record files given to `pith registry add`."""


MAX_BIB_BYTES = 32 * _MIB
"""One .bib file."""


MAX_TEX_BYTES = 16 * _MIB
"""One .tex or .aux file."""


MAX_MANIFEST_BYTES = 1 * _MIB
"""A mirror manifest (`--trust-manifest`, `PITH_TRUST`)."""


MAX_KEY_FILE_BYTES = 1 * _MIB
"""Key store files, key backups, the local registry's key and the token store."""


MAX_PDF_BYTES = 64 * _MIB
"""A paper's PDF (`pith verify --paper-pdf FILE`); arXiv's own limit on a submission is 50 MB."""


MAX_SECRET_BYTES = 4096
"""A passphrase file or a token file."""


STDIN = "-"


STDIN_NAME = "standard input"


def _shown(path: Path | str, stdin: bool) -> str:
    """How messages name the input: the path, or "standard input" for `-` where allowed."""
    return STDIN_NAME if stdin and str(path) == STDIN else str(path)


def _size(limit: int) -> str:
    return f"{limit // _MIB} MiB" if limit >= _MIB and limit % _MIB == 0 else f"{limit} bytes"


def _kind_of(mode: int) -> str | None:
    """What a non-regular file is, in words (None for a regular file)."""
    if stat.S_ISREG(mode):
        return None
    if stat.S_ISDIR(mode):
        return "a folder"
    if stat.S_ISFIFO(mode):
        return "a FIFO (named pipe)"
    if stat.S_ISSOCK(mode):
        return "a socket"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    return "not a regular file"


def _refuse(exc: OSError, path: str, error: type[PithError], what: str) -> PithError:
    if exc.errno == errno.ENOENT:
        return error(f"{path}: no such file")
    if exc.errno == errno.ELOOP:
        return error(f"{path}: a loop of symbolic links (or too many of them)")
    if exc.errno == errno.EISDIR:
        return error(f"{path} is a folder, not {what}")
    if exc.errno == errno.ENXIO:
        return error(f"{path} is a socket or device, not {what}")
    if exc.errno == errno.ENOTDIR:
        return error(f"{path}: a part of the path is not a folder")
    return error(f"{path}: cannot be read ({exc.strerror or exc})")


def _read_regular(
    path: str, error: type[PithError], what: str, limit: int, head: int | None = None
) -> bytes:
    try:
        before = os.stat(path)  # no side effect: decide before opening anything odd
        kind = _kind_of(before.st_mode)
        if kind is not None:
            raise error(f"{path} is {kind}, not {what}")
        flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0)
        fd = os.open(path, flags | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_BINARY", 0))
    except OSError as exc:
        raise _refuse(exc, path, error, what) from None
    except ValueError:  # an embedded NUL in the name
        raise error(f"{path!r} is not a file name") from None
    with os.fdopen(fd, "rb") as handle:
        try:
            opened = os.fstat(fd)  # the file actually opened (it may have been swapped)
            kind = _kind_of(opened.st_mode)
            if kind is not None:
                raise error(f"{path} is {kind}, not {what}")
            if opened.st_size > limit:
                raise error(f"{path} is larger than {_size(limit)}, the limit for {what}")
            if head is not None:
                data = handle.read(head)
            else:
                # read(n) allocates n bytes before it reads: asking for the limit (16 MiB for
                # a .tex) cost 20x the read of a 2.5 MB file. The size known, one byte more
                # tells whether the file grew since; then read on, to the limit.
                data = handle.read(opened.st_size + 1)
                if len(data) > opened.st_size:
                    data += handle.read(limit + 1 - len(data))
        except OSError as exc:
            raise _refuse(exc, path, error, what) from None
    if len(data) > limit:
        raise error(f"{path} is larger than {_size(limit)}, the limit for {what}")
    return data


def _read_stdin(error: type[PithError], what: str, limit: int) -> bytes:
    stream = getattr(sys.stdin, "buffer", None)
    if stream is None:
        raise error(f"standard input is closed; cannot read {what}")
    data: bytes = stream.read(limit + 1)
    if len(data) > limit:
        raise error(f"standard input is larger than {_size(limit)}, the limit for {what}")
    return data


def read_user_file(
    path: Path | str,
    error: type[PithError],
    what: str,
    *,
    limit: int,
    stdin: bool = False,
    text_only: bool = True,
    head: int | None = None,
) -> bytes:
    """The bytes of `path` (stdin for `-` when `stdin`), or `error` saying why not.

    `what` names the kind of file expected ("a .bib file"); `limit` is its size limit in bytes;
    with `text_only` a file holding NUL bytes is refused as binary. `head` reads only that many
    first bytes of a regular file (the same checks of its kind and size; the NUL check then
    covers only those bytes): a look at magic comments need not read a whole manuscript.
    """
    name = _shown(path, stdin)
    if stdin and str(path) == STDIN:
        data = _read_stdin(error, what, limit)
    else:
        data = _read_regular(name, error, what, limit, head)
    if text_only and b"\x00" in data:
        raise error(f"{name} is a binary file, not {what}")
    return data


def decode_utf8(data: bytes, name: str, error: type[PithError], what: str) -> str:
    """UTF-8 text (a leading byte order mark dropped), or `error` naming the first bad byte."""
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        raise error(
            f"{name} is not UTF-8 text (byte 0x{data[exc.start]:02x} on line {line}), not {what}"
        ) from None


def read_user_text(
    path: Path | str,
    error: type[PithError],
    what: str,
    *,
    limit: int,
    stdin: bool = False,
) -> str:
    """The UTF-8 text of `path` (see `read_user_file`)."""
    data = read_user_file(path, error, what, limit=limit, stdin=stdin)
    return decode_utf8(data, _shown(path, stdin), error, what)


def read_user_json(
    path: Path | str,
    error: type[PithError],
    what: str,
    *,
    limit: int,
    stdin: bool = False,
) -> Any:
    """One strict JSON document (`parse_json`) from `path`; an empty file is refused."""
    text = read_user_text(path, error, what, limit=limit, stdin=stdin)
    name = _shown(path, stdin)
    if not text.strip():
        raise error(f"{name} is empty, not {what}")
    try:
        return parse_json(text)
    except JSONFault as exc:
        raise error(f"{name} is not valid JSON: {exc}") from None


def check_output_file(path: Path | str, error: type[PithError], what: str) -> None:
    """Refuse, before any work is done, an output path that is not (or cannot become) a regular
    file: a folder, FIFO, device or socket, a symbolic link loop, or a missing parent folder."""
    name = str(path)
    try:
        mode = os.stat(name).st_mode
    except FileNotFoundError:
        if os.path.islink(name):
            raise error(f"{name} is a symbolic link to nothing; not {what}") from None
        parent = os.path.dirname(os.path.abspath(name))
        if not os.path.isdir(parent):
            raise error(f"the folder of {name} does not exist") from None
        return
    except OSError as exc:
        raise _refuse(exc, name, error, what) from None
    except ValueError:
        raise error(f"{name!r} is not a file name") from None
    kind = _kind_of(mode)
    if kind is not None:
        raise error(f"{name} is {kind}, not {what}")
