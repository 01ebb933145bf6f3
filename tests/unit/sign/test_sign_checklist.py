"""The builders of the checklist's two events (`anchor_record`, `attest_storage`): a signed
event of each type verifies with every check passed; a payload that breaks a rule is never
signed; and the statements of the outbox publish each once."""

from __future__ import annotations

import base64
import hashlib
from typing import Any

import pytest
from support.registry import SUBJECT, TestSigner, anchor_event, storage_event

from pithauthor.errors import EventError, InputError
from pithauthor.protocol.checks.event import check_author_event
from pithauthor.registry.statements import Settled, Statements
from pithauthor.sign import anchor_record, attest_storage

PDF_URL = "https://arxiv.org/pdf/2302.12445v2"
PROOF = base64.b64encode(b"an OpenTimestamps proof").decode()
HEADER = "ab" * 80


def _capture(**changes: Any) -> dict[str, Any]:
    capture = {
        "url": PDF_URL,
        "capture_url": f"https://web.archive.org/web/20261207031500/{PDF_URL}",
        "timestamp": "20261207031500",
        "digest": "sha1:" + base64.b32encode(hashlib.sha1(b"pdf").digest()).decode(),
        "sha256": hashlib.sha256(b"pdf").hexdigest(),
        "mimetype": "application/pdf",
    }
    capture.update(changes)
    return {k: v for k, v in capture.items() if v is not None}


def test_a_signed_event_of_each_checklist_type_verifies_with_its_own_check() -> None:
    key = TestSigner()
    anchor = anchor_record(
        key, SUBJECT, proofs=[("https://c.example", PROOF)], headers=[(1, HEADER)]
    )
    stored = attest_storage(
        key,
        SUBJECT,
        captures=[_capture()],
        code={"origin": "https://git.example/r", "swhid": "swh:1:snp:" + "0" * 40},
    )
    for event, target, own in (
        (anchor, "timestamp", "payload_proofs"),
        (stored, "storage", "payload_captures"),
    ):
        assert event["target"] == target
        report = check_author_event(event)
        assert report.ok, report.failed
        assert own in {c.name for c in report.checks}
    assert anchor["payload"]["opentimestamps"] == [
        {"calendar": "https://c.example", "proof": PROOF, "complete": True}
    ]
    assert anchor["payload"]["canonical_sha256"] == SUBJECT.canonical_sha256


@pytest.mark.parametrize(
    ("sign", "said"),
    [
        (
            lambda k: anchor_record(
                k, SUBJECT, proofs=[("https://c.example", "AAB=")], headers=[(1, HEADER)]
            ),
            "proof is not canonical base64",
        ),
        (lambda k: anchor_record(k, SUBJECT, proofs=[], headers=[(1, HEADER)]), "at least 1"),
        (
            lambda k: anchor_record(
                k, SUBJECT, proofs=[("https://c.example", PROOF)], headers=[(1, "00")]
            ),
            "bitcoin_headers[0].header",
        ),
        (
            lambda k: attest_storage(
                k, SUBJECT, captures=[_capture(mimetype="text/html", sha256=None)]
            ),
            "0 captures of a PDF",
        ),
        (
            lambda k: attest_storage(k, SUBJECT, captures=[_capture(timestamp="20261207031501")]),
            "capture_url is not",
        ),
        (
            lambda k: attest_storage(k, SUBJECT, captures=[_capture(digest="sha1:abc")]),
            "captures[0].digest",
        ),
    ],
    ids=["proof-base64", "no-proof", "short-header", "no-pdf", "capture-url", "digest"],
)
def test_a_payload_that_breaks_a_rule_is_never_signed(sign: Any, said: str) -> None:
    with pytest.raises(EventError, match=None) as caught:
        sign(TestSigner())
    assert said in str(caught.value)


def test_an_anchor_is_signed_once_per_key_and_paper_and_a_capture_says_one_digest() -> None:
    key = TestSigner()
    first = anchor_event(key, b"proof one")
    held = Statements([first])  # type: ignore[list-item]
    # another proof of the same hash: `keep` gives back the anchor held, nothing is signed
    again = anchor_record(
        key,
        SUBJECT,
        proofs=[("https://c.example", PROOF)],
        headers=[(1, HEADER)],
        settle=held.settle("keep"),
    )
    assert again == first
    assert held.settled(again) == Settled(
        "reused", SUBJECT.pith_number.full, "timestamp_anchor", first["event_id"]
    )
    stored = storage_event(key, b"the PDF")
    held = Statements([stored])  # type: ignore[list-item]
    capture = stored["payload"]["captures"][0]
    same = attest_storage(key, SUBJECT, captures=[capture], settle=held.settle("refuse"))
    assert same == stored  # the same statement: reused
    other = _capture(
        url=capture["url"], capture_url=capture["capture_url"], timestamp=capture["timestamp"]
    )  # the same capture, another digest
    with pytest.raises(InputError, match="you already signed storage attestation"):
        attest_storage(key, SUBJECT, captures=[other], settle=held.settle("refuse"))
