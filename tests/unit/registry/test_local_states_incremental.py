"""A merged state kept up to date event by event (`StateBuilder`) is byte for byte the
state a full merge of the same events gives (the same `state_sha256`), whatever order claims,
citations, repeats, replacements, withdrawals, equivocations and invalid events arrive in, and
the local registry serves it so over HTTP, also after a restart."""

from __future__ import annotations

import copy
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import httpx
from hypothesis import given, settings
from hypothesis import strategies as st
from support.examples_budget import examples
from support.registry import (
    CITING,
    SUBJECT,
    T0,
    T1,
    T2,
    TestSigner,
    anchor_event,
    cite_event,
    claim_event,
    start_server,
    storage_event,
)

from pithauthor.protocol.canonical_json import canonical, parse_json
from pithauthor.protocol.checks.merge import StateBuilder, merge_state, order_key
from pithauthor.protocol.checks.state import remerge
from pithauthor.protocol.documents import (
    CORRECTION_LISTS,
    CURRENT_FIELDS,
    EVENT_LISTS,
    REGISTRY_LISTS,
    STATE_FIELDS,
)
from pithauthor.protocol.ids import PithNumber
from pithauthor.protocol.payloads import EVENT_TYPES
from pithauthor.protocol.subject import Subject
from pithauthor.registry.local.answers import (
    load_or_create_key,
    record_created,
    source_aliases,
    state_document,
)
from pithauthor.registry.local.run import add_paper, example_papers
from pithauthor.registry.local.server import RegistryServer
from pithauthor.registry.local.states import served_text
from pithauthor.registry.local.store import RegistryStore
from pithauthor.sign import sign_citation, withdraw

OTHER = PithNumber.from_digest("cd" * 32, 2024)
T3 = "2026-11-29T12:15:00Z"


def _stored(event: dict[str, Any]) -> dict[str, Any]:
    """The event as a store gives it back: read from its canonical text (keys sorted)."""
    parsed: dict[str, Any] = parse_json(canonical(event))
    return parsed


def _pool() -> dict[str, dict[str, Any]]:
    """Events of every kind the merge tells apart, by name."""
    ada, bob = TestSigner(b"a" * 32), TestSigner(b"b" * 32)
    claim = claim_event(ada, 2)
    cite = cite_event(bob, "extends")
    other = dict(sign_citation(bob, SUBJECT, OTHER, "cites", created_at=T1))
    never_stored = cite_event(ada, "cites", T0)
    tampered = copy.deepcopy(cite_event(ada, "supports", T1))
    tampered["payload"]["relationship"] = "refutes"  # the signature no longer holds
    elsewhere = Subject(PithNumber.from_digest("ef" * 32, 2023), "ef" * 32)
    pool = {
        "claim": claim,
        "claim_again": claim_event(ada, 2, T1),  # a repeat
        "claim_conflict": claim_event(ada, 4, T1),  # an equivocation
        "claim_fixed": claim_event(ada, 3, T2, replaces=claim["event_id"]),
        "cite": cite,
        "cite_gone": dict(withdraw(bob, cite, created_at=T2)),
        "other": other,
        "other_fixed": dict(
            sign_citation(
                bob, SUBJECT, OTHER, "supports", created_at=T3, replaces=other["event_id"]
            )
        ),
        "other_fixed_early": dict(  # older than what it replaces: invalid (replaces_order)
            sign_citation(bob, SUBJECT, OTHER, "refutes", created_at=T0, replaces=other["event_id"])
        ),
        "unknown_link": cite_event(ada, "extends", T2, replaces=never_stored["event_id"]),
        "tampered": tampered,  # invalid: signature
        "elsewhere": dict(sign_citation(ada, elsewhere, CITING, "cites", created_at=T1)),
        "anchor": anchor_event(ada, b"proof one", T0),
        "anchor_again": anchor_event(ada, b"proof two", T2),  # another proof: the same claim
        "stored": storage_event(bob, b"the PDF", T1),
        "stored_conflict": storage_event(bob, b"another PDF", T2),  # an equivocation
        "stored_later": storage_event(bob, b"the PDF", T3, "20261129121500"),  # its own slot
    }
    return {name: _stored(event) for name, event in pool.items()}


POOL = _pool()


