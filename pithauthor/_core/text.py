"""Text that is signed, and text that is shown: the one rule for both (pure, no I/O).

A signed text field (an author's name, a statement, a summary, a citation's context, ...) is
a public statement: what a reader sees must be what was signed. Control characters (C0, C1,
DEL; newlines too: every field is one line of text), line and paragraph separators, lone
surrogates and the bidirectional controls (U+061C, U+200E-200F, U+202A-202E, U+2066-2069)
can make a name read backwards or hide part of it, so `text_problem` refuses them.
Joiners (U+200C, U+200D) stay allowed: Persian names and emoji need them.

Text pith did not write (names from events, titles from records, arXiv's answers) is shown
through `escaped`: every control, format, private-use or unassigned character becomes a
visible `\\xNN` / `\\uNNNN` escape, so it cannot rewrite the terminal.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterator
from typing import Any

BIDI_CONTROLS = frozenset(
    "\u061c\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069"
)
_REFUSED_CATEGORIES = frozenset(("Cc", "Cs", "Zl", "Zp"))


def unsafe_char(char: str) -> bool:
    """True for a character no signed text may hold (see the module docstring)."""
    return char in BIDI_CONTROLS or unicodedata.category(char) in _REFUSED_CATEGORIES


# The same set as one character class, so a text is scanned in C, not one call per character
# (that was most of the cost of signing an event). The categories are closed by Unicode's
# stability policy (Cc is exactly these 65; Cs the surrogates; Zl and Zp one character each);
# tests/test_signed_text.py checks the class against `unsafe_char` on every code point.
_UNSAFE = re.compile(
    "[\x00-\x1f\x7f-\x9f\ud800-\udfff\u2028\u2029" + "".join(sorted(BIDI_CONTROLS)) + "]"
)


def _name(char: str) -> str:
    code = ord(char)
    name = unicodedata.name(char, "")
    return f"U+{code:04X}" + (f" {name}" if name else "")


def text_problem(text: str) -> str | None:
    """None when `text` may be signed; else which character is refused, and where."""
    found = _UNSAFE.search(text)
    if found is None:
        return None
    char = found.group()
    kind = "a bidirectional control" if char in BIDI_CONTROLS else "a control character"
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
    # one scan of all the text ("a" is safe, so joining adds no match); paths only on a fault
    if _UNSAFE.search("a".join(_texts(payload, []))) is None:
        return None
    for path, text in _strings(payload, "payload"):
        problem = text_problem(text)
        if problem is not None:
            return f"{path} {problem}"
    return None


def escaped(text: str) -> str:
    """`text` safe to print: control, format (bidirectional controls among them), surrogate,
    private-use, unassigned and separator characters as `\\xNN`, `\\uNNNN` or `\\UNNNNNNNN`."""
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
