"""Pith Numbers: `pith:YYYY:BODY`, the bare body, and the short aliases (VERIFIED rules).

BODY is the first 26 characters of the RFC 4648 base32 form of a record's SHA-256 digest
(130 bits), YYYY the year of the paper's first submission. The first 8, 12 and 16 characters of
BODY are *aliases*: they name a paper only through a registry look-up, never by themselves.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from pithauthor._core.canonical import base32_nopad, hex_digest_bytes
from pithauthor.errors import PithNumberError

BODY_LENGTH = 26
ALIAS_LENGTHS = (8, 12, 16)
FIRST_YEAR = 1991  # arXiv began in August 1991
BASE32_ALPHABET = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567"
DEFAULT_BASE_URL = "https://pith.science"

_ALPHABET_SET = frozenset(BASE32_ALPHABET)
_YEAR_RE = re.compile(r"[0-9]{4}")


def _check_body(text: str, *, what: str, lengths: tuple[int, ...]) -> str:
    """Upper-case `text` and check alphabet then length; return it."""
    body = text.strip().upper()
    if not body:
        raise PithNumberError(f"{what} is empty")
    for position, char in enumerate(body, start=1):
        if char not in _ALPHABET_SET:
            raise PithNumberError(
                f"{what} {text!r} has {char!r} at position {position}; "
                "a Pith Number uses base32 letters A-Z and digits 2-7 only"
            )
    if len(body) not in lengths:
        expected = " or ".join(str(n) for n in lengths)
        raise PithNumberError(f"{what} {text!r} has {len(body)} characters; expected {expected}")
    return body


def _check_year(text: str, original: str) -> int:
    if not _YEAR_RE.fullmatch(text):
        raise PithNumberError(f"{original!r}: the year {text!r} must be four digits")
    year = int(text)
    if year < FIRST_YEAR:
        raise PithNumberError(
            f"{original!r}: the year {year} is before {FIRST_YEAR}, when arXiv began"
        )
    return year


@dataclass(frozen=True, slots=True)
class PithNumber:
    """A full Pith Number. `year` is None when only the bare body was given."""

    body: str
    year: int | None = None

    @classmethod
    def parse(cls, text: str) -> PithNumber:
        """Parse `pith:YYYY:BODY` or a bare 26-character body, in any case.

        A short alias (8/12/16 characters) is refused here with a message saying so:
        use `parse_reference` where aliases are welcome.
        """
        if not isinstance(text, str):
            raise PithNumberError("a Pith Number must be text")
        stripped = text.strip()
        parts = stripped.split(":")
        if len(parts) == 1:
            body = _check_body(stripped, what="Pith Number", lengths=(BODY_LENGTH, *ALIAS_LENGTHS))
            if len(body) != BODY_LENGTH:
                raise PithNumberError(
                    f"{text!r} is a {len(body)}-character short alias, not a full Pith Number "
                    f"({BODY_LENGTH} characters); resolve it through a registry"
                )
            return cls(body=body)
        if parts[0].lower() != "pith":
            raise PithNumberError(f"{text!r} does not start with 'pith:'")
        if len(parts) == 2:
            body = _check_body(parts[1], what="Pith Number", lengths=(BODY_LENGTH, *ALIAS_LENGTHS))
            if len(body) != BODY_LENGTH:
                raise PithNumberError(
                    f"{text!r} is a short form, not a full Pith Number; expected pith:YYYY:BODY"
                )
            return cls(body=body)
        if len(parts) != 3:
            raise PithNumberError(f"{text!r} has too many ':'; expected pith:YYYY:BODY")
        year = _check_year(parts[1], text)
        body = _check_body(parts[2], what="Pith Number body", lengths=(BODY_LENGTH,))
        return cls(body=body, year=year)

    @classmethod
    def from_digest(cls, canonical_sha256: str, year: int) -> PithNumber:
        """Derive the number from a record's hex SHA-256 digest and its first-submission year."""
        try:
            digest = hex_digest_bytes(canonical_sha256)
        except ValueError as exc:
            raise PithNumberError(f"canonical_sha256: {exc}") from None
        if year < FIRST_YEAR or year > 9999:
            raise PithNumberError(f"the year {year} is out of range")
        return cls(body=base32_nopad(digest)[:BODY_LENGTH], year=year)

    def __str__(self) -> str:
        return self.full if self.year is not None else self.body

    @property
    def full(self) -> str:
        """`pith:YYYY:BODY`; raises when the year is unknown."""
        if self.year is None:
            raise PithNumberError(f"the year of {self.body} is unknown; give pith:YYYY:{self.body}")
        return f"pith:{self.year:04d}:{self.body}"

    @property
    def short(self) -> str:
        """The short form shown on badges: `pith:` and the first 8 characters."""
        return f"pith:{self.body[:8]}"

    def alias(self, length: int) -> str:
        """The first `length` (8, 12 or 16) characters of the body."""
        if length not in ALIAS_LENGTHS:
            raise ValueError(f"alias length must be one of {ALIAS_LENGTHS}")
        return self.body[:length]

    def url(self, base_url: str = DEFAULT_BASE_URL) -> str:
        """The record's page on a registry."""
        return f"{base_url.rstrip('/')}/pith/{self.body}"

    def same_paper(self, other: PithNumber) -> bool:
        """True when both name the same body (years compared only when both are known)."""
        if self.body != other.body:
            return False
        return self.year is None or other.year is None or self.year == other.year


@dataclass(frozen=True, slots=True)
class PithAlias:
    """A short alias (8, 12 or 16 characters): a prefix of a body, resolvable only by look-up."""

    prefix: str

    def matches(self, number: PithNumber) -> bool:
        return number.body.startswith(self.prefix)

    def __str__(self) -> str:
        return f"pith:{self.prefix}"


def parse_reference(text: str) -> PithNumber | PithAlias:
    """Parse a full number, or a short alias (`pith:NFG5PAOX`, `NFG5PAOXQUVI`)."""
    stripped = text.strip() if isinstance(text, str) else text
    if isinstance(stripped, str):
        parts = stripped.split(":")
        candidate = parts[-1] if len(parts) <= 2 else None
        if (
            candidate is not None
            and (len(parts) == 1 or parts[0].lower() == "pith")
            and len(candidate.strip()) in ALIAS_LENGTHS
        ):
            return PithAlias(_check_body(candidate, what="Pith alias", lengths=ALIAS_LENGTHS))
    return PithNumber.parse(text)