def _record() -> tuple[dict[str, Any], Any, Any]:
    """What merging needs of the example paper 2302.12445 (kwargs), its record and key."""
    import tempfile

    data = Path(tempfile.mkdtemp(prefix="pith-incr-")) / "reg"
    key = load_or_create_key(data)
    rec, _ = add_paper(
        RegistryStore(data), key, next(p for p in example_papers() if "2302" in p.name)
    )
    kwargs = {
        "pith_number": rec.pith_number,
        "canonical_record": rec.canonical_record,
        "record_created": record_created(rec, key),
        "source_aliases": source_aliases(rec),
    }
    return kwargs, rec, key


RECORD, _, _ = _record()


def test_every_builder_of_a_state_writes_its_fields_in_the_one_layout() -> None:
    # the layout is the order `MergedState` and `StateCurrent` declare (documents.py): the
    # batch merge, the recomputation of `pith verify` and the incremental builder all follow
    # it, with every optional list present here (a correction, a withdrawal, a repeat)
    events = list(POOL.values())
    state = merge_state(**RECORD, events=events)
    assert all(state.get(name) for name in CORRECTION_LISTS)
    assert STATE_FIELDS[-len(CORRECTION_LISTS) :] == CORRECTION_LISTS
    assert list(state) == list(STATE_FIELDS)
    assert list(state["current"]) == list(CURRENT_FIELDS)
    served = json.loads(StateBuilder(**RECORD, events=events, encode=served_text).document()[0])
    assert list(served) == list(STATE_FIELDS)
    assert list(served["current"]) == list(CURRENT_FIELDS)
    again = remerge(state, hashed=False)
    assert list(again) == [name for name in STATE_FIELDS if name != "state_sha256"]
    assert isinstance(again["current"], dict)
    assert list(again["current"]) == list(CURRENT_FIELDS)
    # `current` is the record's parts, then one list per author event type, then the
    # registry's lists: the constants the checks walk are the type's fields
    assert (
        "canonical_record",
        "source_aliases",
        "record_created",
        *EVENT_LISTS.values(),
        *REGISTRY_LISTS,
    ) == CURRENT_FIELDS
    assert set(EVENT_LISTS) == set(EVENT_TYPES)


def _full(events: Sequence[dict[str, Any]]) -> tuple[bytes, str]:
    state = merge_state(**RECORD, events=events)
    return served_text(state).encode("utf-8"), state["state_sha256"]


def _feed(events: Sequence[dict[str, Any]], restart: int = 0) -> tuple[StateBuilder, list[bool]]:
    """Events given one by one to a builder; where it declines one, a new builder merges all so
    far (as the registry does). Each step is compared with a full merge, and with the builder
    restored from its pieces; `restart`: every so many steps, go on from the restored one."""
    builder = StateBuilder(**RECORD, events=[], encode=served_text)
    taken: list[bool] = []
    for n, event in enumerate(events, 1):
        added = builder.add(event)
        taken.append(added)
        if not added:
            builder = StateBuilder(**RECORD, events=events[:n], encode=served_text)
        body, sha = builder.document()
        want_body, want_sha = _full(events[:n])
        assert sha == want_sha
        assert body == want_body
        kept = StateBuilder.restored(  # as a restarted registry serves it from the store
            **RECORD,
            encode=served_text,
            pieces=list(builder.pieces()),
            valid_count=builder.valid_count,
            last=builder.last,
            awaited=builder.awaited,
        )
        assert kept.document() == (body, sha)
        if (
            restart and n % restart == 0
        ):  # and goes on from it: a restored builder takes the next event
            builder = kept
    return builder, taken


def test_events_in_time_order_are_each_added_without_a_full_merge_and_equal_one() -> None:
    names = [
        "claim",
        "cite",
        "other",
        "claim_again",
        "claim_conflict",
        "claim_fixed",
        "cite_gone",
        "other_fixed",
        "anchor",
        "anchor_again",
        "stored",
        "stored_later",
    ]
    events = sorted((POOL[n] for n in names), key=order_key)
    builder, taken = _feed(events)
    assert all(taken), taken
    state = json.loads(builder.document()[0])
    # both anchors of one key stand (one claim: the record's hash), both captures too
    assert [e["event_id"] for e in state["current"]["timestamp_anchors"]] == [
        POOL["anchor"]["event_id"],
        POOL["anchor_again"]["event_id"],
    ]
    assert len(state["current"]["storage_attestations"]) == 2
    assert state["equivocation_count"] == 1
    assert len(state["duplicates"]) == 1
    assert {s["how"] for s in state["superseded"]} == {"replaced", "withdrawn"}
    assert [e["event_id"] for e in state["current"]["author_attestations"]] == [
        POOL["claim_fixed"]["event_id"]
    ]
    # restored from its pieces after every event (a restart each time), the same states
    _, taken = _feed(events, restart=1)
    assert not all(taken)  # a restored builder declines corrections: merged in full


