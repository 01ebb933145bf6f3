"""The .bib file format: `%` comments read as biber reads them (pure), and .bib files read with
bibtexparser v2 into plain entries and failure records.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final, NoReturn

from pithauthor.bibliography.identifiers import IDENTIFIER_FIELDS
from pithauthor.errors import BibliographyError
from pithauthor.fs import MAX_BIB_BYTES, read_user_file

# `%` comments in a .bib file, read as biber reads them (pure).
#
# BibTeX has no comment character, but biber (and every editor's "comment out" command) treats
# `%` as the start of a comment running to the end of the line, anywhere except inside a field
# value: a commented-out entry (`% @article{key, ...`) or field (`%  doi = {...},`) is ignored.
# bibtexparser v2 does not know this (it reads `% @article{b,` as an entry with a field named
# `%   title`), so the text is blanked before it is parsed: each comment's characters become
# spaces, newlines stay, and so every offset and line number of the file still holds.

_ENTRY_START = re.compile(r"@\s*([A-Za-z]+)\s*([{(])")


_COMMENTED_ENTRY = re.compile(r"%[\s%]*@\s*([A-Za-z]+)\s*[{(]\s*([^,\s{}()=\"#%]+)")


_SPECIAL = re.compile(r'[%@{}()"]')


_NOT_ENTRIES = frozenset({"comment", "string", "preamble"})


@dataclass(frozen=True, slots=True)
class CommentedEntry:
    """An entry that is commented out: its type, key and 1-based line."""

    entry_type: str
    key: str
    line: int


def comment_spans(text: str) -> list[tuple[int, int]]:
    """(start, end) of every `%` comment outside field values, end at the line's end.

    Outside entries everything from a `%` is a comment. Inside an entry, a `%` at the entry's
    own level (between fields, `@type(...)` too) is one; inside a `{...}` or `"..."` value, and
    in an `@comment{...}`, it is text (`url = {http://x/a%20b}`). As in BibTeX, a backslash
    escapes nothing: braces count wherever they are, inside a `"..."` value too (the `"` of
    `"M{\\"u}ller"` is inside braces: it does not end the value)."""
    return _scan_all(text)[0]


def _scan_all(text: str) -> tuple[list[tuple[int, int]], list[tuple[int, int]]]:
    """The comments of `text`, and the (opening, closing) `"` of each quoted value."""
    if "%" not in text and '"' not in text:  # most files: nothing to find
        return [], []
    # The text is read in pieces, each from a line starting with `@` (an entry: BibTeX
    # resynchronises there) to the next; only the pieces holding a `%` or a `"` are scanned, so
    # that a large file with few comments and braced values only costs little. (A value with a
    # line starting with `@` would start a piece too early: bibtexparser, too, takes such a line
    # for the start of a block.)
    spans: list[tuple[int, int]] = []
    quotes: list[tuple[int, int]] = []
    percent, quote, end = text.find("%"), _quote(text, 0), 0
    while True:
        if 0 <= percent < end:  # each is searched for again only once passed: linear
            percent = text.find("%", end)
        if 0 <= quote < end:
            quote = _quote(text, end)
        at = min(percent, quote) if percent >= 0 and quote >= 0 else max(percent, quote)
        if at < 0:
            return spans, quotes
        start = text.rfind("\n@", 0, at) + 1  # 0 when there is none
        end = text.find("\n@", at)
        end = len(text) if end < 0 else end + 1
        _scan(text, start, end, spans, quotes)


def _quote(text: str, start: int) -> int:
    """The next `"` from `start` that is no accent's (`{\\"o}` in a braced value asks for no
    scan: files are full of them, and scanning each such entry was most of reading one)."""
    at = text.find('"', start)
    while at > 0 and text[at - 1] == "\\":
        at = text.find('"', at + 1)
    return at


def _scan(
    text: str,
    start: int,
    end: int,
    spans: list[tuple[int, int]],
    quotes: list[tuple[int, int]],
) -> None:
    """Add the comments and quoted values of `text[start:end]`, read from outside any entry."""
    depth = 0  # braces inside the entry; its body is depth 1 (0 for `@type(...)`)
    in_entry = parens = literal = False  # literal: an @comment's body, all text
    quoted = -1  # the opening `"` of the quoted value being read, -1 outside one
    skip_to = 0  # characters before this were consumed (a comment, an entry's head)
    for found in _SPECIAL.finditer(text, start, end):  # only these characters change the state
        i, char = found.start(), found.group()
        if i < skip_to:
            continue
        at_body = not in_entry or depth == (0 if parens else 1)
        if char == "%" and at_body and quoted < 0 and not literal:
            stop = text.find("\n", i, end)
            skip_to = stop = end if stop < 0 else stop
            spans.append((i, stop))
        elif not in_entry:
            match = _ENTRY_START.match(text, i) if char == "@" else None
            if match is not None:
                in_entry, parens = True, match.group(2) == "("
                literal = match.group(1).lower() == "comment"
                depth = 0 if parens else 1
                skip_to = match.end()
        elif quoted >= 0 and char == '"' and at_body:  # BibTeX: a `"` outside braces ends it
            quotes.append((quoted, i))
            quoted = -1
        elif char == "{":
            depth += 1
        elif char == "}":
            depth -= 1
            if quoted >= 0 and depth < (0 if parens else 1):  # unbalanced: BibTeX's error too
                quoted = -1
            in_entry = depth > 0 or parens
            literal = literal and in_entry
            depth = max(depth, 0)
        elif quoted >= 0:
            continue
        elif char == ")" and parens and depth == 0:
            in_entry = literal = False
        elif char == '"' and at_body and not literal:
            quoted = i


def blank_comments(text: str, spans: list[tuple[int, int]] | None = None) -> str:
    """`text` with every comment's characters turned into spaces (same length, same lines);
    `spans`: its `comment_spans`, when already known."""
    spans = comment_spans(text) if spans is None else spans
    if not spans:
        return text
    out, last = [], 0
    for start, end in spans:
        out += [text[last:start], " " * (end - start)]
        last = end
    out.append(text[last:])
    return "".join(out)


# What bibtexparser is given: the file as BibTeX reads it, in a form bibtexparser v2 reads the
# same way (same length, same lines, so that every offset and line number still holds).
#
# bibtexparser's splitter differs from BibTeX in two ways that real files meet:
#
# - it takes a backslash for an escape: `\{`, `\}` and `\"` are not delimiters to it, while
#   BibTeX counts every brace (`Adri\{à}` is `Adri\` and the group `{à}` to BibTeX; to
#   bibtexparser the `}` ends the value, and the entry is a parse error);
# - inside a `"..."` value it counts no braces, so the `"` of `"M{\"u}ller"` (an accent, once
#   the backslash is not an escape) would end the value for it.
#
# So each backslash before one of those three characters is replaced by a character the file
# does not hold (put back in every value read, `Prepared.restore`), and each quoted value's
# delimiters by braces (`"..."` and `{...}` mean the same to BibTeX once the value's own
# braces balance, which `_scan` has checked), and the comments are blanked. (And an entry's
# type and its `{` on two lines are joined: `_SPLIT_HEAD`.)

_ESCAPED = re.compile(r'\\(?=[{}"])')

# `@article` and its `{` on different lines: BibTeX reads the entry, bibtexparser does not see
# it at all (its block start allows spaces and tabs only). The `{` is moved before the line
# break (`@article{\n  key,`): same length, same lines.
_SPLIT_HEAD = re.compile(r"^([ \t]*@[A-Za-z]+)([ \t]*\n\s*)([{(])", re.MULTILINE)
_SPLIT_HEAD_HINT = re.compile(r"@[A-Za-z]+[ \t]*\n\s*[{(]")

# Characters to mask a backslash with: private-use ones (`prepare` takes one the file lacks).
_PRIVATE = (range(0xE000, 0xF900), range(0xF0000, 0xFFFFE))


@dataclass(frozen=True, slots=True)
class Prepared:
    """A .bib text as bibtexparser is to read it, and what undoes the masking in its values."""

    text: str
    comments: list[tuple[int, int]]
    mask: str | None  # the character standing for a backslash before `{`, `}` or `"`

    def restore(self, value: str) -> str:
        """`value` (read from `text`) with its masked backslashes put back."""
        if self.mask is None or self.mask not in value:
            return value
        return value.replace(self.mask, "\\")


def prepare(source: str) -> Prepared:
    """`source` with comments blanked, quoted values braced, escaping backslashes masked."""
    spans, quotes = _scan_all(source)
    text = blank_comments(source, spans)
    if quotes:  # slices joined: a list of the file's characters cost 25 ms a megabyte
        pieces, last = [], 0
        for opening, closing in quotes:
            pieces += [text[last:opening], "{", text[opening + 1 : closing], "}"]
            last = closing + 1
        pieces.append(text[last:])
        text = "".join(pieces)
    if _SPLIT_HEAD_HINT.search(text) is not None:  # a literal `@` first: 7 times faster
        text = _SPLIT_HEAD.sub(r"\1\3\2", text)
    mask = None
    if _ESCAPED.search(text) is not None:
        # the first is almost always absent: one scan of the text; a set past a few tries
        mask = next((chr(c) for c in _PRIVATE[0][:8] if chr(c) not in text), None)
        if mask is None:
            present = set(text)
            every = (c for block in _PRIVATE for c in block)
            mask = next((chr(c) for c in every if chr(c) not in present), None)
        if mask is None:  # a file holding every private-use character is no bibliography
            raise BibliographyError("a .bib file holds every Unicode private-use character")
        text = _ESCAPED.sub(mask, text)
    return Prepared(text, spans, mask)


def commented_entries(
    text: str, spans: list[tuple[int, int]] | None = None
) -> list[CommentedEntry]:
    """The entries commented out in `text` (`% @article{key,`), in order."""
    found = []
    line, counted = 1, 0
    for start, end in comment_spans(text) if spans is None else spans:
        match = _COMMENTED_ENTRY.match(text, start, end)
        if match is not None and match.group(1).lower() not in _NOT_ENTRIES:
            line += text.count("\n", counted, start)
            counted = start
            found.append(CommentedEntry(match.group(1).lower(), match.group(2), line))
    return found


# bibtexparser is imported where files are parsed: it takes longer to load than Typer.

# Read .bib files with bibtexparser v2 into plain entries and failure records.
#
# bibtexparser's splitter does the parsing. Its default middlewares (string references, enclosing
# removal) are replaced by one pass here, `field_text`, because v2 resolves neither `#`
# concatenations nor macros defined in an earlier file, and has no `crossref` middleware; one pass
# is also faster than two middlewares. Blocks the splitter could not parse become failures; the
# rest go on.

#: BibTeX's predefined month macros.
_MONTH_NAMES = ("january", "february", "march", "april", "may", "june", "july", "august")


MONTHS = {m[:3]: m.title() for m in (*_MONTH_NAMES, "september", "october", "november", "december")}


#: Fields a crossref child never takes from its parent: they identify or qualify one citation.
NOT_INHERITED = IDENTIFIER_FIELDS | {"crossref", "ids", "pith-relationship", "key"}


COMMENTED_OUT = "commented out with %: ignored, as biber does"


_KEY_RE = re.compile(r"@\s*([A-Za-z]+)\s*[{(]\s*([^,\s{}()=\"#%]+)\s*,")


@dataclass(slots=True)
class RawEntry:
    """One entry: lower-case field names to resolved values, with where it came from."""

    key: str
    entry_type: str
    file: Path
    line: int  # 1-based
    fields: dict[str, str]
    inherited: frozenset[str] = frozenset()
    notes: list[str] = field(default_factory=list)


@dataclass(frozen=True, slots=True)
class RawFailure:
    """A block that yields no entry: unparsable (`parse_error`), a repeated key (`duplicate`),
    or an entry commented out with `%` (`comment`: ignored, as biber does)."""

    kind: str
    file: Path
    line: int | None
    key: str | None
    message: str


def read_text(path: Path, warnings: list[str] | None = None) -> str:
    """The file's text, or BibliographyError saying in one line why it cannot be had.

    UTF-8 (with or without BOM) is expected. Older .bib files are often Latin-1 (BibTeX itself
    is 8-bit clean): those are read as Windows-1252/Latin-1 and a warning is added.
    """
    data = read_user_file(path, BibliographyError, "a .bib file", limit=MAX_BIB_BYTES)
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        problem = f"{path}: not UTF-8 (byte 0x{data[exc.start]:02x} on line {line})"
    try:
        text = data.decode("cp1252")
    except UnicodeDecodeError:
        text = data.decode("latin-1")
    if warnings is not None:
        warnings.append(f"{problem}; read as Latin-1")
    return text


def read_files(
    paths: Sequence[Path], warnings: list[str] | None = None
) -> tuple[list[RawEntry], list[RawFailure]]:
    """Parse every file in order, sharing `@string` macros as BibTeX does across files."""
    from bibtexparser.entrypoint import parse_string
    from bibtexparser.model import (
        DuplicateBlockKeyBlock,
        DuplicateFieldKeyBlock,
        Entry,
        ParsingFailedBlock,
        String,
    )

    _quiet(logging.getLogger("bibtexparser"))
    texts = [(Path(p), read_text(Path(p), warnings)) for p in paths]
    entries: list[RawEntry] = []
    failures: list[RawFailure] = []
    first_seen: dict[str, RawEntry] = {}
    expand = Expander()
    for path, source in texts:
        # `%` comments blanked, quoted values braced, backslashes masked, at the same offsets
        # and lines: bibtexparser reads it as BibTeX reads the file (see `prepare`)
        prepared = prepare(source)
        text = prepared.text
        expand.start_file(path, prepared)
        expand.count_blocks(text)
        commented = [
            RawFailure("comment", path, c.line, c.key, COMMENTED_OUT)
            for c in commented_entries(source, prepared.comments)
        ]
        # An empty parse stack: values are evaluated below, in one pass (see module doc).
        library = parse_string(text, parse_stack=[])
        if not commented:
            _check_is_bibliography(path, text, library.blocks)
        failures += commented
        locate = _LineLocator(text)
        for block in library.blocks:
            line = locate(block)
            if isinstance(block, String):
                expand.define(block.key, block.value, line)
                continue
            entry = None
            if isinstance(block, Entry):
                entry = _raw_entry(block, path, line, expand)
            elif isinstance(block, DuplicateFieldKeyBlock):
                entry = _raw_entry(block.ignore_error_block, path, line, expand)
                repeated = ", ".join(sorted(block.duplicate_keys))
                entry.notes.append(f"repeated field {repeated}: the first value is used")
            elif isinstance(block, DuplicateBlockKeyBlock):
                if isinstance(block.previous_block, Entry):
                    failures.append(_repeated_key(block.key, path, line, first_seen))
                elif isinstance(block.ignore_error_block, String):  # BibTeX: the later wins
                    redefined = block.ignore_error_block
                    expand.define(redefined.key, redefined.value, line)
            elif isinstance(block, ParsingFailedBlock):
                failures.append(_failure(block, path, line, prepared))
            if entry is None:
                continue
            if entry.key.lower() in first_seen:  # given before (another file, or case only)
                failures.append(_repeated_key(entry.key, path, line, first_seen))
                continue
            first_seen[entry.key.lower()] = entry
            entries.append(entry)
    _apply_crossrefs(entries, first_seen, expand)
    return entries, failures


def _check_is_bibliography(path: Path, text: str, blocks: Sequence[Any]) -> None:
    """Refuse a file in which no @-block (entry, @string, @preamble) was found: an empty file,
    JSON or junk is not a bibliography with 0 entries."""
    from bibtexparser.model import ExplicitComment, ImplicitComment

    if not text.strip():
        raise BibliographyError(f"{path} is empty: no bibliography entry in it")
    if all(isinstance(b, ImplicitComment | ExplicitComment) for b in blocks):
        raise BibliographyError(
            f"{path} holds no bibliography entry (no @article{{...}} or the like): "
            "is it a .bib file?"
        )


def _repeated_key(
    key: str, path: Path, line: int | None, first_seen: dict[str, RawEntry]
) -> RawFailure:
    first = first_seen.get(key.lower())
    where = f" (first at {first.file.name}:{first.line})" if first else ""
    return RawFailure("duplicate", path, line, key, f"repeated key{where}")


class _LineLocator:
    """1-based line of each block, found by locating its raw text in the file.

    bibtexparser's own `start_line` drifts after a block it failed to parse, so it is only the
    fallback. Blocks come in file order, so each search starts where the previous one ended.
    """

    def __init__(self, text: str) -> None:
        self._text = text
        self._pos = 0
        self._line = 1

    def __call__(self, block: Any) -> int | None:
        raw = block.raw
        found = self._text.find(raw, self._pos) if raw else -1
        if found < 0:
            return None if block.start_line is None else block.start_line + 1
        self._line += self._text.count("\n", self._pos, found)
        self._pos = found
        return self._line


def _quiet(logger: logging.Logger) -> None:
    """bibtexparser logs each syntax error; they become rows instead, so keep them off stderr
    (Python's last-resort handler) while still passing them to any configured logging."""
    if not logger.handlers:
        logger.addHandler(logging.NullHandler())


def _first_line(error: Exception) -> str:
    text = str(getattr(error, "abort_reason", "") or getattr(error, "message", "") or error)
    if "bibtex:" in text:
        text = text.split("bibtex:", 1)[1]
    return " ".join(text.split()) or type(error).__name__


def _failure(block: Any, path: Path, line: int | None, prepared: Prepared) -> RawFailure:
    raw = prepared.restore(block.raw or "")
    match = _KEY_RE.search(raw)
    key = match.group(2) if match else None
    return RawFailure("parse_error", path, line, key, _first_line(block.error))


def _raw_entry(block: Any, path: Path, line: int | None, expand: Expander) -> RawEntry:
    fields: dict[str, str] = {}
    key = expand.prepared.restore(block.key)
    macros, mask = expand.macros, expand.prepared.mask
    for f in block.fields:
        name = f.key.lower()
        if name in fields:  # BibTeX keeps the first of a repeated field
            continue
        # `expand.value`, inline (it runs for every field of every entry, start-up)
        text = _evaluate_within(f.value, macros, MAX_VALUE_CHARS)
        if text is None or expand.total + len(text) > MAX_EXPANDED_CHARS:
            expand.value(f.value, line, key)  # raises, saying which bound
        assert text is not None
        expand.total += len(text)
        fields[name] = text if mask is None or mask not in text else text.replace(mask, "\\")
    return RawEntry(key, block.entry_type.lower(), path, line or 0, fields)


# Bounds: a .bib file is at most MAX_BIB_BYTES, but `@string` macros multiply it: each
# `@string{s1 = s0 # s0}` doubles the last, and 30 such lines asked for 2^30 times the first
# value (15 GB and more). Every value is built from parts whose lengths are known
# before they are joined, so it is refused before it is built: one value (a field or a macro)
# may hold at most MAX_VALUE_CHARS characters, and all values read from all files together,
# crossref fields copied included, at most MAX_EXPANDED_CHARS. (Macros are stored expanded and
# a crossref is followed one level, as BibTeX does: there is no depth to bound beyond that.)

#: The longest field or macro value, after expansion (BibTeX's own default buffer held 20,000;
#: real abstracts hold a few thousand).
MAX_VALUE_CHARS: Final = 200_000

#: All values of one reading together, after expansion and crossref copies: twice as many
#: characters as the largest file accepted holds bytes (a large file of journal macros,
#: `IEEEabrv.bib`'s or Beebe's, roughly doubles when they are expanded).
MAX_EXPANDED_CHARS: Final = 2 * MAX_BIB_BYTES

#: Blocks (`@entry`, `@string`, ...) of one reading, all files together: each costs a few
#: kilobytes once parsed, and a 32 MiB file of one-line entries holds half a million of them
#: (1.5 GB and two minutes). The largest real bibliographies seen hold tens of thousands.
MAX_BIB_BLOCKS: Final = 100_000

#: Delimiters bibtexparser stops at (`{`, `}`, `"`, `,`, `=`, line breaks) in one reading: it
#: handles each in Python, about a microsecond apiece; 32 MiB of nested braces took 52 s on a
#: loaded machine. A real entry holds about 80 (texbook2.bib: 530 entries, 40,000), so
#: MAX_BIB_BLOCKS entries hold fewer than this.
MAX_BIB_DELIMITERS: Final = 10_000_000


class Expander:
    """Evaluates values (`#`, macros) in file order, within the bounds above."""

    def __init__(self) -> None:
        self.macros: dict[str, str] = {}
        self.total = 0
        self.blocks = 0
        self.delimiters = 0
        self.path = Path()
        self.prepared = Prepared("", [], None)

    def start_file(self, path: Path, prepared: Prepared) -> None:
        """Values read next come from `path`, read as `prepared`."""
        self.path, self.prepared = path, prepared

    def count_blocks(self, text: str) -> None:
        """Count the blocks of the file about to be parsed (`@type{` or `@type(`, before
        bibtexparser builds them), within MAX_BIB_BLOCKS for the whole reading."""
        blocks = text.count("@")  # at least as many as blocks: counted exactly only if need be
        if self.blocks + blocks > MAX_BIB_BLOCKS:
            blocks = sum(1 for _ in _ENTRY_START.finditer(text))
        self.blocks += blocks
        if self.blocks > MAX_BIB_BLOCKS:
            raise BibliographyError(
                f"{self.path}: more than {MAX_BIB_BLOCKS:,} entries in the bibliography "
                "files; split it, or give only the files the manuscript uses"
            )
        self.delimiters += sum(text.count(c) for c in '{}",=\n')  # C passes: ~1 ms a MiB each
        if self.delimiters > MAX_BIB_DELIMITERS:
            raise BibliographyError(
                f"{self.path}: more than {MAX_BIB_DELIMITERS:,} braces, quotes, commas, `=` "
                "and line breaks in the bibliography files: no bibliography has so many"
            )

    def define(self, name: str, expression: str, line: int | None) -> None:
        """`@string{name = expression}`."""
        name = self.prepared.restore(name)
        self.macros[name.lower()] = self.value(expression, line, f"@string{{{name}}}")

    def value(self, expression: str, line: int | None, where: str) -> str:
        """A value's text; BibliographyError when it or the reading grows past its bound."""
        text = _evaluate_within(expression, self.macros, MAX_VALUE_CHARS)
        if text is None:
            literal = "#" not in expression and expression.strip()[:1] in ("{", '"')
            why = "holds more than" if literal else "expands past"
            self.refuse(line, where, f"its value {why} {MAX_VALUE_CHARS:,} characters")
        self.total += len(text)
        if self.total > MAX_EXPANDED_CHARS:
            self.count(0, line, where)
        mask = self.prepared.mask
        return text if mask is None or mask not in text else text.replace(mask, "\\")

    def count(self, size: int, line: int | None, where: str) -> None:
        """Add `size` characters to the reading's total, within MAX_EXPANDED_CHARS."""
        self.total += size
        if self.total > MAX_EXPANDED_CHARS:
            why = f"the values read expand past {MAX_EXPANDED_CHARS:,} characters"
            self.refuse(line, where, why)

    def refuse(self, line: int | None, where: str, why: str) -> NoReturn:
        place = f"{self.path}:{line}" if line else str(self.path)
        if "expands" in why:
            why += " (nested or repeated @string macros?)"
        raise BibliographyError(f"{place}: {where}: {why}; nothing was read")


def field_text(expression: str, macros: dict[str, str]) -> str:
    """A field value in source form (`{..}`, `".."`, a number, a macro, or `#` concatenations
    of those) to its text. Unknown macros stay as written."""
    if "#" not in expression:
        return _atom(expression.strip(), macros)
    return "".join(_atom(part.strip(), macros) for part in _split_concatenation(expression))


def _evaluate_within(expression: str, macros: dict[str, str], limit: int) -> str | None:
    """`field_text`, or None when the text would be longer than `limit` (it is not built)."""
    if "#" not in expression:
        text = _atom(expression.strip(), macros)
        return None if len(text) > limit else text
    parts = [_atom(part.strip(), macros) for part in _split_concatenation(expression)]
    return None if sum(map(len, parts)) > limit else "".join(parts)


def _atom(part: str, macros: dict[str, str]) -> str:
    first = part[:1]
    if first == "{" or first == '"':
        return part[1:-1]
    if not part or part.isdigit():
        return part
    lowered = part.lower()
    if lowered in macros:
        return macros[lowered]
    return MONTHS.get(lowered, part)


def _split_concatenation(expression: str) -> list[str]:
    parts: list[str] = []
    depth, quoted, start = 0, False, 0
    for i, char in enumerate(expression):
        if char == "{":
            depth += 1
        elif char == "}":
            depth -= 1
        elif char == '"' and depth == 0:
            quoted = not quoted
        elif char == "#" and depth == 0 and not quoted:
            parts.append(expression[start:i])
            start = i + 1
    parts.append(expression[start:])
    return parts


def _apply_crossrefs(
    entries: list[RawEntry], by_key: dict[str, RawEntry], expand: Expander
) -> None:
    """Copy missing fields from each `crossref` parent (one level, as BibTeX does)."""
    for entry in entries:
        target = entry.fields.get("crossref")
        if target is None:
            continue
        parent = by_key.get(target.strip().lower())
        if parent is None or parent is entry:
            entry.notes.append(f"crossref {target!r} not found")
            continue
        inherited = {
            name: value
            for name, value in parent.fields.items()
            if name not in entry.fields and name not in NOT_INHERITED
        }
        if "title" in parent.fields and "booktitle" not in entry.fields:
            inherited["booktitle"] = parent.fields["title"]  # biblatex's in* mapping
            inherited.pop("title", None)
        # the strings are shared, not copied, but each copy counts: a thousand children of
        # one large parent are a thousand times its fields to every reader of the entries
        expand.start_file(entry.file, expand.prepared)
        expand.count(sum(map(len, inherited.values())), entry.line, entry.key)
        entry.fields.update(inherited)
        entry.inherited = frozenset(inherited)
