"""The protocol documents pithauthor reads and writes, as TypedDicts (pure; no checks here).

A document gets one of these types in one place only: the function that has checked its shape
(`checks.event.typed_author_event`, `checks.record.checked_record`, `checks.bundle.checked_bundle`,
`checks.state.checked_state`); documents pithauthor builds itself are typed where they are built.
The field sets are the checkers' too: `checks.event.EVENT_FIELDS` and the required-field lists
of `checks.fields` are derived from the classes below. `NotRequired` marks what the protocol
(or the checker) lets a document leave out; `JSONObject` is free-form JSON nobody checks.
The merged state's layout is here too (at the end): its constants, and its field order, which
is the order `MergedState` and `StateCurrent` declare (every builder of a state follows it).
"""

from typing import Final, Literal, NotRequired, TypedDict, final

from pithauthor.protocol.identity import IdentityProof
from pithauthor.protocol.timestamps import HeaderEntry, OTSEntry, Sidecar

JSONObject = dict[str, object]
EventType = Literal[
    "author_attestation",
    "citation_signature",
    "replication_record",
    "timestamp_anchor",
    "storage_attestation",
]
EventTarget = Literal["author", "citation", "replication", "timestamp", "storage"]
AliasKind = Literal[
    "arxiv", "arxiv_version", "doi", "pith_short_8", "pith_short_12", "pith_short_16"
]

# --- author events (section 5, DESIGN) -----------------------------------------------------------


class EventSigner(TypedDict):
    """`signer` of an author event: the key, its fingerprint and who holds it."""

    key_id: str
    public_key_fingerprint: str
    public_key_b64: str
    signer_id: str
    signer_type: str


class EventSignature(TypedDict):
    """`signature` of an author event: Ed25519 over the 32 bytes `event_id` names."""

    algorithm: str
    signed_message: str
    signature_b64: str


@final
class AttestationAuthor(TypedDict):
    """`payload.author` of an attestation."""

    name: str
    orcid: NotRequired[str]
    position: NotRequired[int]


@final
class AttestationPayload(TypedDict):
    """`author_attestation` payload (`pithauthor.author_attestation.v1`)."""

    payload_schema: str
    canonical_sha256: str
    author: AttestationAuthor
    statement: str
    identity_proofs: NotRequired[list[IdentityProof]]
    replaces: NotRequired[str]
    withdraws: NotRequired[str]


@final
class CitationPayload(TypedDict):
    """`citation_signature` payload; `canonical_sha256` is the cited paper's."""

    payload_schema: str
    canonical_sha256: str
    citing_pith_number: str
    relationship: str
    citation_key: NotRequired[str]
    context: NotRequired[str]
    replaces: NotRequired[str]
    withdraws: NotRequired[str]


@final
class ArtifactRef(TypedDict):
    """One artifact of a replication: where it is, and the sha256 of its bytes."""

    uri: str
    sha256: str


@final
class ReplicationPayload(TypedDict):
    """`replication_record` payload; `proof_system` only for a formal bridge."""

    payload_schema: str
    canonical_sha256: str
    kind: str
    outcome: str
    proof_system: NotRequired[str]
    artifacts: list[ArtifactRef]
    summary: str
    replaces: NotRequired[str]
    withdraws: NotRequired[str]


@final
class AnchorPayload(TypedDict):
    """`timestamp_anchor` payload (`pithauthor.timestamp_anchor.v1`, DESIGN): complete
    OpenTimestamps proofs of the 32 raw bytes of `canonical_sha256`, and the header of every
    Bitcoin block they name (the trusted-time sidecar's forms, `protocol.timestamps`)."""

    payload_schema: str
    canonical_sha256: str
    opentimestamps: list[OTSEntry]
    bitcoin_headers: list[HeaderEntry]
    replaces: NotRequired[str]
    withdraws: NotRequired[str]


@final
class Capture(TypedDict):
    """One Wayback capture of a storage attestation: what was captured, where the capture is,
    its CDX row's timestamp and digest, and (the PDF only) the SHA-256 of the bytes pith read."""

    url: str
    capture_url: str
    timestamp: str
    digest: str
    mimetype: str
    sha256: NotRequired[str]


@final
class CodeArchive(TypedDict):
    """The code repository a storage attestation names: its origin and Software Heritage's
    snapshot of it."""

    origin: str
    swhid: str


@final
class StoragePayload(TypedDict):
    """`storage_attestation` payload (`pithauthor.storage_attestation.v1`, DESIGN)."""

    payload_schema: str
    canonical_sha256: str
    captures: list[Capture]
    code: NotRequired[CodeArchive]
    replaces: NotRequired[str]
    withdraws: NotRequired[str]


