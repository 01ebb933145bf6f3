"""Checks of a merged state: its record_created, its events, its corrections and, for a
local registry's state, the merge itself recomputed (pure).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, cast

from pithauthor.protocol.canonical_json import (
    canonical,
    canonical_sha256,
    canonical_text,
    json_string,
    sha256_hex,
)
from pithauthor.protocol.checks.contents import (
    check_author_at,
    check_authors_at,
    check_created,
    check_links,
    check_registry_event,
    check_unique_event_ids,
    note_completeness,
    report_registry_events,
)
from pithauthor.protocol.checks.fields import (
    EVENT_CHECKED,
    MERGE_FIELDS,
    STATE_CHECKED,
    STATE_REQUIRED,
    current_list,
    has_field,
    require_fields,
)
from pithauthor.protocol.checks.merge import (
    UNHASHED,
    Checked,
    CheckedEntry,
    merge_events,
    state_document,
)
from pithauthor.protocol.checks.record import (
    check_aliases,
    check_canonical,
    number_or_none,
    receipt_key,
)
from pithauthor.protocol.documents import EVENT_LISTS, MERGE_VERSION, REGISTRY_LISTS, MergedState
from pithauthor.protocol.ids import PithNumber
from pithauthor.protocol.subject import link_of
from pithauthor.protocol.verdict import (
    FAILED,
    PASSED,
    Check,
    Report,
    Segments,
    Trust,
    uncovered,
    under,
)

__all__ = [
    "check_state",
    "checked_state",
]


def check_state(state: Mapping[str, Any], trust: Trust) -> Report:
    """A merged state: its hash, its record and receipt, every event, and the merge."""
    report = Report(kind="state")
    require_fields(report, state, STATE_REQUIRED)
    # section 4, VERIFIED. A hash, not a signature: it shows the state is whole as written,
    # not who wrote it (anyone who changes a state can recompute it). Its place is here; it is
    # computed once the events are checked, from the canonical text their checks wrote
    hashed = report.reserve("state_sha256")
    checked: dict[int, CheckedEntry] = {}  # for the hash and the merge, below
    report.add(
        "state_type", state.get("state_type") == "pith_open_graph_state", "pith_open_graph_state"
    )
    current = state.get("current")
    if not isinstance(current, Mapping):
        report.add("current", False, "no current object")
        _settle_hash(report, hashed, state, checked)
        return report
    local = state.get("merge_version") == MERGE_VERSION
    number = number_or_none(state.get("pith_number"))
    created = current.get("record_created")
    payload = created.get("payload") if isinstance(created, Mapping) else None
    canon = payload.get("canonical_record") if isinstance(payload, Mapping) else None
    digest = payload.get("canonical_sha256") if isinstance(payload, Mapping) else None
    covered: list[str | Segments] = list(STATE_CHECKED)
    covered += check_created(report, created, "current.record_created", canon, digest, trust)
    key = receipt_key(payload.get("receipt") if isinstance(payload, Mapping) else None, trust)
    # a local registry's state must say our merge: naming the registry's unpublished one, it
    # would have its merge reported unverifiable instead of recomputed (and perhaps failed)
    if key is not None and key.local:
        report.add(
            "merge_version",
            local,
            f"a local registry's state is merged with {MERGE_VERSION}",
        )
    report.extend(check_canonical(canon, digest, state.get("pith_number")), prefix="record.")
    report.add(
        "record.current_matches",
        # canonical bytes, not ==: 2023.0 == 2023 in Python, not in what a reader is shown
        isinstance(canon, Mapping)
        and canonical(current.get("canonical_record")) == canonical(canon),
        "current.canonical_record = the record_created payload",
    )
    if number is not None and isinstance(canon, Mapping):
        check_aliases(
            report, "current.source_aliases", current.get("source_aliases"), number, canon
        )
    events: list[Any] = []
    registry: list[str] = []
    for etype, name in EVENT_LISTS.items():
        items = current_list(report, current, name)
        if items:  # a list: every item is checked, its own fields listed by _check_author_at
            covered.append(f"current.{name}[*]")  # one pattern, not one per event
        if local or name not in REGISTRY_MAY_SIGN:  # author events only: checked as a list
            check_authors_at(report, items, f"current.{name}", number, digest, etype, checked)
            events += items
            continue
        for index, event in enumerate(items):
            at = f"current.{name}[{index}]"
            if _registry_signed(event):
                # a registry's own anchor or archive copy (its format not published): judged
                # by its key only, as its other events are
                check_registry_event(report, event, at, trust, registry, etype)
            else:
                check_author_at(report, event, at, number, digest, etype, checked)
            events.append(event)
    corrected = _corrected_events(report, state, number, digest, checked)
    _check_corrections(report, state, [*events, *(e for e, _ in corrected)], local)
    events += [e for e, _ in corrected]
    for name in REGISTRY_LISTS:
        for index, event in enumerate(current_list(report, current, name)):
            check_registry_event(report, event, f"current.{name}[{index}]", trust, registry)
            events.append(event)
    check_unique_event_ids(report, [created, *events])
    _settle_hash(report, hashed, state, checked)
    report_registry_events(report, registry)
    present_merge = [p for p in MERGE_FIELDS if has_field(state, p)]
    if local:
        _check_local_merge(report, state, checked)
        covered += present_merge
        for index, entry in enumerate(_top_list(report, state, "equivocations")):
            event = entry.get("conflicting_event") if isinstance(entry, Mapping) else None
            at = f"equivocations[{index}].conflicting_event"
            report.not_signed(f"{at}.not_signed", under(at, uncovered(event, EVENT_CHECKED)))
        note_completeness(
            report,
            "a local state is not signed: its merge of the events it lists was recomputed, "
            "but an event left out of every list cannot be detected",
        )
    else:
        merge = state.get("merge_version")
        if "invalid_events" in state:
            present_merge.append("invalid_events")
        report.unverifiable(
            "merge",
            f"{merge}: the registry's merge rules are not published; which events are applied, "
            "the order and the counters are not checked (each listed event is)",
            tuple(present_merge),
        )
        covered += present_merge
    covered += registry
    report.not_signed("not_signed", uncovered(state, covered))
    return report


#: The lists of `current` that may hold, in a registry's state whose merge is not ours, events
#: the registry signed itself (the record page's "anyone can re-stamp": the registry anchors
#: too), beside the author events of their type.
REGISTRY_MAY_SIGN = frozenset({"timestamp_anchors", "storage_attestations"})


def _registry_signed(event: Any) -> bool:
    """An event whose signer says it is not an author (a registry's own)."""
    signer = event.get("signer") if isinstance(event, Mapping) else None
    return isinstance(signer, Mapping) and signer.get("signer_type") != "author"


def _settle_hash(report: Report, place: Check, state: Mapping[str, Any], checked: Checked) -> None:
    computed = state_sha256(state, checked)
    report.settle(
        place,
        Check(
            "state_sha256",
            PASSED if state.get("state_sha256") == computed else FAILED,
            f"sha256(canonical(state without state_sha256)) = {computed}",
        ),
    )


def state_sha256(state: Mapping[str, Any], checked: Checked) -> str:
    """`merge.state_hash(state)`: sha256 of the canonical state without `state_sha256` (and
    without the trusted-time sidecars it carries, `UNHASHED`).

    Serialising a state again was a tenth of verifying it. Its bulk, the events of
    `current`'s author lists, was serialised a moment before by their checks, in parts: an
    event the tight path passed in full has its canonical text in `checked` (proved there,
    `checks.event`). So the state's text is written around those texts, key by key in sorted
    order, each other value by `canonical_text`; a state not made of plain dicts with text
    keys (what JSON gives), or one the encoder refuses, is serialised whole instead, and so
    gets the plain serialisation's hash or error. tests/unit/protocol/test_checks_state_hash.py
    holds the two equal on generated states."""
    try:
        pieces = _state_pieces(state, checked)
        if pieces is not None:  # one text, one encoding: each copy of a megabyte counts here
            return sha256_hex("".join(pieces).encode("utf-8"))
    except (TypeError, ValueError, RecursionError):
        pass  # the plain serialisation below says what it makes of it
    return canonical_sha256({k: v for k, v in state.items() if k not in UNHASHED})


def _state_pieces(state: Mapping[str, Any], checked: Checked) -> list[str] | None:
    """The canonical text of `state` without `state_sha256`, in pieces to be joined."""
    current = state.get("current")
    # plain dicts (a Mapping may serialise otherwise); a key that is not text makes sorted()
    # or json_string raise TypeError, and the plain serialisation then decides
    if type(state) is not dict or type(current) is not dict:
        return None
    pieces = ["{"]
    for key in sorted(state):
        if key in UNHASHED:
            continue
        pieces += (json_string(key), ":")
        if key != "current":
            pieces += (canonical_text(state[key]), ",")
            continue
        pieces.append("{")
        for name in sorted(current):
            value = current[name]
            pieces += (json_string(name), ":")
            if name not in EVENT_LISTS.values() or type(value) is not list or not value:
                pieces += (canonical_text(value), ",")
                continue
            pieces.append("[")
            for event in value:
                entry = checked.get(id(event))
                if entry is None or entry[0] is not event or entry[3] is None:
                    pieces += (canonical_text(event), ",")
                else:  # the held object itself (`entry[0]`): its id is not another's
                    pieces += (entry[3], ",")
            # the last item's comma closes the list; the list's own comma apart, as every other
            # value's is: the close of `current` replaces the last one (`timestamp_anchors`,
            # sorted last, is a list of events)
            pieces[-1] = "]"
            pieces.append(",")
        pieces[-1] = "}," if current else "{},"
    pieces[-1] = "}" if len(pieces) > 1 else "{}"
    return pieces


def _corrected_events(
    report: Report,
    state: Mapping[str, Any],
    number: PithNumber | None,
    digest: Any,
    checked: dict[int, CheckedEntry] | None = None,
) -> list[tuple[Any, str]]:
    """The events a local merge took out of `current` (`superseded[].event`), the
    withdrawals that did it (`withdrawals`) and the repeats it counted once
    (`duplicates[].event`), each checked in full; with their paths."""
    found: list[tuple[Any, str]] = []
    for name in ("superseded", "duplicates"):
        for index, entry in enumerate(_top_list(report, state, name)):
            found.append(
                (
                    entry.get("event") if isinstance(entry, Mapping) else None,
                    f"{name}[{index}].event",
                )
            )
    for index, event in enumerate(_top_list(report, state, "withdrawals")):
        found.append((event, f"withdrawals[{index}]"))
    for event, at in found:
        check_author_at(report, event, at, number, digest, checked=checked)
    return found


def _top_list(report: Report, state: Mapping[str, Any], name: str) -> list[Any]:
    value = state.get(name, [])
    if not isinstance(value, list):
        report.add(name, False, f"{name} is not a list")
        return []
    return value


def _check_corrections(
    report: Report, state: Mapping[str, Any], events: list[Any], local: bool
) -> None:
    """Every event in `current` or `withdrawals` that replaces or withdraws another: the event
    it names is in this state, signed by the same key, of the same type and subject, not
    newer (pithauthor.protocol.subject). For a registry's state whose merge is not ours, a
    named event it does not list is unverifiable, not failed."""
    current = state.get("current")
    places: list[tuple[str, Any]] = []
    for name in EVENT_LISTS.values():
        items = current.get(name) if isinstance(current, Mapping) else None
        # not a list: failed as such by `_list` (check_state); nothing in it to link
        places.append((f"current.{name}", items if isinstance(items, list) else []))
    withdrawals = state.get("withdrawals")
    if isinstance(withdrawals, list):
        places.append(("withdrawals", withdrawals))
    # only events with a link are named (a path formatted per event was measurable)
    linked = [
        (f"{where}[{i}]", event)
        for where, items in places
        for i, event in enumerate(items)
        if (type(event) is dict or isinstance(event, Mapping)) and link_of(event) is not None
    ]
    if not linked:  # most states: no event names another, so no index of them is needed
        return
    by_id = {str(e.get("event_id")): e for e in events if type(e) is dict or isinstance(e, Mapping)}
    check_links(report, linked, by_id, local)


def _check_local_merge(
    report: Report, state: Mapping[str, Any], checked: Checked | None = None
) -> None:
    """A local registry's state: recompute our published merge and compare, key by key.
    `checked`: the verdicts on its events, found by `check_state` just before."""
    # The state is hashed once, by the `state_sha256` check of `check_state`: the recomputed
    # state is compared field by field without `state_sha256`. Equal fields serialise alike
    # (so the recomputed hash would equal the state's own) except where Python's == is looser
    # than JSON: 2 == 2.0, 0 == False. Every number here is a counter this merge writes as an
    # int (the rest are strings, or the state's own objects copied), hence the type comparison.
    try:
        again = remerge(state, checked, hashed=False)
    except (ValueError, TypeError, AttributeError, KeyError) as exc:
        report.add("merge", False, f"cannot recompute {MERGE_VERSION}: {exc}")
        return
    differing = sorted(
        k
        for k in (set(again) | set(state)) - UNHASHED
        if again.get(k) != state.get(k) or type(again.get(k)) is not type(state.get(k))
    )
    report.add(
        "merge",
        not differing,
        f"recomputed {MERGE_VERSION}: "
        + ("differs in " + ", ".join(differing) if differing else "order, counters, lists equal"),
    )


def state_inputs(state: Mapping[str, Any]) -> list[object]:
    """Every author event a local state was merged from (applied, equivocating, invalid,
    superseded, withdrawals, duplicates)."""
    current = state.get("current") or {}
    events: list[object] = []
    for name in EVENT_LISTS.values():
        items = current.get(name) if isinstance(current, Mapping) else None
        events.extend(items if isinstance(items, list) else [])
    for entry in state.get("equivocations") or []:
        if isinstance(entry, Mapping):
            events.append(entry.get("conflicting_event"))
    for entry in state.get("invalid_events") or []:
        if isinstance(entry, Mapping):
            events.append(entry.get("event"))
    for name in ("superseded", "duplicates"):
        for entry in state.get(name) or []:
            if isinstance(entry, Mapping):
                events.append(entry.get("event"))
    withdrawals = state.get("withdrawals")
    events.extend(withdrawals if isinstance(withdrawals, list) else [])
    return events


def remerge(
    state: Mapping[str, Any], checked: Checked | None = None, *, hashed: bool = True
) -> dict[str, object]:
    """Recompute a local state from the events it lists; equal to `state` when it is honest.

    The state is not trusted yet, so its record parts are copied as they are (untyped); the
    document is laid out by `merge.state_document`, as `merge_state`'s is. `checked`: what
    `check_author_event` failed on events of `state` checked just before (see `Checked`).
    `hashed=False` leaves out `state_sha256`: for a caller that has already hashed the state
    it compares with (`check_state`), serialising megabytes a second time."""
    current = state.get("current")
    if not isinstance(current, Mapping):
        raise ValueError("the state has no current object")
    canon = current.get("canonical_record") or {}
    created = current.get("record_created") or {}
    pith_number = str(state.get("pith_number"))
    merged = merge_events(
        pith_number,
        canonical_sha256(canon),
        str(created.get("event_id", "")),
        state_inputs(state),
        checked,
    )
    # copies of the state's own record parts, untyped: it is not trusted yet
    record: Any = dict(canon)
    aliases: Any = [dict(a) for a in current.get("source_aliases") or []]
    made: Any = dict(created)
    again: dict[str, object] = dict(
        state_document(pith_number, record, aliases, made, merged, hashed=hashed)
    )
    if not hashed:
        del again["state_sha256"]
    return again


def checked_state(doc: Mapping[str, Any], trust: Trust) -> tuple[Report, MergedState | None]:
    """`check_state`, and `doc` typed when it passes."""
    report = check_state(doc, trust)
    return report, (cast(MergedState, doc) if report.ok and isinstance(doc, dict) else None)
