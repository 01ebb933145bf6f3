"""What the local registry says, and the key it says it with.

The documents it serves (record, bundle, merged state, resolver answer, its `/pith-mirrors.json`
manifest) have the shapes of the real registry's documents (section 4 of the protocol notes),
with links that point back at this registry, and receipts signed by its own Ed25519 key.

The key is made on first start in the data folder (`registry-key.json`, mode 0600, folder 0700).
Receipts have the real registry's format: Ed25519 over the 32 raw bytes of canonical_sha256.
"""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any

from pithauthor.errors import DocumentError, UnsafePermissions
from pithauthor.fs import MAX_KEY_FILE_BYTES, create_file, read_user_json
from pithauthor.keys.passphrase import forbid_core_dumps
from pithauthor.protocol.canonical_json import b64encode, canonical_sha256, hex_digest_bytes
from pithauthor.protocol.checks.merge import already_checked, merge_state, order_key
from pithauthor.protocol.documents import (
    MERGE_VERSION,
    AliasKind,
    AuthorEvent,
    MergedState,
    MirrorManifest,
    Receipt,
    RecordBundle,
    RecordCreated,
    RecordDocument,
    RegistrySigner,
    ResolveAnswer,
    SourceAlias,
)
from pithauthor.protocol.identity import fingerprint_b32, fingerprint_hex
from pithauthor.protocol.ids import PithNumber
from pithauthor.protocol.subject import link_faults, link_of
from pithauthor.protocol.timestamps import TIME_ACTION, TIME_ACTION_NAME, Sidecar
from pithauthor.protocol.utc import utc_now
from pithauthor.registry.local.store import StoredRecord, ensure_private_dir

# --- its key ----------------------------------------------------------------------------------

# PyNaCl is imported where the registry signs: reading its key file skips it.

KEY_FILE = "registry-key.json"
REGISTRY_NAME = "pithauthor local registry"
SIGNER_ID = "pithauthor-local"
BUILDER_VERSION = "pithauthor-local-registry-v1"


@dataclass(frozen=True)
class LocalKey:
    """The local registry's Ed25519 key."""

    seed: bytes = field(repr=False)  # the secret: never in a repr
    created_at: str

    # Derived once per key (the server signs a receipt for every event it takes): deriving the
    # key pair from the seed costs as much as a signature.
    @cached_property
    def _signing_key(self) -> Any:
        from nacl.signing import SigningKey

        return SigningKey(self.seed)

    @cached_property
    def public_key(self) -> bytes:
        return bytes(self._signing_key.verify_key)

    @cached_property
    def key_id(self) -> str:
        # a name of its own, never like pith.science's `pith-v1-...`: every check a local key
        # passes shows that it is a local registry's word, not Pith's
        return "pithauthor-local-" + fingerprint_b32(self.public_key)[:8].lower()

    def sign(self, message: bytes) -> str:
        return b64encode(self._signing_key.sign(message).signature)

    def receipt(self, canonical_sha256: str, signed_at: str) -> Receipt:
        """A receipt in the real registry's format, under this key."""
        return {
            "kind": "pith_receipt",
            "key_id": self.key_id,
            "algorithm": "ed25519",
            "signed_at": signed_at,
            "signature_b64": self.sign(hex_digest_bytes(canonical_sha256)),
            "signed_message": "canonical_sha256_bytes",
            "builder_version": BUILDER_VERSION,
            "receipt_version": "0.3",
            "canonical_sha256": canonical_sha256,
            "first_computed_at": signed_at,
            "last_reissued_at": signed_at,
            "signature_status": "signed_local",
            "public_key_fingerprint": fingerprint_hex(self.public_key),
        }

    def signer_block(self) -> RegistrySigner:
        """The `signer` of registry events (record_created)."""
        return {
            "key_id": self.key_id,
            "public_key_fingerprint": fingerprint_hex(self.public_key),
            "signer_id": SIGNER_ID,
            "signer_type": "pith_registry",
        }

    def manifest(self, base_url: str) -> MirrorManifest:
        """This registry's `/pith-mirrors.json`: its key, labelled as a local registry."""
        pk = self.public_key
        base = base_url.rstrip("/")
        return {
            "manifest_type": "pith_mirror_manifest",
            "manifest_version": "1.0",
            "generated_at": self.created_at,
            "merge_version": MERGE_VERSION,
            "mirrors": [
                {
                    "name": REGISTRY_NAME,
                    "mirror_type": "local",  # `--trust-local-registry` takes only such keys
                    "base_url": base,
                    "bundle_pattern": base + "/pith/{suffix}/bundle.json",
                    "state_pattern": base + "/pith/{suffix}/state.json",
                    "public_key": {
                        "key_id": self.key_id,
                        "algorithm": "ed25519",
                        "format": "raw",
                        "public_key_b64": b64encode(pk),
                        "public_key_hex": pk.hex(),
                        "fingerprint_sha256_b32_first128bits": fingerprint_b32(pk),
                        "fingerprint_sha256_hex": fingerprint_hex(pk),
                        "rotates_at": None,
                        "notes": "Key of a LOCAL pithauthor registry, made on this machine.",
                    },
                    "status": "local",
                    "notes": "A local registry run by pithauthor (`pith registry serve`); "
                    "not pith.science. Trust its key only for tests, dry runs and own mirrors.",
                }
            ],
            "notes": "This is a local registry, not the Pith registry. Its receipts are signed "
            "with its own key; states are merged with " + MERGE_VERSION + ".",
        }


