"""The local registry's deterministic merge, `pithauthor-local-merge-v1` (DESIGN).

The real registry's merge (`pith-open-graph-merge-v1`) is not published; this one is ours, is
specified in docs/registry.md, and lives in this ONE pure module so that the local registry builds
states with it and `pith verify` recomputes them with it.

    inputs   the record_created event, the source aliases, and every author event received
    dedup    one event per event_id: of several, the smallest canonical bytes (not the first
             received: every merge of the same events keeps the same copy)
    order    by (created_at, event_id), both compared as text (fixed-width UTC: text order is
             time order; event_id breaks ties the same way everywhere)
    valid    check_author_event passes, subject_pith_number is this record's number, and
             payload.canonical_sha256 is this record's canonical_sha256
    slots    author_attestation: (signer key, "author")
             citation_signature: (signer key, citing_pith_number)
             replication_record: (signer key, kind, sorted artifact sha256s)
    claims   author: (name, orcid, position); citation: relationship; replication: outcome
    apply    a valid event is applied unless an earlier applied event holds the same slot with a
             different claim: then it is an equivocation (kept out of `current`, listed with the
             event it contradicts). Same slot, same claim: applied (a repeat, not a conflict).
    repeats  an event that says exactly what an earlier current one says (the same key, type,
             subject and payload, link included: `statement_key`; only `created_at` differs,
             e.g. the same command run twice, or on two machines) is the same statement
             signed again: it counts once. It stays out of `current` and is listed under
             `duplicates` as {event, duplicate_of} (the earliest is kept); never an
             equivocation. A repeated correction (the same link, the same payload) likewise.
    links    an event whose payload `replaces` or `withdraws` another
    (pithauthor.protocol.subject)
             is invalid when its link breaks a rule there (another key, another subject, a
             replacement older than what it replaces...); a valid one comes after the event it
             names, whatever the order says, and takes it (and its repeats) out of `current`
             into `superseded`; a withdrawal goes to `withdrawals`, a replacement is applied in
             its place. Naming an event that is no longer current (already corrected, or an
             equivocation) is an equivocation.
    counters event_count = valid + invalid (record_created counts as valid);
             equivocating events are valid; equivocation_count = len(equivocations)
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Final

from pithauthor.protocol.canonical_json import canonical, canonical_sha256
from pithauthor.protocol.checks.event import checked_author_event
from pithauthor.protocol.documents import (
    AuthorEvent,
    CanonicalRecord,
    Duplicate,
    Equivocation,
    InvalidEvent,
    MergedState,
    RecordCreated,
    SourceAlias,
    StateCurrent,
    Superseded,
)
from pithauthor.protocol.subject import link_faults, link_of, statement_key

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
    by_id: dict[str, list[Mapping[str, object]]] = {}
    for event in events:
        if type(event) is dict or isinstance(event, Mapping):
            by_id.setdefault(str(event.get("event_id", "")), []).append(event)
    # canonical bytes only where an event_id repeats: serialising every event of a state again
    # was a tenth of verifying it (issue 27); min() keeps the first of equal bytes, as before
    chosen = [
        group[0] if len(group) == 1 else min(group, key=canonical) for group in by_id.values()
    ]
    return sorted(chosen, key=order_key)


def validity_failures(event: object, pith_number: str, record_sha256: str) -> list[str]:
    """Names of the rules `event` breaks for this record; empty when it is valid."""
    return _validity(event, pith_number, record_sha256)[0]


#: What `checked_author_event` found on events already checked (the names of the checks that
#: failed, the typed event when none did, its canonical text when the check wrote it), by `id()`
#: of the event object (held here too, so the id cannot be reused): `pith verify` of a local
#: state checks every event it lists, then recomputes the merge from the same objects
#: (`remerge`); checking each one a second time was half of that verification (issue 27).
CheckedEntry = tuple[object, list[str], AuthorEvent | None, str | None]
Checked = Mapping[int, CheckedEntry]


def already_checked(events: Iterable[AuthorEvent]) -> Checked:
    """`Checked` entries saying each of `events` passed `checked_author_event`: for events a
    store took only after that check (the local registry's: `RegistryStore.insert_event`), so
    that merging them does not verify every signature again (issue 39: the first read of a
    100,000-event paper). The rules of this record (subject, canonical_sha256) and the links
    are still checked by the merge."""
    return {id(e): (e, [], e, None) for e in events}


def _validity(
    event: object, pith_number: str, record_sha256: str, checked: Checked | None = None
) -> tuple[list[str], AuthorEvent | None]:
    """The rules `event` breaks, and the event typed when it breaks none."""
    seen = checked.get(id(event)) if checked else None
    if seen is not None and seen[0] is event:
        failures, typed = list(seen[1]), seen[2]
    else:
        report, typed = checked_author_event(event)
        failures = [c.name for c in report.failed]
    if type(event) is not dict and not isinstance(event, Mapping):
        return failures or ["structure"], None
    if event.get("subject_pith_number") != pith_number:
        failures.append("subject_matches")
    payload = event.get("payload")
    if (type(payload) is not dict and not isinstance(payload, Mapping)) or payload.get(
        "canonical_sha256"
    ) != record_sha256:  # a dict first: the ABC's isinstance costs more than the rest
        failures.append("payload_canonical_sha256")
    return failures, (typed if not failures else None)


Slot = tuple[object, ...]  # the strings naming a slot, as a dict key (not serialised per event)


def slot_and_claim(event: AuthorEvent) -> tuple[Slot, object]:
    """The slot a valid event fills and the claim it makes there (see the module docstring).

    The payload's keys say its type: each type's schema admits only its own fields."""
    key = event["signer"]["public_key_fingerprint"]
    payload = event["payload"]
    claim: object
    slot: Slot
    if "author" in payload:  # author_attestation
        author = payload["author"]
        claim = [author["name"], author.get("orcid"), author.get("position")]
        slot = (key, "author")
    elif "citing_pith_number" in payload:  # citation_signature
        slot = (key, "citation", payload["citing_pith_number"])
        claim = payload["relationship"]
    else:  # replication_record
        shas = tuple(sorted(a["sha256"] for a in payload["artifacts"]))
        slot = (key, "replication", payload["kind"], shas)
        claim = payload["outcome"]
    return slot, claim


@dataclass
class Applied:
    """What applying valid events in merge order decides (`apply_events`)."""

    current: list[AuthorEvent] = field(default_factory=list)
    equivocations: list[Equivocation] = field(default_factory=list)
    superseded: list[Superseded] = field(default_factory=list)
    withdrawals: list[AuthorEvent] = field(default_factory=list)
    duplicates: list[Duplicate] = field(default_factory=list)
    applied: list[str] = field(default_factory=list)  # every event that took effect, in order
    broken_links: dict[str, list[str]] = field(default_factory=dict)  # event_id -> faults

    def superseded_by(self, event_id: str) -> str | None:
        """The correction that took `event_id` out of `current`, if one did."""
        return next(
            (s["superseded_by"] for s in self.superseded if s["event"]["event_id"] == event_id),
            None,
        )


def apply_events(events: Sequence[AuthorEvent]) -> Applied:
    """Apply valid, deduplicated events given in merge order: slots, claims, equivocations and
    corrections (module docstring). Also what the CLI runs over an outbox, to know what each
    slot holds before it signs anything."""
    result = Applied()
    # each event's link, asked once (by object: `events` is held meanwhile). Without any, as in
    # most states, no link can break and the order stands (`_links_first` would keep it)
    links = {id(e): link for e in events if (link := link_of(e)) is not None}
    ordered: Sequence[AuthorEvent] = events
    if links:
        _check_links(events, {e["event_id"]: e for e in events}, result.broken_links)
        ordered = _links_first(events, result.broken_links)
    live: dict[str, AuthorEvent] = {}  # applied and not corrected, in the order applied
    slot_of: dict[str, Slot] = {}
    holders: dict[Slot, tuple[object, list[str]]] = {}  # slot -> (claim, live events holding it)
    kept_for: dict[str, str] = {}  # an equivocating event -> the event kept instead
    # what each correction said (statement and link) -> the correction applied first
    corrections_said: dict[tuple[str, str, str], str] = {}
    first_of: dict[str, str] = {}  # a repeat -> the event it repeats

    def repeat_of(event: AuthorEvent, slot: Slot, link: tuple[str, str] | None) -> str | None:
        """The earlier event `event` repeats word for word (module docstring), if any."""
        if link is not None:
            return corrections_said.get((statement_key(event), *link))
        held = holders.get(slot)
        if held is None:  # nothing in its slot to repeat: the common case, without a hash
            return None
        said = statement_key(event)
        for eid in held[1]:
            if statement_key(live[eid]) == said:
                return eid
        return None

    def conflict(event: AuthorEvent, kept: str) -> None:
        kept_for[event["event_id"]] = kept
        result.equivocations.append(
            {
                "kept_event_id": kept,
                "conflicting_event": event.copy(),
                "event_type": event["event_type"],
                "signer_fingerprint": event["signer"]["public_key_fingerprint"],
            }
        )

    def hold(event: AuthorEvent, slot: Slot, claim: object) -> None:
        eid = event["event_id"]
        holders.setdefault(slot, (claim, []))[1].append(eid)
        live[eid] = event
        slot_of[eid] = slot
        result.applied.append(eid)

    for event in ordered:
        slot, claim = slot_and_claim(event)
        link = links.get(id(event))
        first = repeat_of(event, slot, link)
        if first is not None:  # the same statement signed again: it counts once
            result.duplicates.append({"event": event.copy(), "duplicate_of": first})
            first_of[event["event_id"]] = first
            continue
        held = holders.get(slot)
        if link is None:
            if held is not None and held[0] != claim:
                conflict(event, held[1][0])
            else:
                hold(event, slot, claim)
            continue
        how, target = link
        said = (statement_key(event), how, target)
        target = first_of.get(target, target)  # naming a repeat names what it repeats
        if target not in live:  # already corrected, or never applied: a second answer
            conflict(event, result.superseded_by(target) or kept_for.get(target, target))
            continue
        old_slot = slot_of[target]
        if how == "replaces" and slot != old_slot and held is not None and held[0] != claim:
            conflict(event, held[1][0])  # it moves into a slot that says something else
            continue
        for old in holders.pop(old_slot)[1]:  # the event and its repeats: one statement
            result.superseded.append(
                {
                    "event": live.pop(old).copy(),
                    "superseded_by": event["event_id"],
                    "how": "replaced" if how == "replaces" else "withdrawn",
                }
            )
        corrections_said.setdefault(said, event["event_id"])
        if how == "withdraws":
            result.withdrawals.append(event.copy())
            result.applied.append(event["event_id"])
        else:
            hold(event, slot, claim)
    result.current = [e.copy() for e in live.values()]
    return result


def _check_links(
    events: Sequence[AuthorEvent], by_id: Mapping[str, AuthorEvent], broken: dict[str, list[str]]
) -> None:
    """Mark every event whose link breaks a rule, until none is left: an event whose target
    was found broken is broken too (`replaces_unknown`)."""
    changed = True
    while changed:
        changed = False
        for event in events:
            eid = event["event_id"]
            link = link_of(event)
            if eid in broken or link is None:
                continue
            target = None if link[1] in broken else by_id.get(link[1])
            faults = link_faults(event, target)
            if faults:
                broken[eid] = faults
                changed = True


def _links_first(events: Sequence[AuthorEvent], broken: dict[str, list[str]]) -> list[AuthorEvent]:
    """The unbroken events in merge order, except that an event comes after the one its link
    names (they may share a `created_at`). What is left waiting could only be a cycle, which
    hashing rules out; it is broken (`replaces_order`) rather than trusted."""
    done: set[str] = set()
    waiting: dict[str, list[AuthorEvent]] = {}
    ordered: list[AuthorEvent] = []
    for event in events:
        if event["event_id"] in broken:
            continue
        link = link_of(event)
        if link is not None and link[1] not in done:
            waiting.setdefault(link[1], []).append(event)
            continue
        stack = [event]
        while stack:
            ready = stack.pop()
            ordered.append(ready)
            done.add(ready["event_id"])
            stack.extend(reversed(waiting.pop(ready["event_id"], [])))
    for left in waiting.values():
        for event in left:
            broken[event["event_id"]] = ["replaces_order"]
    return ordered


@dataclass
class _Merged:
    """What the merge decides: the applied events per list, and the rest."""

    lists: dict[str, list[AuthorEvent]] = field(
        default_factory=lambda: {name: [] for name in LISTS.values()}
    )
    equivocations: list[Equivocation] = field(default_factory=list)
    invalid: list[InvalidEvent] = field(default_factory=list)
    applied: list[str] = field(default_factory=list)
    superseded: list[Superseded] = field(default_factory=list)
    withdrawals: list[AuthorEvent] = field(default_factory=list)
    duplicates: list[Duplicate] = field(default_factory=list)
    valid_count: int = 1  # record_created

    def corrections(self) -> dict[str, object]:
        """`superseded`, `withdrawals` and `duplicates`, each only when not empty (a state
        without corrections or repeats is the one this merge made before it knew them)."""
        parts: dict[str, object] = {}
        if self.superseded:
            parts["superseded"] = self.superseded
        if self.withdrawals:
            parts["withdrawals"] = self.withdrawals
        if self.duplicates:
            parts["duplicates"] = self.duplicates
        return parts


def _merge(
    pith_number: str,
    record_sha: str,
    created_id: str,
    events: Iterable[object],
    checked: Checked | None = None,
) -> _Merged:
    merged = _Merged(applied=[created_id])
    received = dedup(events)
    failures: dict[int, list[str]] = {}
    valid: list[tuple[int, AuthorEvent]] = []
    for index, event in enumerate(received):
        broken, typed = _validity(event, pith_number, record_sha, checked)
        if typed is None:
            failures[index] = broken or ["event_type"]
        else:
            valid.append((index, typed))
    applied = apply_events([e for _, e in valid])
    for index, event in valid:
        if event["event_id"] in applied.broken_links:
            failures[index] = applied.broken_links[event["event_id"]]
    merged.invalid = [
        {"event": dict(received[i]), "reasons": failures[i]} for i in sorted(failures)
    ]
    merged.valid_count += len(valid) - len(applied.broken_links)
    for event in applied.current:
        merged.lists[LISTS[event["event_type"]]].append(event)
    merged.equivocations = applied.equivocations
    merged.superseded = applied.superseded
    merged.withdrawals = applied.withdrawals
    merged.duplicates = applied.duplicates
    merged.applied += applied.applied
    return merged


def merge_state(
    *,
    pith_number: str,
    canonical_record: CanonicalRecord,
    record_created: RecordCreated,
    source_aliases: Sequence[SourceAlias],
    events: Iterable[object],
    checked: Checked | None = None,
) -> MergedState:
    """The merged state of one record, with `state_sha256` by the protocol's rule; `checked`
    (`already_checked`) holds what is known of the events' own checks."""
    merged = _merge(
        pith_number,
        canonical_sha256(canonical_record),
        record_created["event_id"],
        events,
        checked,
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
    if merged.superseded:  # only when there are any: see _Merged.corrections
        state["superseded"] = merged.superseded
    if merged.withdrawals:
        state["withdrawals"] = merged.withdrawals
    if merged.duplicates:
        state["duplicates"] = merged.duplicates
    state["state_sha256"] = state_hash(state)
    return state


def state_hash(state: Mapping[str, object]) -> str:
    """`state_sha256`: sha256 of the canonical state without its `state_sha256` key."""
    return canonical_sha256({k: v for k, v in state.items() if k != "state_sha256"})
