"""`%` comments in a .bib file, read as biber reads them (pure).

BibTeX has no comment character, but biber (and every editor's "comment out" command) treats
`%` as the start of a comment running to the end of the line, anywhere except inside a field
value: a commented-out entry (`% @article{key, ...`) or field (`%  doi = {...},`) is ignored.
bibtexparser v2 does not know this (it reads `% @article{b,` as an entry with a field named
`%   title`), so the text is blanked before it is parsed: each comment's characters become
spaces, newlines stay, and so every offset and line number of the file still holds.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

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
    escapes nothing: braces count wherever they are."""
    if "%" not in text:
        return []
    # The text is read in pieces, each from a line starting with `@` (an entry: BibTeX
    # resynchronises there) to the next; only the pieces holding a `%` are scanned, so that a
    # large file with few comments costs little. (A value with a line starting with `@` would
    # start a piece too early: none of the real files seen has one with a `%` after it.)
    spans: list[tuple[int, int]] = []
    percent = text.find("%")
    while percent >= 0:
        start = text.rfind("\n@", 0, percent) + 1  # 0 when there is none
        end = text.find("\n@", percent)
        end = len(text) if end < 0 else end + 1
        spans += _scan(text, start, end)
        percent = text.find("%", end)
    return spans


def _scan(text: str, start: int, end: int) -> list[tuple[int, int]]:
    """The comments of `text[start:end]`, read from outside any entry."""
    spans: list[tuple[int, int]] = []
    depth = 0  # braces inside the entry; its body is depth 1 (0 for `@type(...)`)
    in_entry = parens = quoted = literal = False  # literal: an @comment's body, all text
    skip_to = 0  # characters before this were consumed (a comment, an entry's head)
    for found in _SPECIAL.finditer(text, start, end):  # only these characters change the state
        i, char = found.start(), found.group()
        if i < skip_to:
            continue
        at_body = not in_entry or depth == (0 if parens else 1)
        if char == "%" and at_body and not quoted and not literal:
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
        elif quoted:
            quoted = not (char == '"' and at_body)
        elif char == "{":
            depth += 1
        elif char == "}":
            depth -= 1
            in_entry = depth > 0 or parens
            literal = literal and in_entry
            depth = max(depth, 0)
        elif char == ")" and parens and depth == 0:
            in_entry = literal = False
        elif char == '"' and at_body:
            quoted = True
    return spans


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
