"""The canonical record of an arXiv paper (pure, section 2, VERIFIED): its fields computed from
arXiv's metadata (arXivRaw XML or JSON), the authors as arXiv writes them, and the record's
hash and Pith Number.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC
from typing import Any, NamedTuple, TypeVar

from pithauthor.errors import ArxivIdError, InputError, MetadataError
from pithauthor.protocol.canonical_json import JSONFault, canonical_sha256, parse_json, sha256_hex
from pithauthor.protocol.documents import CanonicalRecord, ComputedRecord
from pithauthor.protocol.ids import ArxivId, PithNumber
from pithauthor.protocol.utc import utc_stamp

# The canonical record of an arXiv paper, its hash and its Pith Number (section 2, VERIFIED).
#
# {"metadata": {"abstract_canon_sha256", "cross_cats_sorted", "license", "primary_cat",
#               "submitted_at", "title_canon_sha256"},
#  "schema_version": "1.0",
#  "source": {"id", "kind": "arxiv", "version"}}

SCHEMA_VERSION = "1.0"


SUBMITTED_AT_RE = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}Z")


_CATEGORY_RE = re.compile(r"[a-z-]+(\.[A-Za-z-]+)?")


def text_canon_sha256(text: str) -> str:
    """Hash of a title or abstract: lower-cased, runs of white space folded to one space."""
    # nothing more (TeX kept as arXiv stores it, no Unicode normalisation): section 2,
    # VERIFIED against the registry's own hashes; any "cleaning" would give another number
    return sha256_hex(" ".join(text.lower().split()).encode("utf-8"))


def rfc2822_to_utc(text: str) -> str:
    """`Fri, 24 Feb 2023 04:11:18 GMT` -> `2023-02-24T04:11:18Z`."""
    # here: email.utils loads socket, calendar and random (about 3 ms), and a record read
    # from the cache is never dated again
    from email.utils import parsedate_to_datetime

    try:
        when = parsedate_to_datetime(text.strip())
        if when.tzinfo is None:  # `-0000` (RFC 2822: zone unknown); arXiv's own dates are GMT
            when = when.replace(tzinfo=UTC)
        return utc_stamp(when)
    # OverflowError: a field past C's integers (an hour of 2**64), or a time that is past
    # year 9999 once in UTC (31 Dec 9999 23:59:59 -2359)
    except (TypeError, ValueError, IndexError, OverflowError):
        raise MetadataError(f"{text!r} is not an RFC 2822 date") from None


def _check_encodable(name: str, value: str) -> None:
    """MetadataError when `value` has no UTF-8 bytes to hash: it holds a lone UTF-16 surrogate,
    which is how a byte that is not UTF-8 in a command-line argument (`--title $'\\xff'`)
    arrives (surrogate escape)."""
    try:
        value.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise MetadataError(
            f"the {name} is not UTF-8 text: it holds {value[exc.start]!r} at position "
            f"{exc.start + 1} (a byte that is not UTF-8, or a lone UTF-16 surrogate)"
        ) from None


@dataclass(frozen=True, slots=True)
class ArxivMetadata:
    """What the canonical record is built from: arXiv's own metadata for one paper."""

    arxiv_id: ArxivId
    latest_version: int
    title: str
    abstract: str
    categories: tuple[str, ...]
    license: str
    v1_submitted_at: str

    def __post_init__(self) -> None:
        if self.arxiv_id.version is not None:
            raise MetadataError("arxiv_id must be given without a version")
        if self.latest_version < 1:
            raise MetadataError("latest_version must be at least 1")
        if not self.categories:
            raise MetadataError("categories are empty; the first is the primary category")
        for cat in self.categories:
            if not _CATEGORY_RE.fullmatch(cat):
                raise MetadataError(f"{cat!r} is not an arXiv category")
        if not SUBMITTED_AT_RE.fullmatch(self.v1_submitted_at):
            raise MetadataError(f"v1 submission time {self.v1_submitted_at!r} is not UTC")
        if not self.title.strip():
            raise MetadataError("the title is empty")
        for name, value in (
            ("title", self.title),
            ("abstract", self.abstract),
            ("licence", self.license),
        ):
            _check_encodable(name, value)

    @classmethod
    def from_fields(
        cls,
        arxiv_id: str,
        latest_version: int,
        title: str,
        abstract: str,
        categories: str | Sequence[str],
        license: str | None,
        v1_date: str,
    ) -> ArxivMetadata:
        """Build from plain fields; `categories` space separated (primary first) or a list;
        `v1_date` RFC 2822 (as arXiv writes it) or already `YYYY-MM-DDTHH:MM:SSZ`."""
        try:
            parsed = ArxivId.parse(arxiv_id)
        except ArxivIdError as exc:
            raise MetadataError(str(exc)) from None
        cats = tuple(categories.split()) if isinstance(categories, str) else tuple(categories)
        submitted = v1_date if SUBMITTED_AT_RE.fullmatch(v1_date) else rfc2822_to_utc(v1_date)
        return cls(
            arxiv_id=parsed.with_version(None),
            latest_version=latest_version,
            title=title,
            abstract=abstract,
            categories=cats,
            license=license or "",
            v1_submitted_at=submitted,
        )

    @classmethod
    def from_json(cls, doc: Mapping[str, Any]) -> ArxivMetadata:
        """From the JSON form used in the protocol vectors (`arxiv_id`, `latest_version`,
        `title`, `abstract`, `categories`, `license`, `v1_date_rfc2822`).

        Each field must have its JSON type: a value of another type is refused, never
        converted (`str()`/`int()` made `true` version 1, `2.7` version 2, the Arabic-Indic
        `"٢"` version 2 and `null` the title "None": each a wrong Pith Number, silently)."""
        try:
            date = doc.get("v1_date_rfc2822")
            licence = doc.get("license")
            return cls.from_fields(
                arxiv_id=_typed("arxiv_id", doc["arxiv_id"], str),
                latest_version=_typed("latest_version", doc["latest_version"], int),
                title=_typed("title", doc["title"], str),
                abstract=_typed("abstract", doc["abstract"], str),
                categories=_categories(doc["categories"]),
                license=None if licence is None else _typed("license", licence, str),
                v1_date=_typed(
                    "v1_date_rfc2822", doc["submitted_at"] if date in (None, "") else date, str
                ),
            )
        except KeyError as exc:
            raise MetadataError(f"arXiv metadata lacks the field {exc.args[0]!r}") from None


