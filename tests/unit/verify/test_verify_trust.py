"""Which registry keys a verdict trusts: the pinned key and its receipts (section 3, VERIFIED on
the real vectors), manifests the user adds (never replacing the pinned key), and a local
registry's key, trusted only when asked (`--trust-local-registry`, loopback only).
"""

from __future__ import annotations

import base64
import copy
import hashlib
import json
from pathlib import Path
from typing import Any

import pytest
from support.cli import RunPith, StartRegistry, assert_one_line_error
from support.paths import FIXTURES, load_fixture

from pithauthor.errors import DocumentError
from pithauthor.protocol.checks.record import check_receipt
from pithauthor.protocol.identity import fingerprint_b32, fingerprint_hex
from pithauthor.protocol.verdict import Trust
from pithauthor.verify import pinned_trust

# ================================================================================================
# The pinned registry key and its receipts (section 3, VERIFIED on the real vectors).

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


# ================================================================================================
# `pith verify --trust-local-registry`: a local registry's documents verify against the key it
# publishes (asked of the registry over loopback), and never without being asked.

DEAR = "2302.12445"


def test_a_local_registry_state_verifies_only_with_trust_local_registry(
    pith: RunPith, tmp_path: Path, local_registry: StartRegistry
) -> None:
    server = local_registry(tmp_path / "registry")
    state = tmp_path / "state.json"
    fetched = pith(
        "fetch", DEAR, "--what", "state", "-o", str(state),
        "--registry", server.url, "--trust-local-registry",
    )  # fmt: skip
    assert fetched.returncode == 0, fetched.stderr
    plain = pith("verify", str(state))
    assert plain.returncode == 1  # the local key is not pith.science's
    assert "FAILED: state: record.receipt_key" in plain.stderr
    trusted = pith("verify", str(state), "--trust-local-registry", "--registry", server.url)
    assert trusted.returncode == 0, trusted.stdout + trusted.stderr
    assert "OK: state verified" in trusted.stderr
    assert "its key is not pith.science's" in trusted.stderr  # said, every time


def test_trust_local_registry_refuses_a_registry_off_loopback(
    pith: RunPith, tmp_path: Path
) -> None:
    doc = tmp_path / "doc.json"
    doc.write_text("{}")
    result = pith(
        "verify", str(doc), "--trust-local-registry", "--registry", "https://pith.science"
    )
    assert_one_line_error(result, 2)
    assert "only for a registry on loopback" in result.stderr


# ================================================================================================
# Trust: a manifest or a local registry that tries to replace the pinned key, replayed.

RECORD = load_fixture("record-2302.12445v2.json")
BODY = RECORD["pith_number"].rsplit(":", 1)[1]


def _write(tmp_path: Path, name: str, doc: Any) -> Path:
    path = tmp_path / name
    path.write_text(json.dumps(doc), "utf-8")
    return path


# --- trust -----------------------------------------------------------------------------


def _evil_manifest(tmp_path: Path, key_id: str = "pith-v1-2026-05") -> Path:
    from nacl.signing import SigningKey

    manifest = load_fixture("pith-mirrors.json")
    pk = bytes(SigningKey(b"\x07" * 32).verify_key)
    entry = manifest["mirrors"][0]["public_key"]
    for name in ("public_key_hex", "fingerprint_sha256_hex", "fingerprint_sha256_b32_first128bits"):
        entry.pop(name)
    entry.update(key_id=key_id, public_key_b64=base64.b64encode(pk).decode())
    return _write(tmp_path, "evil.json", manifest)


def _record_signed_by_evil_key() -> dict[str, Any]:
    from nacl.signing import SigningKey

    doc = copy.deepcopy(RECORD)
    signature = SigningKey(b"\x07" * 32).sign(bytes.fromhex(doc["canonical_sha256"])).signature
    doc["receipt"]["signature_b64"] = base64.b64encode(signature).decode()
    doc["receipt"].pop("public_key_fingerprint")
    return doc


def test_a_manifest_cannot_replace_the_pinned_key(pith: RunPith, tmp_path: Path) -> None:
    evil = _evil_manifest(tmp_path)
    record = _write(tmp_path, "r.json", _record_signed_by_evil_key())
    result = pith("verify", str(record), "--trust-manifest", str(evil))
    assert_one_line_error(result, 2)
    assert "pith-v1-2026-05" in result.stderr and "never replaced" in result.stderr
    result = pith("verify", str(record), env={"PITH_TRUST": str(evil)})
    assert_one_line_error(result, 2)
    assert "PITH_TRUST" in result.stderr


def test_the_same_pinned_key_again_is_harmless_and_keeps_its_label(
    pith: RunPith, tmp_path: Path
) -> None:
    result = pith(
        "verify",
        str(FIXTURES / "record-2302.12445v2.json"),
        "--trust-manifest",
        str(FIXTURES / "pith-mirrors.json"),
    )
    assert result.returncode == 0, result.stderr
    assert "pith-v1-2026-05 (pinned manifest)" in result.stdout


def test_an_added_key_is_labelled_with_where_it_came_from(pith: RunPith, tmp_path: Path) -> None:
    evil = _evil_manifest(tmp_path, key_id="another-registry")
    doc = _record_signed_by_evil_key()
    doc["receipt"]["key_id"] = "another-registry"
    record = _write(tmp_path, "r.json", doc)
    result = pith("verify", str(record), "--trust-manifest", str(evil))
    assert f"another-registry (--trust-manifest {evil})" in result.stdout
    assert "(pinned manifest)" not in result.stdout
    # its records may link only to its own base_url (pith.science here, from the manifest)
    assert result.returncode == 0, result.stdout + result.stderr
    result = pith("verify", str(record), env={"PITH_TRUST": str(evil)})
    assert f"another-registry (PITH_TRUST manifest {evil})" in result.stdout


def test_a_local_registry_cannot_claim_the_pinned_key_id(
    pith: RunPith, hostile_registry: tuple[str, dict[str, Any]], tmp_path: Path
) -> None:
    url, docs = hostile_registry
    manifest = json.loads(_evil_manifest(tmp_path).read_text())
    manifest["mirrors"][0]["mirror_type"] = "local"
    docs["/pith-mirrors.json"] = manifest
    docs[f"/pith/{BODY}"] = _record_signed_by_evil_key()
    result = pith("fetch", BODY, "--registry", url, "--trust-local-registry")
    assert_one_line_error(result, 2)
    assert "never replaced" in result.stderr


def test_the_pinned_trust_has_one_labelled_key() -> None:
    (key,) = pinned_trust().keys.values()
    assert (key.key_id, key.source, key.base_url) == (
        "pith-v1-2026-05",
        "pinned manifest",
        "https://pith.science",
    )