def test_what_a_fold_cannot_simply_take_is_declined_and_merged_in_full() -> None:
    table = [
        # (events before, the event, why it is declined)
        (["claim_again"], "claim", "dated before an event merged, in a slot used"),
        ([], "tampered", "invalid: signature"),
        ([], "elsewhere", "invalid: another subject"),
        (["other"], "other_fixed_early", "a link that breaks a rule"),
        ([], "unknown_link", "a link to an event not merged"),
    ]
    for before, name, why in table:
        events = [POOL[n] for n in before]
        builder = StateBuilder(**RECORD, events=events, encode=served_text)
        assert not builder.add(POOL[name]), why
        assert builder.document() == _full(events), why  # declined: nothing changed
    # dated before, in a slot of its own (a batch signed in one second, sent in any order):
    # placed where it belongs, no full merge
    builder = StateBuilder(**RECORD, events=[POOL["claim_fixed"]], encode=served_text)
    assert builder.add(POOL["cite"])
    assert builder.document() == _full([POOL["claim_fixed"], POOL["cite"]])
    # a replacement that came before its target: the target makes it valid (a full merge)
    early = sorted([POOL["other"], POOL["other_fixed"]], key=order_key)
    builder = StateBuilder(**RECORD, events=[POOL["other_fixed"]], encode=served_text)
    assert json.loads(builder.document()[0])["invalid_event_count"] == 1
    assert not builder.add(POOL["other"])
    assert _full(early)[1] != _full([POOL["other_fixed"]])[1]


@settings(max_examples=examples(300), deadline=None)
@given(
    st.lists(st.sampled_from(sorted(POOL)), unique=True, max_size=len(POOL)),
    st.booleans(),
    st.integers(0, 2),
)
def test_any_arrival_order_gives_the_state_a_full_merge_gives(
    names: list[str], in_time_order: bool, restart: int
) -> None:
    events = [POOL[n] for n in names]
    if in_time_order:  # how events mostly arrive: then most are added one by one
        events.sort(key=order_key)
    _feed(events, restart)


def _post(client: httpx.Client, body: str, event: dict[str, Any]) -> int:
    url = f"/pith/{body}/action/{event['event_type']}"
    return client.post(url, json=event, headers={"Idempotency-Key": event["event_id"]}).status_code


def _served_is_full_merge(server: RegistryServer, body: str) -> bytes:
    rec = server.store.find(body)
    assert rec is not None
    full = state_document(rec, server.key, server.store.events(body), stored=True)
    answer = httpx.get(f"{server.url}/pith/{body}/state.json", timeout=60)
    assert answer.status_code == 200
    assert answer.content == served_text(full).encode("utf-8")
    assert json.loads(answer.content)["state_sha256"] == full["state_sha256"]
    return answer.content


def test_the_registry_serves_the_full_merge_byte_for_byte_also_after_a_restart(
    tmp_path: Path,
) -> None:
    data = tmp_path / "reg"
    server = start_server(data)
    body = SUBJECT.pith_number.body
    order = [
        "claim",
        "cite",
        "other",
        "claim_again",
        "claim_conflict",
        "claim_fixed",
        "cite_gone",
        "other_fixed",
        "anchor",
        "anchor_again",
        "stored",
        "stored_conflict",
    ]
    try:
        with httpx.Client(base_url=server.url) as client:
            _served_is_full_merge(server, body)
            for name in sorted(order, key=lambda n: order_key(POOL[n])):  # as signed
                assert _post(client, body, POOL[name]) == 201, name
                _served_is_full_merge(server, body)
        assert server.states.full_merges == 1  # the first read; every POST was added
        before = _served_is_full_merge(server, body)
    finally:
        server.stop()
    again = RegistryServer(data)
    again.start()
    try:
        assert _served_is_full_merge(again, body) == before
        assert again.states.full_merges == 0  # served from the pieces kept in the store
        later = cite_event(TestSigner(b"c" * 32), "uses_method", "2026-11-29T12:20:00Z")
        again_ada = claim_event(TestSigner(b"a" * 32), 2, "2026-11-29T12:25:00Z")  # held: 3
        with httpx.Client(base_url=again.url) as client:
            assert _post(client, body, later) == 201
            assert _served_is_full_merge(again, body) != before
            assert _post(client, body, _stored(again_ada)) == 201
            # the slot (read back from the kept text) says position 3 now: an equivocation
            # (the third: the claim's, and the storage attestation's before the restart)
            assert json.loads(_served_is_full_merge(again, body))["equivocation_count"] == 3
        assert again.states.full_merges == 0  # plain statements go on from the kept state
    finally:
        again.stop()


