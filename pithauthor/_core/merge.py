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
from typing import Any

from pithauthor._core.author_event import check_author_event
from pithauthor._core.canonical import canonical, canonical_sha256

MERGE_VERSION = "pithauthor-local-merge-v1"
STATE_TYPE = "pith_open_graph_state"
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


def order_key(event: Mapping[str, Any]) -> tuple[str, str]:
    """Merge order: created_at, then event_id (text comparison; missing values sort first)."""
    return (str(event.get("created_at", "")), str(event.get("event_id", "")))


def dedup(events: Iterable[Any]) -> list[Mapping[str, Any]]:
    """One event per event_id (the smallest canonical bytes wins), in merge order."""
    chosen: dict[str, tuple[bytes, Mapping[str, Any]]] = {}
    for event in events:
        if not isinstance(event, Mapping):
            continue
        eid = str(event.get("event_id", ""))
        raw = canonical(event)
        if eid not in chosen or raw < chosen[eid][0]:
            chosen[eid] = (raw, event)
    return sorted((e for _, e in chosen.values()), key=order_key)


def validity_failures(event: Any, pith_number: str, record_sha256: str) -> list[str]:
    """Names of the rules `event` breaks for this record; empty when it is valid."""
    report = check_author_event(event)
    failures = [c.name for c in report.failed]
    if not isinstance(event, Mapping):
        return failures or ["structure"]
    if event.get("subject_pith_number") != pith_number:
        failures.append("subject_matches")
    payload = event.get("payload")
    if not isinstance(payload, Mapping) or payload.get("canonical_sha256") != record_sha256:
        failures.append("payload_canonical_sha256")
    return failures


def slot_and_claim(event: Mapping[str, Any]) -> tuple[str, Any]:
    """The slot an event fills and the claim it makes there (see the module docstring)."""
    signer = event.get("signer") or {}
    key = str(signer.get("public_key_fingerprint", "")) if isinstance(signer, Mapping) else ""
    payload = event.get("payload") or {}
    etype = event.get("event_type")
    if etype == "author_attestation":
        author = payload.get("author") or {}
        claim: Any = [author.get("name"), author.get("orcid"), author.get("position")]
        slot: list[Any] = [key, "author"]
    elif etype == "citation_signature":
        slot = [key, "citation", payload.get("citing_pith_number")]
        claim = payload.get("relationship")
    else:
        artifacts = payload.get("artifacts") or []
        shas = sorted(str(a.get("sha256")) for a in artifacts if isinstance(a, Mapping))
        slot = [key, "replication", payload.get("kind"), shas]
        claim = payload.get("outcome")
    return canonical(slot).decode("utf-8"), claim


def merge_state(
    *,
    pith_number: str,
    canonical_record: Mapping[str, Any],
    record_created: Mapping[str, Any],
    source_aliases: Sequence[Mapping[str, Any]],
    events: Iterable[Any],
) -> dict[str, Any]:
    """The merged state of one record, with `state_sha256` by the protocol's rule."""
    record_sha = canonical_sha256(canonical_record)
    current: dict[str, Any] = {
        "canonical_record": dict(canonical_record),
        "source_aliases": [dict(a) for a in source_aliases],
        "record_created": dict(record_created),
        **{name: [] for name in LISTS.values()},
        **{name: [] for name in EMPTY_REGISTRY_LISTS},
    }
    applied = [str(record_created.get("event_id", ""))]
    invalid: list[dict[str, Any]] = []
    equivocations: list[dict[str, Any]] = []
    held: dict[str, tuple[Any, str]] = {}
    valid_count = 1
    for event in dedup(events):
        failures = validity_failures(event, pith_number, record_sha)
        if failures or event.get("event_type") not in LISTS:
            invalid.append({"event": dict(event), "reasons": failures or ["event_type"]})
            continue
        valid_count += 1
        slot, claim = slot_and_claim(event)
        if slot in held and held[slot][0] != claim:
            equivocations.append(
                {
                    "kept_event_id": held[slot][1],
                    "conflicting_event": dict(event),
                    "event_type": event["event_type"],
                    "signer_fingerprint": event["signer"]["public_key_fingerprint"],
                }
            )
            continue
        held.setdefault(slot, (claim, str(event["event_id"])))
        current[LISTS[event["event_type"]]].append(dict(event))
        applied.append(str(event["event_id"]))
    state: dict[str, Any] = {
        "state_type": STATE_TYPE,
        "state_version": STATE_VERSION,
        "pith_number": pith_number,
        "merge_version": MERGE_VERSION,
        "event_count": valid_count + len(invalid),
        "valid_event_count": valid_count,
        "invalid_event_count": len(invalid),
        "equivocation_count": len(equivocations),
        "current": current,
        "equivocations": equivocations,
        "invalid_events": invalid,
        "applied_event_ids": applied,
    }
    state["state_sha256"] = canonical_sha256(state)
    return state


def state_inputs(state: Mapping[str, Any]) -> list[Any]:
    """Every author event a local state was merged from (applied, equivocating, invalid)."""
    current = state.get("current") or {}
    events: list[Any] = []
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


def remerge(state: Mapping[str, Any]) -> dict[str, Any]:
    """Recompute a local state from the events it lists; equal to `state` when it is honest."""
    current = state.get("current")
    if not isinstance(current, Mapping):
        raise ValueError("the state has no current object")
    return merge_state(
        pith_number=str(state.get("pith_number")),
        canonical_record=current.get("canonical_record") or {},
        record_created=current.get("record_created") or {},
        source_aliases=current.get("source_aliases") or [],
        events=state_inputs(state),
    )
