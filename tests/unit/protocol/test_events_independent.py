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

VECTORS = Path(__file__).parents[2] / "vectors" / "events"
SIGNED = ("event_type", "target", "subject_pith_number", "created_at", "signer", "payload")
SIGNER = {"key_id", "public_key_fingerprint", "public_key_b64", "signer_id", "signer_type"}
SIGNATURE = {"algorithm", "signed_message", "signature_b64"}
B32 = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567"


class NotStrict(ValueError):
    pass


def _refuse(what: object) -> object:
    raise NotStrict(what)


def _int(text: str) -> int:
    if len(text) > 17 or abs(int(text)) > 2**53 - 1:
        raise NotStrict("integer out of range")
    return int(text)


def _pairs(pairs: list[tuple[str, object]]) -> dict[str, object]:
    if len({k for k, _ in pairs}) != len(pairs):
        raise NotStrict("duplicate key")
    return dict(pairs)


def _utf8(text: str) -> None:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        raise NotStrict("lone surrogate") from None


def _depth_and_text(value: object, depth: int = 0) -> None:
    if isinstance(value, str):
        _utf8(value)
    elif isinstance(value, dict | list):
        if depth + 1 > 64:
            raise NotStrict("too deep")
        for key in value if isinstance(value, dict) else ():
            _utf8(key)
        for child in value.values() if isinstance(value, dict) else value:
            _depth_and_text(child, depth + 1)


def strict_load(text: str) -> dict:
    """docs/protocol.md 'Strict JSON': no NaN/Infinity, integers within 2**53 - 1, no lone
    surrogates, no duplicate keys, at most 64 levels of arrays and objects."""
    try:
        value = json.loads(text, parse_constant=_refuse, parse_int=_int, object_pairs_hook=_pairs)
    except RecursionError:
        raise NotStrict("too deep") from None
    _depth_and_text(value)
    return value


def canonical_b64(text: str, length: int) -> bytes:
    raw = base64.b64decode(text, validate=True)
    if base64.b64encode(raw).decode() != text or len(raw) != length:
        raise ValueError("not the canonical base64 of the right length")
    return raw


def canonical(obj: object) -> bytes:
    return json.dumps(obj, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode()


def problems(event: dict) -> list[str]:
    """The rules of docs/protocol.md 'Verification': exact fields, and the cryptographic part."""
    if (
        set(event) != {*SIGNED, "event_id", "signature"}
        or set(event["signer"]) != SIGNER
        or set(event["signature"]) != SIGNATURE
    ):
        return ["structure"]
    found = []
    signer = event["signer"]
    try:
        public_key = canonical_b64(signer["public_key_b64"], 32)
    except ValueError:
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
            canonical_b64(sig["signature_b64"], 64),
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
    event = strict_load(path.read_text("utf-8"))
    assert problems(event) == []


def test_key_file_gives_the_vectors_public_key() -> None:
    from nacl.signing import SigningKey

    key = json.loads((VECTORS / "key.json").read_text("utf-8"))
    public = bytes(SigningKey(bytes.fromhex(key["seed_hex"])).verify_key)
    assert public.hex() == key["public_key_hex"]
    assert base64.b64encode(public).decode() == key["public_key_b64"]


CRYPTO_CHECKS = {
    "structure",
    "public_key",
    "public_key_fingerprint",
    "key_id",
    "event_id",
    "signature",
    "payload_subject",
}


def test_invalid_vectors_fail_the_documented_rules_they_name() -> None:
    index = json.loads((VECTORS / "invalid" / "index.json").read_text("utf-8"))
    covered = 0
    for name, entry in index.items():
        text = (VECTORS / "invalid" / name).read_text("utf-8")
        if entry["failed_checks"] == ["strict_json"]:
            with pytest.raises(NotStrict):
                strict_load(text)
            covered += 1
            continue
        expected = set(entry["failed_checks"]) & CRYPTO_CHECKS
        if not expected or expected != set(entry["failed_checks"]):
            continue
        assert set(problems(strict_load(text))) == expected, name
        covered += 1
    assert covered >= 18


def test_strict_json_vectors_are_read_by_a_lax_reader() -> None:
    """Each strict_json vector is a real hazard: Python's own json module reads every one of
    them without a word (which is why the strict reader is required)."""
    index = json.loads((VECTORS / "invalid" / "index.json").read_text("utf-8"))
    lax = [n for n, e in index.items() if e["failed_checks"] == ["strict_json"]]
    assert len(lax) == 5
    for name in lax:
        json.loads((VECTORS / "invalid" / name).read_text("utf-8"))


@pytest.mark.parametrize("path", sorted((VECTORS / "valid").glob("*.json")), ids=lambda p: p.name)
def test_signing_again_from_the_published_seed_gives_the_same_bytes(path: Path) -> None:
    from nacl.signing import SigningKey

    key = json.loads((VECTORS / "key.json").read_text("utf-8"))
    event = json.loads(path.read_text("utf-8"))
    event_id = "sha256:" + hashlib.sha256(canonical({k: event[k] for k in SIGNED})).hexdigest()
    signature = SigningKey(bytes.fromhex(key["seed_hex"])).sign(bytes.fromhex(event_id[7:]))
    assert event_id == event["event_id"]
    assert base64.b64encode(signature.signature).decode() == event["signature"]["signature_b64"]
