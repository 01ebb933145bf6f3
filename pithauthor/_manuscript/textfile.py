"""A text file read so that it can be written back byte for byte: encoding, BOM, newlines kept."""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass
from pathlib import Path

from pithauthor._files import MAX_TEX_BYTES, read_user_file
from pithauthor.errors import ManuscriptError

_BOM = b"\xef\xbb\xbf"


@dataclass(frozen=True, slots=True)
class TextFile:
    """The decoded text of a file and what is needed to encode it back identically."""

    path: Path
    raw: bytes
    text: str
    encoding: str  # "utf-8" or "latin-1"
    bom: bool
    newline: str  # "\n" or "\r\n": the file's line ending (that of its first line)

    def encode(self, text: str) -> bytes:
        """`text` in the file's own encoding (and BOM)."""
        try:
            body = text.encode(self.encoding)
        except UnicodeEncodeError as exc:
            raise ManuscriptError(
                f"{self.path}: the new text cannot be written in {self.encoding}: {exc.reason}"
            ) from None
        return (_BOM + body) if self.bom else body


def read_text_file(path: Path) -> TextFile:
    """Read `path`; refuse binary files; UTF-8 (with or without BOM) else Latin-1."""
    raw = read_user_file(path, ManuscriptError, "a LaTeX file", limit=MAX_TEX_BYTES)
    bom = raw.startswith(_BOM)
    body = raw[len(_BOM) :] if bom else raw
    try:
        text, encoding = body.decode("utf-8"), "utf-8"
    except UnicodeDecodeError:
        if bom:
            raise ManuscriptError(f"{path} starts with a UTF-8 BOM but is not UTF-8") from None
        text, encoding = body.decode("latin-1"), "latin-1"
    first = text.find("\n")
    newline = "\r\n" if first > 0 and text[first - 1] == "\r" else "\n"
    return TextFile(path=path, raw=raw, text=text, encoding=encoding, bom=bom, newline=newline)


def write_target(path: Path) -> Path:
    """The file to write in place of `path`: `path` itself, or, when it is a symbolic link, the
    regular file it ends at, so that the link is kept (an atomic rename over the link would
    replace it with a copy). A dangling or looping link is refused."""
    if not path.is_symlink():
        return path
    try:
        target = path.resolve(strict=True)
    except (OSError, RuntimeError) as exc:  # RuntimeError: a loop, before Python 3.13
        reason = getattr(exc, "strerror", None) or str(exc)
        raise ManuscriptError(f"{path} is a symbolic link that leads nowhere ({reason})") from None
    if not target.is_file():
        raise ManuscriptError(f"{path} is a symbolic link to {target}, which is not a regular file")
    return target


def ensure_writable(path: Path) -> None:
    """Refuse a read-only file (by its mode bits, so that root is refused too) or folder."""
    try:
        mode = path.stat().st_mode
    except OSError as exc:
        raise ManuscriptError(f"{path}: cannot stat ({exc.strerror})") from None
    if not mode & stat.S_IWUSR or not os.access(path, os.W_OK):
        raise ManuscriptError(f"{path} is read-only; make it writable to add the badge")
    ensure_writable_folder(path.parent, f"cannot replace {path.name} safely")


def ensure_writable_folder(folder: Path, why: str = "nothing was written") -> None:
    """Refuse a read-only folder (by its mode bits too, so that root is refused as well)."""
    try:
        mode = folder.stat().st_mode
    except OSError as exc:
        raise ManuscriptError(f"{folder}: cannot stat ({exc.strerror})") from None
    if not mode & stat.S_IWUSR or not os.access(folder, os.W_OK | os.X_OK):
        raise ManuscriptError(f"{folder} is not writable; {why}")


def backup_path(path: Path) -> Path:
    """`NAME.pith-backup`, or `NAME.pith-backup.N` with the first free N: never overwritten."""
    candidate = path.with_name(path.name + ".pith-backup")
    number = 1
    while candidate.exists():
        candidate = path.with_name(f"{path.name}.pith-backup.{number}")
        number += 1
    return candidate
