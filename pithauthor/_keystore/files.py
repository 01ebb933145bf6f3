"""Private files: written atomically with mode 0600 (`pithauthor._atomic`), never overwriting a
secret, read only when nobody else can read them."""

from __future__ import annotations

from pathlib import Path

from pithauthor._atomic import create_file, replace_file
from pithauthor._files import MAX_KEY_FILE_BYTES, read_user_text
from pithauthor._paths import check_private
from pithauthor.errors import KeyExists, KeyFileTampered


def create_private(path: Path, text: str) -> None:
    """Write a new 0600 file at `path`; KeyExists if something is already there."""
    try:
        create_file(path, text, mode=0o600)
    except FileExistsError:
        raise KeyExists(f"{path} already exists; refusing to overwrite it") from None


def replace_private(path: Path, text: str) -> None:
    """Atomically replace `path` (or create it) with a 0600 file holding `text`."""
    replace_file(path, text, mode=0o600)


def read_private(path: Path) -> str:
    """The text of `path` after checking that it and its folder are private."""
    check_private(path.parent, is_dir=True)
    check_private(path, is_dir=False)
    return read_user_text(path, KeyFileTampered, "a key store file", limit=MAX_KEY_FILE_BYTES)
