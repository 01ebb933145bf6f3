"""What an identifier a user typed names: a Pith Number, a short alias, or an arXiv paper.

The one place that decides "arXiv id or Pith Number?" (pure, no I/O). Anything that starts with
`pith` is a Pith Number or alias; anything with a `/` or `.` or the word arXiv in it is an arXiv
identifier (new or old style, DOI or URL); a bare 26-character body or an 8/12/16-character
alias is a Pith Number or alias. The parse errors of the chosen kind are raised as they are.
"""

from __future__ import annotations

from dataclasses import dataclass

from pithauthor._core.arxiv_id import ArxivId
from pithauthor._core.pith_number import PithAlias, PithNumber, parse_reference


@dataclass(frozen=True, slots=True)
class Reference:
    """Exactly one of `number`, `alias` and `arxiv` is set."""

    text: str
    number: PithNumber | None = None
    alias: PithAlias | None = None
    arxiv: ArxivId | None = None

    @property
    def kind(self) -> str:
        """`pith_number`, `alias` or `arxiv`."""
        if self.number is not None:
            return "pith_number"
        return "alias" if self.alias is not None else "arxiv"


def looks_like_arxiv(text: str) -> bool:
    """True when `text` is to be read as an arXiv identifier rather than a Pith Number."""
    lowered = text.strip().lower()
    return not lowered.startswith("pith") and ("/" in text or "." in text or "arxiv" in lowered)


def classify_reference(text: str) -> Reference:
    """Parse `text` as the one kind of identifier it is; PithNumberError or ArxivIdError."""
    if looks_like_arxiv(text):
        return Reference(text, arxiv=ArxivId.parse(text))
    parsed = parse_reference(text)
    if isinstance(parsed, PithAlias):
        return Reference(text, alias=parsed)
    return Reference(text, number=parsed)