_T = TypeVar("_T")
_JSON_KINDS = {
    type(None): "null",
    bool: "a boolean",
    int: "an integer",
    float: "a number",
    str: "a string",
    list: "an array",
    dict: "an object",
}


def _typed(name: str, value: Any, kind: type[_T], wanted: str = "") -> _T:
    """`value` when it is of JSON type `kind` (a boolean is no integer); MetadataError if not."""
    if type(value) is not kind:  # exactly: True is an int to isinstance
        raise MetadataError(
            f"arXiv metadata is malformed: {name} is {_JSON_KINDS.get(type(value), 'a value')}, "
            f"not {wanted or _JSON_KINDS[kind]}"
        )
    return value


def _categories(value: Any) -> str | list[str]:
    """`categories`: a space-separated string, or an array of strings (primary first)."""
    if isinstance(value, list):
        wanted = "a string (an array holds only strings)"
        return [_typed("categories", c, str, wanted) for c in value]
    return _typed("categories", value, str, "a string or an array of strings")


def next_version_metadata(
    meta: ArxivMetadata,
    *,
    title: str | None = None,
    abstract: str | None = None,
    categories: Sequence[str] | None = None,
    license: str | None = None,
) -> ArxivMetadata:
    """The metadata of the version arXiv does not have yet: version + 1, v1's submission time
    kept (the record's `submitted_at` is always v1's), and whatever the author will change."""
    return ArxivMetadata(
        arxiv_id=meta.arxiv_id,
        latest_version=meta.latest_version + 1,
        title=meta.title if title is None else title,
        abstract=meta.abstract if abstract is None else abstract,
        categories=meta.categories if categories is None else tuple(categories),
        license=meta.license if license is None else license,
        v1_submitted_at=meta.v1_submitted_at,
    )


def build_canonical_record(meta: ArxivMetadata) -> CanonicalRecord:
    """The canonical record of `meta`, in protocol form."""
    return {
        "metadata": {
            "abstract_canon_sha256": text_canon_sha256(meta.abstract),
            "cross_cats_sorted": sorted(meta.categories[1:]),
            "license": meta.license,
            "primary_cat": meta.categories[0],
            "submitted_at": meta.v1_submitted_at,
            "title_canon_sha256": text_canon_sha256(meta.title),
        },
        "schema_version": SCHEMA_VERSION,
        "source": {"id": meta.arxiv_id.id, "kind": "arxiv", "version": meta.latest_version},
    }


