"""The anchor verdict (the record's checklist, row 1): proven only when an anchor event's
OpenTimestamps proof reaches the record's canonical SHA-256 and a header judged by its proof
of work and the floor; every other case is not proven, with why in one line."""

from __future__ import annotations

import base64
import hashlib
import json
from typing import Any

from opentimestamps.core.notary import PendingAttestation
from opentimestamps.core.serialize import BytesDeserializationContext
from opentimestamps.core.timestamp import Timestamp
from support.ots_calendar import TEST_FLOOR, TEST_HEIGHT, Calendar, mine_header, serialize
from support.paths import REPO
from support.registry import SUBJECT, TestSigner

from pithauthor.protocol.checklist import Verdict
from pithauthor.sign import anchor_record
from pithauthor.timestamps.anchor import anchor_checks, anchor_verdict
from pithauthor.timestamps.headers import PRODUCTION_FLOOR, ShippedHeaders

SHA = SUBJECT.canonical_sha256
VECTOR = REPO / "tests" / "vectors" / "events" / "valid" / "timestamp_anchor.json"


def _proof(digest: bytes, *, complete: bool = True) -> tuple[bytes, bytes]:
    """A proof of `digest` from the loopback calendar's code (complete: in test block
    TEST_HEIGHT), and the block's header."""
    calendar = Calendar(url="http://127.0.0.1:9")
    stamp = Timestamp.deserialize(BytesDeserializationContext(calendar.submit(digest)), digest)
    header = calendar.mine()
    if not complete:
        return serialize(stamp), header

    def merge(node: Timestamp) -> None:
        done = calendar.done.get(node.msg)
        if done is not None:
            node.merge(done)
        node.attestations = {a for a in node.attestations if not isinstance(a, PendingAttestation)}
        for child in node.ops.values():
            merge(child)

    merge(stamp)
    return serialize(stamp), header


def _anchor(proof: bytes, header: bytes, height: int = TEST_HEIGHT) -> dict[str, Any]:
    event = anchor_record(
        TestSigner(),
        SUBJECT,
        proofs=[("http://127.0.0.1:9", base64.b64encode(proof).decode())],
        headers=[(height, header.hex())],
    )
    return dict(event)


def test_a_proof_of_the_record_hash_in_a_judged_block_is_proven_from_a_state() -> None:
    proof, header = _proof(bytes.fromhex(SHA))
    event = _anchor(proof, header)
    state = {"current": {"timestamp_anchors": [event]}}
    verdict = anchor_verdict(state, SHA, None, TEST_FLOOR)
    assert verdict.proven, verdict.detail
    assert f"bitcoin block {TEST_HEIGHT} at 2026-04-24T03:06:40Z" in verdict.detail
    # the same from a bundle's events and from a list
    assert anchor_verdict({"events": [event]}, SHA, None, TEST_FLOOR).proven
    assert anchor_verdict([event], SHA, None, TEST_FLOOR).proven


def test_the_published_anchor_vector_is_proven_under_the_test_floor_only() -> None:
    event = json.loads(VECTOR.read_text("utf-8"))
    digest = event["payload"]["canonical_sha256"]
    assert anchor_verdict([event], digest, None, TEST_FLOOR).proven
    refused = anchor_verdict([event], digest, None, PRODUCTION_FLOOR)
    assert not refused.proven
    assert "below the mainnet difficulty floor" in refused.detail


def test_a_proof_of_another_digest_is_not_proven() -> None:
    proof, header = _proof(hashlib.sha256(b"another record").digest())
    verdict = anchor_verdict([_anchor(proof, header)], SHA, None, TEST_FLOOR)
    assert verdict == Verdict(False, verdict.detail)
    assert "does not commit to the digest" in verdict.detail
    assert "\n" not in verdict.detail


def test_a_header_that_does_not_commit_to_the_proof_is_not_proven() -> None:
    proof, _ = _proof(bytes.fromhex(SHA))
    elsewhere = mine_header(hashlib.sha256(b"another merkle root").digest(), time=1_777_000_000)
    verdict = anchor_verdict([_anchor(proof, elsewhere)], SHA, None, TEST_FLOOR)
    assert not verdict.proven
    assert f"Bitcoin block {TEST_HEIGHT}'s header does not commit" in verdict.detail


def test_a_pending_proof_only_is_not_proven_and_unverifiable_in_verify() -> None:
    proof, header = _proof(bytes.fromhex(SHA), complete=False)
    event = _anchor(proof, header)
    verdict = anchor_verdict([event], SHA, None, TEST_FLOOR)
    assert not verdict.proven
    assert "pending only" in verdict.detail
    bundle = {"canonical_sha256": SHA, "events": [event]}
    [check] = anchor_checks([bundle], None, TEST_FLOOR)
    assert check.name == "events[0].anchor"
    assert check.status == "unverifiable"


def test_no_anchor_a_tampered_one_or_another_records_is_not_proven() -> None:
    assert anchor_verdict({"current": {"timestamp_anchors": []}}, SHA, None, TEST_FLOOR) == (
        Verdict(False, "no timestamp anchor")
    )
    proof, header = _proof(bytes.fromhex(SHA))
    event = _anchor(proof, header)
    tampered = json.loads(json.dumps(event))
    tampered["created_at"] = "2020-01-01T00:00:00Z"  # the signature no longer holds
    verdict = anchor_verdict([tampered], SHA, None, TEST_FLOOR)
    assert not verdict.proven and "does not verify" in verdict.detail
    assert not anchor_verdict([event], "ab" * 32, None, TEST_FLOOR).proven


def test_headers_come_from_the_event_first_then_the_source_given() -> None:
    proof, header = _proof(bytes.fromhex(SHA))
    # a shipped header that does not commit is judged, not replaced by a good one elsewhere
    wrong = mine_header(hashlib.sha256(b"x").digest(), time=1_777_000_000)
    resigned = _anchor(proof, wrong)
    good = ShippedHeaders({TEST_HEIGHT: header})
    assert not anchor_verdict([resigned], SHA, good, TEST_FLOOR).proven
    # and a header the event lacks is taken from the source given
    lacking = _anchor(proof, wrong, height=TEST_HEIGHT + 1)
    assert anchor_verdict([lacking], SHA, good, TEST_FLOOR).proven


def test_anchor_status_judges_by_the_floor_the_cli_is_set_to(monkeypatch: Any) -> None:
    from pithauthor.timestamps import anchor

    proof, header = _proof(bytes.fromhex(SHA))
    state = {"current": {"timestamp_anchors": [_anchor(proof, header)]}}
    assert not anchor.anchor_status(state, SHA, fetch=False).proven  # the production floor
    monkeypatch.setattr(anchor, "FLOOR", TEST_FLOOR)
    assert anchor.anchor_status(state, SHA, fetch=False).proven
