"""Atomic file writes: a temp file in the same folder, fsync, then one rename (or link).

A reader sees the old file or the new one, never a half-written one; a crash leaves at most a
`.tmp-*` file behind, never a truncated target. Files are created with `mode` (0600 by default).
`replace_file`/`create_file` write bytes held in memory; `publishing` lends the temp path to a
writer that checks its file before it is published (`pith latex arxiv` proves its archive).
"""

from __future__ import annotations

import contextlib
import os
import secrets
import shutil
import stat
from collections.abc import Iterator
from pathlib import Path

TEMP_PREFIX = ".tmp-"


def _fsync_dir(folder: Path) -> None:
    """Make a rename in `folder` durable (a no-op where folders cannot be opened)."""
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        with contextlib.suppress(OSError):
            os.fsync(fd)
    finally:
        os.close(fd)


def _new_temp(folder: Path, mode: int) -> tuple[int, Path]:
    """A new, empty temp file in `folder` with exactly `mode`: (open descriptor, path)."""
    mode = stat.S_IMODE(mode)  # a file's st_mode may be given: keep its permission bits
    tmp = folder / f"{TEMP_PREFIX}{secrets.token_hex(8)}"
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, mode)
    if hasattr(os, "fchmod"):
        os.fchmod(fd, mode)
    return fd, tmp


def _write_temp(folder: Path, data: bytes, mode: int, durable: bool = True) -> Path:
    fd, tmp = _new_temp(folder, mode)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            if durable:
                os.fsync(handle.fileno())
    except BaseException:
        with contextlib.suppress(OSError):
            tmp.unlink()
        raise
    return tmp


def _bytes(data: bytes | str) -> bytes:
    return data.encode("utf-8") if isinstance(data, str) else data


def replace_file(
    path: Path,
    data: bytes | str,
    *,
    mode: int = 0o600,
    backup: Path | None = None,
    durable: bool = True,
) -> None:
    """Atomically replace `path` (or create it) with `data`.

    With `backup`, the old file is kept under that name first (a hard link when the file system
    allows, else a copy), so that at every moment one complete version exists. `durable=False`
    skips the two fsyncs, for what can be rebuilt (a cache whose unreadable file is a miss): a
    crash may then lose the new version, and readers still never see a half-written one."""
    path = Path(path)
    tmp = _write_temp(path.parent, _bytes(data), mode, durable)
    try:
        if backup is not None:
            _keep(path, backup)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            tmp.unlink()
        raise
    if durable:
        _fsync_dir(path.parent)


def _keep(path: Path, backup: Path) -> None:
    try:
        os.link(path, backup)
    except OSError:
        shutil.copy2(path, backup)


def create_file(path: Path, data: bytes | str, *, mode: int = 0o600) -> None:
    """Atomically create `path` holding `data`; FileExistsError if anything is already there."""
    path = Path(path)
    tmp = _write_temp(path.parent, _bytes(data), mode)
    try:
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
        fd = os.open(tmp, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)
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
