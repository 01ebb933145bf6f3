"""The Pith protocol, pure (no I/O): canonical JSON, identifiers, documents, events,
records, identity proofs, the verdict model, and the check of each document (`checks/`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from pithauthor._face import lazy_face

if TYPE_CHECKING:
    from pithauthor.protocol.canonical_json import canonical_sha256, parse_json
    from pithauthor.protocol.checks.record import check_record
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
    from pithauthor.protocol.identity import normalize_orcid, well_known_url
    from pithauthor.protocol.ids import (
        ArxivId,
        PithNumber,
        Reference,
        classify_reference,
        parse_reference,
    )
    from pithauthor.protocol.payloads import RELATIONSHIPS, Artifact, normalize_relationship
    from pithauthor.protocol.record import (
        ArxivMetadata,
        AuthorCheck,
        build_canonical_record,
        check_claimant,
        check_own_name,
        next_version_metadata,
        summarise,
    )
    from pithauthor.protocol.subject import Subject
    from pithauthor.protocol.text import escaped
    from pithauthor.protocol.verdict import Check, RegistryKey, Report, Trust

__all__ = [
    "RELATIONSHIPS",
    "Artifact",
    "ArxivId",
    "ArxivMetadata",
    "AuthorCheck",
    "AuthorEvent",
    "CanonicalRecord",
    "Check",
    "ComputedRecord",
    "MergedState",
    "MirrorManifest",
    "PithNumber",
    "Receipt",
    "RecordBundle",
    "RecordDocument",
    "Reference",
    "RegistryKey",
    "Report",
    "Signer",
    "Subject",
    "Trust",
    "build_canonical_record",
    "canonical_sha256",
    "check_claimant",
    "check_own_name",
    "check_record",
    "classify_reference",
    "escaped",
    "next_version_metadata",
    "normalize_orcid",
    "normalize_relationship",
    "parse_json",
    "parse_reference",
    "summarise",
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
        "MergedState": "pithauthor.protocol.documents",
        "MirrorManifest": "pithauthor.protocol.documents",
        "PithNumber": "pithauthor.protocol.ids",
        "RELATIONSHIPS": "pithauthor.protocol.payloads",
        "Receipt": "pithauthor.protocol.documents",
        "RecordBundle": "pithauthor.protocol.documents",
        "RecordDocument": "pithauthor.protocol.documents",
        "Reference": "pithauthor.protocol.ids",
        "RegistryKey": "pithauthor.protocol.verdict",
        "Report": "pithauthor.protocol.verdict",
        "Signer": "pithauthor.protocol.events",
        "Subject": "pithauthor.protocol.subject",
        "Trust": "pithauthor.protocol.verdict",
        "build_canonical_record": "pithauthor.protocol.record",
        "canonical_sha256": "pithauthor.protocol.canonical_json",
        "AuthorCheck": "pithauthor.protocol.record",
        "check_claimant": "pithauthor.protocol.record",
        "check_own_name": "pithauthor.protocol.record",
        "check_record": "pithauthor.protocol.checks.record",
        "classify_reference": "pithauthor.protocol.ids",
        "escaped": "pithauthor.protocol.text",
        "next_version_metadata": "pithauthor.protocol.record",
        "normalize_orcid": "pithauthor.protocol.identity",
        "normalize_relationship": "pithauthor.protocol.payloads",
        "parse_json": "pithauthor.protocol.canonical_json",
        "parse_reference": "pithauthor.protocol.ids",
        "summarise": "pithauthor.protocol.record",
        "well_known_url": "pithauthor.protocol.identity",
    },
)
