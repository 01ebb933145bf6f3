"""The archive row's verdict (`storage_verdict`): proven only against this machine's own checks
(the PDF hashed here, the CDX row read here), "claimed, not checked" without them, "wrong" when
they disagree; and the checks kept once, never changed."""

from __future__ import annotations

from typing import Any

from support.registry import REAL_SHA, SUBJECT, TestSigner
from support.wayback import cdx_digest, fixture_pdf

from pithauthor.archive.checked import (
    CaptureCheck,
    LocalChecks,
    PdfCheck,
    local_checks,
    record_capture,
    record_pdf,
    storage_verdict,
)
from pithauthor.sign import attest_storage

VERSION = "2302.12445v2"
PDF_URL = f"https://arxiv.org/pdf/{VERSION}"
STAMP = "20261207031500"
BODY = fixture_pdf(VERSION)
DIGEST = "sha1:" + cdx_digest(BODY)
PDF = PdfCheck(VERSION, REAL_SHA, cdx_digest(BODY), "0" * 64, "2026-12-07T03:15:00Z")
ROW = CaptureCheck(PDF_URL, STAMP, DIGEST, "2026-12-07T03:15:01Z")


SIGNER = TestSigner(b"\x07" * 32)


def attestation(digest: str = DIGEST, url: str = PDF_URL) -> dict[str, Any]:
    """A storage attestation of the record REAL_SHA, signed."""
    capture = {
        "url": url,
        "capture_url": f"https://web.archive.org/web/{STAMP}/{url}",
        "timestamp": STAMP,
        "digest": digest,
        "mimetype": "application/pdf",
        "sha256": "0" * 64,
    }
    return dict(attest_storage(SIGNER, SUBJECT, captures=[capture]))


def test_proven_when_the_pdf_hashed_here_and_the_cdx_row_read_here_agree() -> None:
    verdict = storage_verdict([attestation()], REAL_SHA, LocalChecks((PDF,), (ROW,)))
    assert verdict.proven and verdict.detail.startswith("archived: ")


def test_claimed_not_checked_without_this_machines_checks() -> None:
    for checked in (LocalChecks(), LocalChecks((PDF,), ()), LocalChecks((), (ROW,))):
        verdict = storage_verdict([attestation()], REAL_SHA, checked)
        assert not verdict.proven and verdict.detail.startswith("claimed, not checked")


def test_wrong_when_the_attested_digest_is_not_the_pdfs() -> None:
    verdict = storage_verdict(
        [attestation("sha1:" + "A" * 32)], REAL_SHA, LocalChecks((PDF,), (ROW,))
    )
    assert not verdict.proven and verdict.detail.startswith("wrong: ")


def test_wrong_when_the_cdx_row_read_here_says_another_digest() -> None:
    lying = CaptureCheck(PDF_URL, STAMP, "sha1:" + "B" * 32, "2026-12-07T03:15:01Z")
    verdict = storage_verdict([attestation()], REAL_SHA, LocalChecks((PDF,), (lying,)))
    assert not verdict.proven and "CDX row" in verdict.detail


def test_a_capture_of_another_papers_pdf_proves_nothing() -> None:
    other = "https://arxiv.org/pdf/2204.10562v1"
    row = CaptureCheck(other, STAMP, DIGEST, "2026-12-07T03:15:01Z")
    verdict = storage_verdict([attestation(url=other)], REAL_SHA, LocalChecks((PDF,), (row,)))
    assert not verdict.proven


def test_an_attestation_of_another_record_or_none_is_no_copy() -> None:
    checked = LocalChecks((PDF,), (ROW,))
    assert not storage_verdict([attestation()], "1" * 64, checked).proven
    assert storage_verdict([], REAL_SHA, checked).detail.startswith("no archive copy")
    claim = {"event_type": "author_attestation", "payload": {"canonical_sha256": REAL_SHA}}
    assert not storage_verdict([claim], REAL_SHA, checked).proven


def test_checks_are_kept_once_and_read_back() -> None:
    first = record_pdf(VERSION, REAL_SHA, BODY)
    again = record_pdf(VERSION, REAL_SHA, b"%PDF-1.4 regenerated")
    assert again == first  # never changed by a later check
    record_capture(PDF_URL, STAMP, DIGEST)
    kept = local_checks()
    assert kept.pdf_of(REAL_SHA) == first
    assert kept.capture(PDF_URL, STAMP) is not None
    assert storage_verdict([attestation()], REAL_SHA, kept).proven


def test_an_attestation_whose_signature_does_not_check_proves_nothing() -> None:
    forged = attestation()
    forged["signature"] = attestation(url=PDF_URL + "x")["signature"]
    verdict = storage_verdict([forged], REAL_SHA, LocalChecks((PDF,), (ROW,)))
    assert not verdict.proven and verdict.detail.startswith("no archive copy")
