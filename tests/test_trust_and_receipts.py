"""The pinned registry key and its receipts (section 3, VERIFIED on the real vectors)."""

from __future__ import annotations

import base64
import hashlib
import json

import pytest
from conftest import FIXTURES, load_fixture

from pithauthor._core.key_identity import fingerprint_b32, fingerprint_hex
from pithauthor._core.registry_checks import check_receipt
from pithauthor._core.trust import Trust
from pithauthor.errors import DocumentError
from pithauthor.trust import pinned_trust

MANIFEST = load_fixture("pith-mirrors.json")
KEY = MANIFEST["mirrors"][0]["public_key"]
RECEIPTS = load_fixture("receipts.jsonl")


def test_the_package_pins_exactly_the_registry_manifest_of_the_vectors() -> None:
    from importlib import resources

    shipped = resources.files("pithauthor").joinpath("data", "pith-mirrors.json").read_bytes()
    assert json.loads(shipped) == MANIFEST
    assert set(pinned_trust().keys) == {"pith-v1-2026-05"}


def test_key_fingerprints_follow_the_section_3_rules() -> None:
    raw = base64.b64decode(KEY["public_key_b64"])
    assert raw.hex() == KEY["public_key_hex"]
    assert fingerprint_hex(raw) == KEY["fingerprint_sha256_hex"]
    assert fingerprint_hex(raw) == hashlib.sha256(raw).digest()[:16].hex()
    assert fingerprint_b32(raw) == KEY["fingerprint_sha256_b32_first128bits"]


@pytest.mark.parametrize("row", RECEIPTS, ids=lambda r: r["pith_body"])
def test_every_vector_receipt_verifies_over_the_raw_digest(row: dict) -> None:
    report = check_receipt(row, row["canonical_sha256"], pinned_trust())
    assert report.ok and [c.name for c in report.checks][-1] == "receipt_signature"


@pytest.mark.parametrize("row", RECEIPTS, ids=lambda r: r["pith_body"])
def test_a_flipped_signature_bit_fails(row: dict) -> None:
    sig = bytearray(base64.b64decode(row["signature_b64"]))
    sig[7] ^= 0x01
    tampered = {**row, "signature_b64": base64.b64encode(bytes(sig)).decode()}
    report = check_receipt(tampered, row["canonical_sha256"], pinned_trust())
    assert [c.name for c in report.failed] == ["receipt_signature"]


def test_the_receipt_signs_the_digest_bytes_not_the_hex_string() -> None:
    from nacl.exceptions import BadSignatureError
    from nacl.signing import VerifyKey

    row = RECEIPTS[0]
    key = VerifyKey(base64.b64decode(KEY["public_key_b64"]))
    sig = base64.b64decode(row["signature_b64"])
    key.verify(bytes.fromhex(row["canonical_sha256"]), sig)
    with pytest.raises(BadSignatureError):
        key.verify(row["canonical_sha256"].encode("ascii"), sig)


def test_a_receipt_under_an_unknown_key_id_fails() -> None:
    row = {**RECEIPTS[0], "key_id": "pith-v9-unknown"}
    report = check_receipt(row, row["canonical_sha256"], pinned_trust())
    assert [c.name for c in report.failed] == ["receipt_key"]
    assert "unknown registry key" in report.failed[0].detail


def test_a_manifest_whose_fingerprint_disagrees_with_its_key_is_refused() -> None:
    broken = json.loads((FIXTURES / "pith-mirrors.json").read_text())
    broken["mirrors"][0]["public_key"]["fingerprint_sha256_hex"] = "00" * 16
    with pytest.raises(DocumentError, match="fingerprint"):
        Trust.from_manifest(broken)
