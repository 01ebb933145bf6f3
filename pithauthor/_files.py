"""Reading a file the user named: one place that turns every way it can fail into one line."""

from __future__ import annotations

import sys
from pathlib import Path

from pithauthor.errors import InputError


def read_user_file(
    path: Path | str,
    error: type[InputError],
    what: str,
    *,
    stdin: bool = False,
    text_only: bool = True,
) -> bytes:
    """The bytes of `path` (stdin for `-` when `stdin`), or `error` saying why not.

    `what` names the kind of file expected ("a .bib file"); with `text_only` a file holding NUL
    bytes is refused as binary.
    """
    if stdin and str(path) == "-":
        data = sys.stdin.buffer.read()
    else:
        try:
            data = Path(path).read_bytes()
        except FileNotFoundError:
            raise error(f"{path}: no such file") from None
        except IsADirectoryError:
            raise error(f"{path} is a folder, not {what}") from None
        except OSError as exc:
            raise error(f"{path}: cannot be read ({exc.strerror or exc})") from None
    if text_only and b"\x00" in data:
        raise error(f"{path} is a binary file, not {what}")
    return data
