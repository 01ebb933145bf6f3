"""The local registry's deterministic merge, `pithauthor-local-merge-v1` (DESIGN).

The real registry's merge (`pith-open-graph-merge-v1`) is not published; this one is ours, is
specified in docs/registry.md, and lives in this ONE pure module so that the local registry builds
states with it and `pith verify` recomputes them with it.

    inputs   the record_created event, the source aliases, and every author event received
    dedup    one event per event_id: of several, the smallest canonical bytes
    order    by (created_at, event_id), both compared as text
    valid    check_author_event passes, subject_pith_number is this record's number, and
             payload.canonical_sha256 is this record's canonical_sha256
    slots    author_attestation: (signer key, "author")
             citation_signature: (signer key, citing_pith_number)
             replication_record: (signer key, kind, sorted artifact sha256s)
    claims   author: (name, orcid, position); citation: relationship; replication: outcome
    apply    a valid event is applied unless an earlier applied event holds the same slot with a
             different claim: then it is an equivocation (kept out of `current`, listed with the
             event it contradicts). Same slot, same claim: applied (a repeat, not a conflict).
    counters event_count = valid + invalid (record_created counts as valid);
             equivocating events are valid; equivocation_count = len(equivocations)
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Final

from pithauthor._core.author_event import checked_author_event
from pithauthor._core.canonical import canonical, canonical_sha256
from pithauthor._core.documents import (
    AuthorEvent,
    CanonicalRecord,
    Equivocation,
    InvalidEvent,
    MergedState,
    RecordCreated,
    SourceAlias,
    StateCurrent,
)

MERGE_VERSION = "pithauthor-local-merge-v1"
STATE_TYPE: Final = "pith_open_graph_state"
STATE_VERSION = "1.0"
LISTS = {
    "author_attestation": "author_attestations",
    "citation_signature": "citation_signatures",
    "replication_record": "replication_records",
}
EMPTY_REGISTRY_LISTS = (
    "timestamp_anchors",
    "storage_attestations",
    "corrections",
    "mirror_hints",
    "graph_snapshots",
)


def order_key(event: Mapping[str, object]) -> tuple[str, str]:
    """Merge order: created_at, then event_id (text comparison; missing values sort first)."""
    return (str(event.get("created_at", "")), str(event.get("event_id", "")))


def dedup(events: Iterable[object]) -> list[Mapping[str, object]]:
    """One event per event_id (the smallest canonical bytes wins), in merge order."""
    chosen: dict[str, tuple[bytes, Mapping[str, object]]] = {}
    for event in events:
        if not isinstance(event, Mapping):
            continue
        eid = str(event.get("event_id", ""))
        raw = canonical(event)
        if eid not in chosen or raw < chosen[eid][0]:
            chosen[eid] = (raw, event)
    return sorted((e for _, e in chosen.values()), key=order_key)


def validity_failures(event: object, pith_number: str, record_sha256: str) -> list[str]:
    """Names of the rules `event` breaks for this record; empty when it is valid."""
    return _validity(event, pith_number, record_sha256)[0]


def _validity(
    event: object, pith_number: str, record_sha256: str
) -> tuple[list[str], AuthorEvent | None]:
    """The rules `event` breaks, and the event typed when it breaks none."""
    report, typed = checked_author_event(event)
    failures = [c.name for c in report.failed]
    if not isinstance(event, Mapping):
        return failures or ["structure"], None
    if event.get("subject_pith_number") != pith_number:
        failures.append("subject_matches")
    payload = event.get("payload")
    if not isinstance(payload, Mapping) or payload.get("canonical_sha256") != record_sha256:
        failures.append("payload_canonical_sha256")
    return failures, (typed if not failures else None)


def slot_and_claim(event: AuthorEvent) -> tuple[str, object]:
    """The slot a valid event fills and the claim it makes there (see the module docstring).

    The payload's keys say its type: each type's schema admits only its own fields."""
    key = event["signer"]["public_key_fingerprint"]
    payload = event["payload"]
    claim: object
    slot: list[object]
    if "author" in payload:  # author_attestation
        author = payload["author"]
        claim = [author["name"], author.get("orcid"), author.get("position")]
        slot = [key, "author"]
    elif "citing_pith_number" in payload:  # citation_signature
        slot = [key, "citation", payload["citing_pith_number"]]
        claim = payload["relationship"]
    else:  # replication_record
        shas = sorted(a["sha256"] for a in payload["artifacts"])
        slot = [key, "replication", payload["kind"], shas]
        claim = payload["outcome"]
    return canonical(slot).decode("utf-8"), claim


@dataclass
class _Merged:
    """What the merge decides: the applied events per list, and the rest."""

    lists: dict[str, list[AuthorEvent]] = field(
        default_factory=lambda: {name: [] for name in LISTS.values()}
    )
    equivocations: list[Equivocation] = field(default_factory=list)
    invalid: list[InvalidEvent] = field(default_factory=list)
    applied: list[str] = field(default_factory=list)
    valid_count: int = 1  # record_created


def _merge(pith_number: str, record_sha: str, created_id: str, events: Iterable[object]) -> _Merged:
    merged = _Merged(applied=[created_id])
    held: dict[str, tuple[object, str]] = {}
    for event in dedup(events):
        failures, valid = _validity(event, pith_number, record_sha)
        if valid is None:
            merged.invalid.append({"event": dict(event), "reasons": failures or ["event_type"]})
            continue
        merged.valid_count += 1
        slot, claim = slot_and_claim(valid)
        if slot in held and held[slot][0] != claim:
            merged.equivocations.append(
                {
                    "kept_event_id": held[slot][1],
                    "conflicting_event": valid.copy(),
                    "event_type": valid["event_type"],
                    "signer_fingerprint": valid["signer"]["public_key_fingerprint"],
                }
            )
            continue
        held.setdefault(slot, (claim, valid["event_id"]))
        merged.lists[LISTS[valid["event_type"]]].append(valid.copy())
        merged.applied.append(valid["event_id"])
    return merged


def merge_state(
    *,
    pith_number: str,
    canonical_record: CanonicalRecord,
    record_created: RecordCreated,
    source_aliases: Sequence[SourceAlias],
    events: Iterable[object],
) -> MergedState:
    """The merged state of one record, with `state_sha256` by the protocol's rule."""
    merged = _merge(
        pith_number, canonical_sha256(canonical_record), record_created["event_id"], events
    )
    lists = merged.lists
    current: StateCurrent = {
        "canonical_record": canonical_record.copy(),
        "source_aliases": [a.copy() for a in source_aliases],
        "record_created": record_created.copy(),
        "author_attestations": lists["author_attestations"],
        "citation_signatures": lists["citation_signatures"],
        "replication_records": lists["replication_records"],
        "timestamp_anchors": [],
        "storage_attestations": [],
        "corrections": [],
        "mirror_hints": [],
        "graph_snapshots": [],
    }
    state: MergedState = {
        "state_type": STATE_TYPE,
        "state_version": STATE_VERSION,
        "pith_number": pith_number,
        "merge_version": MERGE_VERSION,
        "event_count": merged.valid_count + len(merged.invalid),
        "valid_event_count": merged.valid_count,
        "invalid_event_count": len(merged.invalid),
        "equivocation_count": len(merged.equivocations),
        "current": current,
        "equivocations": merged.equivocations,
        "invalid_events": merged.invalid,
        "applied_event_ids": merged.applied,
        "state_sha256": "",
    }
    state["state_sha256"] = state_hash(state)
    return state


