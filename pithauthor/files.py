"""The author's files: read what the user names (regular files only, size-limited, `-` for
stdin where allowed), refuse an output path before any work, and replace a file atomically.

The rules live in `pithauthor._files` (reading) and `pithauthor._atomic` (writing); this is
their public face, for the command line and for scripts that take paths from users.
"""

from __future__ import annotations

from pithauthor._atomic import replace_file
from pithauthor._files import (
    MAX_JSON_BYTES,
    MAX_METADATA_BYTES,
    MAX_SECRET_BYTES,
    check_output_file,
    read_user_text,
)

__all__ = [
    "MAX_JSON_BYTES",
    "MAX_METADATA_BYTES",
    "MAX_SECRET_BYTES",
    "check_output_file",
    "read_user_text",
    "replace_file",
]
