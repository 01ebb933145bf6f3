"""LaTeX field values to Unicode text, for display and matching.

pylatexenc does the real work, but it costs a few hundred microseconds a call, so plain values
(no backslash, no math, no tie) skip it: only their grouping braces are dropped. Results are
cached, and one converter instance serves every call.
"""

from __future__ import annotations

import unicodedata
from functools import lru_cache
from typing import Any

# pylatexenc is imported on the first conversion: most entries need none.

_NEEDS_LATEX = frozenset("\\$~")
#: Macros common in bibliographies that pylatexenc would otherwise drop.
_EXTRA_MACROS = {
    "TeX": "TeX",
    "LaTeX": "LaTeX",
    "LaTeXe": "LaTeX2e",
    "BibTeX": "BibTeX",
    "XeTeX": "XeTeX",
    "hyphen": "-",
    "slash": "/",
}
_converter: Any = None
#: Letters NFKD does not decompose.
_FOLD = str.maketrans(
    {"ł": "l", "Ł": "L", "ø": "o", "Ø": "O", "đ": "d", "Đ": "D", "ß": "ss", "æ": "ae",
     "Æ": "AE", "œ": "oe", "Œ": "OE", "\u0131": "i", "þ": "th", "Þ": "Th", "ð": "d"}
)  # fmt: skip


def fold(text: str) -> str:
    """Unicode text without accents, case folded."""
    if text.isascii():  # most names and titles: nothing to decompose
        return text.lower()
    decomposed = unicodedata.normalize("NFKD", text.translate(_FOLD))
    return "".join(c for c in decomposed if not unicodedata.combining(c)).casefold()


def _latex_to_text(value: str) -> str:
    global _converter
    if _converter is None:
        from pylatexenc.latex2text import (
            LatexNodes2Text,
            MacroTextSpec,
            get_default_latex_context_db,
        )

        context = get_default_latex_context_db()  # a fresh copy: extending it is private to us
        context.add_context_category(
            "pithauthor-bib",
            prepend=True,
            macros=[MacroTextSpec(name, text) for name, text in _EXTRA_MACROS.items()],
        )
        _converter = LatexNodes2Text(latex_context=context, strict_latex_spaces=True)
    try:
        return str(_converter.latex_to_text(value))
    except Exception:  # pylatexenc raises many kinds; the brace-stripped text is the fallback
        return value.replace("{", "").replace("}", "")


@lru_cache(maxsize=16384)
def to_unicode(value: str) -> str:
    """`value` with its LaTeX markup turned into Unicode, on one line, outer spaces trimmed."""
    if _NEEDS_LATEX.isdisjoint(value):
        text = value.replace("{", "").replace("}", "") if "{" in value or "}" in value else value
    else:
        text = _latex_to_text(value)
    return " ".join(text.split())


def strip_markup(value: str) -> str:
    """A cheap version for identifier matching: braces and `\\url`/`\\href` wrappers removed."""
    if "\\" in value:
        for command in ("\\url", "\\href", "\\path", "\\nolinkurl", "\\texttt", "\\detokenize"):
            value = value.replace(command, " ")
        value = value.replace("\\_", "_").replace("\\%", "%").replace("\\#", "#")
        value = value.replace("\\&", "&").replace("\\~", "~").replace("\\/", "")
    return value.replace("{", " ").replace("}", " ")
