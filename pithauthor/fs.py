"""The one file-system module: where pithauthor keeps its data (PITH_HOME), private folders and
files, atomic and durable writes, and reading the files a user names (regular files only,
size-limited, one clear error each).
"""

from __future__ import annotations

import contextlib
import errno
import os
import stat
import sys
import threading
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from pithauthor.errors import PithError, UnsafePermissions
from pithauthor.protocol.canonical_json import JSONFault, parse_json

__all__ = [
    "MAX_JSON_BYTES",
    "MAX_METADATA_BYTES",
    "MAX_SECRET_BYTES",
    "check_output_file",
    "read_user_text",
    "replace_file",
    "replace_files",
]


# Where pithauthor keeps its data: PITH_HOME, or the platform's user data folder (platformdirs,
# imported only when PITH_HOME is unset).
# Every private folder under it (keys, outbox, caches) is made with mode 0700 and is refused when
# others can reach it, with the command that fixes it.

APP_NAME = "pithauthor"


HOME_ENV = "PITH_HOME"


POSIX_MODES = os.name == "posix"


def pith_home() -> Path:
    """The root data folder: `$PITH_HOME`, else platformdirs' user data folder."""
    override = os.environ.get(HOME_ENV)
    if override:
        return Path(override).expanduser()
    from platformdirs import user_data_dir

    return Path(user_data_dir(APP_NAME, appauthor=False))


def private_dir(*parts: str) -> Path:
    """`pith_home()/parts...`, created with mode 0700; refused when others can reach it."""
    home = pith_home()
    if not home.exists():
        home.mkdir(parents=True, mode=0o700)
    path = home.joinpath(*parts)
    for depth in range(1, len(parts) + 1):
        folder = home.joinpath(*parts[:depth])
        if not folder.exists():
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
    leaves no temp. Why: ten fsyncs in a row were most of `pith latex inject` (issue 27)."""
    temps: list[Path] = []
    try:
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
    fd, tmp = _new_temp(path.parent, mode)
    os.close(fd)
    try:
        yield tmp
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
250,000 citations; issue 39: it served 64 MiB states `pith status` and `verify` refused)."""


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
