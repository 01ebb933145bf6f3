"""Regenerate the OpenTimestamps proof vectors in this folder, byte for byte.

    python tests/vectors/opentimestamps/generate.py [OUT_DIR]

Deterministic: the digest is the event id of ../events/valid/author_attestation.json, the
calendar (tests/support/ots_calendar.py, without its HTTP) appends a fixed nonce, and the block
is mined at test difficulty from nonce 0. `tests/unit/timestamps/test_ots_vectors.py` checks
that running this again gives exactly the committed files.
"""

from __future__ import annotations

import base64
import hashlib
import json
import sys
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
TESTS = HERE.parent.parent
sys.path.insert(0, str(TESTS))

from opentimestamps.core.notary import PendingAttestation  # noqa: E402
from support.ots_calendar import (  # noqa: E402
    BLOCK_TIME,
    TEST_HEIGHT,
    Calendar,
    mine_header,
    serialize,
)

from pithauthor.timestamps.headers import bits_to_target, block_hash  # noqa: E402
from pithauthor.timestamps.ots import parse_proof, parse_proof_for  # noqa: E402

EVENT = TESTS / "vectors" / "events" / "valid" / "author_attestation.json"
NONCE = hashlib.sha256(b"pithauthor OpenTimestamps vector nonce -- TEST ONLY").digest()[:16]
CALENDAR = "https://calendar.example"


def _vector(event_id: str, proof: bytes, headers: dict[int, bytes], floor: str) -> dict[str, Any]:
    return {
        "event_id": event_id,
        "digest_hex": event_id.removeprefix("sha256:"),
        "proof_b64": base64.b64encode(proof).decode("ascii"),
        "headers": {str(height): raw.hex() for height, raw in sorted(headers.items())},
        "floor": floor,
    }


def build() -> dict[str, Any]:
    """Every file of the folder: {relative path: JSON value}."""
    event_id = json.loads(EVENT.read_text("utf-8"))["event_id"]
    digest = bytes.fromhex(event_id.removeprefix("sha256:"))
    calendar = Calendar(url=CALENDAR, nonce=lambda: NONCE)
    pending = calendar.submit(digest)
    header = calendar.mine()
    # the upgrade as ots.upgrade makes it, without HTTP: the calendar's answer for the pending
    # commitment merged in, the pending attestation dropped
    tree = parse_proof(pending, digest)
    node = next(n for n, a in _attestations(tree) if isinstance(a, PendingAttestation))
    status, answer = calendar.answer("GET", f"/timestamp/{node.msg.hex()}", b"")
    assert status == 200
    node.attestations.clear()
    node.merge(parse_proof_for(answer, node.msg))
    complete = serialize(tree)
    headers = {TEST_HEIGHT: header}

    flipped = bytearray(complete)
    flipped[complete.index(NONCE) + 3] ^= 0x01  # inside the nonce the calendar appended
    stranger = mine_header(hashlib.sha256(b"another block's root").digest(), time=BLOCK_TIME)
    lazy = bytearray(header)
    for nonce in range(1000):  # a nonce whose hash misses even the test target
        lazy[76:80] = nonce.to_bytes(4, "little")
        if int.from_bytes(block_hash(bytes(lazy)), "little") > bits_to_target(0x207FFFFF):
            break

    files: dict[str, Any] = {
        "valid/complete.json": {
            **_vector(event_id, complete, headers, "test"),
            "proven": {"time": "2026-04-24T03:06:40Z", "by": f"bitcoin block {TEST_HEIGHT}"},
        },
        "valid/pending.json": {**_vector(event_id, pending, {}, "test"), "proven": None},
    }
    invalid = {
        "flipped_byte": (
            _vector(event_id, bytes(flipped), headers, "test"),
            "does not commit to the digest",
            "one bit of the calendar's nonce flipped: the path reaches another merkle root",
        ),
        "other_header": (
            _vector(event_id, complete, {TEST_HEIGHT: stranger}, "test"),
            "does not commit to the digest",
            "a header with valid work for another merkle root",
        ),
        "below_floor": (
            _vector(event_id, complete, headers, "mainnet"),
            "below the mainnet difficulty floor",
            "the valid proof and header, judged by the production floor: test difficulty",
        ),
        "no_work": (
            _vector(event_id, complete, {TEST_HEIGHT: bytes(lazy)}, "test"),
            "does not meet its own target",
            "the header with a nonce whose hash misses its own target",
        ),
        "trailing_byte": (
            _vector(event_id, complete + b"\x00", headers, "test"),
            "damaged",
            "a byte after the proof's end",
        ),
    }
    index = {}
    for name, (vector, error, why) in invalid.items():
        files[f"invalid/{name}.json"] = vector
        index[f"{name}.json"] = {"error": error, "why": why}
    files["invalid/index.json"] = index
    return files


def _attestations(stamp: Any) -> list[tuple[Any, Any]]:
    found = [(stamp, a) for a in stamp.attestations]
    for child in stamp.ops.values():
        found += _attestations(child)
    return found


def main(out: Path) -> None:
    for name, value in build().items():
        path = out / name
        path.parent.mkdir(parents=True, exist_ok=True)
        text = json.dumps(value, indent=2, sort_keys=True, ensure_ascii=False) + "\n"
        path.write_bytes(text.encode("utf-8"))


if __name__ == "__main__":
    main(Path(sys.argv[1]) if len(sys.argv) > 1 else HERE)