def _read_key(path: Path) -> LocalKey:
    """The key file pith wrote, or DocumentError (exit 2) saying it is not."""
    doc = read_user_json(path, DocumentError, "a registry key file", limit=MAX_KEY_FILE_BYTES)
    seed_hex = doc.get("seed_hex") if isinstance(doc, dict) else None
    created = doc.get("created_at") if isinstance(doc, dict) else None
    try:
        seed = bytes.fromhex(seed_hex) if isinstance(seed_hex, str) else b""
    except ValueError:
        seed = b""
    if len(seed) != 32 or not isinstance(created, str):
        raise DocumentError(
            f"{path} is not the registry key file pith wrote (seed_hex, created_at)"
        )
    return LocalKey(seed=seed, created_at=created)


def load_or_create_key(data_dir: Path) -> LocalKey:
    """The key in `data_dir`, made (0600) on first use; from now on this process makes no
    core dump (the seed is in memory: see pithauthor.keys.passphrase)."""
    forbid_core_dumps()
    ensure_private_dir(data_dir)
    path = data_dir / KEY_FILE
    if path.exists() or path.is_symlink():  # a dangling link or a loop is read, and refused
        key = _read_key(path)
        if os.name == "posix" and path.stat().st_mode & 0o077:
            raise UnsafePermissions(f"{path} is readable by others; fix it with: chmod 600 {path}")
        return key
    key = LocalKey(seed=os.urandom(32), created_at=utc_now())
    text = json.dumps({"seed_hex": key.seed.hex(), "created_at": key.created_at})
    try:
        create_file(path, text, mode=0o600)  # never replace a key another process made first
    except FileExistsError:
        return load_or_create_key(data_dir)
    return key


# --- the documents it serves ------------------------------------------------------------------


# action name in agent_actions.actions -> the event type its endpoint takes
ACTIONS = {
    "attest_author": "author_attestation",
    "sign_citation": "citation_signature",
    "submit_replication": "replication_record",
    "anchor_timestamp": "timestamp_anchor",
    "attest_storage": "storage_attestation",
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
            "actions": {
                **{name: f"{page}/action/{etype}" for name, etype in ACTIONS.items()},
                TIME_ACTION_NAME: f"{page}/action/{TIME_ACTION}",
            },
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


def state_document(
    rec: StoredRecord, key: LocalKey, events: list[AuthorEvent], *, stored: bool = False
) -> MergedState:
    """`GET /pith/{body}/state.json`: the merged state (pithauthor-local-merge-v1). `stored`:
    the events are the store's, each checked in full when it was stored (not again here)."""
    return merge_state(
        pith_number=rec.pith_number,
        canonical_record=rec.canonical_record,
        record_created=record_created(rec, key),
        source_aliases=source_aliases(rec),
        events=events,
        checked=already_checked(events) if stored else None,
    )


def bundle_document(
    rec: StoredRecord,
    key: LocalKey,
    events: list[AuthorEvent],
    sidecars: Sequence[Sidecar] = (),
) -> RecordBundle:
    """`GET /pith/{body}/bundle.json`: the record and every event received, in merge order,
    but a correction whose link breaks the rules against an event received (it came first,
    the event it names later: the door could not refuse it; the merge lists it invalid): a
    bundle is checked by the same rule (`check_bundle`), and this registry keeps it. The
    `sidecars` kept of the events it lists follow in `trusted_time` (absent when none)."""
    by_id = {e["event_id"]: e for e in events}
    kept = [e for e in events if not _link_broken(e, by_id)]
    listed = {e["event_id"] for e in kept}
    bundle: RecordBundle = {
        "bundle_type": "pith_open_graph_bundle",
        "bundle_version": "1.0",
        "pith_number": rec.pith_number,
        "short_pith_number": PithNumber.parse(rec.pith_number).short,
        "canonical_record": rec.canonical_record,
        "canonical_sha256": rec.canonical_sha256,
        "source": rec.canonical_record["source"],
        "source_aliases": source_aliases(rec),
        "events": [record_created(rec, key), *sorted(kept, key=order_key)],
    }
    carried = [s for s in sidecars if s["event_id"] in listed]
    if carried:
        bundle["trusted_time"] = carried
    return bundle


def _link_broken(event: AuthorEvent, by_id: dict[str, AuthorEvent]) -> bool:
    link = link_of(event)
    target = by_id.get(link[1]) if link is not None else None
    return target is not None and bool(link_faults(event, target))


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
