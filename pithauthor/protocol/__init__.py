"""The Pith protocol, pure (no I/O): canonical JSON, identifiers, documents, events,
records, identity proofs, and the verdict model; the checks of each document in `checks`.

The words its modules use for where a rule comes from (docs/protocol.md; the registry side is
../shared/protocol/PROTOCOL.md, whose section numbers "section N" in a docstring refers to):

- VERIFIED: a fact about the registry, recomputed from its own published data; a test proves it
  on the registry's real vectors (records, receipts, a merged state, its key's manifest). Change
  such code only with those tests green.
- OBSERVED: seen in what the registry serves (field names, endpoints, the eight relationships),
  but not recomputable: the code reads it and does not vouch for it.
- DESIGN: this project's own choice where the registry publishes nothing (the author-event
  envelope, its payloads, corrections, the local registry's merge), written down in
  docs/protocol.md and kept in one module, so that it can follow the registry if it ever
  publishes rules of its own.

A verdict (`Report`) "speaks for" the parts of a document its checks cover, and lists every
other part as `unverifiable` or `not_signed` (`pithauthor.protocol.verdict`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from pithauthor._face import lazy_face

if TYPE_CHECKING:
    from pithauthor.protocol.canonical_json import canonical, canonical_sha256, parse_json
    from pithauthor.protocol.documents import (
        AuthorEvent,
        CanonicalRecord,
        ComputedRecord,
        MergedState,
        MirrorManifest,
        Receipt,
        RecordBundle,
        RecordDocument,
    )
    from pithauthor.protocol.events import Signer
    from pithauthor.protocol.identity import (
        IdentityProof,
        Standing,
        normalize_orcid,
        well_known_url,
    )
    from pithauthor.protocol.ids import (
        ArxivId,
        PithAlias,
        PithNumber,
        Reference,
        classify_reference,
        parse_reference,
    )
    from pithauthor.protocol.payloads import RELATIONSHIPS, Artifact, normalize_relationship
    from pithauthor.protocol.record import (
        ArxivMetadata,
        build_canonical_record,
        check_claimant,
        check_own_name,
        next_version_metadata,
        pith_number_of,
        summarise,
    )
    from pithauthor.protocol.subject import Subject
    from pithauthor.protocol.text import escaped, payload_text_problem, text_problem
    from pithauthor.protocol.verdict import Check, RegistryKey, Report, Trust

__all__ = [
    "RELATIONSHIPS",
    "Artifact",
    "ArxivId",
    "ArxivMetadata",
    "AuthorEvent",
    "CanonicalRecord",
    "Check",
    "ComputedRecord",
    "IdentityProof",
    "MergedState",
    "MirrorManifest",
    "PithAlias",
    "PithNumber",
    "Receipt",
    "RecordBundle",
    "RecordDocument",
    "Reference",
    "RegistryKey",
    "Report",
    "Signer",
    "Standing",
    "Subject",
    "Trust",
    "build_canonical_record",
    "canonical",
    "canonical_sha256",
    "check_claimant",
    "check_own_name",
    "classify_reference",
    "escaped",
    "next_version_metadata",
    "normalize_orcid",
    "normalize_relationship",
    "parse_json",
    "parse_reference",
    "payload_text_problem",
    "pith_number_of",
    "summarise",
    "text_problem",
    "well_known_url",
]

# where each name lives (pithauthor/_face.py: why they load on first use)
__getattr__, __dir__ = lazy_face(
    __name__,
    {
        "Artifact": "pithauthor.protocol.payloads",
        "ArxivId": "pithauthor.protocol.ids",
        "ArxivMetadata": "pithauthor.protocol.record",
        "AuthorEvent": "pithauthor.protocol.documents",
        "CanonicalRecord": "pithauthor.protocol.documents",
        "Check": "pithauthor.protocol.verdict",
        "ComputedRecord": "pithauthor.protocol.documents",
        "IdentityProof": "pithauthor.protocol.identity",
        "MergedState": "pithauthor.protocol.documents",
        "MirrorManifest": "pithauthor.protocol.documents",
        "PithAlias": "pithauthor.protocol.ids",
        "PithNumber": "pithauthor.protocol.ids",
        "RELATIONSHIPS": "pithauthor.protocol.payloads",
        "Receipt": "pithauthor.protocol.documents",
        "RecordBundle": "pithauthor.protocol.documents",
        "RecordDocument": "pithauthor.protocol.documents",
        "Reference": "pithauthor.protocol.ids",
        "RegistryKey": "pithauthor.protocol.verdict",
        "Report": "pithauthor.protocol.verdict",
        "Signer": "pithauthor.protocol.events",
        "Standing": "pithauthor.protocol.identity",
        "Subject": "pithauthor.protocol.subject",
        "Trust": "pithauthor.protocol.verdict",
        "build_canonical_record": "pithauthor.protocol.record",
        "canonical": "pithauthor.protocol.canonical_json",
        "canonical_sha256": "pithauthor.protocol.canonical_json",
        "check_claimant": "pithauthor.protocol.record",
        "check_own_name": "pithauthor.protocol.record",
        "classify_reference": "pithauthor.protocol.ids",
        "escaped": "pithauthor.protocol.text",
        "next_version_metadata": "pithauthor.protocol.record",
        "normalize_orcid": "pithauthor.protocol.identity",
        "normalize_relationship": "pithauthor.protocol.payloads",
        "parse_json": "pithauthor.protocol.canonical_json",
        "parse_reference": "pithauthor.protocol.ids",
        "payload_text_problem": "pithauthor.protocol.text",
        "pith_number_of": "pithauthor.protocol.record",
        "summarise": "pithauthor.protocol.record",
        "text_problem": "pithauthor.protocol.text",
        "well_known_url": "pithauthor.protocol.identity",
    },
)
