"""The local registry takes the two events of the record page's checklist (a timestamp anchor,
a storage attestation) through the actions its records name, serves each in its own list of
the merged state (a state `pith verify` recomputes), and answers a repeat as a repeat."""

from __future__ import annotations

import copy
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from support.registry import (
    REAL_NUMBER,
    TestSigner,
    anchor_event,
    start_server,
    storage_event,
)

from pithauthor.protocol.checks.state import check_state
from pithauthor.protocol.verdict import Trust
from pithauthor.registry.client import ACTION_NAMES
from pithauthor.registry.local.server import RegistryServer
from pithauthor.verify import pinned_trust

BODY = REAL_NUMBER.rsplit(":", 1)[1]


@pytest.fixture
def server(tmp_path: Path) -> Iterator[RegistryServer]:
    srv = start_server(tmp_path / "reg")
    yield srv
    srv.stop()


def _post(srv: RegistryServer, event: dict, action: str) -> httpx.Response:
    return httpx.post(action, json=event, headers={"Idempotency-Key": event["event_id"]})


def _actions(srv: RegistryServer) -> dict[str, str]:
    record = httpx.get(f"{srv.url}/pith/{BODY}").json()
    actions: dict[str, str] = record["agent_actions"]["actions"]
    return actions


def test_records_name_both_actions_where_the_client_sends_each_type(
    server: RegistryServer,
) -> None:
    actions = _actions(server)
    assert ACTION_NAMES["timestamp_anchor"] == "anchor_timestamp"
    assert ACTION_NAMES["storage_attestation"] == "attest_storage"
    page = f"{server.url}/pith/{BODY}/action"
    assert actions["anchor_timestamp"] == f"{page}/timestamp_anchor"
    assert actions["attest_storage"] == f"{page}/storage_attestation"


@pytest.mark.parametrize(
    ("make", "action", "listed"),
    [
        (lambda s: anchor_event(s, b"a proof"), "anchor_timestamp", "timestamp_anchors"),
        (lambda s: storage_event(s, b"the PDF"), "attest_storage", "storage_attestations"),
    ],
    ids=["timestamp_anchor", "storage_attestation"],
)
def test_each_checklist_event_is_accepted_served_in_its_list_and_a_repeat_is_a_repeat(
    server: RegistryServer, make: object, action: str, listed: str
) -> None:
    event = make(TestSigner())  # type: ignore[operator]
    url = _actions(server)[action]
    first, again = _post(server, event, url), _post(server, event, url)
    assert (first.status_code, again.status_code) == (201, 200)
    assert (first.json()["duplicate"], again.json()["duplicate"]) == (False, True)
    state = httpx.get(f"{server.url}/pith/{BODY}/state.json").json()
    assert state["current"][listed] == [event]
    others = {"timestamp_anchors", "storage_attestations"} - {listed}
    assert all(state["current"][name] == [] for name in others)
    assert event["event_id"] in state["applied_event_ids"]
    assert event in httpx.get(f"{server.url}/pith/{BODY}/bundle.json").json()["events"]
    # the state verifies, its merge recomputed from its events (anchors and captures included)
    manifest = httpx.get(server.url + "/pith-mirrors.json").json()
    trust = pinned_trust().with_keys(Trust.from_manifest(manifest, local=True).keys.values())
    report = check_state(state, trust)
    assert report.ok, report.failed
    assert any(c.name == "merge" and c.status == "passed" for c in report.checks)


def test_a_bad_payload_of_each_type_is_refused_naming_the_check(server: RegistryServer) -> None:
    signer = TestSigner()
    anchor = anchor_event(signer, b"a proof")
    # a capture URL that is not its url's Wayback form: resigned, so only that rule breaks
    moved = storage_event(signer, b"the PDF")
    moved_payload = copy.deepcopy(moved["payload"])
    moved_payload["captures"][0]["capture_url"] = "https://web.archive.org/web/1/elsewhere"
    from pithauthor.protocol.events import seal

    unsigned = {k: moved[k] for k in moved if k not in ("event_id", "signature")}
    unsigned["payload"] = moved_payload
    bad_storage = dict(seal(unsigned, signer))  # type: ignore[arg-type]
    bad_anchor = copy.deepcopy(anchor)
    bad_anchor["payload"]["opentimestamps"][0]["complete"] = False
    actions = _actions(server)
    refused = _post(server, bad_anchor, actions["anchor_timestamp"])
    assert refused.status_code == 422
    assert "payload_schema" in refused.json()["failed_checks"]
    refused = _post(server, bad_storage, actions["attest_storage"])
    assert refused.status_code == 422
    assert refused.json()["failed_checks"] == ["payload_captures"]
    # an anchor sent to the storage action is refused too (the action names the type)
    wrong = _post(server, anchor, actions["attest_storage"])
    assert wrong.status_code == 422
    assert "action_kind" in wrong.json()["failed_checks"]
    assert server.store.event_count() == 0
