"""The canonical record of an arXiv paper, its hash and its Pith Number (section 2, VERIFIED).

{"metadata": {"abstract_canon_sha256", "cross_cats_sorted", "license", "primary_cat",
              "submitted_at", "title_canon_sha256"},
 "schema_version": "1.0",
 "source": {"id", "kind": "arxiv", "version"}}
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC
from email.utils import parsedate_to_datetime
from typing import Any

from pithauthor._core.arxiv_id import ArxivId
from pithauthor._core.canonical import canonical_sha256, sha256_hex
from pithauthor._core.documents import CanonicalRecord, ComputedRecord
from pithauthor._core.pith_number import PithNumber
from pithauthor._core.utc import utc_stamp
from pithauthor.errors import ArxivIdError, MetadataError

SCHEMA_VERSION = "1.0"
SUBMITTED_AT_RE = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}Z")
_CATEGORY_RE = re.compile(r"[a-z-]+(\.[A-Za-z-]+)?")


def text_canon_sha256(text: str) -> str:
    """Hash of a title or abstract: lower-cased, runs of white space folded to one space."""
    return sha256_hex(" ".join(text.lower().split()).encode("utf-8"))


def rfc2822_to_utc(text: str) -> str:
    """`Fri, 24 Feb 2023 04:11:18 GMT` -> `2023-02-24T04:11:18Z`."""
    try:
        when = parsedate_to_datetime(text.strip())
    except (TypeError, ValueError, IndexError):
        raise MetadataError(f"{text!r} is not an RFC 2822 date") from None
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    return utc_stamp(when)


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
        `title`, `abstract`, `categories`, `license`, `v1_date_rfc2822`)."""
        try:
            return cls.from_fields(
                arxiv_id=str(doc["arxiv_id"]),
                latest_version=int(doc["latest_version"]),
                title=str(doc["title"]),
                abstract=str(doc["abstract"]),
                categories=doc["categories"],
                license=doc.get("license"),
                v1_date=str(doc.get("v1_date_rfc2822") or doc["submitted_at"]),
            )
        except KeyError as exc:
            raise MetadataError(f"arXiv metadata lacks the field {exc.args[0]!r}") from None
        except (TypeError, ValueError) as exc:
            raise MetadataError(f"arXiv metadata is malformed: {exc}") from None


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
