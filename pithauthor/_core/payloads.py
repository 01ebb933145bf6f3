"""The payloads of the three author event types (DESIGN), as plain data and pure rules.

The JSON Schemas in `pithauthor/schemas/` are the authority on shape and bounds; this module
holds the names and lists they use, builds payloads in protocol form (optional keys omitted,
never null), and the two rules a schema cannot state: the ORCID check digit, and that the
payload's `canonical_sha256` is the digest the subject's Pith Number was cut from.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Final

from pithauthor._core.documents import (
    ArtifactRef,
    AttestationAuthor,
    AttestationPayload,
    CitationPayload,
    EventType,
    ReplicationPayload,
)
from pithauthor._core.identity import IdentityProof
from pithauthor._core.pith_number import BODY_LENGTH, PithNumber
from pithauthor._core.relationships import RELATIONSHIPS

ATTESTATION: Final = "author_attestation"
CITATION: Final = "citation_signature"
REPLICATION: Final = "replication_record"
EVENT_TYPES: tuple[EventType, ...] = (ATTESTATION, CITATION, REPLICATION)

PAYLOAD_SCHEMAS: dict[str, str] = {t: f"pithauthor.{t}.v1" for t in EVENT_TYPES}

DEFAULT_STATEMENT = "I am an author of this paper."
OUTCOMES: dict[str, tuple[str, ...]] = {
    "replication": ("reproduced", "partially_reproduced", "not_reproduced", "inconclusive"),
    "falsification": ("falsified", "not_falsified", "inconclusive"),
    "formal_bridge": ("formalized", "partially_formalized", "not_formalized"),
}
REPLICATION_KINDS = tuple(OUTCOMES)
PROOF_SYSTEMS: dict[str, str] = {"lean4": "Lean 4", "coq": "Coq", "isabelle": "Isabelle"}

__all__ = [
    "DEFAULT_STATEMENT",
    "OUTCOMES",
    "PROOF_SYSTEMS",
    "RELATIONSHIPS",
    "Artifact",
    "attestation_payload",
    "citation_payload",
    "digest_matches_number",
    "replication_payload",
]


@dataclass(frozen=True, slots=True)
class Artifact:
    """An artifact of a replication: where it is, and the sha256 of its bytes."""

    uri: str
    sha256: str

    def as_dict(self) -> ArtifactRef:
        return {"uri": self.uri, "sha256": self.sha256}


def attestation_payload(
    canonical_sha256: str,
    *,
    name: str,
    orcid: str | None = None,
    position: int | None = None,
    statement: str | None = None,
    identity_proofs: Iterable[Mapping[str, Any]] = (),
) -> AttestationPayload:
    """`author_attestation` payload; `statement` defaults to DEFAULT_STATEMENT;
    `identity_proofs` ({kind, locator}, docs/identity.md) omitted when there are none."""
    author: AttestationAuthor = {"name": name}
    if orcid is not None:
        author["orcid"] = orcid
    if position is not None:
        author["position"] = position
    payload: AttestationPayload = {
        "payload_schema": PAYLOAD_SCHEMAS[ATTESTATION],
        "canonical_sha256": canonical_sha256,
        "author": author,
        "statement": DEFAULT_STATEMENT if statement is None else statement,
    }
    proofs: list[IdentityProof] = [
        {"kind": p["kind"], "locator": p["locator"]} for p in identity_proofs
    ]
    if proofs:
        payload["identity_proofs"] = proofs
    return payload


def citation_payload(
    canonical_sha256: str,
    *,
    citing: str,
    relationship: str,
    citation_key: str | None = None,
    context: str | None = None,
) -> CitationPayload:
    """`citation_signature` payload; `canonical_sha256` is the CITED paper's."""
    payload: CitationPayload = {
        "payload_schema": PAYLOAD_SCHEMAS[CITATION],
        "canonical_sha256": canonical_sha256,
        "citing_pith_number": citing,
        "relationship": relationship,
    }
    if citation_key is not None:
        payload["citation_key"] = citation_key
    if context is not None:
        payload["context"] = context
    return payload


def replication_payload(
    canonical_sha256: str,
    *,
    kind: str,
    outcome: str,
    summary: str,
    artifacts: Iterable[Artifact] = (),
    proof_system: str | None = None,
) -> ReplicationPayload:
    """`replication_record` payload; `proof_system` only for a formal bridge."""
    listed = [a.as_dict() for a in artifacts]
    schema = PAYLOAD_SCHEMAS[REPLICATION]
    if proof_system is None:
        return {
            "payload_schema": schema,
            "canonical_sha256": canonical_sha256,
            "kind": kind,
            "outcome": outcome,
            "artifacts": listed,
            "summary": summary,
        }
    return {  # the same, with proof_system in its place (the order a reader sees)
        "payload_schema": schema,
        "canonical_sha256": canonical_sha256,
        "kind": kind,
        "outcome": outcome,
        "proof_system": proof_system,
        "artifacts": listed,
        "summary": summary,
    }


# base32 alphabet (RFC 4648) -> the digits Python's int(..., 32) reads, to compare in C speed.
_TO_INT32 = str.maketrans("ABCDEFGHIJKLMNOPQRSTUVWXYZ234567", "0123456789abcdefghijklmnopqrstuv")


def digest_matches_number(canonical_sha256: str, number: PithNumber) -> bool:
    """True when `number`'s body is the first 26 base32 characters of the digest.

    The same as `base32_nopad(digest)[:26] == body`: 26 characters are the top 130 bits.
    """
    try:
        raw = bytes.fromhex(canonical_sha256)
    except ValueError:
        return False
    if len(raw) != 32 or len(number.body) != BODY_LENGTH:
        return False
    return int.from_bytes(raw[:17], "big") >> 6 == int(number.body.translate(_TO_INT32), 32)


def self_citation_problem(
    citing: Any, cited: Any, citing_arxiv: str | None = None, cited_arxiv: str | None = None
) -> str | None:
    """None unless a citation's citing paper is its cited paper: the same Pith Number, or,
    when the records of both are at hand (`*_arxiv`: their `source.id`, without version),
    two versions of one arXiv paper (each version has its own number): a paper cannot sign a
    citation of itself."""
    if isinstance(citing, str) and citing == cited:
        return f"the citing paper {citing} is the cited paper: a paper cannot cite itself"
    if citing_arxiv is not None and citing_arxiv == cited_arxiv:
        return (
            f"the citing paper {citing} and the cited paper {cited} are versions of one arXiv "
            f"paper, {citing_arxiv}: a paper cannot cite itself"
        )
    return None


def payload_orcid(payload: Mapping[str, Any]) -> str | None:
    """The author's ORCID iD in an attestation payload, if any."""
    author = payload.get("author")
    orcid = author.get("orcid") if isinstance(author, Mapping) else None
    return orcid if isinstance(orcid, str) else None
