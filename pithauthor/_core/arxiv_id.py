"""arXiv identifiers: new style (`2302.12445v2`), old style (`hep-th/9901001`), with an `arXiv:`
prefix, as the DOI `10.48550/arXiv.ID`, or as an arxiv.org `abs`/`pdf` URL; parsed and normalised.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from pithauthor.errors import ArxivIdError

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
_OLD = re.compile(
    r"(?P<archive>[a-z]+(?:-[a-z]+)?)(?:\.(?P<subj>[a-z]{2}))?/(?P<yymm>[0-9]{4})"
    r"(?P<num>[0-9]{3})(?:v(?P<ver>[0-9]+))?",
    re.IGNORECASE,
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
        if m := _OLD.fullmatch(candidate):
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
        expected = 4 if yymm < "1501" else 5
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

    @property
    def is_old_style(self) -> bool:
        return "/" in self.id

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
