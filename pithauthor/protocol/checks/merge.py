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
             timestamp_anchor:   (signer key, "timestamp")
             storage_attestation: (signer key, "storage", capture_url of the PDF capture)
    claims   author: (name, orcid, position); citation: relationship; replication: outcome;
             anchor: canonical_sha256 (the record's, for every valid anchor: a second anchor
             by the same key is another proof of the same claim, never an equivocation);
             storage: (timestamp, digest) of the PDF capture (one capture, two digests: an
             equivocation)
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

import bisect
import json
from collections import deque
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TypeVar

from pithauthor.protocol.canonical_json import (
    canonical,
    canonical_sha256,
    canonical_text,
    json_string,
)
from pithauthor.protocol.checks.event import checked_author_event
from pithauthor.protocol.documents import (
    CURRENT_FIELDS,
    EVENT_LISTS,
    MERGE_VERSION,
    REGISTRY_LISTS,
    STATE_FIELDS,
    STATE_TYPE,
    STATE_VERSION,
    AuthorEvent,
    CanonicalRecord,
    Duplicate,
    Equivocation,
    InvalidEvent,
    MergedState,
    RecordCreated,
    SourceAlias,
    StateCorrections,
    StateHead,
    Superseded,
)
from pithauthor.protocol.payloads import pdf_capture
from pithauthor.protocol.subject import link_faults, link_of, statement_key
from pithauthor.protocol.timestamps import CARRIED_KEY

_V = TypeVar("_V")  # `in_layout`: whatever a caller keeps per field


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
    # was a tenth of verifying it; min() keeps the first of equal bytes, as before
    chosen = [
        group[0] if len(group) == 1 else min(group, key=canonical) for group in by_id.values()
    ]
    return sorted(chosen, key=order_key)


#: What `checked_author_event` found on events already checked (the names of the checks that
#: failed, the typed event when none did, its canonical text when the check wrote it), by `id()`
#: of the event object (held here too, so the id cannot be reused): `pith verify` of a local
#: state checks every event it lists, then recomputes the merge from the same objects
#: (`remerge`); checking each one a second time was half of that verification.
CheckedEntry = tuple[object, list[str], AuthorEvent | None, str | None]
Checked = Mapping[int, CheckedEntry]


