"""The identifiers of the protocol (pure): Pith Numbers (`pith:YYYY:BODY`, the bare body, the
short aliases; VERIFIED rules), arXiv identifiers old and new, and the references a command
accepts for a paper (any of those, told apart by `parse_reference`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import cache

from pithauthor.errors import ArxivIdError, PithNumberError
from pithauthor.protocol.canonical_json import base32_nopad, hex_digest_bytes

# Pith Numbers: `pith:YYYY:BODY`, the bare body, and the short aliases (VERIFIED rules).
#
# BODY is the first 26 characters of the RFC 4648 base32 form of a record's SHA-256 digest
# (130 bits), YYYY the year of the paper's first submission. The first 8, 12 and 16 characters of
# BODY are *aliases*: they name a paper only through a registry look-up, never by themselves.

BODY_LENGTH = 26


ALIAS_LENGTHS = (8, 12, 16)


FIRST_YEAR = 1991  # arXiv began in August 1991


BASE32_ALPHABET = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567"


DEFAULT_BASE_URL = "https://pith.science"


_ALPHABET_SET = frozenset(BASE32_ALPHABET)


_YEAR_RE = re.compile(r"[0-9]{4}")


def _check_body(text: str, *, what: str, lengths: tuple[int, ...]) -> str:
    """Upper-case `text` and check alphabet then length; return it. The alphabet first: a
    mistyped character (`0` for `O`, `1` for `I`) is the likelier fault, named by position.
    Each character is checked as written, before upper-casing: `str.upper` folds lookalikes
    into the alphabet (the dotless i to I, the long s to S), and a number spelt with one must
    be refused, never read as the number it imitates."""
    written = text.strip()
    if not written:
        raise PithNumberError(f"{what} is empty")
    # ASCII upper-cases character for character: the same length, position for position
    body = written.upper() if written.isascii() else written
    for position, char in enumerate(body, start=1):
        if char not in _ALPHABET_SET and not (char.isascii() and char.upper() in _ALPHABET_SET):
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
    # `pith:YYYY:BODY`, written once: a signer reads `full` several times per event, and the
    # formatting was a twentieth of signing a bibliography. Not compared or shown.
    _full: str | None = field(init=False, repr=False, compare=False, default=None)

    def __post_init__(self) -> None:
        if self.year is not None:
            object.__setattr__(self, "_full", f"pith:{self.year:04d}:{self.body}")

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
        if self._full is None:
            raise PithNumberError(f"the year of {self.body} is unknown; give pith:YYYY:{self.body}")
        return self._full

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
        """True when both name the same body (years compared only when both are known): the
        130-bit body names the paper by itself; the year is a check on it, not part of it."""
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


# arXiv identifiers: new style (`2302.12445v2`), old style (`hep-th/9901001`), with an `arXiv:`
# prefix, as the DOI `10.48550/arXiv.ID`, or as an arxiv.org `abs`/`pdf` URL; parsed and normalised.

# the archives of arXiv's old-style identifiers (closed list): `hep-tx/9901001` fits the
# pattern but names nothing, and is refused with its archive named
OLD_ARCHIVES = frozenset(
    [
        "acc-phys",
        "adap-org",
        "alg-geom",
        "ao-sci",
        "astro-ph",
        "atom-ph",
        "bayes-an",
        "chao-dyn",
        "chem-ph",
        "cmp-lg",
        "comp-gas",
        "cond-mat",
        "cs",
        "dg-ga",
        "funct-an",
        "gr-qc",
        "hep-ex",
        "hep-lat",
        "hep-ph",
        "hep-th",
        "math",
        "math-ph",
        "mtrl-th",
        "nlin",
        "nucl-ex",
        "nucl-th",
        "patt-sol",
        "physics",
        "plasm-ph",
        "q-alg",
        "q-bio",
        "q-fin",
        "quant-ph",
        "solv-int",
        "stat",
        "supr-con",
    ]
)


_NEW = re.compile(r"(?P<yymm>[0-9]{4})\.(?P<num>[0-9]{4,5})(?:v(?P<ver>[0-9]+))?")


@cache
def _old() -> re.Pattern[str]:
    """An old-style identifier (`hep-th/9711200`): ASCII letters only (re.ASCII: under
    IGNORECASE alone `[a-z]` also matches the Kelvin sign and the long s, whose case folds are k
    and s, and `re` builds a table of every code point for it, 0.5 ms). Compiled on first use:
    most identifiers are new-style (`pith bib scan` start-up)."""
    return re.compile(
        r"(?P<archive>[a-z]+(?:-[a-z]+)?)(?:\.(?P<subj>[a-z]{2}))?/(?P<yymm>[0-9]{4})"
        r"(?P<num>[0-9]{3})(?:v(?P<ver>[0-9]+))?",
        re.IGNORECASE | re.ASCII,
    )


_URL = re.compile(
    r"(?:https?://)?(?:www\.|export\.)?arxiv\.org/(?:abs|pdf)/(?P<id>.+?)(?:\.pdf)?/?"
    r"(?:[?#].*)?",
    re.IGNORECASE,
)


_DOI = re.compile(
    r"(?:https?://(?:dx\.)?doi\.org/|doi:\s*)?10\.48550/arxiv\.(?P<id>.+)", re.IGNORECASE
)


_PREFIX = re.compile(r"arxiv:\s*", re.IGNORECASE)


@dataclass(frozen=True, slots=True, order=True)
class ArxivId:
    """A normalised arXiv identifier; `version` is None when none was given."""

    id: str
    version: int | None = None

    @classmethod
    def parse(cls, text: str) -> ArxivId:
        """Parse any accepted form; raise ArxivIdError saying what is wrong."""
        if not isinstance(text, str) or not text.strip():
            raise ArxivIdError("an arXiv identifier is empty")
        raw = text.strip()
        candidate = raw
        if (m := _URL.fullmatch(candidate)) or (m := _DOI.fullmatch(candidate)):
            candidate = m.group("id")
        elif m := _PREFIX.match(candidate):
            candidate = candidate[m.end() :]
        if m := _NEW.fullmatch(candidate):
            return cls._new(m, raw)
        if m := _old().fullmatch(candidate):
            return cls._old(m, raw)
        raise ArxivIdError(
            f"{raw!r} is not an arXiv identifier "
            "(expected e.g. 2302.12445, 2302.12445v2, hep-th/9901001, arXiv:2302.12445, "
            "10.48550/arXiv.2302.12445)"
        )

    @classmethod
    def _new(cls, m: re.Match[str], raw: str) -> ArxivId:
        yymm, num = m.group("yymm"), m.group("num")
        month = int(yymm[2:])
        if not 1 <= month <= 12:
            raise ArxivIdError(f"{raw!r}: month {yymm[2:]} in {yymm} is not 01-12")
        if yymm < "0704":
            raise ArxivIdError(f"{raw!r}: new-style identifiers start in April 2007 (0704)")
        expected = 4 if yymm < "1501" else 5  # arXiv went to five digits in January 2015
        if len(num) != expected:
            raise ArxivIdError(
                f"{raw!r}: identifiers from {yymm} have a {expected}-digit number, not {len(num)}"
            )
        return cls(id=f"{yymm}.{num}", version=_version(m, raw))

    @classmethod
    def _old(cls, m: re.Match[str], raw: str) -> ArxivId:
        archive = m.group("archive").lower()
        if archive not in OLD_ARCHIVES:
            raise ArxivIdError(f"{raw!r}: {archive!r} is not an arXiv archive")
        yymm = m.group("yymm")
        month = int(yymm[2:])
        if not 1 <= month <= 12:
            raise ArxivIdError(f"{raw!r}: month {yymm[2:]} in {yymm} is not 01-12")
        if "0704" <= yymm < "9108":
            raise ArxivIdError(f"{raw!r}: old-style identifiers run from 9108 to 0703")
        return cls(id=f"{archive}/{yymm}{m.group('num')}", version=_version(m, raw))

    def __str__(self) -> str:
        return self.id if self.version is None else f"{self.id}v{self.version}"

    def with_version(self, version: int | None) -> ArxivId:
        return ArxivId(self.id, version)

    @property
    def doi(self) -> str:
        """The DataCite DOI arXiv assigns (registry aliases write it in lower case)."""
        return f"10.48550/arXiv.{self.id}"


def _version(m: re.Match[str], raw: str) -> int | None:
    ver = m.group("ver")
    if ver is None:
        return None
    if int(ver) < 1:
        raise ArxivIdError(f"{raw!r}: versions start at v1")
    return int(ver)


# What an identifier a user typed names: a Pith Number, a short alias, or an arXiv paper.
#
# The one place that decides "arXiv id or Pith Number?" (pure, no I/O). Anything that starts with
# `pith` is a Pith Number or alias; anything with a `/` or `.` or the word arXiv in it is an arXiv
# identifier (new or old style, DOI or URL); a bare 26-character body or an 8/12/16-character
# alias is a Pith Number or alias. The parse errors of the chosen kind are raised as they are.


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
