"""Private files: written atomically with mode 0600, never overwriting a secret, read only when
nobody else can read them."""

from __future__ import annotations

import contextlib
import os
import secrets
from pathlib import Path

from pithauthor._files import MAX_KEY_FILE_BYTES, read_user_text
from pithauthor._paths import check_private
from pithauthor.errors import KeyExists, KeyFileTampered


def _write_temp(folder: Path, text: str) -> Path:
    tmp = folder / f".tmp-{secrets.token_hex(8)}"
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    try:
        if hasattr(os, "fchmod"):
            os.fchmod(fd, 0o600)
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(text)
            handle.flush()
            os.fsync(handle.fileno())
    except BaseException:
        with contextlib.suppress(OSError):
            tmp.unlink()
        raise
    return tmp


def create_private(path: Path, text: str) -> None:
    """Write a new 0600 file at `path`; KeyExists if something is already there."""
    tmp = _write_temp(path.parent, text)
    try:
        os.link(tmp, path)
    except FileExistsError:
        raise KeyExists(f"{path} already exists; refusing to overwrite it") from None
    finally:
        with contextlib.suppress(OSError):
            tmp.unlink()


def replace_private(path: Path, text: str) -> None:
    """Atomically replace `path` (or create it) with a 0600 file holding `text`."""
    tmp = _write_temp(path.parent, text)
    try:
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            tmp.unlink()
        raise


def read_private(path: Path) -> str:
    """The text of `path` after checking that it and its folder are private."""
    check_private(path.parent, is_dir=True)
    check_private(path, is_dir=False)
    return read_user_text(path, KeyFileTampered, "a key store file", limit=MAX_KEY_FILE_BYTES)