def _same_second() -> dict[str, dict[str, Any]]:
    """Events signed in one second (a `pith cite` batch: each its own slot), with an
    authorship claim and a contradicting one of that second too, and two of a later second."""
    bob, ada = TestSigner(b"b" * 32), TestSigner(b"a" * 32)

    def cite(i: int, when: str) -> dict[str, Any]:
        citing = PithNumber.from_digest(f"{i:02x}" * 32, 2024)
        return dict(sign_citation(bob, SUBJECT, citing, "cites", created_at=when))

    batch = {f"cite{i}": cite(i, T0) for i in range(10)}
    batch["claim"] = claim_event(ada, 2, T0)
    batch["claim_conflict"] = claim_event(ada, 4, T0)
    batch |= {f"later{i}": cite(i, T1) for i in (10, 11)}
    return {name: _stored(event) for name, event in batch.items()}


SAME_SECOND = _same_second()


@settings(max_examples=examples(200), deadline=None)
@given(st.permutations(sorted(SAME_SECOND)), st.integers(0, 3))
def test_events_of_one_second_posted_in_any_order_give_the_batch_merge(
    names: list[str], restart: int
) -> None:
    # every step is compared with `merge_state` of the events so far, byte for byte, also as
    # restored from the pieces (`_feed`), and `restart` makes it go on from a restored builder
    events = [SAME_SECOND[n] for n in names]
    builder, _ = _feed(events, restart)
    assert builder.document() == _full(events)


def test_a_same_second_batch_in_reverse_is_placed_without_a_full_merge_also_after_restarts() -> (
    None
):
    # each citation is dated before (a smaller event_id) the last one merged, in a slot of its
    # own: placed, never merged in full, also by a builder restored from its pieces after each
    cites = sorted((e for n, e in SAME_SECOND.items() if n.startswith("cite")), key=order_key)
    for restart in (0, 1):
        _, taken = _feed(list(reversed(cites)), restart)
        assert all(taken), (restart, taken)


@settings(max_examples=examples(100), deadline=None)
@given(st.permutations(sorted(SAME_SECOND)), st.integers(0, len(SAME_SECOND)), st.booleans())
def test_a_restored_builder_joined_at_once_and_written_between_events_gives_the_batch_merge(
    names: list[str], split: int, write_first: bool
) -> None:
    # what a restarted registry does: the builder restored from its pieces joins them at once
    # (`join_pending`, in the POST that restores it), then takes events, each write joining
    # only what came since; an event placed before items already joined (a same-second one),
    # or one that supersedes, makes its part joined again: every write is the batch merge's
    events = [SAME_SECOND[n] for n in names]
    builder = StateBuilder(**RECORD, events=events[:split], encode=served_text)
    if write_first:
        assert builder.document() == _full(events[:split])
    kept = StateBuilder.restored(
        **RECORD,
        encode=served_text,
        pieces=list(builder.pieces()),
        valid_count=builder.valid_count,
        last=builder.last,
        awaited=builder.awaited,
    )
    kept.join_pending()
    for n in range(split + 1, len(events) + 1):
        if not kept.add(events[n - 1]):
            kept = StateBuilder(**RECORD, events=events[:n], encode=served_text)
            kept.join_pending()
        parts, sha = kept.document_parts()
        assert (b"".join(parts), sha) == _full(events[:n])
    assert kept.document() == _full(events)
