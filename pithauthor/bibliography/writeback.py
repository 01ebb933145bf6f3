"""`--write-back`: add `eprint = {ID}` and `archivePrefix = {arXiv}` to entries, inserting bytes
after each entry's last field (a `,` first when that field has none) and changing or removing
no byte of the file (docs/cite.md lists the bytes inserted).

The new fields follow the entry's own layout (indent, spaces around `=`, trailing comma, line
ending). The edited text is parsed again and must give each entry its id before anything is
written; the old file is kept as `NAME.pith-backup` (as `pith latex inject` does), and the new
one replaces it atomically. A symbolic link is followed: its target is edited.
"""

from __future__ import annotations

import os
import re
import stat
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pithauthor.bibliography.identifiers import find_identifier
from pithauthor.bibliography.reader import _evaluate, blank_comments
from pithauthor.errors import BibliographyError
from pithauthor.fs import MAX_BIB_BYTES, read_user_file, replace_file
from pithauthor.latex.sources import backup_path

# bibtexparser is imported where files are parsed: it takes longer to load than Typer.

_FIELD_LINE = re.compile(r"\n([ \t]*)[A-Za-z][\w:.+-]*([ \t]*=[ \t]*)")
_INLINE_SEP = re.compile(r",([ \t]*)[A-Za-z][\w:.+-]*([ \t]*=[ \t]*)")
_BOM = b"\xef\xbb\xbf"


@dataclass(frozen=True, slots=True)
class WriteBack:
    """What was done to one file."""

    path: Path
    written: tuple[str, ...]  # keys that got their eprint
    skipped: tuple[tuple[str, str], ...]  # (key, why not)
    backup: Path | None


def _decode(data: bytes) -> tuple[str, str, int]:
    """The text as the reader decodes it, the codec that re-encodes it exactly, BOM length."""
    bom = len(_BOM) if data.startswith(_BOM) else 0
    # UTF-8, else Windows' cp1252 (its quotes and dashes are not latin-1), else latin-1, which
    # takes any byte; only ASCII is inserted, so each codec writes the new fields exactly
    for codec in ("utf-8", "cp1252", "latin-1"):
        try:
            return data[bom:].decode(codec), codec, bom
        except UnicodeDecodeError:
            continue
    raise AssertionError("latin-1 decodes every byte")  # pragma: no cover


def insertions(
    text: str, ids: Mapping[str, str]
) -> tuple[list[tuple[int, str]], list[tuple[str, str]]]:
    """(position in `text`, text to insert) per entry of `ids`, and the entries left alone.

    Entries are found in `text` with its `%` comments blanked, as the reader reads it: a
    commented-out copy of an entry is not written to (positions are the same in both)."""
    from bibtexparser.entrypoint import parse_string

    text = blank_comments(text)
    library = parse_string(text, parse_stack=[])
    found: list[tuple[int, str]] = []
    skipped: list[tuple[str, str]] = []
    done: set[str] = set()
    position = 0
    for block in library.blocks:
        raw = block.raw or ""
        start = text.find(raw, position) if raw else -1
        if start < 0:
            continue
        position = start + len(raw)
        block = _entry(block)
        # a key given twice: the first entry is the one BibTeX uses ("Repeated entry")
        if block is None or block.key not in ids or block.key in done:
            continue
        done.add(block.key)
        names = {f.key.lower() for f in block.fields}
        if names & {"eprint", "archiveprefix", "eprinttype"}:
            skipped.append((block.key, "it already has an eprint field"))
            continue
        if raw[-1:] not in ("}", ")"):
            skipped.append((block.key, "its end could not be found"))
            continue
        body = raw[:-1]
        kept = body.rstrip()
        found.append((start + len(kept), _new_fields(raw, kept, ids[block.key])))
    skipped += [(key, "not found in the file") for key in ids if key not in done]
    return found, skipped


def _entry(block: Any) -> Any:
    """The entry of a block (also of one with a field given twice), or None."""
    from bibtexparser.model import DuplicateFieldKeyBlock, Entry

    if isinstance(block, DuplicateFieldKeyBlock):
        block = block.ignore_error_block
    return block if isinstance(block, Entry) else None


def _new_fields(raw: str, kept: str, arxiv_id: str) -> str:
    newline = "\r\n" if "\r\n" in raw else "\n"
    line = _FIELD_LINE.search(raw.replace("\r\n", "\n"))
    if line is not None:
        lead, sep = newline + line.group(1), line.group(2)
    else:  # one-line entry
        inline = _INLINE_SEP.search(raw)
        lead, sep = (" ", inline.group(2)) if inline else (" ", " = ")
    fields = f"eprint{sep}{{{arxiv_id}}},{lead}archivePrefix{sep}{{arXiv}}"
    if kept.endswith(","):
        return f"{lead}{fields},"
    return f",{lead}{fields}"


def write_eprints(path: Path, ids: Mapping[str, str]) -> WriteBack:
    """Add the eprint fields of `ids` (key -> arXiv id) to the .bib file at `path`."""
    data = read_user_file(path, BibliographyError, "a .bib file", limit=MAX_BIB_BYTES)
    target = Path(path).resolve()  # written through a symbolic link: the link stays
    text, codec, bom = _decode(data)
    edits, skipped = insertions(text, ids)
    if not edits:
        return WriteBack(Path(path), (), tuple(skipped), None)
    # inserted into the bytes read, not the text encoded again: every other byte stays as it was
    new = data
    for at, insert in sorted(edits, reverse=True):
        offset = bom + len(text[:at].encode(codec))
        new = new[:offset] + insert.encode("ascii") + new[offset:]
    written = [key for key in ids if key not in {k for k, _ in skipped}]
    _check(new, target, codec, bom, {key: ids[key] for key in written})
    mode = target.stat().st_mode
    if not mode & stat.S_IWUSR or not os.access(target.parent, os.W_OK | os.X_OK):
        raise BibliographyError(f"{path} is read-only; nothing was written back")
    backup = backup_path(target)
    try:
        replace_file(target, new, mode=mode, backup=backup)
    except OSError as exc:
        raise BibliographyError(f"{path}: cannot be written ({exc.strerror or exc})") from None
    return WriteBack(Path(path), tuple(written), tuple(skipped), backup)


def _check(new: bytes, target: Path, codec: str, bom: int, ids: Mapping[str, str]) -> None:
    """Parse the edited text: every written entry must now carry its id, and only those."""
    from bibtexparser.entrypoint import parse_string

    library = parse_string(blank_comments(new[bom:].decode(codec)), parse_stack=[])
    got: dict[str, str] = {}
    for block in map(_entry, library.blocks):
        if block is not None and block.key in ids and block.key not in got:
            fields = {f.key.lower(): _evaluate(f.value, {}) for f in block.fields}
            identifier = find_identifier(fields).identifier
            got[block.key] = "" if identifier is None else str(identifier)
    wrong = [key for key, value in ids.items() if got.get(key) != value]
    if wrong:
        raise BibliographyError(
            f"{target}: adding eprint fields would not give {', '.join(wrong)} its id; "
            "the file was left unchanged"
        )
