"""A local state's hash, written around the canonical text its events' checks proved
(`checks.state.state_sha256`), is the plain serialisation's, and `check_state` reports what it
reported with the plain serialisation alone, check for check.

The states are generated: a merged state with every list the merge writes (citations, a repeat,
an equivocation, an attestation, a withdrawal, an invalid event), then changed where a reader
could change it: a value anywhere at the top or in `current` (text with characters JSON
escapes, numbers, nested objects with non-text keys...), a field of an event of `current`'s
lists (re-signed or not), an event swapped for another kind of value, `current` itself. The
events' own texts are held to `json.dumps` in tests/unit/protocol/test_checks_event_fast_path.py.
"""

from __future__ import annotations

import contextlib
import copy
import hashlib
import json
import types
from typing import Any
from unittest import mock

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from support.examples_budget import examples
from support.registry import T1, TestSigner, citation, cite_event, claim_event, make_state

from pithauthor.protocol.canonical_json import b64encode, canonical
from pithauthor.protocol.checks import state as state_module
from pithauthor.protocol.checks.contents import check_author_at
from pithauthor.protocol.checks.merge import CheckedEntry
from pithauthor.protocol.checks.state import check_state, state_sha256
from pithauthor.protocol.events import SIGNED_FIELDS
from pithauthor.protocol.verdict import Report, Trust
from pithauthor.sign import withdraw

SIGNER = TestSigner(b"s" * 32)
OTHER = TestSigner(b"o" * 32)
LISTS = ("author_attestations", "citation_signatures", "replication_records")


@pytest.fixture(scope="module")
def base(tmp_path_factory: pytest.TempPathFactory) -> tuple[dict[str, Any], Trust]:
    gone = cite_event(SIGNER, "extends")
    events = [
        *(citation(SIGNER, i) for i in range(4)),
        citation(SIGNER, 0, created_at=T1),  # the same statement again: a duplicate
        citation(SIGNER, 1, relationship="extends", created_at=T1),  # an equivocation
        claim_event(OTHER, 2),
        gone,
        dict(withdraw(SIGNER, gone, created_at=T1)),
        {**citation(OTHER, 9), "signature": {}},  # invalid
    ]
    state, trust = make_state(tmp_path_factory.mktemp("state"), events)
    for name in ("duplicates", "equivocations", "invalid_events", "withdrawals", "superseded"):
        assert state.get(name), name  # the generated states hold every list the merge writes
    assert check_state(state, trust).ok
    return state, trust


