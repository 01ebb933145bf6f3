"""An independent verifier of the published vectors, written from docs/protocol.md alone.

It imports only json, hashlib, base64 and nacl: nothing of pithauthor. If this passes while the
package's own verifier also passes, the rules in the documentation are the rules the code uses.
"""

from __future__ import annotations

import base64
import hashlib
import json
from pathlib import Path

import pytest
from nacl.exceptions import BadSignatureError
from nacl.signing import VerifyKey

VECTORS = Path(__file__).parent / "vectors" / "events"
SIGNED = ("event_type", "target", "subject_pith_number", "created_at", "signer", "payload")
B32 = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567"


def canonical(obj: object) -> bytes:
    return json.dumps(obj, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode()


def problems(event: dict) -> list[str]:
    """The rules of docs/protocol.md 'Verification', cryptographic part."""
    found = []
    signer = event["signer"]
    public_key = base64.b64decode(signer["public_key_b64"], validate=True)
    if len(public_key) != 32:
        return ["public_key"]
    digest = hashlib.sha256(public_key).digest()
    if signer["public_key_fingerprint"] != digest[:16].hex():
        found.append("public_key_fingerprint")
    key_id = "ed25519:" + base64.b32encode(digest).decode().rstrip("=")[:26]
    if signer["key_id"] != key_id:
        found.append("key_id")
    event_id = "sha256:" + hashlib.sha256(canonical({k: event[k] for k in SIGNED})).hexdigest()
    if event["event_id"] != event_id:
        found.append("event_id")
    sig = event["signature"]
    try:
        if sig["algorithm"] != "ed25519" or sig["signed_message"] != "event_id_bytes":
            raise BadSignatureError("wrong algorithm or message")
        VerifyKey(public_key).verify(
            bytes.fromhex(event["event_id"].removeprefix("sha256:")),
            base64.b64decode(sig["signature_b64"], validate=True),
        )
    except (BadSignatureError, ValueError):
        found.append("signature")
    body = event["subject_pith_number"].split(":")[-1]
    cut = base64.b32encode(bytes.fromhex(event["payload"]["canonical_sha256"])).decode()[:26]
    if cut != body:
        found.append("payload_subject")
    return found


@pytest.mark.parametrize("path", sorted((VECTORS / "valid").glob("*.json")), ids=lambda p: p.name)
def test_valid_vector_passes_the_documented_rules(path: Path) -> None:
    event = json.loads(path.read_text("utf-8"))
    assert problems(event) == []


def test_key_file_gives_the_vectors_public_key() -> None:
    from nacl.signing import SigningKey

    key = json.loads((VECTORS / "key.json").read_text("utf-8"))
    public = bytes(SigningKey(bytes.fromhex(key["seed_hex"])).verify_key)
    assert public.hex() == key["public_key_hex"]
    assert base64.b64encode(public).decode() == key["public_key_b64"]


CRYPTO_CHECKS = {"public_key_fingerprint", "key_id", "event_id", "signature", "payload_subject"}


def test_invalid_vectors_fail_the_documented_rules_they_name() -> None:
    index = json.loads((VECTORS / "invalid" / "index.json").read_text("utf-8"))
    covered = 0
    for name, entry in index.items():
        expected = set(entry["failed_checks"]) & CRYPTO_CHECKS
        if not expected or expected != set(entry["failed_checks"]):
            continue
        event = json.loads((VECTORS / "invalid" / name).read_text("utf-8"))
        assert set(problems(event)) == expected, name
        covered += 1
    assert covered >= 7


@pytest.mark.parametrize("path", sorted((VECTORS / "valid").glob("*.json")), ids=lambda p: p.name)
def test_signing_again_from_the_published_seed_gives_the_same_bytes(path: Path) -> None:
    from nacl.signing import SigningKey

    key = json.loads((VECTORS / "key.json").read_text("utf-8"))
    event = json.loads(path.read_text("utf-8"))
    event_id = "sha256:" + hashlib.sha256(canonical({k: event[k] for k in SIGNED})).hexdigest()
    signature = SigningKey(bytes.fromhex(key["seed_hex"])).sign(bytes.fromhex(event_id[7:]))
    assert event_id == event["event_id"]
    assert base64.b64encode(signature.signature).decode() == event["signature"]["signature_b64"]