def record_year(record: Mapping[str, Any]) -> int:
    """The year of first submission, from `metadata.submitted_at`."""
    submitted = record["metadata"]["submitted_at"]
    if not isinstance(submitted, str) or not SUBMITTED_AT_RE.fullmatch(submitted):
        raise MetadataError(f"submitted_at {submitted!r} is not YYYY-MM-DDTHH:MM:SSZ")
    return int(submitted[:4])


def pith_number_of(record: Mapping[str, Any]) -> PithNumber:
    """The Pith Number of a canonical record."""
    return PithNumber.from_digest(canonical_sha256(record), record_year(record))


def summarise(record: CanonicalRecord) -> ComputedRecord:
    """`{"pith_number", "canonical_sha256", "canonical_record"}` for a canonical record."""
    return {
        "pith_number": pith_number_of(record).full,
        "canonical_sha256": canonical_sha256(record),
        "canonical_record": record.copy(),
    }


# A paper's author list, and whether a claimant's public name is one of them.
#
# A claim signs the author's public name and, with `--position N`, their place in the list; both
# are compared with the paper's authors before anything is signed. A position is a place in
# arXiv's own author order for that version (the arXiv API's `<author>` entries); a registry's
# record lists the authors in another order (pith.science sorts them by given name), so its
# list only says who the authors are, never where. Names are compared the way people write
# them: accents and case folded ("Ádá" = "Ada"), "Lovelace, Ada" = "Ada Lovelace", an initial
# stands for any given name with that letter ("A. Lovelace", "A.-M. Legendre"), and a middle
# name one side leaves out is no mismatch ("Ada Lovelace" = "Ada K. Lovelace"). Given names
# are compared in order ("Ada Lovelace" is not "Augusta Ada Lovelace") and the surname (the
# last word) must always agree. Pure: no I/O.

# arXiv's authors field: "A. One, B. Two and C. Three (Some University)"
_AFFILIATION = re.compile(r"\([^()]*\)")


_SEPARATORS = re.compile(r"\s*,\s*|\s*;\s*|\s+and\s+|\s*&\s*", re.IGNORECASE)


_SUFFIXES = frozenset({"jr", "sr", "ii", "iii", "iv"})


def split_authors(text: str) -> tuple[str, ...]:
    """The names of an arXiv-style author list, in order (affiliations in brackets dropped)."""
    plain = text
    while _AFFILIATION.search(plain):  # nested brackets: innermost first
        plain = _AFFILIATION.sub(" ", plain)
    parts = (" ".join(p.split()) for p in _SEPARATORS.split(plain))
    return tuple(p for p in parts if p and p.casefold().strip(".") not in _SUFFIXES)


def _fold(word: str) -> str:
    """Case and accents folded: `Ádá` -> `ada`, `Łukasz` -> `lukasz`."""
    decomposed = unicodedata.normalize("NFKD", word.casefold())
    base = "".join(c for c in decomposed if not unicodedata.combining(c))
    return base.replace("ł", "l").replace("ø", "o").replace("ß", "ss").replace("đ", "d")


def name_parts(name: str) -> tuple[tuple[str, ...], str]:
    """(given names, surname), folded. `Lovelace, Ada` and `Ada Lovelace` give the same."""
    if "," in name:  # "Surname, Given" (BibTeX style)
        surname, _, given = name.partition(",")
        name = f"{given} {surname}"
    words = [_fold(w) for w in re.split(r"[\s.\-\u2010\u2011]+", name) if w.strip()]
    words = [w for w in words if w not in _SUFFIXES]
    if not words:
        return (), ""
    return tuple(words[:-1]), words[-1]


def _given_agree(a: str, b: str) -> bool:
    if len(a) == 1 or len(b) == 1:  # an initial
        return a[0] == b[0]
    return a == b


def same_person(name: str, listed: str) -> bool:
    """Whether `name` may be the author written `listed` (see the module's rules)."""
    given_a, surname_a = name_parts(name)
    given_b, surname_b = name_parts(listed)
    if not surname_a or surname_a != surname_b:
        return False
    return all(_given_agree(a, b) for a, b in zip(given_a, given_b, strict=False))