def state_hash(state: Mapping[str, object]) -> str:
    """`state_sha256`: sha256 of the canonical state without its `state_sha256` key."""
    return canonical_sha256({k: v for k, v in state.items() if k != "state_sha256"})


def state_inputs(state: Mapping[str, Any]) -> list[object]:
    """Every author event a local state was merged from (applied, equivocating, invalid)."""
    current = state.get("current") or {}
    events: list[object] = []
    for name in LISTS.values():
        items = current.get(name) if isinstance(current, Mapping) else None
        events.extend(items if isinstance(items, list) else [])
    for entry in state.get("equivocations") or []:
        if isinstance(entry, Mapping):
            events.append(entry.get("conflicting_event"))
    for entry in state.get("invalid_events") or []:
        if isinstance(entry, Mapping):
            events.append(entry.get("event"))
    return events


def remerge(state: Mapping[str, Any]) -> dict[str, object]:
    """Recompute a local state from the events it lists; equal to `state` when it is honest.

    The state is not trusted yet, so its record parts are copied as they are (untyped); the
    document is the one `merge_state` builds, field for field."""
    current = state.get("current")
    if not isinstance(current, Mapping):
        raise ValueError("the state has no current object")
    canon = current.get("canonical_record") or {}
    created = current.get("record_created") or {}
    pith_number = str(state.get("pith_number"))
    merged = _merge(
        pith_number,
        canonical_sha256(canon),
        str(created.get("event_id", "")),
        state_inputs(state),
    )
    again: dict[str, object] = {
        "state_type": STATE_TYPE,
        "state_version": STATE_VERSION,
        "pith_number": pith_number,
        "merge_version": MERGE_VERSION,
        "event_count": merged.valid_count + len(merged.invalid),
        "valid_event_count": merged.valid_count,
        "invalid_event_count": len(merged.invalid),
        "equivocation_count": len(merged.equivocations),
        "current": {
            "canonical_record": dict(canon),
            "source_aliases": [dict(a) for a in current.get("source_aliases") or []],
            "record_created": dict(created),
            **merged.lists,
            **{name: [] for name in EMPTY_REGISTRY_LISTS},
        },
        "equivocations": merged.equivocations,
        "invalid_events": merged.invalid,
        "applied_event_ids": merged.applied,
    }
    again["state_sha256"] = state_hash(again)
    return again
