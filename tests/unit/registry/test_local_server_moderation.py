"""Held for moderation, on both sides: the local registry in moderation mode over real HTTP
(a valid event from no signed-in author is answered 202 and kept out of the state until
`approve`), and the client's rule that tells a hold from an acceptance or a failure
(`is_hold`), and a refused format from an event's rejection (`refuses_format`)."""

from __future__ import annotations

from pathlib import Path

import httpx
import pytest
from support.cli import RunPith, assert_one_line_error
from support.registry import REAL_NUMBER, TestSigner, citation, start_server

from pithauthor.net import refuses_format
from pithauthor.registry.client import is_hold

BODY = REAL_NUMBER.rsplit(":", 1)[1]


def _post(url: str, event: dict[str, object], **headers: str) -> httpx.Response:
    hdrs = {"Idempotency-Key": str(event["event_id"]), **headers}
    return httpx.post(f"{url}/pith/{BODY}/action/citation_signature", json=event, headers=hdrs)


def _applied(url: str) -> list[str]:
    ids: list[str] = httpx.get(f"{url}/pith/{BODY}/state.json").json()["applied_event_ids"]
    return ids


def test_a_moderating_registry_holds_an_unsigned_in_event_until_it_is_approved(
    tmp_path: Path,
) -> None:
    server = start_server(tmp_path / "reg", moderate=True)
    try:
        event = citation(TestSigner(), 1)
        for _ in range(2):  # sent again, it is still held: never stored twice, never lost
            held = _post(server.url, event)
            assert held.status_code == 202, held.text
            assert held.json() == {
                "status": "held_for_moderation",
                "event_id": event["event_id"],
                "pith_number": REAL_NUMBER,
            }
        assert event["event_id"] not in _applied(server.url)
        bad = dict(event, created_at="2026-11-29T12:00:01Z")  # its signature no longer holds
        assert _post(server.url, bad).status_code == 422  # checked like any POST, then held
        assert server.approve() == 1
        assert event["event_id"] in _applied(server.url)
        again = _post(server.url, event)
        assert again.status_code == 200 and again.json()["duplicate"] is True
    finally:
        server.stop()


def test_a_moderating_registry_with_a_token_accepts_the_signed_in_and_refuses_a_wrong_token(
    tmp_path: Path,
) -> None:
    server = start_server(tmp_path / "reg", moderate=True, token="the-token")
    try:
        signed_in = _post(server.url, citation(TestSigner(), 2), Authorization="Bearer the-token")
        assert signed_in.status_code == 201, signed_in.text
        wrong = _post(server.url, citation(TestSigner(), 3), Authorization="Bearer nope")
        assert wrong.status_code == 403
        anonymous = _post(server.url, citation(TestSigner(), 4))
        assert anonymous.status_code == 202
    finally:
        server.stop()


@pytest.mark.parametrize(
    ("status", "answer", "held"),
    [
        (202, {"event_id": "sha256:ab"}, True),
        (202, {"status": "held_for_moderation"}, True),
        (200, {"status": "pending_moderation"}, True),
        (201, {"status": "HELD"}, True),
        (201, {"status": "accepted"}, False),
        (200, {"status": "rejected"}, False),
        (200, {"status": "held", "error": "moderation"}, False),  # an error is no hold
        (202, ["held"], False),  # not a JSON object
        (422, {"status": "held"}, False),  # a refusal is never a hold
    ],
)
def test_what_counts_as_a_hold(status: int, answer: object, held: bool) -> None:
    assert is_hold(status, answer) is held


@pytest.mark.parametrize(
    ("status", "answer", "refused"),
    [
        (415, None, True),
        (415, {"error": "anything"}, True),
        (422, {"error": "Unsupported body format: send JSON-LD"}, True),
        (422, {"error": "content-type must be application/ld+json"}, True),
        (422, {"error": "the event does not verify: event_id_format, signature"}, False),
        (422, {"error": "the event it corrects does not allow it: replaces_signer"}, False),
        (400, {"error": "unsupported"}, False),
    ],
)
def test_what_counts_as_a_refused_format(status: int, answer: object, refused: bool) -> None:
    assert refuses_format(status, answer) is refused


def test_a_held_event_outlives_a_restart_and_only_a_held_id_is_approved(
    tmp_path: Path, pith: RunPith
) -> None:
    data = tmp_path / "reg"
    server = start_server(data, moderate=True)
    event = citation(TestSigner(), 5)
    try:
        assert _post(server.url, event).status_code == 202
    finally:
        server.stop()
    unknown = pith("registry", "approve", "sha256:" + "0" * 12, "--data", str(data))
    assert_one_line_error(unknown, 2)
    server = start_server(data, moderate=True)  # the same folder: the hold is still there
    try:
        assert pith("registry", "approve", "--data", str(data)).returncode == 0
        assert event["event_id"] in _applied(server.url)
    finally:
        server.stop()


def test_approving_where_there_is_no_registry_makes_none(tmp_path: Path, pith: RunPith) -> None:
    result = pith("registry", "approve", "--data", str(tmp_path / "none"))
    assert_one_line_error(result, 2)
    assert not (tmp_path / "none").exists()
