"""Make the trusted-time vector in this folder: the sidecar of
`tests/vectors/events/valid/citation_signature.json` (docs/protocol.md "Trusted time").

    python tests/vectors/timestamps/generate.py [OUT_DIR]

Not byte-reproducible: the test authority's keys and the calendar's nonce are new each run (the
committed files are one run's). It writes:

- `citation_signature.time.json`: the sidecar (canonical JSON): an RFC 3161 token over the
  SHA-256 of the event's signature bytes, genTime 2026-11-29T12:00:30Z, from the TEST-ONLY
  authority `http://127.0.0.1:9/tsa`, and a complete OpenTimestamps proof of the event id's 32
  bytes in test block 950000 from the calendar `http://127.0.0.1:9`;
- `tsa-root.pem`: the TEST-ONLY root the token chains to (pin it to check the token);
- `headers.json`: `{"950000": "<80-byte header, hex>"}`, mined at test difficulty (nBits
  0x207fffff): the test floor accepts it, the production floor refuses it;
- `citation_signature.headers.time.json`: the same sidecar with that header shipped in it
  (`bitcoin_headers`): it checks with no other header source.
"""

from __future__ import annotations

import hashlib
import json
import sys
from datetime import UTC, datetime
from pathlib import Path

HERE = Path(__file__).resolve().parent
TESTS = HERE.parent.parent
sys.path.insert(0, str(TESTS))

from support.ots_calendar import TEST_HEIGHT, Calendar  # noqa: E402
from support.tsa_server import Pki, token_for  # noqa: E402

from pithauthor.protocol.timestamps import (  # noqa: E402
    build_sidecar,
    ots_digest,
    sidecar_json,
    signature_message,
)

AUTHORITY = "http://127.0.0.1:9/tsa"
CALENDAR = "http://127.0.0.1:9"
GEN_TIME = datetime(2026, 11, 29, 12, 0, 30, tzinfo=UTC)


def main(out: Path) -> None:
    event = json.loads((TESTS / "vectors/events/valid/citation_signature.json").read_text("utf-8"))
    pki = Pki(name="Pith Vector TEST ONLY")
    digest = hashlib.sha256(signature_message(event)).digest()
    token = token_for(pki, digest, when=GEN_TIME, nonce=1, serial=1, with_chain=True)
    calendar = Calendar(url=CALENDAR)
    from opentimestamps.core.serialize import BytesDeserializationContext, BytesSerializationContext
    from opentimestamps.core.timestamp import Timestamp

    eid_digest = ots_digest(event["event_id"])
    pending = Timestamp.deserialize(
        BytesDeserializationContext(calendar.submit(eid_digest)), eid_digest
    )
    header = calendar.mine()
    # the calendar's path into the block, merged under the pending commitment (as `upgrade`
    # merges what a calendar answers), then only the block attestation kept
    for commitment, done in calendar.done.items():
        _merge_at(pending, commitment, done)
    _drop_pending(pending)
    context = BytesSerializationContext()
    pending.serialize(context)
    sidecar = build_sidecar(
        event["event_id"], [(AUTHORITY, token)], [(CALENDAR, context.getbytes(), True)]
    )
    out.mkdir(parents=True, exist_ok=True)
    (out / "citation_signature.time.json").write_text(sidecar_json(sidecar) + "\n", "utf-8")
    (out / "tsa-root.pem").write_bytes(pki.root_pem)
    (out / "headers.json").write_text(json.dumps({str(TEST_HEIGHT): header.hex()}) + "\n")
    shipped = build_sidecar(
        event["event_id"],
        [(AUTHORITY, token)],
        [(CALENDAR, context.getbytes(), True)],
        [(TEST_HEIGHT, header)],
    )
    (out / "citation_signature.headers.time.json").write_text(sidecar_json(shipped) + "\n")


def _merge_at(stamp: object, commitment: bytes, done: object) -> None:
    from opentimestamps.core.timestamp import Timestamp

    assert isinstance(stamp, Timestamp) and isinstance(done, Timestamp)
    if stamp.msg == commitment:
        stamp.merge(done)
        return
    for child in stamp.ops.values():
        _merge_at(child, commitment, done)


def _drop_pending(stamp: object) -> None:
    from opentimestamps.core.notary import PendingAttestation
    from opentimestamps.core.timestamp import Timestamp

    assert isinstance(stamp, Timestamp)
    for attestation in [a for a in stamp.attestations if isinstance(a, PendingAttestation)]:
        stamp.attestations.remove(attestation)
    for child in stamp.ops.values():
        _drop_pending(child)


if __name__ == "__main__":
    main(Path(sys.argv[1]) if len(sys.argv) > 1 else HERE)
