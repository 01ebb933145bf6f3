"""The local registry's cache of merged states and bundles (pithauthor.registry.local.store), over
real HTTP: after every kind of new event (claim, citation, replacement, withdrawal, an event the
merge finds invalid, a refused one, a repeat, one stored by another process) the state and the
bundle served equal ones merged afresh from the store, and a read with nothing new is served
from the cache instead of merging again."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from support.registry import REAL_NUMBER, SUBJECT, TestSigner, start_server

from pithauthor.protocol.ids import PithNumber
from pithauthor.registry.local import answers
from pithauthor.registry.local.server import RegistryServer
from pithauthor.registry.local.store import DocumentCache, Encoded, RegistryStore
from pithauthor.sign import attest_authorship, sign_citation, withdraw

BODY = REAL_NUMBER.rsplit(":", 1)[1]
CITING = PithNumber.parse("pith:2022:4O7LE3EHU3JQ243TWCKWFFFE3G")
OTHER = PithNumber.from_digest("ab" * 32, 2024)  # a second citing paper
T0, T1, T2 = "2026-11-29T12:00:00Z", "2026-11-29T12:05:00Z", "2026-11-29T12:10:00Z"


@pytest.fixture
def server(tmp_path: Path) -> Iterator[RegistryServer]:
    srv = start_server(tmp_path / "reg")
    yield srv
    srv.stop()


def _post(client: httpx.Client, event: dict[str, Any]) -> int:
    headers = {"Idempotency-Key": event["event_id"]}
    url = f"/pith/{BODY}/action/{event['event_type']}"
    return client.post(url, json=event, headers=headers).status_code


def _fresh(srv: RegistryServer, kind: str) -> Any:
    """The document merged now from what the store holds, bypassing the cache."""
    rec = srv.store.find(BODY)
    assert rec is not None
    events = srv.store.events(BODY)
    build = answers.state_document if kind == "state" else answers.bundle_document
    return json.loads(json.dumps(build(rec, srv.key, events)))


def _served_equals_fresh(srv: RegistryServer, client: httpx.Client) -> dict[str, Any]:
    """GET state and bundle twice each (the second read is the cache's) and compare each with
    a fresh merge; returns the state."""
    for kind in ("state", "bundle"):
        fresh = _fresh(srv, kind)
        for _ in range(2):
            assert client.get(f"/pith/{BODY}/{kind}.json").json() == fresh
    return client.get(f"/pith/{BODY}/state.json").json()


def _current(state: dict[str, Any], kind: str) -> list[str]:
    return [e["event_id"] for e in state["current"][kind]]


def test_cached_state_and_bundle_equal_a_fresh_merge_after_every_kind_of_event(
    server: RegistryServer,
) -> None:
    ada, mallory = TestSigner(), TestSigner()
    with httpx.Client(base_url=server.url) as client:
        empty = _served_equals_fresh(server, client)  # cached before any event
        assert empty["current"]["author_attestations"] == []

        claim = dict(
            attest_authorship(ada, SUBJECT, name="Ada Lovelace", position=2, created_at=T0)
        )
        assert _post(client, claim) == 201
        state = _served_equals_fresh(server, client)
        assert _current(state, "author_attestations") == [claim["event_id"]]

        cite = dict(sign_citation(ada, SUBJECT, CITING, "extends", created_at=T0))
        assert _post(client, cite) == 201
        state = _served_equals_fresh(server, client)
        assert _current(state, "citation_signatures") == [cite["event_id"]]

        fixed = dict(
            attest_authorship(
                ada, SUBJECT, name="Ada Lovelace", position=3, created_at=T1,
                replaces=claim["event_id"],
            )
        )  # fmt: skip
        assert _post(client, fixed) == 201
        state = _served_equals_fresh(server, client)
        assert _current(state, "author_attestations") == [fixed["event_id"]]

        gone = dict(withdraw(ada, cite, created_at=T1))
        assert _post(client, gone) == 201
        state = _served_equals_fresh(server, client)
        assert state["current"]["citation_signatures"] == []
        assert state["withdrawals"] == [gone]

        # accepted, but invalid in the merge until the event it replaces arrives ...
        later = dict(sign_citation(ada, SUBJECT, OTHER, "cites", created_at=T1))
        early = dict(
            sign_citation(ada, SUBJECT, OTHER, "supports", created_at=T2,
                          replaces=later["event_id"])
        )  # fmt: skip
        assert _post(client, early) == 201
        state = _served_equals_fresh(server, client)
        assert state["invalid_events"][0]["reasons"] == ["replaces_unknown"]
        # ... which changes how an event already stored merges
        assert _post(client, later) == 201
        state = _served_equals_fresh(server, client)
        assert _current(state, "citation_signatures") == [early["event_id"]]
        assert state.get("invalid_events", []) == []

        # refused (another key replacing Ada's claim) and a repeat: nothing changes
        before = state
        hostile = dict(
            attest_authorship(
                mallory, SUBJECT, name="Ada Lovelace", position=3, created_at=T2,
                replaces=fixed["event_id"],
            )
        )  # fmt: skip
        assert _post(client, hostile) == 422
        assert _post(client, fixed) == 200
        assert _served_equals_fresh(server, client) == before


def test_an_event_stored_by_another_process_is_seen_at_the_next_read(
    server: RegistryServer, tmp_path: Path
) -> None:
    """The cache asks the database, not the server's own memory, whether anything changed."""
    with httpx.Client(base_url=server.url) as client:
        _served_equals_fresh(server, client)
        other = RegistryStore(tmp_path / "reg")  # a second handle on the same database
        try:
            cite = dict(sign_citation(TestSigner(), SUBJECT, CITING, "cites", created_at=T0))
            assert other.insert_event(BODY, cite, T0) == "new"  # type: ignore[arg-type]
        finally:
            other.close()
        state = _served_equals_fresh(server, client)
        assert _current(state, "citation_signatures") == [cite["event_id"]]


def test_a_second_read_is_served_without_merging_again_and_a_post_merges_only_its_event(
    server: RegistryServer,
) -> None:
    """One full merge, at the first read; the event POSTed after it is added to the state kept,
    so that neither the POST nor the next read merges the paper again."""
    with httpx.Client(base_url=server.url) as client:
        first = client.get(f"/pith/{BODY}/state.json").content
        for _ in range(3):
            assert client.get(f"/pith/{BODY}/state.json").content == first
        assert server.states.full_merges == 1
        cite = dict(sign_citation(TestSigner(), SUBJECT, CITING, "cites", created_at=T0))
        assert _post(client, cite) == 201
        after = client.get(f"/pith/{BODY}/state.json")
        assert after.content != first
        assert after.json() == _fresh(server, "state")
        assert server.states.full_merges == 1


def test_a_reader_holding_the_current_state_gets_304_until_an_event_arrives(
    server: RegistryServer,
) -> None:
    with httpx.Client(base_url=server.url) as client:
        for kind in ("state", "bundle"):
            first = client.get(f"/pith/{BODY}/{kind}.json")
            tag = first.headers["ETag"]
            again = client.get(f"/pith/{BODY}/{kind}.json", headers={"If-None-Match": tag})
            assert again.status_code == 304 and again.content == b""
            other = client.get(f"/pith/{BODY}/{kind}.json", headers={"If-None-Match": '"x"'})
            assert other.status_code == 200 and other.content == first.content
        tags = {
            k: client.get(f"/pith/{BODY}/{k}.json").headers["ETag"] for k in ("state", "bundle")
        }
        cite = dict(sign_citation(TestSigner(), SUBJECT, CITING, "cites", created_at=T0))
        assert _post(client, cite) == 201
        for kind, tag in tags.items():
            changed = client.get(f"/pith/{BODY}/{kind}.json", headers={"If-None-Match": tag})
            assert changed.status_code == 200
            assert changed.headers["ETag"] != tag
            assert changed.json() == _fresh(server, kind)


def test_the_cache_keeps_a_bounded_number_of_documents_and_never_an_older_one() -> None:
    a5, a4, b1, c1 = (Encoded.of(x) for x in (b"A5", b"A4", b"B1", b"C1"))
    cache = DocumentCache(limit=2)
    cache.put(("a", "state"), 5, a5)
    cache.put(("a", "state"), 4, a4)  # built from older events by a slower reader
    assert cache.get(("a", "state"), 5) == a5
    assert cache.get(("a", "state"), 4) is None
    cache.put(("b", "state"), 1, b1)
    cache.get(("a", "state"), 5)  # a is now the most recently read
    cache.put(("c", "state"), 1, c1)
    assert cache.get(("b", "state"), 1) is None
    assert cache.get(("a", "state"), 5) == a5
    assert cache.get(("c", "state"), 1) == c1
