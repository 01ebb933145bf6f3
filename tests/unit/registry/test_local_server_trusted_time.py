"""Trusted time travels with the event on the local registry, over real HTTP (DESIGN,
docs/protocol.md "Trusted time"): a sidecar posted to `action/trusted_time` for a stored event
is kept (merged: a complete proof never goes back to pending) and listed in the paper's bundle
and state under `trusted_time`, outside the state's hash; a sidecar of an unknown event, or one
that is not a sidecar, is refused."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import httpx
from support.registry import REAL_NUMBER, TestSigner, citation, start_server

from pithauthor.protocol.timestamps import build_sidecar, proofs_of, tokens_of
from pithauthor.protocol.verdict import Trust
from pithauthor.verify import verify_document

BODY = REAL_NUMBER.rsplit(":", 1)[1]
CAL = "https://cal.test"


def _post_event(url: str, event: dict[str, Any]) -> None:
    sent = httpx.post(
        f"{url}/pith/{BODY}/action/citation_signature",
        json=event,
        headers={"Idempotency-Key": str(event["event_id"])},
    )
    assert sent.status_code == 201, sent.text


def _post_time(url: str, doc: Any, body: str = BODY) -> httpx.Response:
    return httpx.post(f"{url}/pith/{body}/action/trusted_time", json=doc)


def test_a_sidecar_of_a_stored_event_is_kept_and_listed_in_the_bundle_and_state(
    tmp_path: Path,
) -> None:
    server = start_server(tmp_path / "reg")
    try:
        event = citation(TestSigner(), 1)
        _post_event(server.url, event)
        eid = event["event_id"]
        before = httpx.get(f"{server.url}/pith/{BODY}/state.json")
        bundle_before = httpx.get(f"{server.url}/pith/{BODY}/bundle.json")
        assert "trusted_time" not in before.json() and "trusted_time" not in bundle_before.json()
        done = build_sidecar(eid, [("https://tsa.test/", b"token")], [(CAL, b"complete", True)])
        kept = _post_time(server.url, done)
        assert kept.status_code == 200, kept.text
        assert kept.json() == {"status": "accepted", "event_id": eid, "changed": True}
        # a pending proof from the same calendar never replaces the complete one
        again = _post_time(server.url, build_sidecar(eid, [], [(CAL, b"pending", False)]))
        assert again.json()["changed"] is False

        state = httpx.get(f"{server.url}/pith/{BODY}/state.json")
        bundle = httpx.get(f"{server.url}/pith/{BODY}/bundle.json")
        for doc in (state.json(), bundle.json()):
            [carried] = doc["trusted_time"]
            assert tokens_of(carried) == [("https://tsa.test/", b"token")]
            assert proofs_of(carried) == [(CAL, b"complete", True)]
        # the proofs are outside the state's hash: the events did not change, nor does it
        assert state.json()["state_sha256"] == before.json()["state_sha256"]
        # but the served bytes did: a reader holding the old ones gets the new
        assert state.headers["ETag"] != before.headers["ETag"]
        assert bundle.headers["ETag"] != bundle_before.headers["ETag"]
        # and the state still verifies whole, its hash and its merge recomputed
        manifest = httpx.get(f"{server.url}/pith-mirrors.json").json()
        report = verify_document(state.json(), Trust.from_manifest(manifest, local=True))
        assert report.ok, [c for c in report.checks if c.status == "failed"]
        assert {"state_sha256", "merge"} <= {c.name for c in report.checks if c.status == "passed"}
    finally:
        server.stop()


def test_a_sidecar_of_an_unknown_event_or_not_a_sidecar_is_refused(tmp_path: Path) -> None:
    server = start_server(tmp_path / "reg")
    try:
        event = citation(TestSigner(), 2)
        _post_event(server.url, event)
        unknown = _post_time(
            server.url, build_sidecar("sha256:" + "ab" * 32, [("https://t.test/", b"t")])
        )
        assert unknown.status_code == 404 and "no event" in unknown.json()["error"]
        bad = dict(build_sidecar(event["event_id"]), note="extra")
        refused = _post_time(server.url, bad)
        assert refused.status_code == 422
        assert refused.json()["failed_checks"] == ["trusted_time"]
        assert "has unknown note" in refused.json()["error"]
        # nothing was kept: the bundle lists no proofs
        assert "trusted_time" not in httpx.get(f"{server.url}/pith/{BODY}/bundle.json").json()
    finally:
        server.stop()