def check_own_name(name: str, public_name: str | None, *, force: bool = False) -> None:
    """A claim signs the key's public name: `name` (a `--name`) must be that name written
    another way (`same_person`), else InputError unless `force`. A key without a public name
    has nothing to compare with: refused too (fail closed)."""
    if force:
        return
    if not public_name:
        raise InputError(
            "the key has no public name to compare --name with: set it once with "
            'pith keys set --public-name "Your Name"; nothing was signed (--force signs anyway)'
        )
    if not same_person(name, public_name):
        raise InputError(
            f"--name {name!r} is not the key's public name ({public_name!r}): a claim signs "
            "your own name; nothing was signed (--force signs it anyway)"
        )


class AuthorCheck(NamedTuple):
    """What comparing a claimant's name with the author list found."""

    checked: bool  # False: the record lists no authors (signed with --force only)
    positions: tuple[int, ...]  # 1-based places in arXiv's order where the name matches
    note: str  # one line for the preview
    order: tuple[str, ...] | None = None  # arXiv's order, when it was had


def check_claimant(
    authors: tuple[str, ...],
    name: str,
    position: int | None,
    *,
    order: tuple[str, ...] | None = None,
    why_no_order: str = "arXiv's author order could not be had",
    force: bool = False,
) -> AuthorCheck:
    """Compare `name` (and `position`) with the paper's authors; InputError when they disagree,
    unless `force` (then the note says what was not checked).

    `order` is arXiv's author list of the version claimed, in order: the name must be one of
    them and `position` a place where it stands. Without it (`why_no_order` says why) the name
    is looked for in `authors`, the record's list (a set: its order is not the paper's), and a
    `position` cannot be checked: refused. With neither list there is nothing to compare
    with: refused too (fail closed)."""
    if order:
        return _against_order(order, name, position, force)
    if not authors:  # fail closed: nothing to compare with is no match
        if not force:
            raise InputError(
                "the record lists no authors and arXiv's author order could not be had "
                f"({why_no_order}), so your name and position cannot be checked; "
                "nothing was signed (--force signs anyway)"
            )
        return AuthorCheck(False, (), "NOT CHECKED (--force): the record lists no authors")
    if not any(same_person(name, listed) for listed in authors):
        problem = f"{name!r} is not among the paper's authors ({_short_list(sorted(authors))})"
    elif position is not None:
        problem = (
            f"--position {position} cannot be checked: {why_no_order}, and the record's list "
            "is not in the paper's order"
        )
        if not force:
            raise InputError(
                f"{problem}; nothing was signed (leave out --position, or --force signs it "
                "unchecked)"
            )
        return AuthorCheck(True, (), f"NOT CHECKED (--force): {problem}")
    else:
        note = f"none signed; the name is one of the record's {len(authors)} authors"
        return AuthorCheck(True, (), f"{note} (arXiv's order could not be had)")
    if not force:
        raise InputError(f"{problem}; nothing was signed (--force signs anyway)")
    return AuthorCheck(True, (), f"NOT CHECKED (--force): {problem}")


def _against_order(
    order: tuple[str, ...], name: str, position: int | None, force: bool
) -> AuthorCheck:
    found = tuple(i for i, listed in enumerate(order, 1) if same_person(name, listed))
    problem = _problem(order, name, position, found)
    if problem is None:
        if position is None:
            first = found[0]
            note = f"none signed; the name is {first} of {len(order)} on arXiv ({order[first - 1]})"
        else:
            note = f"{position} of {len(order)} on arXiv ({order[position - 1]})"
        return AuthorCheck(True, found, note, order)
    if not force:
        raise InputError(f"{problem}; nothing was signed (--force signs anyway)")
    return AuthorCheck(True, found, f"NOT CHECKED (--force): {problem}", order)


def _problem(
    authors: tuple[str, ...], name: str, position: int | None, found: tuple[int, ...]
) -> str | None:
    listing = _short_list(authors)
    if not found:
        return f"{name!r} is not among the paper's authors on arXiv ({listing})"
    if position is None or position in found:
        return None
    if position > len(authors):
        return f"--position {position}: the paper has {len(authors)} authors on arXiv ({listing})"
    places = " or ".join(str(p) for p in found)
    return (
        f"--position {position}: author {position} on arXiv is {authors[position - 1]!r}, "
        f"not {name!r} (author {places})"
    )


def _short_list(authors: Sequence[str], limit: int = 8) -> str:
    shown = ", ".join(authors[:limit])
    return shown if len(authors) <= limit else f"{shown}, … {len(authors)} in all"