def _plain_hash(state: dict[str, Any]) -> str:
    body = {k: v for k, v in state.items() if k != "state_sha256"}
    return hashlib.sha256(
        json.dumps(body, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode()
    ).hexdigest()


def _checked(state: dict[str, Any]) -> dict[int, CheckedEntry]:
    """What `check_state` keeps of the events of `current`'s lists."""
    checked: dict[int, CheckedEntry] = {}
    for name in LISTS:
        for event in state["current"].get(name) or []:
            check_author_at(Report("state"), event, "e", None, None, None, checked)
    return checked


def test_a_merged_states_hash_is_written_from_the_texts_its_checks_proved(
    base: tuple[dict[str, Any], Trust],
) -> None:
    """The shortcut is taken (else the generated test below compares the plain path with
    itself): every citation of `current` has its text from its check (an attestation, which
    the tight path does not take, is serialised), and the hash is the one `merge_state`
    wrote."""
    state, _ = base
    checked = _checked(state)
    cited = state["current"]["citation_signatures"]
    assert len(cited) >= 3 and all(checked[id(e)][3] is not None for e in cited)
    assert [checked[id(e)][3] for e in state["current"]["author_attestations"]] == [None]
    with mock.patch.object(state_module, "canonical_sha256", side_effect=AssertionError):
        assert state_sha256(state, checked) == state["state_sha256"] == _plain_hash(state)


def _reseal_event(event: dict[str, Any]) -> None:
    try:
        digest = hashlib.sha256(canonical({k: event[k] for k in SIGNED_FIELDS})).digest()
    except (KeyError, TypeError, ValueError):
        return
    event["event_id"] = "sha256:" + digest.hex()
    if isinstance(event.get("signature"), dict):
        event["signature"]["signature_b64"] = b64encode(SIGNER.sign_digest(digest))


TEXTS = st.text(alphabet=st.sampled_from('ab"\\\n\x00\u2028\u00e9\U0001f600 /:'), max_size=6)
VALUES = st.recursive(
    st.one_of(
        TEXTS,
        st.integers(),
        st.floats(),  # NaN and the infinities too: both serialisations write them alike
        st.none(),
        st.booleans(),
    ),
    lambda inner: st.one_of(
        st.lists(inner, max_size=3),
        st.dictionaries(TEXTS, inner, max_size=3),
        st.dictionaries(st.integers(0, 3), inner, max_size=2),  # keys that are not text
    ),
    max_leaves=6,
)


def _event_places(state: dict[str, Any]) -> list[tuple[str, int]]:
    return [(name, i) for name in LISTS for i in range(len(state["current"][name]))]


def _text_keys(obj: dict[Any, Any]) -> st.SearchStrategy[str]:
    """One of the object's own text keys, or another text."""
    keys = sorted(k for k in obj if type(k) is str)
    return st.one_of(st.sampled_from(keys), TEXTS) if keys else TEXTS


@st.composite
def _changed(draw: st.DrawFn, state: dict[str, Any]) -> dict[str, Any]:
    places = _event_places(state)
    state = copy.deepcopy(state)
    current = state["current"]
    for _ in range(draw(st.integers(1, 3))):
        how = draw(st.sampled_from(["top", "current", "event", "event", "swap", "odd"]))
        if how in ("top", "current"):
            target = state if how == "top" else current
            if not isinstance(target, dict):
                continue
            key = draw(_text_keys(target))
            target[key] = draw(VALUES)
        elif how == "event" and isinstance(current, dict):
            name, index = draw(st.sampled_from(places))
            items = current.get(name)
            event = items[index] if isinstance(items, list) and index < len(items) else None
            if not isinstance(event, dict):
                continue
            where = draw(st.sampled_from(["", "signer", "signature", "payload"]))
            block = event if not where else event.get(where)
            if not isinstance(block, dict):
                continue
            field = draw(_text_keys(block))
            old = block.get(field)
            new = draw(st.one_of(VALUES, TEXTS.map(lambda t, o=old: f"{o}{t}")))
            block[field] = new
            if draw(st.booleans()):
                _reseal_event(event)
        elif how == "swap" and isinstance(current, dict):
            name = draw(st.sampled_from(LISTS))
            items = current.get(name)
            if isinstance(items, list) and items:
                items[draw(st.integers(0, len(items) - 1))] = draw(VALUES)
        elif how == "odd":
            choice = draw(st.sampled_from(["proxy", "int key", "list"]))
            if choice == "proxy" and isinstance(current, dict):  # a Mapping, not a dict
                state["current"] = types.MappingProxyType(current)
            elif choice == "int key" and isinstance(current, dict):
                current[7] = "a key that is not text"
            elif choice == "list":
                state["current"] = list(LISTS)
    if draw(st.booleans()):  # as anyone can: the state's hash made to fit the change
        with contextlib.suppress(TypeError, ValueError):
            state["state_sha256"] = _plain_hash(state)
    return state


@settings(
    max_examples=examples(400),
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(data=st.data())
def test_a_changed_states_hash_and_report_are_the_plain_serialisations(
    base: tuple[dict[str, Any], Trust], data: st.DataObject
) -> None:
    state = data.draw(_changed(base[0]))
    trust = base[1]
    with mock.patch.object(state_module, "_state_pieces", return_value=None):
        reference = _outcome(state, trust)  # the plain serialisation alone
    assert _outcome(state, trust) == reference
    try:
        plain = _plain_hash(state)
        report = check_state(state, trust)
    except (TypeError, ValueError):
        return  # refused alike (above); a few changes make `check_state` itself raise
    (hashed,) = [c for c in report.checks if c.name == "state_sha256"]
    assert hashed.detail.endswith(f" = {plain}")
    assert (hashed.status == "passed") == (state.get("state_sha256") == plain)


def _outcome(state: Any, trust: Trust) -> str:
    """What `pith verify --json` prints of the state, or the error it meets."""
    try:
        return json.dumps(check_state(state, trust).as_dict())
    except (TypeError, ValueError) as exc:
        return f"{type(exc).__name__}: {exc}"


def test_an_events_text_is_used_only_for_the_object_it_was_proved_on(
    base: tuple[dict[str, Any], Trust],
) -> None:
    """A text kept for an event is never taken for another object (an equal copy, or one that
    now has the id of an object gone): the entry holds its event and is matched by identity."""
    state = copy.deepcopy(base[0])
    checked = _checked(state)
    events = state["current"]["citation_signatures"]
    first = events[0]
    entry = checked[id(first)]
    events[0] = copy.deepcopy(first)
    events[0]["payload"]["relationship"] = "extends"
    checked[id(events[0])] = (first, *entry[1:])  # an id naming another object's entry
    assert state_sha256(state, checked) == _plain_hash(state) != base[0]["state_sha256"]


def test_the_state_sha256_check_keeps_its_place(base: tuple[dict[str, Any], Trust]) -> None:
    """Decided after the events, reported where it always was: second, after `required`."""
    state, trust = base
    names = [c.name for c in check_state(state, trust).checks]
    assert names[:3] == ["required", "state_sha256", "state_type"]
    edited = {**state, "current": "not an object"}
    checks = check_state(edited, trust).checks
    assert [c.name for c in checks][:2] == ["required", "state_sha256"]
    assert checks[1].status == "failed" and checks[1].detail.endswith(_plain_hash(edited))