def already_checked(events: Iterable[AuthorEvent]) -> Checked:
    """`Checked` entries saying each of `events` passed `checked_author_event`: for events a
    store took only after that check (the local registry's: `RegistryStore.insert_event`), so
    that merging them does not verify every signature again (the first read of a
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
    elif "opentimestamps" in payload:  # timestamp_anchor
        slot = (key, "timestamp")
        claim = payload["canonical_sha256"]
    elif "captures" in payload:  # storage_attestation: a valid one has one PDF capture
        pdf = pdf_capture(payload) or payload["captures"][0]
        slot = (key, "storage", pdf["capture_url"])
        claim = [pdf["timestamp"], pdf["digest"]]  # a list: a claim read back from JSON is one
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
    return fold_events(events).finish()


def fold_events(events: Sequence[AuthorEvent]) -> Fold:
    """`apply_events`, the fold kept: more events that come after all of these in merge order
    can still be added to it (`Fold.add`, `StateBuilder`)."""
    fold = Fold()
    # each event's link, asked once (by object: `events` is held meanwhile). Without any, as in
    # most states, no link can break and the order stands (`_links_first` would keep it)
    links = {id(e): link for e in events if (link := link_of(e)) is not None}
    if links:
        _check_links(events, {e["event_id"]: e for e in events}, fold.result.broken_links)
        for event in _links_first(events, fold.result.broken_links):
            fold.add(event, links.get(id(event)))
        return fold
    # no links: `Fold.add` of an event whose slot nothing holds yet (no repeat, no conflict:
    # most events of a state, each citing paper its own slot) is `_hold`, written out here;
    # any other takes `add` itself. tests/unit/protocol/test_checks_merge_corrections.py
    # merges random lists both with and without a link that forces `add` on every event
    holders, live, slot_of, applied = fold.holders, fold.live, fold.slot_of, fold.result.applied
    for event in events:
        slot, claim = slot_and_claim(event)
        if slot in holders:
            fold.add(event, None)
            continue
        eid = event["event_id"]
        holders[slot] = (claim, [eid])
        live[eid] = event
        slot_of[eid] = slot
        applied.append(eid)
    return fold


class Fold:
    """What applying events in merge order has decided so far (`apply_events`): the result, and
    what the next event is judged against (the slots held, the corrections said)."""

    def __init__(self) -> None:
        self.result = Applied()
        self.live: dict[str, AuthorEvent] = {}  # applied and not corrected, in the order applied
        self.slot_of: dict[str, Slot] = {}
        # slot -> (claim, live events holding it)
        self.holders: dict[Slot, tuple[object, list[str]]] = {}
        self.kept_for: dict[str, str] = {}  # an equivocating event -> the event kept instead
        # what each correction said (statement and link) -> the correction applied first
        self.corrections_said: dict[tuple[str, str, str], str] = {}
        self.first_of: dict[str, str] = {}  # a repeat -> the event it repeats

    def finish(self) -> Applied:
        """The result, with `current` (copies of the live events, in the order applied)."""
        self.result.current = [e.copy() for e in self.live.values()]
        return self.result

    def _repeat_of(
        self, event: AuthorEvent, slot: Slot, link: tuple[str, str] | None
    ) -> str | None:
        """The earlier event `event` repeats word for word (module docstring), if any."""
        if link is not None:
            return self.corrections_said.get((statement_key(event), *link))
        held = self.holders.get(slot)
        if held is None:  # nothing in its slot to repeat: the common case, without a hash
            return None
        said = statement_key(event)
        for eid in held[1]:
            if statement_key(self.live[eid]) == said:
                return eid
        return None

    def _conflict(self, event: AuthorEvent, kept: str) -> None:
        self.kept_for[event["event_id"]] = kept
        self.result.equivocations.append(
            {
                "kept_event_id": kept,
                "conflicting_event": event.copy(),
                "event_type": event["event_type"],
                "signer_fingerprint": event["signer"]["public_key_fingerprint"],
            }
        )

    def _hold(self, event: AuthorEvent, slot: Slot, claim: object) -> None:
        eid = event["event_id"]
        self.holders.setdefault(slot, (claim, []))[1].append(eid)
        self.live[eid] = event
        self.slot_of[eid] = slot
        self.result.applied.append(eid)

    def add(self, event: AuthorEvent, link: tuple[str, str] | None) -> None:
        """Apply one valid event whose link (`link_of`) is unbroken, after all before it."""
        result, holders, live = self.result, self.holders, self.live
        slot, claim = slot_and_claim(event)
        first = self._repeat_of(event, slot, link)
        if first is not None:  # the same statement signed again: it counts once
            result.duplicates.append({"event": event.copy(), "duplicate_of": first})
            self.first_of[event["event_id"]] = first
            return
        held = holders.get(slot)
        if link is None:
            if held is not None and held[0] != claim:
                self._conflict(event, held[1][0])
            else:
                self._hold(event, slot, claim)
            return
        how, target = link
        said = (statement_key(event), how, target)
        target = self.first_of.get(target, target)  # naming a repeat names what it repeats
        if target not in live:  # already corrected, or never applied: a second answer
            self._conflict(event, result.superseded_by(target) or self.kept_for.get(target, target))
            return
        old_slot = self.slot_of[target]
        if how == "replaces" and slot != old_slot and held is not None and held[0] != claim:
            self._conflict(event, held[1][0])  # it moves into a slot that says something else
            return
        for old in holders.pop(old_slot)[1]:  # the event and its repeats: one statement
            result.superseded.append(
                {
                    "event": live.pop(old).copy(),
                    "superseded_by": event["event_id"],
                    "how": "replaced" if how == "replaces" else "withdrawn",
                }
            )
        self.corrections_said.setdefault(said, event["event_id"])
        if how == "withdraws":
            result.withdrawals.append(event.copy())
            result.applied.append(event["event_id"])
        else:
            self._hold(event, slot, claim)


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
class Merged:
    """What the merge decides: the applied events per list, and the rest."""

    lists: dict[str, list[AuthorEvent]] = field(
        default_factory=lambda: {name: [] for name in EVENT_LISTS.values()}
    )
    equivocations: list[Equivocation] = field(default_factory=list)
    invalid: list[InvalidEvent] = field(default_factory=list)
    applied: list[str] = field(default_factory=list)
    superseded: list[Superseded] = field(default_factory=list)
    withdrawals: list[AuthorEvent] = field(default_factory=list)
    duplicates: list[Duplicate] = field(default_factory=list)
    valid_count: int = 1  # record_created
    fold: Fold = field(default_factory=Fold)  # kept, for `StateBuilder` to go on from

    def corrections(self) -> StateCorrections:
        """`superseded`, `withdrawals` and `duplicates`, each only when not empty
        (`documents.CORRECTION_LISTS`)."""
        parts: StateCorrections = {}
        if self.superseded:
            parts["superseded"] = self.superseded
        if self.withdrawals:
            parts["withdrawals"] = self.withdrawals
        if self.duplicates:
            parts["duplicates"] = self.duplicates
        return parts


def merge_events(
    pith_number: str,
    record_sha: str,
    created_id: str,
    events: Iterable[object],
    checked: Checked | None = None,
) -> Merged:
    """The merge of one record's events: each checked (`checked`: what is known already),
    folded, and sorted: applied, equivocating, superseded, withdrawn, duplicate, invalid."""
    merged = Merged(applied=[created_id])
    received = dedup(events)
    failures: dict[int, list[str]] = {}
    valid: list[tuple[int, AuthorEvent]] = []
    for index, event in enumerate(received):
        broken, typed = _validity(event, pith_number, record_sha, checked)
        if typed is None:
            failures[index] = broken or ["event_type"]
        else:
            valid.append((index, typed))
    merged.fold = fold_events([e for _, e in valid])
    applied = merged.fold.finish()
    for index, event in valid:
        if event["event_id"] in applied.broken_links:
            failures[index] = applied.broken_links[event["event_id"]]
    merged.invalid = [
        {"event": dict(received[i]), "reasons": failures[i]} for i in sorted(failures)
    ]
    merged.valid_count += len(valid) - len(applied.broken_links)
    for event in applied.current:
        merged.lists[EVENT_LISTS[event["event_type"]]].append(event)
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
    merged = merge_events(
        pith_number,
        canonical_sha256(canonical_record),
        record_created["event_id"],
        events,
        checked,
    )
    return state_document(
        pith_number,
        canonical_record.copy(),
        [a.copy() for a in source_aliases],
        record_created.copy(),
        merged,
    )


def in_layout(values: Mapping[str, _V], layout: Sequence[str]) -> dict[str, _V]:
    """`values` in the order of `layout` (`documents.STATE_FIELDS`, `CURRENT_FIELDS`): the
    order a state is written in; a field `values` lacks is left out."""
    return {name: values[name] for name in layout if name in values}


def state_head(
    pith_number: str, valid_count: int, invalid_count: int, equivocation_count: int
) -> StateHead:
    """A merged state's head (what it is, which merge made it, its counters: `event_count` =
    valid + invalid), in the order of the layout."""
    return {
        "state_type": STATE_TYPE,
        "state_version": STATE_VERSION,
        "pith_number": pith_number,
        "merge_version": MERGE_VERSION,
        "event_count": valid_count + invalid_count,
        "valid_event_count": valid_count,
        "invalid_event_count": invalid_count,
        "equivocation_count": equivocation_count,
    }


def state_document(
    pith_number: str,
    canonical_record: CanonicalRecord,
    source_aliases: list[SourceAlias],
    record_created: RecordCreated,
    merged: Merged,
    *,
    hashed: bool = True,
) -> MergedState:
    """The one layout of a merged state, from the record's parts and what the merge decided:
    `merge_state` serves it, `checks.state.remerge` recomputes a state with it, and
    `StateBuilder.document` writes the same fields in the same order (`documents.STATE_FIELDS`
    and `CURRENT_FIELDS`, the order `MergedState` and `StateCurrent` declare; tests hold the
    three equal). `hashed=False` leaves `state_sha256` empty (not hashed: a caller that
    compares the state field by field has no use for it)."""
    lists = merged.lists
    head = state_head(
        pith_number, merged.valid_count, len(merged.invalid), len(merged.equivocations)
    )
    state: MergedState = {
        **head,
        "current": {
            "canonical_record": canonical_record,
            "source_aliases": source_aliases,
            "record_created": record_created,
            "author_attestations": lists["author_attestations"],
            "citation_signatures": lists["citation_signatures"],
            "replication_records": lists["replication_records"],
            "timestamp_anchors": lists["timestamp_anchors"],
            "storage_attestations": lists["storage_attestations"],
            "corrections": [],
            "mirror_hints": [],
            "graph_snapshots": [],
        },
        "equivocations": merged.equivocations,
        "invalid_events": merged.invalid,
        "applied_event_ids": merged.applied,
        "state_sha256": "",  # in its place, set below
        **merged.corrections(),
    }
    if hashed:
        state["state_sha256"] = state_hash(state)
    return state


def state_hash(state: Mapping[str, object]) -> str:
    """`state_sha256`: sha256 of the canonical state without its `state_sha256` key, nor the
    trusted-time sidecars it carries (`UNHASHED`: they change as proofs complete)."""
    return canonical_sha256({k: v for k, v in state.items() if k not in UNHASHED})


#: What a state's hash leaves out: the hash itself, and the sidecars of its events' proofs of
#: time (DESIGN, docs/protocol.md "Trusted time").
UNHASHED = frozenset({"state_sha256", CARRIED_KEY})


# --- a merged state kept up to date event by event --------------------------------------------

#: How a server writes a JSON value (compact, keys in the order the merge made them); the
#: canonical text orders them. Both are kept for every piece of a state.
Encode = Callable[[object], str]
Piece = tuple[bytes, bytes]  # (as served, canonical), UTF-8
#: A change `StateBuilder.add` made: ("put", part, event_id or "", served, canonical, slot and
#: claim as JSON or "", place) or ("drop", part, event_id, b"", b"", "", ""); `place`
#: (`_place`) orders the pieces of `current` and `applied_event_ids`, "" the others'
#: (appended, in the order given)
Change = tuple[str, str, str, bytes, bytes, str, str]


def _place(key: tuple[str, str]) -> str:
    """A merge order key as one text that sorts as the key does (no created_at holds \x01)."""
    return key[0] + "\x01" + key[1]


def _unplace(place: str) -> tuple[str, str]:
    """`_place` read back."""
    created, _, eid = place.partition("\x01")
    return created, eid


def _slot_claim(said: str) -> tuple[Slot, object]:
    """A slot and claim back from `StateBuilder._said`'s JSON (a slot's lists are tuples)."""
    slot, claim = json.loads(said)
    return tuple(tuple(x) if isinstance(x, list) else x for x in slot), claim


class _EventsByText(dict[str, AuthorEvent]):
    """A restored fold's live events: read from their kept text when the fold asks for one
    (only for a new event in a slot already held), not all at once on a restart."""

    def __init__(self, current: Mapping[str, Mapping[str, bytes]]) -> None:
        super().__init__()
        self._current = current

    def __missing__(self, eid: str) -> AuthorEvent:
        for texts in self._current.values():
            if eid in texts:
                event: AuthorEvent = json.loads(texts[eid])
                self[eid] = event
                return event
        raise KeyError(eid)


# the fields outside `current` whose pieces a builder keeps (`pieces`, `restored`); the order
# they are written in is the layout's (`documents.STATE_FIELDS`)
_PARTS = (
    "equivocations",
    "invalid_events",
    "superseded",
    "withdrawals",
    "duplicates",
    "applied_event_ids",
)


def _object_chunks(pairs: Iterable[tuple[str, bytes | list[bytes]]]) -> list[bytes]:
    """A JSON object written from its keys and the texts of their values (a value given as
    chunks is taken as they are), in the order given, as chunks: the values (megabytes of
    events) are not copied into one text to be hashed."""
    chunks = [b"{"]
    for k, v in pairs:
        if len(chunks) > 1:
            chunks.append(b",")
        chunks.append((json_string(k) + ":").encode("utf-8"))
        if isinstance(v, list):
            chunks += v
        else:
            chunks.append(v)
    chunks.append(b"}")
    return chunks


def _join_array(texts: Iterable[bytes]) -> bytes:
    return b"[" + b",".join(texts) + b"]"


def _name(pair: tuple[str, object]) -> str:
    return pair[0]


def _both_arrays(pieces: Sequence[Piece]) -> tuple[bytes, bytes]:
    """The JSON arrays of these pieces as served and canonical."""
    return _join_array(p[0] for p in pieces), _join_array(p[1] for p in pieces)


def _coalesced(chunks: Iterable[bytes], small: int = 1 << 16) -> list[bytes]:
    """`chunks` with each run of small ones joined: a document sent as a few buffers (its
    large segments as they are, never copied into one text), not as 200,000 small ones."""
    out: list[bytes] = []
    run: list[bytes] = []
    for chunk in chunks:
        if len(chunk) < small:
            run.append(chunk)
            continue
        if run:
            out.append(b"".join(run))
            run = []
        out.append(chunk)
    if run:
        out.append(b"".join(run))
    return out


def _array_chunks(texts: list[bytes]) -> list[bytes]:
    """A JSON array of these texts as chunks ("[", a text, ",", a text, ..., "]"), made by
    slicing in C: hashed and joined into the document where they are, never joined alone
    (each join of a 100 MB state is a copy of it)."""
    if not texts:
        return [b"[]"]
    chunks = [b","] * (2 * len(texts) + 1)
    chunks[1::2] = texts
    chunks[0], chunks[-1] = b"[", b"]"
    return chunks


class StateBuilder:
    """One record's merged state (`merge_state`), kept so that a new event that comes after all
    the others in merge order is added at a cost that does not grow with the state: the fold
    goes on from where it stopped (`Fold.add`), and each piece of the state (an event, an
    equivocation, an applied id...) is kept as text, so that writing the state is joining
    texts and hashing them, not serialising and merging every event again (the first
    read of a 100,000-event paper). `document()` gives the same bytes as `encode(merge_state(
    ...))` and the same `state_sha256` (tests/unit/registry/test_local_states_incremental.py).

    Events are written as their canonical text (`texts`, or `canonical_text`): a server that
    stores canonical events (whose keys are then in sorted order) serves them the same way.

    `add` declines (returns False, changing nothing) what a fold cannot simply go on with; the
    caller then builds anew from every event (a full merge). That is: an event earlier in merge
    order than one already merged (it would change what came after it), an invalid one, a
    correction whose link breaks a rule or names an event not merged yet, an event that an
    earlier correction named before it arrived (that correction becomes valid), and a second
    copy of an event id with other bytes. Events arrive in time order and corrections after
    what they correct, so these are rare."""

    def __init__(
        self,
        *,
        pith_number: str,
        canonical_record: CanonicalRecord,
        record_created: RecordCreated,
        source_aliases: Sequence[SourceAlias],
        events: Iterable[object] | None,
        encode: Encode,
        texts: Mapping[str, str] | None = None,
        checked: Checked | None = None,
    ) -> None:
        self._pn = pith_number
        self._sha = canonical_sha256(canonical_record)
        self._encode = encode
        #: what `add` changed, for a caller that keeps the pieces elsewhere (`pieces`):
        #: ("put", part, event_id or "", served, canonical) or ("drop", part, event_id, "", "")
        self.log: list[Change] = []
        self._restored = False  # `restored`: the fold knows slots, not corrections
        # parts `_insert` appended to, out of merge order, and where each stops being in order
        self._unsorted: dict[str, int] = {}
        # each event list of `current` and `applied_event_ids` as segments (the texts of its
        # first `count` items joined by ",", in order), for `document`: a write joins and
        # hashes only the items added since the last (`_segments`); whatever changes an item
        # already in a segment (moved, dropped) drops its part's segments
        self._joined: dict[str, tuple[int, list[bytes]]] = {}
        self._said_kept: dict[str, str] = {}  # `restored`: each current event's slot, claim
        self._head = [
            (k, self._both(v))
            for k, v in (
                ("canonical_record", canonical_record),
                ("source_aliases", list(source_aliases)),
                ("record_created", record_created),
            )
        ]
        if events is None:  # `restored`: the pieces come from the caller, without a fold
            return
        received = list(events)
        merged = merge_events(pith_number, self._sha, record_created["event_id"], received, checked)
        self._fold: Fold | None = merged.fold
        fold = merged.fold
        texts = texts or {}

        def text(event: Mapping[str, object]) -> str:
            eid = event.get("event_id")
            known = texts.get(eid) if isinstance(eid, str) else None
            return known if known is not None else canonical_text(event)

        ordered = dedup(received)
        self._last = order_key(ordered[-1]) if ordered else ("", "")
        self._text_of = {str(e.get("event_id", "")): text(e) for e in ordered}
        invalid_ids = {str(i["event"].get("event_id", "")) for i in merged.invalid}
        self._valid: dict[str, AuthorEvent] = {
            e["event_id"]: e for e in [*fold.live.values(), *self._all_applied_or_not(fold)]
        }
        for eid in invalid_ids:
            self._valid.pop(eid, None)
        # a correction whose link is broken waits for its target: when that arrives, rebuild
        self._awaited = {
            link[1] for i in merged.invalid if (link := link_of(i["event"])) is not None
        }
        self._valid_count = merged.valid_count
        self._current: dict[str, dict[str, bytes]] = {name: {} for name in EVENT_LISTS.values()}
        for eid, event in fold.live.items():
            self._current[EVENT_LISTS[event["event_type"]]][eid] = self._text_of[eid].encode(
                "utf-8"
            )
        self._equivocations = [self._both(e) for e in merged.equivocations]
        self._invalid = [self._both(i) for i in merged.invalid]
        self._superseded = [self._both(s) for s in merged.superseded]
        self._withdrawals = [self._text_of[w["event_id"]].encode() for w in merged.withdrawals]
        self._duplicates = [self._both(d) for d in merged.duplicates]
        self._applied = [json_string(eid).encode("utf-8") for eid in merged.applied]
        # where each event was applied in merge order (`_emitted`), and every slot used: what
        # lets a plain statement dated before the last event merged be placed (`_insert`)
        self._emit: dict[str, tuple[str, str]] = {}
        for eid in merged.applied:
            self._emitted(eid)
        self._applied_emit = [self._emit[eid] for eid in merged.applied]
        self._slots = {slot_and_claim(e)[0] for e in self._valid.values()}

    def _emitted(self, eid: str) -> tuple[str, str]:
        """The merge order key at which `eid` is applied: its own, or, for a correction that
        waited for the event it names (`_links_first`), that event's."""
        known = self._emit.get(eid)
        if known is not None:
            return known
        event = self._valid.get(eid)
        if event is None:  # record_created, applied first
            self._emit[eid] = ("", "")
            return ("", "")
        key = order_key(event)
        link = link_of(event)
        if link is not None and link[1] in self._valid:
            key = max(key, self._emitted(link[1]))
        self._emit[eid] = key
        return key

    def _insert(self, typed: AuthorEvent, text: str, key: tuple[str, str]) -> bool:
        """Place a plain statement dated before the last event merged, when its slot was never
        used: then it changes no other event's fate (no repeat, conflict or correction can
        involve it), only where it stands in `current` and `applied_event_ids`. False when
        that is not so (a full merge)."""
        slot, _ = slot_and_claim(typed)
        if slot in self._slots:
            return False
        assert self._fold is not None
        eid = typed["event_id"]
        self._fold.add(typed, None)  # a slot of its own: it is held
        self._slots.add(slot)
        self._text_of[eid] = text
        self._valid[eid] = typed
        self._valid_count += 1
        self._emit[eid] = key
        at = bisect.bisect(self._applied_emit, key)
        self._applied_emit.insert(at, key)
        self._applied.insert(at, t := json_string(eid).encode("utf-8"))
        self._unjoin("applied_event_ids", at)
        self.log.append(("put", "applied_event_ids", "", t, t, "", _place(key)))
        part = EVENT_LISTS[typed["event_type"]]
        written = text.encode("utf-8")
        # appended, and the part put back in merge order once, when it is next written
        # (`_in_order`): placing it now rebuilt the part's dict, in proportion to the paper,
        # for each event of a same-second batch
        texts = self._current[part]
        self._unsorted.setdefault(part, len(texts))  # where its part stops being in order
        texts[eid] = written
        self.log.append(("put", part, eid, written, written, self._said(eid), _place(key)))
        return True

    def _in_order(self) -> None:
        """Put the parts that `_insert` appended to back in merge order, once per write however
        many events were placed: the part is in order up to where the first was appended
        (`_unsorted`); from where the earliest appended one belongs (a bisect over the ordered
        run, to the right of events of its key, as the merge applies them), the events are
        sorted by the key at which each was applied (stably) and moved to the dict's end in
        that order. Same-second events placed are among the last: few are moved."""
        emit = self._emit
        for part, start in self._unsorted.items():
            texts = self._current[part]
            ids = list(texts)
            if start >= len(ids):
                continue
            lowest = emit[min(ids[start:], key=emit.__getitem__)]
            at = bisect.bisect(ids, lowest, 0, start, key=emit.__getitem__)
            self._unjoin(part, at)
            for eid in sorted(ids[at:], key=emit.__getitem__):
                texts[eid] = texts.pop(eid)
        self._unsorted.clear()

    @classmethod
    def restored(
        cls,
        *,
        pith_number: str,
        canonical_record: CanonicalRecord,
        record_created: RecordCreated,
        source_aliases: Sequence[SourceAlias],
        encode: Encode,
        pieces: Iterable[tuple[str, str, bytes, bytes, str, str]],
        valid_count: int,
        last: tuple[str, str],
        awaited: Iterable[str],
    ) -> StateBuilder:
        """A builder that writes the state whose `pieces` (`pieces()`, in order) a caller
        kept, without merging. Its fold knows the slots and claims of the current events (an
        event of a slot already held is read again only then), not what corrections need: its
        `add` takes a plain statement and declines a correction (the caller merges in full
        once, then goes on event by event)."""
        self = cls(
            pith_number=pith_number,
            canonical_record=canonical_record,
            record_created=record_created,
            source_aliases=source_aliases,
            events=None,
            encode=encode,
        )
        self._valid_count = valid_count
        self._last = last
        self._awaited = set(awaited)
        self._text_of = {}  # a store's event ids are unique: none comes twice
        self._valid = {}  # links are declined (`_restored`)
        self._restored = True
        self._emit, self._applied_emit, self._slots = {}, [], set()  # `_fold_back` fills
        self._current = {name: {} for name in EVENT_LISTS.values()}
        self._fold = None  # made from `_said_kept` when an event comes (`_fold_back`)
        lists: dict[str, list[Piece]] = {p: [] for p in _PARTS}
        for part, eid, served, canon, said, place in pieces:
            if part == "applied_event_ids":
                self._applied_emit.append(_unplace(place))
            if part in self._current:
                self._current[part][eid] = served
                self._emit[eid] = _unplace(place)
                self._said_kept[eid] = said
            else:
                lists[part].append((served, canon))
        self._equivocations = lists["equivocations"]
        self._invalid = lists["invalid_events"]
        self._superseded = lists["superseded"]
        self._withdrawals = [p[0] for p in lists["withdrawals"]]
        self._duplicates = lists["duplicates"]
        self._applied = [p[0] for p in lists["applied_event_ids"]]
        return self

    @property
    def valid_count(self) -> int:
        """`valid_event_count` of the state."""
        return self._valid_count

    @property
    def last(self) -> tuple[str, str]:
        """The merge order key (`order_key`) of the last event merged."""
        return self._last

    @property
    def awaited(self) -> list[str]:
        """The event ids that corrections stored before them name (`restored` takes them)."""
        return sorted(self._awaited)

    def _fold_back(self) -> Fold:
        """A restored builder's fold, from the slots and claims kept: made when the first new
        event comes, not when the state is first served."""
        fold = self._fold = Fold()
        fold.live = _EventsByText(self._current)
        for texts in self._current.values():
            for eid in texts:
                slot, claim = _slot_claim(self._said_kept[eid])
                fold.holders.setdefault(slot, (claim, []))[1].append(eid)
                fold.slot_of[eid] = slot
                self._slots.add(slot)
        # every slot a valid event used (what `_insert` asks before placing one dated before
        # the last): the current events' above, and those of the events kept out of `current`
        # (superseded, withdrawn, repeated, equivocating: few), read from their kept text
        for items, inner in (
            (self._superseded, "event"),
            (self._duplicates, "event"),
            (self._equivocations, "conflicting_event"),
        ):
            for _, canon in items:
                self._slots.add(slot_and_claim(json.loads(canon)[inner])[0])
        for text in self._withdrawals:
            self._slots.add(slot_and_claim(json.loads(text))[0])
        return fold

    def _said(self, eid: str) -> str:
        """The slot and claim of a current event, as JSON (`restored` reads them back)."""
        kept = self._said_kept.get(eid)
        if kept is not None:
            return kept
        assert self._fold is not None
        slot = self._fold.slot_of[eid]
        return json.dumps([slot, self._fold.holders[slot][0]], ensure_ascii=False)

    def pieces(self) -> Iterable[tuple[str, str, bytes, bytes, str, str]]:
        """(part, event_id or "", served, canonical, slot and claim or "", place) of every
        piece, in order: what `restored` takes back (`Change`)."""
        self._in_order()
        for name, texts in self._current.items():
            for eid, text in texts.items():
                yield name, eid, text, text, self._said(eid), _place(self._emit[eid])
        for part, items in (
            ("equivocations", self._equivocations),
            ("invalid_events", self._invalid),
            ("superseded", self._superseded),
            ("duplicates", self._duplicates),
        ):
            for served, canon in items:
                yield part, "", served, canon, "", ""
        for text in self._withdrawals:
            yield "withdrawals", "", text, text, "", ""
        for text, key in zip(self._applied, self._applied_emit, strict=True):
            yield "applied_event_ids", "", text, text, "", _place(key)

    @staticmethod
    def _all_applied_or_not(fold: Fold) -> list[AuthorEvent]:
        """The valid events the fold saw but no longer holds as current: links may name them."""
        result = fold.result
        return [
            *(s["event"] for s in result.superseded),
            *result.withdrawals,
            *(d["event"] for d in result.duplicates),
            *(e["conflicting_event"] for e in result.equivocations),
        ]

    def _both(self, value: object) -> Piece:
        return self._encode(value).encode("utf-8"), canonical(value)

    def add(self, event: object, text: str | None = None, *, checked: bool = False) -> bool:
        """Merge one more event; False (nothing changed) when it needs a full merge (see the
        class docstring). `text`: its canonical text, when known; `checked`: it passed
        `checked_author_event` already (a store's event), so it is not verified again."""
        if type(event) is not dict and not isinstance(event, Mapping):
            return False
        fold = self._fold if self._fold is not None else self._fold_back()
        eid = str(event.get("event_id", ""))
        if text is None:
            text = canonical_text(event)
        if eid in self._text_of:
            return self._text_of[eid] == text  # the same event again changes nothing
        key = order_key(event)
        if eid in self._awaited:
            return False
        # `checked`: a store's event, which passed `checked_author_event` when it was stored
        seen = already_checked([event]) if checked else None  # type: ignore[list-item]
        failures, typed = _validity(event, self._pn, self._sha, seen)
        if typed is None or failures:
            return False
        link = link_of(typed)
        if key <= self._last:  # dated before: only a plain statement in a slot of its own
            return link is None and self._insert(typed, text, key)
        if link is not None:
            if self._restored:  # what corrections are judged by is not kept: merge in full
                return False
            target = self._valid.get(link[1])
            if target is None or link_faults(typed, target):
                return False
        result = fold.result
        sizes = [
            len(result.equivocations),
            len(result.superseded),
            len(result.withdrawals),
            len(result.duplicates),
            len(result.applied),
        ]
        fold.add(typed, link)
        self._last = key
        self._text_of[eid] = text
        self._valid[eid] = typed
        self._valid_count += 1
        self._emit[eid] = key
        self._slots.add(slot_and_claim(typed)[0])
        log = self.log
        for e in result.equivocations[sizes[0] :]:
            self._equivocations.append(piece := self._both(e))
            log.append(("put", "equivocations", "", *piece, "", ""))
        for gone in result.superseded[sizes[1] :]:
            old = gone["event"]
            part = EVENT_LISTS[old["event_type"]]
            self._current[part].pop(old["event_id"], None)
            self._unjoin(part, 0)  # where it stood is not known: joined again, whole
            if part in self._unsorted:  # its places moved: the part is sorted from its start
                self._unsorted[part] = 0
            log.append(("drop", part, old["event_id"], b"", b"", "", ""))
            self._superseded.append(piece := self._both(gone))
            log.append(("put", "superseded", "", *piece, "", ""))
        for w in result.withdrawals[sizes[2] :]:
            self._withdrawals.append(t := self._text_of[w["event_id"]].encode("utf-8"))
            log.append(("put", "withdrawals", "", t, t, "", ""))
        for d in result.duplicates[sizes[3] :]:
            self._duplicates.append(piece := self._both(d))
            log.append(("put", "duplicates", "", *piece, "", ""))
        for a in result.applied[sizes[4] :]:
            self._applied.append(t := json_string(a).encode("utf-8"))
            self._applied_emit.append(key)  # after every event merged: its own key
            log.append(("put", "applied_event_ids", "", t, t, "", _place(key)))
        if eid in fold.live:
            part = EVENT_LISTS[typed["event_type"]]
            self._current[part][eid] = written = text.encode("utf-8")
            log.append(("put", part, eid, written, written, self._said(eid), _place(key)))
        return True

    def _unjoin(self, part: str, at: int) -> None:
        """Item `at` of `part` and those after it changed: its segments no longer hold them."""
        joined = self._joined.get(part)
        if joined is not None and at < joined[0]:
            del self._joined[part]

    def _segments(self, part: str, texts: Sequence[bytes]) -> list[bytes]:
        """The JSON array of `texts` (the items of `part`, in order) as chunks: the segments
        joined before, and one more of the items added since. A segment at least half the
        size of the one before it is joined to it, so a part is a few segments (their sizes
        halving), and an item is copied again a few times over the paper's life, not at each
        write (the 98 MB of a 100,000-event state were joined at every read after a POST)."""
        count, segments = self._joined.get(part, (0, []))
        if count > len(texts):  # `_unjoin` drops a part whose items changed: never so
            count, segments = 0, []
        if count < len(texts):
            segments = [*segments, b",".join(texts[count:])]
            while len(segments) > 1 and 2 * len(segments[-1]) >= len(segments[-2]):
                last = segments.pop()
                segments[-1] = b",".join((segments[-1], last))
            self._joined[part] = (len(texts), segments)
        return _array_chunks(segments)

    def join_pending(self) -> None:
        """Join the items added since the last write into their parts' segments now (a
        restored builder, made in a POST: its first write then only hashes)."""
        self._in_order()
        for name, texts in self._current.items():
            self._segments(name, list(texts.values()))
        self._segments("applied_event_ids", self._applied)

    def document(self) -> tuple[bytes, str]:
        """The state as served (`encode` of `merge_state`'s answer, as UTF-8) and its
        `state_sha256`: texts joined, the canonical ones hashed; nothing merged again."""
        parts, sha = self.document_parts()
        return b"".join(parts), sha

    def document_parts(self) -> tuple[list[bytes], str]:
        """`document`'s bytes as a few buffers, in order (its large segments as they are kept:
        nothing copied into one text), and its `state_sha256`."""
        self._in_order()
        invalid = len(self._invalid)
        plain = state_head(self._pn, self._valid_count, invalid, len(self._equivocations))
        # the event lists and applied ids are canonical texts: the same segments are served
        # and hashed (`_segments`: only the items added since the last write are joined)
        lists = {
            name: self._segments(name, list(texts.values()))
            for name, texts in self._current.items()
        }
        current: dict[str, tuple[bytes | list[bytes], bytes | list[bytes]]] = {
            **{k: p for k, p in self._head},
            **{name: (b"[]", b"[]") for name in REGISTRY_LISTS},
            **{name: (chunks, chunks) for name, chunks in lists.items()},
        }
        optional: dict[str, list[Piece]] = {
            "superseded": self._superseded,
            "withdrawals": [(t, t) for t in self._withdrawals],
            "duplicates": self._duplicates,
        }
        applied = self._segments("applied_event_ids", self._applied)
        # each field as (served, canonical) text; in the state's layout for the served bytes,
        # keys sorted for the canonical ones (`current`'s own, then the state's)
        fields: dict[str, tuple[bytes | list[bytes], bytes | list[bytes]]] = {
            **{k: (self._encode(v).encode("utf-8"), canonical(v)) for k, v in plain.items()},
            "current": (
                _object_chunks((k, p[0]) for k, p in in_layout(current, CURRENT_FIELDS).items()),
                _object_chunks(sorted(((k, p[1]) for k, p in current.items()), key=_name)),
            ),
            "equivocations": _both_arrays(self._equivocations),
            "invalid_events": _both_arrays(self._invalid),
            "applied_event_ids": (applied, applied),
            **{k: _both_arrays(v) for k, v in optional.items() if v},
        }
        import hashlib  # as canonical_json does: only where a hash is made

        digest = hashlib.sha256()
        canon = sorted(((k, p[1]) for k, p in fields.items()), key=_name)
        # the small chunks joined first: one update each of 200,000 texts cost more than the
        # SHA-256 of their bytes; a large segment is hashed where it is (without the GIL)
        deque(map(digest.update, _coalesced(_object_chunks(canon))), maxlen=0)
        sha = digest.hexdigest()
        fields["state_sha256"] = (json_string(sha).encode("utf-8"), b"")
        served = [(k, p[0]) for k, p in in_layout(fields, STATE_FIELDS).items()]
        return _coalesced(_object_chunks(served)), sha
