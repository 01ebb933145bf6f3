"""The paper an event is about: its Pith Number and the canonical_sha256 it was cut from."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from pithauthor.errors import DocumentError, PithError
from pithauthor.protocol.canonical_json import canonical_sha256
from pithauthor.protocol.ids import PithNumber
from pithauthor.protocol.payloads import digest_matches_number
from pithauthor.protocol.record import pith_number_of, split_authors, text_canon_sha256


@dataclass(frozen=True, slots=True)
class Subject:
    """A paper, bound to its exact record: the number must be cut from the digest.

    `source_id` is the arXiv id of the record (without version) when known, and
    `source_version` its version number. `title` is the record's displayed title when its hash
    is the canonical record's `title_canon_sha256` (else None); `authors` the record's author
    list as displayed (no signature covers it: shown to the author, compared with a claim's
    name, never trusted further). Neither takes part in equality.
    """

    pith_number: PithNumber
    canonical_sha256: str
    source_id: str | None = None
    source_version: int | None = None
    title: str | None = field(default=None, compare=False)
    authors: tuple[str, ...] = field(default=(), compare=False)

    def __post_init__(self) -> None:
        if self.pith_number.year is None:
            raise DocumentError(f"the subject {self.pith_number} needs its year: pith:YYYY:BODY")
        if not digest_matches_number(self.canonical_sha256, self.pith_number):
            raise DocumentError(
                f"canonical_sha256 {self.canonical_sha256[:16]}... does not give "
                f"{self.pith_number.full}"
            )

    @classmethod
    def from_document(cls, doc: Any) -> Subject:
        """From a registry record, `pith number from-arxiv --json` output, a bundle or a merged
        state. The canonical record is hashed again; it must give the stated hash and number."""
        if not isinstance(doc, Mapping):
            raise DocumentError("a record document is a JSON object")
        record, stated_hash = _canonical_of(doc)
        if not isinstance(record, Mapping):
            raise DocumentError("the document has no canonical_record")
        computed = canonical_sha256(record)
        if stated_hash is not None and stated_hash != computed:
            raise DocumentError(
                f"canonical_sha256 {stated_hash!r} is not the hash of its canonical_record "
                f"({computed})"
            )
        try:
            number = pith_number_of(record)
        except (PithError, KeyError, TypeError) as exc:
            raise DocumentError(f"cannot derive the Pith Number of the record: {exc}") from None
        stated = doc.get("pith_number")
        if stated is not None and stated != number.full:
            raise DocumentError(f"the document says {stated!r}; its record gives {number.full}")
        source = record.get("source")
        source_id = source.get("id") if isinstance(source, Mapping) else None
        version = source.get("version") if isinstance(source, Mapping) else None
        title, authors = _displayed_paper(doc, record)
        return cls(
            number,
            computed,
            source_id if isinstance(source_id, str) else None,
            version if isinstance(version, int) and not isinstance(version, bool) else None,
            title,
            authors,
        )


def _displayed_paper(
    doc: Mapping[str, Any], record: Mapping[str, Any]
) -> tuple[str | None, tuple[str, ...]]:
    """(title, authors) of a record document's `paper`: the title only when the canonical
    record's hash vouches for it."""
    paper = doc.get("paper")
    if not isinstance(paper, Mapping):
        return None, ()
    title = paper.get("title")
    metadata = record.get("metadata")
    stated = metadata.get("title_canon_sha256") if isinstance(metadata, Mapping) else None
    if not isinstance(title, str) or text_canon_sha256(title) != stated:
        title = None
    authors = paper.get("authors_text")
    return title, split_authors(authors) if isinstance(authors, str) else ()


def _canonical_of(doc: Mapping[str, Any]) -> tuple[Any, Any]:
    """(canonical_record, stated canonical_sha256) of any known document kind."""
    if "canonical_record" in doc:
        return doc["canonical_record"], doc.get("canonical_sha256")
    current = doc.get("current")
    if isinstance(current, Mapping):
        created = current.get("record_created")
        payload = created.get("payload") if isinstance(created, Mapping) else None
        stated = payload.get("canonical_sha256") if isinstance(payload, Mapping) else None
        return current.get("canonical_record"), stated
    return None, None