AuthorPayload = (
    AttestationPayload | CitationPayload | ReplicationPayload | AnchorPayload | StoragePayload
)
PAYLOAD_TYPES: dict[str, type] = {
    "author_attestation": AttestationPayload,
    "citation_signature": CitationPayload,
    "replication_record": ReplicationPayload,
    "timestamp_anchor": AnchorPayload,
    "storage_attestation": StoragePayload,
}


class UnsignedEvent(TypedDict):
    """The six fields `event_id` covers."""

    event_type: EventType
    target: EventTarget
    subject_pith_number: str
    created_at: str
    signer: EventSigner
    payload: AuthorPayload


class AuthorEvent(UnsignedEvent):
    """A signed author event: exactly these eight fields, nothing unsigned rides along."""

    event_id: str
    signature: EventSignature


# --- canonical records and receipts (sections 2 and 3, VERIFIED) --------------------------------


class RecordSource(TypedDict):
    """`canonical_record.source`."""

    id: str
    kind: str
    version: int


class RecordMetadata(TypedDict):
    """`canonical_record.metadata`: hashes of title and abstract, categories, licence, date."""

    abstract_canon_sha256: str
    cross_cats_sorted: list[str]
    license: str
    primary_cat: str
    submitted_at: str
    title_canon_sha256: str


class CanonicalRecord(TypedDict):
    """The canonical record whose sha256 gives the Pith Number."""

    metadata: RecordMetadata
    schema_version: str
    source: RecordSource


class ComputedRecord(TypedDict):
    """`pith number from-arxiv --json`: a canonical record, its hash and number (no receipt)."""

    pith_number: str
    canonical_sha256: str
    canonical_record: CanonicalRecord


class Receipt(TypedDict):
    """A registry receipt: Ed25519 by a registry key over the 32 raw canonical digest bytes."""

    canonical_sha256: str
    key_id: str
    signature_b64: str
    signed_message: NotRequired[str]
    algorithm: NotRequired[str]
    kind: NotRequired[str]
    public_key_fingerprint: NotRequired[str]
    signed_at: NotRequired[str]
    builder_version: NotRequired[str]
    receipt_version: NotRequired[str]
    first_computed_at: NotRequired[str]
    last_reissued_at: NotRequired[str]
    signature_status: NotRequired[str]


class ReceiptRow(TypedDict):
    """A bare receipt (`receipts.jsonl`)."""

    pith_body: str
    canonical_sha256: str
    key_id: str
    signature_b64: str


# --- records, bundles, merged states (section 4) ------------------------------------------------


class SourceAlias(TypedDict):
    """One alias of a record (`aliases`, `source_aliases`)."""

    alias_kind: AliasKind
    alias_value: str
    created_at: NotRequired[str]


class PaperSummary(TypedDict):
    """`paper` of a record: what is displayed, checked against the canonical record."""

    title: str
    primary_cat: str
    cross_cats: list[str]
    license: str
    submitted_at: str
    headline: NotRequired[str]
    authors_text: NotRequired[str]
    abstract_excerpt: NotRequired[str]


class AgentActions(TypedDict):
    """`agent_actions` of a record: its links, and `actions` (name -> action endpoint)."""

    actions: dict[str, str]
    view_html: NotRequired[str]
    download_json: NotRequired[str]
    view_paper: NotRequired[str]
    resolve_alias: NotRequired[str]
    fetch_graph: NotRequired[str]
    fetch_events: NotRequired[str]


class RecordDocument(TypedDict):
    """A record as `GET /pith/{body}` returns it."""

    pith_number: str
    short_pith_number: str
    canonical_record: CanonicalRecord
    canonical_sha256: str
    source: RecordSource
    receipt: Receipt
    aliases: list[SourceAlias]
    agent_actions: AgentActions
    record_type: NotRequired[str]
    schema_version: NotRequired[str]
    schema_url: NotRequired[str]
    paper: NotRequired[PaperSummary]
    links: NotRequired[dict[str, str]]
    upstream_receipt: NotRequired[Receipt]
    attestation_state: NotRequired[str]
    verification_status: NotRequired[JSONObject]
    graph_snapshot: NotRequired[JSONObject]
    events: NotRequired[list[JSONObject]]
    event_summary: NotRequired[JSONObject]
    paper_claims: NotRequired[list[JSONObject]]
    inbound_citations: NotRequired[JSONObject]
    formal_canon: NotRequired[JSONObject]
    registry: NotRequired[JSONObject]
    created_at: NotRequired[str]
    updated_at: NotRequired[str]


