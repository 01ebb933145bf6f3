"""Reading a file the user named: the one path every input file goes through.

Only regular files are read (or standard input for `-`, where a command allows it). The file is
opened without blocking and the opened descriptor is checked before a byte is read, so a FIFO,
a device such as /dev/zero, a socket or a folder is refused at once instead of hanging or
filling memory. Symbolic links are followed; a loop is one clear line. Each kind of input has a
size limit (below), and at most limit + 1 bytes are ever read. Every fault becomes the caller's
error class (an `InputError` for what the user names, the key store's own for its files)
with one line that names the file and the fault.
"""

from __future__ import annotations

import errno
import os
import stat
import sys
from pathlib import Path
from typing import Any

from pithauthor._core.strict_json import JSONFault, parse_json
from pithauthor.errors import PithError

_MIB = 1024 * 1024

MAX_JSON_BYTES = 64 * _MIB
"""JSON/JSONL documents: records, states, bundles, events (`verify`, `submit`, `--record`)."""
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
