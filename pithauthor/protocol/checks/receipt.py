"""Checks of a registry receipt: the trusted key it names and its Ed25519 signature (pure)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pithauthor.protocol.canonical_json import (
    b64decode,
    base32_nopad,
    hex_digest_bytes,
)
from pithauthor.protocol.checks.fields import (
    RECEIPT_ALGORITHM,
    RECEIPT_KIND,
    RECEIPT_MESSAGE,
    RECEIPT_ROW_CHECKED,
)
from pithauthor.protocol.ids import BODY_LENGTH
from pithauthor.protocol.verdict import (
    RegistryKey,
    Report,
    Trust,
    uncovered,
)

__all__ = [
    "check_receipt",
    "check_receipt_row",
]


# --- receipts ----------------------------------------------------------------------------------


def receipt_key(receipt: Any, trust: Trust) -> RegistryKey | None:
    """The trusted key a receipt names (by id, and by fingerprint when it gives one)."""
    if not isinstance(receipt, Mapping):
        return None
    kid = receipt.get("key_id")
    key = trust.get(kid) if isinstance(kid, str) else None
    fp = receipt.get("public_key_fingerprint")
    # a trusted key id beside another key's fingerprint is no receipt of that key: a receipt
    # cannot borrow a trusted name
    if key is None or (fp is not None and fp != key.fingerprint):
        return None
    return key


def check_receipt(receipt: Any, canonical_sha256_hex: str, trust: Trust) -> Report:
    """A registry receipt: Ed25519 by a trusted key over the 32 raw digest bytes."""
    report = Report(kind="receipt")
    if not isinstance(receipt, Mapping):
        report.add("receipt", False, "no receipt object")
        return report
    report.add(
        "receipt_digest",
        receipt.get("canonical_sha256") == canonical_sha256_hex,
        "the receipt names the record's canonical_sha256",
    )
    # absent from the rows of receipts.jsonl: the registry's one rule (section 3) applies
    message = receipt.get("signed_message", RECEIPT_MESSAGE)
    report.add("receipt_message", message == RECEIPT_MESSAGE, f"signed_message {message!r}")
    if "algorithm" in receipt or "kind" in receipt:
        algo, kind = receipt.get("algorithm", RECEIPT_ALGORITHM), receipt.get("kind", RECEIPT_KIND)
        report.add(
            "receipt_kind",
            algo == RECEIPT_ALGORITHM and kind == RECEIPT_KIND,
            f"algorithm {algo!r}, kind {kind!r}",
        )
    key_id = receipt.get("key_id")
    key = receipt_key(receipt, trust)
    if key is None:
        known = isinstance(key_id, str) and trust.get(key_id) is not None
        why = "its fingerprint is not that key's" if known else "unknown registry key (not trusted)"
        report.add("receipt_key", False, f"{key_id!r}: {why}")
        return report
    report.add("receipt_key", True, f"{key_id} ({key.source})")
    try:
        signature = b64decode(str(receipt.get("signature_b64", "")))
        # the 32 raw digest bytes, never the 64 hex characters (section 3, VERIFIED: the real
        # receipts verify over the bytes only)
        digest = hex_digest_bytes(canonical_sha256_hex)
    except ValueError as exc:
        report.add("receipt_signature", False, str(exc))
        return report
    report.add(
        "receipt_signature",
        len(signature) == 64 and key.verify_digest(digest, signature),
        "Ed25519 over the 32 raw bytes of canonical_sha256",
    )
    return report


def check_receipt_row(row: Mapping[str, Any], trust: Trust) -> Report:
    """A bare receipt row (receipts.jsonl): `{pith_body, canonical_sha256, key_id,
    signature_b64}`."""
    report = Report(kind="receipt")
    digest = row.get("canonical_sha256")
    try:
        body = base32_nopad(hex_digest_bytes(str(digest)))[:BODY_LENGTH]
        report.add("pith_body", row.get("pith_body") == body, f"base32(digest)[:26] = {body}")
    except ValueError as exc:
        report.add("pith_body", False, str(exc))
    report.extend(check_receipt(row, str(digest), trust))
    report.not_signed("not_signed", uncovered(row, RECEIPT_ROW_CHECKED))
    return report
