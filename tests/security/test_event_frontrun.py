"""Front-running the real local registry: variants of an author's event sent before it.

A third party who sees an author's signed event (on the wire, in a shared outbox file, in a
preprint's supplementary data) races to send variants of it first: the same event_id with
unsigned fields added, the signature re-spelled, or text other readers would read differently.
Each is refused with a JSON 4xx and never stored; the genuine event is then accepted, and the
served state and bundle hold not one byte of any variant (every variant carries a marker).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from support.registry import (
    REAL_NUMBER,
    TestSigner,
    attestation,
    citation,
    replication,
    start_server,
)
from support.tamper_counts import count

from pithauthor.net import RetryPolicy
from pithauthor.protocol.canonical_json import canonical, parse_json
from pithauthor.registry.client import RegistryClient
from pithauthor.registry.local.server import RegistryServer
from pithauthor.registry.submit import store_in_outbox, submit_pending
from pithauthor.verify import pinned_trust

BODY = REAL_NUMBER.rsplit(":", 1)[1]
MARK = "FRONTRUN"  # every variant carries MARK + a number; none may ever be served
Event = dict[str, Any]


@pytest.fixture
def server(tmp_path: Path) -> Iterator[RegistryServer]:
    srv = start_server(tmp_path / "reg")
    yield srv
    srv.stop()


def _with(change: Callable[[Event], None]) -> Callable[[Event], str]:
    def make(event: Event) -> str:
        copy: Event = json.loads(json.dumps(event))
        change(copy)
        return json.dumps(copy, ensure_ascii=False)

    return make


def respelled(signature_b64: str) -> str:
    """The same 64 bytes in base64 with an unused bit of the last character set."""
    alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
    last = alphabet[alphabet.index(signature_b64[-3]) ^ 1]
    return signature_b64[:-3] + last + "=="


def _respell(event: Event) -> None:
    event["signature"]["signature_b64"] = respelled(event["signature"]["signature_b64"])


def _text(event: Event, old: str, new: str) -> str:
    text = json.dumps(event, ensure_ascii=False)
    assert old in text
    return text.replace(old, new, 1)


def variants(event: Event) -> dict[str, str]:
    """Name -> body text of each unsigned variant of `event` (same event_id), each marked with
    MARK (the re-spelled signature is its own mark)."""
    first = next(iter(event["payload"]))  # "payload_schema"
    found = {
        "extra top-level field": _with(lambda e: e.update(note=f"{MARK}1")),
        "extra signer field": _with(lambda e: e["signer"].update(display=f"{MARK}2")),
        "extra signature field": _with(lambda e: e["signature"].update(comment=f"{MARK}3")),
        "extra payload field": _with(lambda e: e["payload"].update(note=f"{MARK}4")),
        "signature re-spelled (non-zero padding bits)": _with(_respell),
        "NaN": lambda e: _text(e, '"payload": {', f'"payload": {{"{MARK}5": NaN, '),
        "huge integer": lambda e: _text(
            e, '"payload": {', f'"payload": {{"{MARK}6": {"9" * 5000}, '
        ),
        "lone surrogate": lambda e: _text(
            e, '"payload": {', f'"payload": {{"{MARK}7": "\\ud800", '
        ),
        "duplicate key, marker first": lambda e: _text(
            e, f'"{first}": ', f'"{first}": "{MARK}8", "{first}": '
        ),
        "duplicate key, marker last": lambda e: _text(
            e, '"signature": {', f'"signature": "{MARK}9", "signature": {{'
        ),
        "too deep": lambda e: _text(
            e, '"payload": {', f'"payload": {{"{MARK}10": {"[" * 100}{"]" * 100}, '
        ),
    }
    return {name: make(event) for name, make in found.items()}


def post(srv: RegistryServer, event_id: str, kind: str, body: str) -> httpx.Response:
    return httpx.post(
        f"{srv.url}/pith/{BODY}/action/{kind}",
        content=body.encode("utf-8", "surrogatepass"),
        headers={"Idempotency-Key": event_id, "Content-Type": "application/json"},
        timeout=10,
    )


def served(srv: RegistryServer) -> tuple[str, str]:
    state = httpx.get(f"{srv.url}/pith/{BODY}/state.json", timeout=10)
    bundle = httpx.get(f"{srv.url}/pith/{BODY}/bundle.json", timeout=10)
    assert state.status_code == bundle.status_code == 200
    return state.text, bundle.text


def embedded(doc: Any) -> list[Event]:
    """Every author event (an object with `event_id` and a `signer`) anywhere in `doc`."""
    if isinstance(doc, list):
        return [e for item in doc for e in embedded(item)]
    if not isinstance(doc, dict):
        return []
    if "event_id" in doc and "signer" in doc and doc["signer"].get("signer_type") == "author":
        return [doc]
    return [e for value in doc.values() for e in embedded(value)]


def genuine_events() -> list[Event]:
    signer = TestSigner()
    return [attestation(signer), citation(signer, 1), replication(signer)]


@pytest.mark.slow
def test_every_unsigned_variant_is_refused_and_the_genuine_event_then_accepted(
    server: RegistryServer,
) -> None:
    """Slow: every unsigned variant of every event POSTed to a local registry."""
    tried = refused = 0
    events = genuine_events()
    for done, event in enumerate(events):
        kind, eid = event["event_type"], event["event_id"]
        for name, body in variants(event).items():
            assert MARK in body or respelled(event["signature"]["signature_b64"]) in body, name
            answer = post(server, eid, kind, body)
            tried += 1
            assert 400 <= answer.status_code < 500, (name, answer.status_code, answer.text)
            assert "error" in parse_json(answer.content), name  # a JSON error, one rule
            refused += 1
            assert server.store.event_count() == done, name  # nothing of it stored
        answer = post(server, eid, kind, json.dumps(event))
        assert answer.status_code == 201, answer.text
        assert parse_json(answer.content)["event_id"] == eid
    count("registry front-running: unsigned variants POSTed first", tried=tried, refused=refused)
    assert tried == 3 * 11

    state, bundle = served(server)
    for text in (state, bundle):
        assert MARK not in text
        assert not any(respelled(e["signature"]["signature_b64"]) in text for e in events)
        parse_json(text)  # strict JSON for every reader: no NaN, no big integer, no surrogate
    rows = server.store._conn().execute("SELECT event_id, raw FROM events").fetchall()
    assert sorted(rows) == sorted((e["event_id"], canonical(e).decode("utf-8")) for e in events)
    for text in (state, bundle):
        author_events = [e for e in embedded(parse_json(text)) if e["event_id"] != "record"]
        assert sorted(author_events, key=canonical) == sorted(events, key=canonical)


def test_a_reformatted_copy_sent_first_is_the_same_event_and_served_canonical(
    server: RegistryServer,
) -> None:
    """Key order and white space are not part of an event: a reordered, indented copy sent
    first is stored as canonical bytes, and the genuine event is answered 200, not refused."""
    event = citation(TestSigner(), 2)
    shuffled = dict(reversed(list(event.items())))
    first = post(server, event["event_id"], event["event_type"], json.dumps(shuffled, indent=3))
    assert first.status_code == 201, first.text
    again = post(server, event["event_id"], event["event_type"], json.dumps(event))
    assert again.status_code == 200, again.text
    assert parse_json(again.content)["duplicate"] is True
    row = server.store._conn().execute("SELECT raw FROM events").fetchall()
    assert row == [(canonical(event).decode("utf-8"),)]


def test_submit_of_the_genuine_event_succeeds_after_every_variant(
    server: RegistryServer, tmp_path: Path
) -> None:
    """The author's own `pith submit` path (outbox -> client -> registry) ends `accepted`, never
    `rejected for good`, however many variants came first."""
    event = attestation(TestSigner())
    for body in variants(event).values():
        assert post(server, event["event_id"], event["event_type"], body).is_client_error
    store_in_outbox([event], server.url)
    policy = RetryPolicy(max_attempts=2, base_delay=0.01, max_delay=0.05)
    with RegistryClient(server.url, trust=pinned_trust(), retry=policy) as client:
        client.trust_local_registry()
        result = submit_pending(client=client)
    assert result.ok, result.summary()
    state, bundle = served(server)
    assert MARK not in state and MARK not in bundle
    assert event["event_id"] in state
