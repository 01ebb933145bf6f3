"""What each verdict on a registry document checks: the path patterns of the
fields it speaks for, the fields it requires, and the helpers that read them (pure).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from pithauthor.protocol.documents import (
    EVENT_LISTS,
    REGISTRY_LISTS,
    EventSignature,
    MergedState,
    Receipt,
    RecordBundle,
    RecordDocument,
    fields,
    required_fields,
)
from pithauthor.protocol.events import SIGNED_FIELDS
from pithauthor.protocol.verdict import (
    Report,
    segments,
    under,
)

__all__ = [
    "OPTIONAL",
]


RECEIPT_MESSAGE = "canonical_sha256_bytes"


RECEIPT_KIND = "pith_receipt"


RECEIPT_ALGORITHM = "ed25519"


ALIAS_KINDS = ("arxiv", "arxiv_version", "doi", "pith_short_8", "pith_short_12", "pith_short_16")


PAPER_FIELDS = ("title", "primary_cat", "cross_cats", "license", "submitted_at")


# --- what each verdict checks (docs/protocol.md, "What `pith verify` checks") ------------------
# Every field matched here is checked (recomputed, or covered by a verified signature); every
# other field present is reported as not signed. `agent_actions` and `links` are checked (origin
# of the registry that signed the receipt, naming this paper) yet still listed as not signed:
# no signature covers the exact URLs.
RECEIPT_CHECKED = (
    "canonical_sha256",
    "key_id",
    "signature_b64",
    "signed_message",
    "algorithm",
    "kind",
    "public_key_fingerprint",
)


RECEIPT_ROW_CHECKED = ("pith_body", *RECEIPT_CHECKED)


EVENT_CHECKED = (*SIGNED_FIELDS, "event_id", *under("signature", fields(EventSignature)))


ALIAS_CHECKED = ("[*].alias_kind", "[*].alias_value")


RECORD_CHECKED = (
    "record_type",
    "schema_version",
    "pith_number",
    "short_pith_number",
    "canonical_sha256",
    "canonical_record",
    "source",
    *under("receipt", RECEIPT_CHECKED),
    *under("aliases", ALIAS_CHECKED),
    *under("paper", PAPER_FIELDS),
    *under("upstream_receipt", RECEIPT_CHECKED),
)


RECORD_REQUIRED = required_fields(RecordDocument)


# record_created: its payload (hashed record, receipt) and its signer (the receipt's key)
CREATED_CHECKED = (
    "signer.key_id",
    "signer.public_key_fingerprint",
    "payload.canonical_record",
    "payload.canonical_sha256",
    "payload.source_id",
    "payload.source_kind",
    "payload.source_version",
    *under("payload.receipt", RECEIPT_CHECKED),
)


CREATED_REGISTRY_FIELDS = ("event_id", "event_type", "target", "created_at", "signer")


STATE_CHECKED = (
    "state_type",
    "pith_number",
    "state_sha256",
    "current.canonical_record",
    *under("current.record_created", CREATED_CHECKED),
    *under("current.source_aliases", ALIAS_CHECKED),
)


# the parts a merge decides: recomputed for a local state, unverifiable for the registry's
MERGE_FIELDS = (
    "merge_version",
    "event_count",
    "valid_event_count",
    "invalid_event_count",
    "equivocation_count",
    "equivocations",
    "applied_event_ids",
    "superseded",
    "withdrawals",
    "duplicates",
    *under("current", tuple(EVENT_LISTS.values())),
    *under("current", REGISTRY_LISTS),
)


BUNDLE_CHECKED = (
    "bundle_type",
    "pith_number",
    "short_pith_number",
    "canonical_record",
    "canonical_sha256",
    "source",
    *under("source_aliases", ALIAS_CHECKED),
)


BUNDLE_REQUIRED = required_fields(RecordBundle)


STATE_REQUIRED = required_fields(MergedState)


# Fields checked when present, whose absence takes away nothing the verdict speaks for
# (a record without `paper` shows no title to contradict). Anything else checked is required.
RECEIPT_OPTIONAL = tuple(f for f in RECEIPT_CHECKED if f not in required_fields(Receipt))


OPTIONAL = {
    "record": (
        "record_type",
        "schema_version",
        "paper",
        "links",
        "links.*",
        "agent_actions.*",
        "agent_actions.actions.*",
        "upstream_receipt",
        *under("receipt", RECEIPT_OPTIONAL),
        *under("upstream_receipt", RECEIPT_OPTIONAL),
    ),
    "receipt": RECEIPT_OPTIONAL,
    "bundle": (
        "short_pith_number",
        "source_aliases",
        "events[*]",  # a bundle is not signed: an event left out cannot be detected
        *under("events[*].payload.receipt", RECEIPT_OPTIONAL),
    ),
    "state": under("current.record_created.payload.receipt", RECEIPT_OPTIONAL),
}


def require_fields(report: Report, doc: Mapping[str, Any], fields: Iterable[str]) -> None:
    """The check `required`: `doc` holds each of `fields` (the missing ones are named)."""
    missing = [f for f in fields if f not in doc]
    report.add("required", not missing, "missing: " + ", ".join(missing) if missing else "present")


def current_list(report: Report, current: Mapping[str, Any], name: str) -> list[Any]:
    """The list `current[name]` (empty when absent); a failed check, and [], when not a list."""
    items = current.get(name, [])
    if not isinstance(items, list):
        report.add(f"current.{name}", False, "not a list")
        return []
    return items


def has_field(doc: Mapping[str, Any], pattern: str) -> bool:
    """Whether the dotted field path `pattern` leads to a value in `doc`."""
    node: Any = doc
    for seg in segments(pattern):
        if not isinstance(node, Mapping) or seg not in node:
            return False
        node = node[seg]
    return True
