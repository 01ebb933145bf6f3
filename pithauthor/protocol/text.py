r"""Text that is signed, and text that is shown: the one rule for both (pure, no I/O).

A signed text field (an author's name, a statement, a summary, a citation's context, ...) is
a public statement: what a reader sees must be what was signed. Control characters (C0, C1,
DEL; newlines too: every field is one line of text), line and paragraph separators, lone
surrogates, the bidirectional controls (U+061C, U+200E-200F, U+202A-202E, U+2066-2069) and
the other invisible format characters (Unicode category Cf: U+200B ZERO WIDTH SPACE, U+FEFF,
U+00AD SOFT HYPHEN, U+2060 WORD JOINER, the tag characters U+E0000-E007F that can carry hidden
ASCII, ...) can make a name read backwards, hide part of it, or make two names that look the
same differ, so `text_problem` refuses them. Joiners (U+200C ZWNJ, U+200D ZWJ) stay allowed:
Persian and Indic names and emoji need them.

Text pith did not write (names from events, titles from records, arXiv's answers) is shown
through `escaped`: every control, format, private-use or unassigned character becomes a
visible `\xNN` / `\uNNNN` escape, so it cannot rewrite the terminal.

>>> text_problem("Ada ‮ecalevoL")   # why it cannot be signed, or None
>>> escaped(title)                        # safe to print: invisible characters escaped
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterator
from functools import cache
from typing import Any

__all__ = [
    "escaped",
    "payload_text_problem",
    "text_problem",
]


BIDI_CONTROLS = frozenset(
    "\u061c\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069"
)


JOINERS = frozenset("\u200c\u200d")


_REFUSED_CATEGORIES = frozenset(("Cc", "Cs", "Zl", "Zp", "Cf"))


# The same set as one character class, so a text is scanned in C, not one call per character
# (that was most of the cost of signing an event). Cc, Cs, Zl and Zp are closed by Unicode's
# stability policy (Cc is exactly these 65; Cs the surrogates; Zl and Zp one character each);
# Cf is not: these are its characters in Unicode 14.0 (Python 3.11) and U+13439-1343F, which
# 15.0 made format controls (older tables call them unassigned), less the joiners.
# tests/unit/protocol/test_text.py checks the class against `unsafe_char` on every code
# point of the running Python's tables, so a format character a newer Unicode adds cannot slip
# through.
_FORMAT = (
    "\u00ad\u0600-\u0605\u061c\u06dd\u070f\u0890\u0891\u08e2\u180e\u200b\u200e\u200f"
    "\u202a-\u202e\u2060-\u2064\u2066-\u206f\ufeff\ufff9-\ufffb\U000110bd\U000110cd"
    "\U00013430-\U0001343f\U0001bca0-\U0001bca3\U0001d173-\U0001d17a\U000e0001"
    "\U000e0020-\U000e007f"
)


@cache  # compiled on first use: 0.4 ms, and `pith bib scan` checks no signed text
def unsafe_chars() -> re.Pattern[str]:
    """One character no signed text may hold (see `unsafe_char`)."""
    return re.compile("[\x00-\x1f\x7f-\x9f\ud800-\udfff\u2028\u2029" + _FORMAT + "]")


def unsafe_char(char: str) -> bool:
    """True for a character no signed text may hold (see the module docstring)."""
    if char in JOINERS:
        return False
    return (
        unicodedata.category(char) in _REFUSED_CATEGORIES or unsafe_chars().match(char) is not None
    )


def _name(char: str) -> str:
    code = ord(char)
    name = unicodedata.name(char, "")
    return f"U+{code:04X}" + (f" {name}" if name else "")


def text_problem(text: str) -> str | None:
    """None when `text` may be signed; else which character is refused, and where."""
    found = unsafe_chars().search(text)
    if found is None:
        return None
    char = found.group()
    if char in BIDI_CONTROLS:
        kind = "a bidirectional control"
    elif unicodedata.category(char) in ("Cf", "Cn"):  # Cn: a format character newer tables know
        kind = "an invisible format character"
    else:
        kind = "a control character"
    return f"holds {kind} ({_name(char)}) at character {found.start() + 1}"


def _strings(value: Any, path: str) -> Iterator[tuple[str, str]]:
    if isinstance(value, str):
        yield path, value
    elif isinstance(value, dict):
        for key, item in value.items():
            yield from _strings(item, f"{path}.{key}")
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from _strings(item, f"{path}[{index}]")


def _texts(value: Any, out: list[str]) -> list[str]:
    """Every string in `value`, without the paths `_strings` names (the common, clean case)."""
    if isinstance(value, str):
        out.append(value)
    elif isinstance(value, dict):
        for item in value.values():
            _texts(item, out)
    elif isinstance(value, list):
        for item in value:
            _texts(item, out)
    return out


def payload_text_problem(payload: Any) -> str | None:
    """None when every text field of a payload may be signed; else the first field refused
    (`payload.author.name holds a bidirectional control (U+202E ...) at character 5`)."""
    # one scan of all the text ("a" is safe, so joining adds no match); paths only on a fault.
    # A citation's payload is all text at the top: its values are taken without the walk.
    try:  # `join` refuses a value that is not text: a nested payload takes the walk
        joined = "a".join(payload.values()) if type(payload) is dict else None
    except TypeError:
        joined = None
    if joined is None:
        joined = "a".join(_texts(payload, []))
    # `isprintable` is False for every character of Unicode's C and Z categories but the space,
    # which holds every refused character (tests/unit/protocol/test_text.py checks this
    # on every code point): printable text is clean, at a tenth of the regular expression's cost.
    # Text it doubts (a joiner, a no-break space, an unassigned character) takes the scan.
    if joined.isprintable() or unsafe_chars().search(joined) is None:
        return None
    for path, text in _strings(payload, "payload"):
        problem = text_problem(text)
        if problem is not None:
            return f"{path} {problem}"
    return None


def escaped(text: str) -> str:
    """`text` safe to print: control, format (bidirectional controls among them), surrogate,
    private-use, unassigned and separator characters as `\\xNN`, `\\uNNNN` or `\\UNNNNNNNN`."""
    if text.isprintable():  # none of those (see `payload_text_problem`): the text as it is
        return text
    out = []
    for char in text:
        category = unicodedata.category(char)
        if category[0] == "C" or category in ("Zl", "Zp"):
            code = ord(char)
            if code < 0x100:
                out.append(f"\\x{code:02x}")
            elif code < 0x10000:
                out.append(f"\\u{code:04x}")
            else:
                out.append(f"\\U{code:08x}")
        else:
            out.append(char)
    return "".join(out)
