"""The local registry over real HTTP: documents, POST answers, trust of its key."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from support.registry import REAL_NUMBER, SUBJECT, TestSigner, attestation, citation, start_server

from pithauthor.protocol.checks.record import check_record
from pithauthor.protocol.checks.state import check_state
from pithauthor.protocol.verdict import Trust
from pithauthor.registry.local.server import RegistryServer
from pithauthor.verify import pinned_trust

BODY = REAL_NUMBER.rsplit(":", 1)[1]


@pytest.fixture
def server(tmp_path: Path) -> Iterator[RegistryServer]:
    srv = start_server(tmp_path / "reg")
    yield srv
    srv.stop()


def local_trust(srv: RegistryServer) -> Trust:
    manifest = httpx.get(srv.url + "/pith-mirrors.json").json()
    return pinned_trust().with_keys(Trust.from_manifest(manifest, local=True).keys.values())


def post(
    srv: RegistryServer, event: dict, kind: str | None = None, **headers: str
) -> httpx.Response:
    kind = kind or event["event_type"]
    hdrs = {"Idempotency-Key": event["event_id"], **headers}
    return httpx.post(f"{srv.url}/pith/{BODY}/action/{kind}", json=event, headers=hdrs)


def test_manifest_names_a_local_key_with_a_derived_id(server: RegistryServer) -> None:
    manifest = httpx.get(server.url + "/pith-mirrors.json").json()
    mirror = manifest["mirrors"][0]
    assert mirror["mirror_type"] == "local"
    assert mirror["name"] == "pithauthor local registry"
    assert "local registry" in mirror["notes"]
    fingerprint_b32 = mirror["public_key"]["fingerprint_sha256_b32_first128bits"]
    assert mirror["public_key"]["key_id"] == "pithauthor-local-" + fingerprint_b32[:8].lower()


def test_record_verifies_only_when_the_local_key_is_trusted(server: RegistryServer) -> None:
    record = httpx.get(f"{server.url}/pith/{BODY}").json()
    assert record["pith_number"] == REAL_NUMBER
    assert not check_record(record, pinned_trust()).ok
    assert check_record(record, local_trust(server)).ok
    actions = record["agent_actions"]["actions"]
    assert actions["sign_citation"] == f"{server.url}/pith/{BODY}/action/citation_signature"


def test_record_is_found_by_alias_and_arxiv_id(server: RegistryServer) -> None:
    for ref in (BODY[:8], BODY[:12], "2302.12445", "2302.12445v2"):
        assert httpx.get(f"{server.url}/pith/{ref}").json()["pith_number"] == REAL_NUMBER


def test_resolver_names_the_number_of_an_arxiv_id(server: RegistryServer) -> None:
    answer = httpx.get(server.url + "/api/pith-number/resolve?arxiv=2302.12445&json=true").json()
    assert answer["pith_number"] == REAL_NUMBER


def test_new_event_is_201_and_a_repeat_is_200(server: RegistryServer) -> None:
    event = citation(TestSigner(), 1)
    first = post(server, event)
    again = post(server, event)
    assert (first.status_code, again.status_code) == (201, 200)
    assert first.json()["event_id"] == event["event_id"]
    assert again.json()["duplicate"] is True
    assert server.store.event_count() == 1


def test_idempotency_key_must_equal_the_event_id(server: RegistryServer) -> None:
    event = citation(TestSigner(), 1)
    r = httpx.post(
        f"{server.url}/pith/{BODY}/action/citation_signature",
        json=event,
        headers={"Idempotency-Key": "sha256:" + "0" * 64},
    )
    assert r.status_code == 400
    assert "Idempotency-Key" in r.json()["error"]


def test_tampered_event_is_422_with_failed_checks(server: RegistryServer) -> None:
    event = citation(TestSigner(), 1)
    event["payload"]["relationship"] = "refutes"
    r = post(server, event)
    assert r.status_code == 422
    assert "event_id" in r.json()["failed_checks"]
    assert server.store.event_count() == 0


def test_event_about_another_paper_or_of_another_kind_is_refused(server: RegistryServer) -> None:
    event = citation(TestSigner(), 1)
    assert post(server, event, kind="author_attestation").json()["failed_checks"] == ["action_kind"]
    other = httpx.get(f"{server.url}/pith/2101.99901").json()["pith_number"].rsplit(":", 1)[1]
    r = httpx.post(
        f"{server.url}/pith/{other}/action/citation_signature",
        json=event,
        headers={"Idempotency-Key": event["event_id"]},
    )
    assert r.status_code == 422
    assert set(r.json()["failed_checks"]) == {"subject_matches", "payload_canonical_sha256"}


def test_unknown_number_is_404_and_oversized_body_is_413(server: RegistryServer) -> None:
    assert httpx.get(f"{server.url}/pith/{'A' * 26}").status_code == 404
    big = {"event_id": "x", "pad": "x" * 70_000}
    r = httpx.post(f"{server.url}/pith/{BODY}/action/citation_signature", json=big)
    assert r.status_code == 413


def test_body_that_is_not_json_is_400(server: RegistryServer) -> None:
    r = httpx.post(f"{server.url}/pith/{BODY}/action/citation_signature", content=b"{nope")
    assert r.status_code == 400
    assert "error" in r.json()


def test_token_is_required_when_configured(tmp_path: Path) -> None:
    srv = start_server(tmp_path / "reg", token="s3cret-token")
    try:
        event = citation(TestSigner(), 1)
        assert post(srv, event).status_code == 401
        assert post(srv, event, Authorization="Bearer wrong").status_code == 403
        assert post(srv, event, Authorization="Bearer s3cret-token").status_code == 201
        assert httpx.get(f"{srv.url}/pith/{BODY}").status_code == 200  # reads stay public
    finally:
        srv.stop()


def test_state_holds_events_once_and_verifies_with_local_trust(server: RegistryServer) -> None:
    signer = TestSigner()
    events = [citation(signer, i) for i in range(3)] + [attestation(signer)]
    for e in events:
        post(server, e)
    post(server, events[0])
    state = httpx.get(f"{server.url}/pith/{BODY}/state.json").json()
    assert state["merge_version"] == "pithauthor-local-merge-v1"
    assert len(state["current"]["citation_signatures"]) == 3
    assert len(state["current"]["author_attestations"]) == 1
    assert len(state["applied_event_ids"]) == len(set(state["applied_event_ids"])) == 5
    report = check_state(state, local_trust(server))
    assert report.ok, report.failed
    assert any(c.name == "merge" and c.status == "passed" for c in report.checks)


def test_bundle_lists_record_created_then_events(server: RegistryServer) -> None:
    post(server, citation(TestSigner(), 1))
    bundle = httpx.get(f"{server.url}/pith/{BODY}/bundle.json").json()
    assert bundle["bundle_type"] == "pith_open_graph_bundle"
    assert [e["target"] for e in bundle["events"]] == ["record", "citation"]


def test_key_survives_restart_and_is_private(tmp_path: Path) -> None:
    data = tmp_path / "reg"
    first = start_server(data)
    key_id = first.key.key_id
    first.stop()
    second = start_server(data)
    try:
        assert second.key.key_id == key_id
        assert (data / "registry-key.json").stat().st_mode & 0o777 == 0o600
        assert data.stat().st_mode & 0o777 == 0o700
    finally:
        second.stop()


def test_state_of_a_real_record_added_from_json(tmp_path: Path) -> None:
    from support.paths import FIXTURES

    from pithauthor.registry.local.run import add_paper

    srv = RegistryServer(tmp_path / "reg")
    rec, new = add_paper(srv.store, srv.key, FIXTURES / "record-2302.12445v2.json")
    assert new and rec.pith_number == REAL_NUMBER
    assert rec.upstream_receipt is not None
    assert rec.upstream_receipt["key_id"] == "pith-v1-2026-05"
    assert json.dumps(rec.canonical_record, sort_keys=True)
    assert SUBJECT.canonical_sha256 == rec.canonical_sha256
    srv.server_close()


def test_record_is_found_by_every_form_the_one_identifier_rule_reads(
    server: RegistryServer,
) -> None:
    """`find` reads a reference as `classify_reference` does: a body, a full number, an alias
    with or without `pith:`, in any case, or an arXiv id; another year's number names nothing."""
    store = server.store
    for ref in (
        BODY,
        BODY.lower(),
        REAL_NUMBER,
        f"pith:{BODY[:8]}",
        BODY[:16].lower(),
        "arXiv:2302.12445v2",
    ):
        found = store.find(ref)
        assert found is not None and found.pith_number == REAL_NUMBER, ref
    other_year = REAL_NUMBER.replace(":2023:", ":2019:")
    for ref in (other_year, BODY[:7], BODY[:9], "2302.99999", "pith:" + "!" * 26, ""):
        assert store.find(ref) is None, ref
