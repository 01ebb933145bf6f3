"""The Pith protocol, pure (no I/O): canonical JSON, identifiers, documents, events,
records, identity proofs, the verdict model, and the check of each document (`checks/`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from pithauthor._face import lazy_face

if TYPE_CHECKING:  # the face, one name a line (pithauthor/_face.py reads this block)
    from pithauthor.protocol.canonical_json import parse_json as parse_json
    from pithauthor.protocol.checks.record import check_record as check_record
    from pithauthor.protocol.documents import AuthorEvent as AuthorEvent
    from pithauthor.protocol.documents import CanonicalRecord as CanonicalRecord
    from pithauthor.protocol.documents import ComputedRecord as ComputedRecord
    from pithauthor.protocol.documents import MergedState as MergedState
    from pithauthor.protocol.documents import MirrorManifest as MirrorManifest
    from pithauthor.protocol.documents import Receipt as Receipt
    from pithauthor.protocol.documents import RecordBundle as RecordBundle
    from pithauthor.protocol.documents import RecordDocument as RecordDocument
    from pithauthor.protocol.events import Signer as Signer
    from pithauthor.protocol.ids import ArxivId as ArxivId
    from pithauthor.protocol.ids import PithNumber as PithNumber
    from pithauthor.protocol.payloads import Artifact as Artifact
    from pithauthor.protocol.record import ArxivMetadata as ArxivMetadata
    from pithauthor.protocol.record import build_canonical_record as build_canonical_record
    from pithauthor.protocol.subject import Subject as Subject
    from pithauthor.protocol.verdict import Check as Check
    from pithauthor.protocol.verdict import RegistryKey as RegistryKey
    from pithauthor.protocol.verdict import Report as Report
    from pithauthor.protocol.verdict import Trust as Trust

__getattr__, __dir__ = lazy_face(__name__)  # names load on first use
