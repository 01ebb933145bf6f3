"""The paper an event is about: its Pith Number and canonical_sha256 (EVENTS-CONTRACT)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from pithauthor._core.canonical import canonical_sha256
from pithauthor._core.pith_number import PithNumber
from pithauthor._core.record import pith_number_of
from pithauthor.errors import DocumentError, PithError


@dataclass(frozen=True)
class Subject:
    """A paper, as events name it."""

    pith_number: PithNumber
    canonical_sha256: str

    @classmethod
    def from_document(cls, doc: Any) -> Subject:
        """From a record, `pith number from-arxiv --json` output, a bundle or a state; the hash
        is recomputed from the canonical record and must give the stated number."""
        if not isinstance(doc, Mapping):
            raise DocumentError("expected a JSON object naming a paper")
        canon = doc.get("canonical_record")
        if canon is None and isinstance(doc.get("current"), Mapping):
            canon = doc["current"].get("canonical_record")
        if not isinstance(canon, Mapping):
            raise DocumentError("the document has no canonical_record")
        digest = canonical_sha256(canon)
        try:
            number = pith_number_of(canon)
        except (PithError, KeyError, TypeError) as exc:
            raise DocumentError(f"the canonical record is malformed: {exc}") from None
        stated = doc.get("pith_number")
        if stated is not None and stated != number.full:
            raise DocumentError(f"the canonical record gives {number.full}, not {stated}")
        stated_hash = doc.get("canonical_sha256")
        if stated_hash is not None and stated_hash != digest:
            raise DocumentError("canonical_sha256 does not match the canonical record")
        return cls(pith_number=number, canonical_sha256=digest)