# Read arXiv's OAI-PMH `arXivRaw` metadata (a whole GetRecord answer or the bare element).

ARXIV_RAW_NS = "http://arxiv.org/OAI/arXivRaw/"


OAI_NS = "http://www.openarchives.org/OAI/2.0/"


_VERSION_RE = re.compile(r"v([0-9]+)")


def metadata_start(data: bytes) -> bytes:
    """arXiv metadata from its first significant byte: a UTF-8 byte order mark and white space
    skipped (what an editor or a shell puts before the `{` or `<` that says its form)."""
    return data.lstrip(b"\xef\xbb\xbf \t\r\n")


def parse_arxiv_metadata(data: bytes) -> ArxivMetadata:
    """arXivRaw XML (OAI-PMH) or the JSON metadata form, told apart by their first byte."""
    if b"\x00" in data:
        raise MetadataError("this is a binary file, not arXiv metadata")
    stripped = metadata_start(data)
    if not stripped:
        raise MetadataError("the arXiv metadata is empty")
    if stripped[:1] == b"{":
        try:
            doc: Any = parse_json(stripped)
        except JSONFault as exc:
            raise MetadataError(f"the JSON metadata is not valid JSON: {exc}") from None
        return ArxivMetadata.from_json(doc)
    if stripped[:1] == b"<":
        return parse_arxiv_raw(data)
    raise MetadataError("expected arXivRaw XML or JSON metadata")


def parse_arxiv_raw(data: bytes | str) -> ArxivMetadata:
    """The metadata of the one paper in an arXivRaw document."""
    if isinstance(data, bytes) and b"\x00" in data:
        raise MetadataError("this is a binary file, not arXivRaw XML")
    if not data.strip():
        raise MetadataError("the arXivRaw document is empty")
    import xml.etree.ElementTree as ET  # here: only arXivRaw XML is parsed with it

    try:
        root = ET.fromstring(data)
    except ET.ParseError as exc:
        raise MetadataError(f"not well-formed XML ({exc})") from None
    except (LookupError, ValueError) as exc:
        # the XML declaration names an encoding Python has no text codec for (LookupError:
        # "UTF-1844", "rot13") or one expat cannot take (ValueError: "utf-32", "idna")
        raise MetadataError(f"XML in an encoding that cannot be read ({exc})") from None
    error = root.find(f".//{{{OAI_NS}}}error")
    if error is not None:
        code = error.get("code", "error")
        raise MetadataError(f"the OAI-PMH answer is an error: {code}: {(error.text or '').strip()}")
    raw = (
        root
        if root.tag == f"{{{ARXIV_RAW_NS}}}arXivRaw"
        else root.find(f".//{{{ARXIV_RAW_NS}}}arXivRaw")
    )
    if raw is None:
        raise MetadataError("no arXivRaw element (metadataPrefix=arXivRaw) in the document")

    def text(name: str, required: bool = True) -> str:
        el = raw.find(f"{{{ARXIV_RAW_NS}}}{name}")
        if el is None or el.text is None:
            if required:
                raise MetadataError(f"arXivRaw has no <{name}>")
            return ""
        return el.text

    versions: dict[int, str] = {}
    for el in raw.findall(f"{{{ARXIV_RAW_NS}}}version"):
        m = _VERSION_RE.fullmatch(el.get("version", ""))
        date = el.find(f"{{{ARXIV_RAW_NS}}}date")
        if m is None or date is None or not date.text:
            raise MetadataError("arXivRaw has a <version> without a version number or date")
        versions[int(m.group(1))] = date.text
    if 1 not in versions:
        raise MetadataError("arXivRaw has no v1 <version> element (its date is the submission)")
    return ArxivMetadata.from_fields(
        arxiv_id=text("id").strip(),
        latest_version=max(versions),
        title=text("title"),
        abstract=text("abstract"),
        categories=text("categories"),
        license=text("license", required=False).strip(),
        v1_date=versions[1],
    )


def arxiv_raw_authors(data: bytes | str) -> str:
    """The `<authors>` of an arXivRaw document that `parse_arxiv_raw` accepted, white space
    folded ("" when it has none). Displayed beside a record, never part of it."""
    import xml.etree.ElementTree as ET

    root = ET.fromstring(data)
    element = next(root.iter(f"{{{ARXIV_RAW_NS}}}authors"), None)
    return " ".join((element.text or "").split()) if element is not None else ""