class RegistrySigner(TypedDict):
    """`signer` of a registry event (no public key: the manifest has it)."""

    key_id: str
    public_key_fingerprint: str
    signer_id: str
    signer_type: str


class RecordCreatedPayload(TypedDict):
    """`record_created.payload`: the record, its hash, its receipt and its source."""

    canonical_record: CanonicalRecord
    canonical_sha256: str
    receipt: Receipt
    source_id: str
    source_kind: str
    source_version: int
    attestation_state: NotRequired[str]


class RecordCreated(TypedDict):
    """The registry event that opens a record's history."""

    event_id: str
    target: str
    created_at: str
    signer: RegistrySigner
    payload: RecordCreatedPayload
    event_type: NotRequired[str]


class RegistryEvent(TypedDict):
    """Any other registry event (graph snapshot, timestamp anchor...): its payload unchecked."""

    event_id: str
    target: str
    created_at: str
    signer: RegistrySigner
    payload: JSONObject
    event_type: NotRequired[str]


class RecordBundle(TypedDict):
    """`/pith/{body}/bundle.json`: the record and its events, not signed as a whole."""

    bundle_type: Literal["pith_open_graph_bundle"]
    pith_number: str
    canonical_record: CanonicalRecord
    canonical_sha256: str
    source: RecordSource
    events: list[AuthorEvent | RecordCreated | RegistryEvent]
    bundle_version: NotRequired[str]
    short_pith_number: NotRequired[str]
    source_aliases: NotRequired[list[SourceAlias]]
    trusted_time: NotRequired[list[Sidecar]]  # the events' proofs of time (a local registry's)


class StateCurrent(TypedDict):
    """`current` of a merged state: the record and every list of applied events."""

    canonical_record: CanonicalRecord
    source_aliases: list[SourceAlias]
    record_created: RecordCreated
    author_attestations: list[AuthorEvent]
    citation_signatures: list[AuthorEvent]
    replication_records: list[AuthorEvent]
    timestamp_anchors: list[AuthorEvent]
    storage_attestations: list[AuthorEvent]
    corrections: list[RegistryEvent]
    mirror_hints: list[RegistryEvent]
    graph_snapshots: list[RegistryEvent]


class Equivocation(TypedDict):
    """An event kept out of `current`: it contradicts an earlier one in the same slot (local
    merge, DESIGN)."""

    kept_event_id: str
    conflicting_event: AuthorEvent
    event_type: EventType
    signer_fingerprint: str


class Superseded(TypedDict):
    """An event taken out of `current` by a correction signed with its own key: `replaced` by
    the event `superseded_by` names, or `withdrawn` by it (local merge, DESIGN)."""

    event: AuthorEvent
    superseded_by: str
    how: Literal["replaced", "withdrawn"]


class Duplicate(TypedDict):
    """An event that says word for word what an earlier one says (only `created_at` differs):
    the same statement signed again, counted once (local merge, DESIGN)."""

    event: AuthorEvent
    duplicate_of: str


class InvalidEvent(TypedDict):
    """An event that failed validity, as received, and the rules it broke."""

    event: JSONObject
    reasons: list[str]


class StateCorrections(TypedDict, total=False):
    """The lists of a local registry's merged state that it holds only when they are not empty
    (a state without corrections or repeats is the one its merge made before it knew them)."""

    superseded: list[Superseded]
    withdrawals: list[AuthorEvent]
    duplicates: list[Duplicate]


class StateHead(TypedDict):
    """The fields of a merged state that are neither events nor lists: what it is, which merge
    made it, and its counters."""

    state_type: Literal["pith_open_graph_state"]
    state_version: NotRequired[str]
    pith_number: str
    merge_version: NotRequired[str]
    event_count: NotRequired[int]
    valid_event_count: NotRequired[int]
    invalid_event_count: NotRequired[int]
    equivocation_count: NotRequired[int]


class MergedState(StateHead):
    """`/pith/{body}/state.json`: the merged state, hashed by `state_sha256`.

    Its fields (its head's first) are declared in the order a local registry writes them
    (`STATE_FIELDS`: the served bytes of a state follow it; the hash sorts them)."""

    current: StateCurrent
    equivocations: NotRequired[list[Equivocation]]
    invalid_events: NotRequired[list[InvalidEvent]]
    applied_event_ids: NotRequired[list[str]]
    state_sha256: str
    superseded: NotRequired[list[Superseded]]
    withdrawals: NotRequired[list[AuthorEvent]]
    duplicates: NotRequired[list[Duplicate]]


