"""Regenerate the RFC 3161 test vectors in this folder, byte for byte.

    python tests/vectors/rfc3161/generate.py [OUT_DIR]

Deterministic: the test authorities' keys and serial numbers come from their names
(`support.tsa_server.Pki(fixed=True)`), every signature is deterministic ECDSA (RFC 6979), and
every time is fixed. The message is the signature of the author-event vector
`../events/valid/author_attestation.json` (DESIGN: a token stamps SHA-256 of an event's signature
bytes). `tests/unit/timestamps/test_rfc3161_vectors.py` checks that running this again gives
exactly the committed files, and that pith's verdict on each token is the one `index.json` names.
"""

from __future__ import annotations

import base64
import hashlib
import json
import sys
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
TESTS = HERE.parent.parent
sys.path.insert(0, str(TESTS))

from support.tsa_server import Pki, edited_time, token_for  # noqa: E402

from pithauthor.protocol.timestamps import signature_message  # noqa: E402

EVENT = HERE.parent / "events" / "valid" / "author_attestation.json"
WHEN = datetime(2026, 11, 29, 12, 5, 0, tzinfo=UTC)  # five minutes after the event's created_at


def _b64(data: bytes) -> str:
    return base64.b64encode(data).decode("ascii")


def cases() -> tuple[dict[str, bytes], list[dict[str, Any]]]:
    """The files (name -> bytes) and the index entries."""
    event = json.loads(EVENT.read_text(encoding="utf-8"))
    message = signature_message(event)
    digest = hashlib.sha256(message).digest()
    authority = Pki("Pith Vector Authority", fixed=True)
    stranger = Pki("Pith Vector Stranger", fixed=True)
    expired = Pki(
        "Pith Vector Expired",
        fixed=True,
        tsa_valid=(datetime(2021, 1, 1, tzinfo=UTC), datetime(2022, 1, 1, tzinfo=UTC)),
    )
    lax = Pki("Pith Vector Lax EKU", fixed=True, critical_eku=False)
    good = token_for(authority, digest, when=WHEN, nonce=4141, serial=1)
    tokens: list[tuple[str, bytes, str | None, str]] = [
        ("valid", good, None, "a token of the pinned authority over the event's signature"),
        (
            "another_message",
            token_for(authority, hashlib.sha256(b"another signature").digest(), when=WHEN),
            "stamps another message",
            "the imprint is SHA-256 of other bytes",
        ),
        (
            "edited_time",
            edited_time(good, datetime(2026, 1, 29, 12, 5, 0, tzinfo=UTC)),
            "changed after signing",
            "the valid token with genTime's digits moved ten months earlier after signing",
        ),
        (
            "untrusted_root",
            token_for(stranger, digest, when=WHEN),
            "reaches no pinned root",
            "signed under a root that is not root.pem",
        ),
        (
            "expired_certificate",
            token_for(expired, digest, when=WHEN),
            "not valid at its time",
            "its TSA certificate was valid in 2021 only (its root is in roots.pem)",
        ),
        (
            "eku_not_critical",
            token_for(lax, digest, when=WHEN),
            "not a time-stamping one",
            "its TSA certificate's timeStamping EKU is not critical (its root is in roots.pem)",
        ),
        (
            "no_certificates",
            token_for(authority, digest, when=WHEN, with_chain=False),
            "no signer certificate",
            "the chain was left out of the token (certReq ignored)",
        ),
    ]
    files = {
        "roots.pem": authority.root_pem + expired.root_pem + lax.root_pem,
    }
    index = [
        {
            "file": f"{name}.json",
            "accepted": refused is None,
            **({"gen_time": "2026-11-29T12:05:00Z"} if refused is None else {"refused": refused}),
            "why": why,
        }
        for name, _, refused, why in tokens
    ]
    for name, token, _, _ in tokens:
        doc = {"message_b64": _b64(message), "token_b64": _b64(token)}
        files[f"{name}.json"] = (json.dumps(doc, indent=1) + "\n").encode()
    files["index.json"] = (json.dumps(index, indent=1) + "\n").encode()
    return files, index


def main(out: Path = HERE) -> None:
    files, _ = cases()
    for name, data in files.items():
        (out / name).write_bytes(data)


if __name__ == "__main__":
    main(Path(sys.argv[1]) if len(sys.argv) > 1 else HERE)
