"""The JSON documents the local registry serves: record, bundle, merged state, resolver answer.

They have the shapes of the real registry's documents (section 4 of the protocol notes), with
links that point back at this registry, and receipts signed by its own key.
"""

from __future__ import annotations

from pithauthor.protocol.canonical_json import canonical_sha256
from pithauthor.protocol.checks.merge import merge_state, order_key
from pithauthor.protocol.documents import (
    AliasKind,
    AuthorEvent,
    MergedState,
    RecordBundle,
    RecordCreated,
    RecordDocument,
    ResolveAnswer,
    SourceAlias,
)
from pithauthor.protocol.ids import PithNumber
from pithauthor.registry.local.signer import LocalKey
from pithauthor.registry.local.store import StoredRecord

# action name in agent_actions.actions -> the event type its endpoint takes
ACTIONS = {
    "attest_author": "author_attestation",
    "sign_citation": "citation_signature",
    "submit_replication": "replication_record",
}


def source_aliases(rec: StoredRecord) -> list[SourceAlias]:
    """The aliases of a record, as the registry lists them (sorted by kind, as text: the real
    record vector lists `pith_short_12` before `pith_short_8`, and so does this one)."""
    number = PithNumber.parse(rec.pith_number)
    src = rec.canonical_record["source"]
    pairs: list[tuple[AliasKind, str]] = [
        ("arxiv", src["id"]),
        ("arxiv_version", f"{src['id']}v{src['version']}"),
        ("doi", f"10.48550/arxiv.{src['id']}".lower()),
        ("pith_short_12", number.alias(12)),
        ("pith_short_16", number.alias(16)),
        ("pith_short_8", number.alias(8)),
    ]
    return [{"alias_kind": k, "alias_value": v, "created_at": rec.created_at} for k, v in pairs]


def record_document(rec: StoredRecord, base: str) -> RecordDocument:
    """`GET /pith/{body}`: the record, its local receipt, and agent_actions naming this server."""
    page = f"{base}/pith/{rec.body}"
    src = rec.canonical_record["source"]
    doc: RecordDocument = {
        "record_type": "pith_number_record",
        "pith_number": rec.pith_number,
        "short_pith_number": PithNumber.parse(rec.pith_number).short,
        "schema_version": "1.0",
        "canonical_sha256": rec.canonical_sha256,
        "source": rec.canonical_record["source"],
        "attestation_state": "computed",
        "canonical_record": rec.canonical_record,
        "receipt": rec.receipt,
        "aliases": source_aliases(rec),
        "registry": {"kind": "local", "name": "pithauthor local registry"},
        "links": {
            "html": page,
            "json": page + ".json",
            "bundle_json": page + "/bundle.json",
            "state_json": page + "/state.json",
        },
        "agent_actions": {
            "view_html": page,
            "download_json": page + ".json",
            "resolve_alias": f"{base}/api/pith-number/resolve?arxiv={src['id']}&json=true",
            "actions": {name: f"{page}/action/{etype}" for name, etype in ACTIONS.items()},
        },
        "created_at": rec.created_at,
        "updated_at": rec.created_at,
    }
    if rec.upstream_receipt is not None:
        doc["upstream_receipt"] = rec.upstream_receipt
    if rec.paper is not None:
        doc["paper"] = rec.paper
    return doc


def record_created(rec: StoredRecord, key: LocalKey) -> RecordCreated:
    """The registry event that opens a record's history (event_id: sha256 of the other fields)."""
    src = rec.canonical_record["source"]
    event: RecordCreated = {
        "event_id": "",
        "target": "record",
        "created_at": rec.created_at,
        "signer": key.signer_block(),
        "payload": {
            "attestation_state": "computed",
            "canonical_record": rec.canonical_record,
            "canonical_sha256": rec.canonical_sha256,
            "receipt": rec.receipt,
            "source_id": src["id"],
            "source_kind": src["kind"],
            "source_version": src["version"],
        },
    }
    # the hash covers the rest. This preimage is our DESIGN (the registry's is not published):
    # `pith verify` recomputes it for a local registry's record_created (checks.bundle)
    rest = {k: v for k, v in event.items() if k != "event_id"}
    event["event_id"] = "sha256:" + canonical_sha256(rest)
    return event


def state_document(rec: StoredRecord, key: LocalKey, events: list[AuthorEvent]) -> MergedState:
    """`GET /pith/{body}/state.json`: the merged state (pithauthor-local-merge-v1)."""
    return merge_state(
        pith_number=rec.pith_number,
        canonical_record=rec.canonical_record,
        record_created=record_created(rec, key),
        source_aliases=source_aliases(rec),
        events=events,
    )


def bundle_document(rec: StoredRecord, key: LocalKey, events: list[AuthorEvent]) -> RecordBundle:
    """`GET /pith/{body}/bundle.json`: the record and every event received, in merge order."""
    return {
        "bundle_type": "pith_open_graph_bundle",
        "bundle_version": "1.0",
        "pith_number": rec.pith_number,
        "short_pith_number": PithNumber.parse(rec.pith_number).short,
        "canonical_record": rec.canonical_record,
        "canonical_sha256": rec.canonical_sha256,
        "source": rec.canonical_record["source"],
        "source_aliases": source_aliases(rec),
        "events": [record_created(rec, key), *sorted(events, key=order_key)],
    }


def resolve_document(rec: StoredRecord, base: str) -> ResolveAnswer:
    """`GET /api/pith-number/resolve?arxiv=ID`."""
    src = rec.canonical_record["source"]
    return {
        "arxiv_id": src["id"],
        "version": src["version"],
        "pith_number": rec.pith_number,
        "canonical_sha256": rec.canonical_sha256,
        "record_url": f"{base}/pith/{rec.body}",
    }