class ServedState(MergedState):
    """A merged state as a local registry serves it: the merge's document, then the sidecars
    of its events' proofs of time, which are not the merge's and are outside `state_sha256`
    (DESIGN, docs/protocol.md "Trusted time")."""

    trusted_time: NotRequired[list[Sidecar]]


# --- what the registry answers besides (the local registry writes these) -------------------------


class ResolveAnswer(TypedDict):
    """`GET /api/pith-number/resolve?arxiv=ID`."""

    pith_number: str
    arxiv_id: NotRequired[str]
    version: NotRequired[int]
    canonical_sha256: NotRequired[str]
    record_url: NotRequired[str]


class EventReceipt(TypedDict):
    """`registry_receipt` of an action answer: the registry's signature over the event_id."""

    key_id: str
    algorithm: str
    signed_message: str
    signature_b64: str


class ActionAnswer(TypedDict):
    """A 200/201 answer of an action endpoint (the local registry's form)."""

    status: str
    duplicate: bool
    event_id: str
    pith_number: str
    registry_receipt: EventReceipt


class HeldAnswer(TypedDict):
    """A 202 answer of an action endpoint that holds the event for moderation (the local
    registry's form; DESIGN, docs/protocol.md)."""

    status: str
    event_id: str
    pith_number: str


class TimeAnswer(TypedDict):
    """A local registry's 200 answer to a trusted-time sidecar: kept (merged), and whether
    that changed what it holds for the event (DESIGN, docs/protocol.md "Trusted time")."""

    status: str
    event_id: str
    changed: bool


class ErrorAnswer(TypedDict):
    """An answer other than 2xx: why, and the checks an event failed (422)."""

    error: str
    failed_checks: NotRequired[list[str]]


# --- trust manifests (section 3) -----------------------------------------------------------------


class ManifestKey(TypedDict):
    """`mirrors[].public_key` of a mirror manifest."""

    key_id: str
    algorithm: str
    public_key_b64: str
    format: NotRequired[str]
    public_key_hex: NotRequired[str]
    fingerprint_sha256_b32_first128bits: NotRequired[str]
    fingerprint_sha256_hex: NotRequired[str]
    rotates_at: NotRequired[str | None]
    url: NotRequired[str]
    notes: NotRequired[str]


class Mirror(TypedDict):
    """One mirror of a manifest: where it is, and its key."""

    public_key: ManifestKey
    base_url: NotRequired[str]
    name: NotRequired[str]
    mirror_type: NotRequired[str]
    bundle_pattern: NotRequired[str]
    state_pattern: NotRequired[str]
    well_known_pattern: NotRequired[str]
    status: NotRequired[str]
    notes: NotRequired[str]


class MirrorManifest(TypedDict):
    """`/pith-mirrors.json`: a registry's mirrors and their keys."""

    manifest_type: Literal["pith_mirror_manifest"]
    mirrors: list[Mirror]
    manifest_version: NotRequired[str]
    generated_at: NotRequired[str]
    merge_version: NotRequired[str]
    notes: NotRequired[str]


def fields(document: type) -> tuple[str, ...]:
    """Every field of a TypedDict, in declaration order (bases first)."""
    return tuple(document.__annotations__)


def required_fields(document: type) -> tuple[str, ...]:
    """The fields a TypedDict requires, in declaration order."""
    required: frozenset[str] = getattr(document, "__required_keys__", frozenset())
    return tuple(f for f in fields(document) if f in required)


# --- the merged state's layout (the local merge writes it; `pith verify` recomputes it) ----------

#: `state_type` and `state_version` of a merged state
STATE_TYPE: Final = "pith_open_graph_state"
STATE_VERSION: Final = "1.0"
#: `merge_version` of a state made by this package's merge (the local registry's, published in
#: docs/registry.md); a state naming it has its merge recomputed by `pith verify`
MERGE_VERSION: Final = "pithauthor-local-merge-v1"
#: the list of `current` that holds the applied events of each author event type
EVENT_LISTS: Final[dict[str, str]] = {
    "author_attestation": "author_attestations",
    "citation_signature": "citation_signatures",
    "replication_record": "replication_records",
    "timestamp_anchor": "timestamp_anchors",
    "storage_attestation": "storage_attestations",
}
#: the lists of `current` that hold registry events (a local registry writes them empty)
REGISTRY_LISTS: Final = (
    "corrections",
    "mirror_hints",
    "graph_snapshots",
)
#: the lists a local merge writes only when they are not empty, last
CORRECTION_LISTS: Final = fields(StateCorrections)
#: a merged state's fields and those of its `current`, in the order they are written
STATE_FIELDS: Final = fields(MergedState)
CURRENT_FIELDS: Final = fields(StateCurrent)
