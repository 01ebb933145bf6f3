"""Every field of a signed event, changed by one byte, fails verification by a named check.

Each leaf of each valid vector (envelope, signer.*, payload.* with nested author.* and
artifacts[i].*, event_id, signature.*) has its middle character replaced by the next character
of its class (0-9, a-f, g-z, A-Z; anything else becomes '#'), or its integer raised by one.
The table says, per field, exactly which checks must fail. Fields that only the hash covers fail
`event_id`, whose detail lists the signed fields; every field with a rule of its own also fails
the check named for that rule.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from pithauthor._core.author_event import check_author_event

VALID = Path(__file__).parent / "vectors" / "events" / "valid"
CLASSES = ("0123456789", "abcdef", "ghijklmnopqrstuvwxyz", "ABCDEFGHIJKLMNOPQRSTUVWXYZ")

# field (list indices as []) -> checks that fail when it changes by one byte.
EXPECTED: dict[str, set[str]] = {
    "event_type": {"event_type", "target", "event_id"},
    "target": {"target", "event_id"},
    # still pith:YYYY:BODY, but no longer the number of payload.canonical_sha256
    "subject_pith_number": {"payload_subject", "event_id"},
    # the middle character is the 'T'
    "created_at": {"created_at", "event_id"},
    "signer.key_id": {"key_id", "event_id"},
    "signer.public_key_fingerprint": {"public_key_fingerprint", "event_id"},
    "signer.public_key_b64": {"public_key_fingerprint", "key_id", "event_id", "signature"},
    # orcid:0000-0002-... -> orcid:0000-0102-...: wrong check digit
    "signer.signer_id": {"signer_id", "event_id"},
    "signer.signer_type": {"signer_type", "event_id"},
    "event_id": {"event_id", "signature"},
    "signature.algorithm": {"signature"},
    "signature.signed_message": {"signature"},
    "signature.signature_b64": {"signature"},
    "payload.payload_schema": {"payload_schema", "event_id"},
    # Still 64 hex. A Pith Number carries the digest's first 130 bits; the middle hex digit holds
    # bits 128-131, so payload_subject sees the change only when it touches bit 128 or 129
    # (see EXTRA); the whole digest is bound by event_id.
    "payload.canonical_sha256": {"event_id"},
    "payload.author.name": {"event_id"},
    # the middle character of 0000-0002-1825-0097 is a '-'
    "payload.author.orcid": {"payload_schema", "event_id"},
    "payload.author.position": {"event_id"},
    "payload.statement": {"event_id"},
    "payload.citing_pith_number": {"event_id"},
    "payload.relationship": {"payload_schema", "event_id"},
    "payload.citation_key": {"event_id"},
    "payload.context": {"event_id"},
    "payload.kind": {"payload_schema", "event_id"},
    "payload.outcome": {"payload_schema", "event_id"},
    "payload.proof_system": {"payload_schema", "event_id"},
    "payload.artifacts[].uri": {"event_id"},
    "payload.artifacts[].sha256": {"event_id"},
    "payload.summary": {"event_id"},
    "payload.identity_proofs[].kind": {"payload_schema", "event_id"},
    "payload.identity_proofs[].locator": {"event_id"},
    # still sha256:<64 hex>: which event it corrects is bound by event_id
    "payload.replaces": {"event_id"},
    "payload.withdraws": {"event_id"},
}
# Where a vector adds a rule: the attestation's payload ORCID must be the signer's, and a signer
# without ORCID is named by its key id, which follows the public key.
EXTRA: dict[tuple[str, str], set[str]] = {
    ("author_attestation.json", "signer.signer_id"): {"payload_orcid"},
    ("author_attestation_identity_proofs.json", "signer.signer_id"): {"payload_orcid"},
    ("author_attestation_replacement.json", "signer.signer_id"): {"payload_orcid"},
    # the middle characters of the ORCID proof's iD ('-') and of the paper URL ('/') break the
    # locator's pattern; the web origin's stays a valid origin (only the hash covers it)
    ("author_attestation_identity_proofs.json", "payload.identity_proofs[0].locator"): {
        "payload_schema"
    },
    ("author_attestation_identity_proofs.json", "payload.identity_proofs[2].locator"): {
        "payload_schema"
    },
    ("citation_signature_key_signer.json", "signer.public_key_b64"): {"signer_id"},
    # 694dd781...7f25|b959...: 'b' -> 'c' (1011 -> 1100) changes bits 128-129 of the digest;
    # e3beb26c...a4d9|8378...: '8' -> '9' changes only bit 131 (the other subject's vectors).
    ("author_attestation.json", "payload.canonical_sha256"): {"payload_subject"},
    ("replication_record.json", "payload.canonical_sha256"): {"payload_subject"},
    ("author_attestation_identity_proofs.json", "payload.canonical_sha256"): {"payload_subject"},
    ("author_attestation_replacement.json", "payload.canonical_sha256"): {"payload_subject"},
}


def _leaves(obj: Any, path: tuple[Any, ...] = ()) -> Iterator[tuple[Any, ...]]:
    if isinstance(obj, dict):
        for key, value in obj.items():
            yield from _leaves(value, (*path, key))
    elif isinstance(obj, list):
        for index, value in enumerate(obj):
            yield from _leaves(value, (*path, index))
    else:
        yield path


def _name(path: tuple[Any, ...]) -> str:
    joined = ".".join(str(p) for p in path)
    return joined.replace(".0.", "[].").replace(".1.", "[].").replace(".2.", "[].")


def _one_byte(value: Any) -> Any:
    if isinstance(value, bool) or not isinstance(value, int | str):
        raise TypeError(f"unexpected leaf {value!r}")
    if isinstance(value, int):
        return value + 1
    mid = len(value) // 2
    char = value[mid]
    for chars in CLASSES:
        if char in chars:
            new = chars[(chars.index(char) + 1) % len(chars)]
            break
    else:
        new = "#"
    assert len(char.encode()) == 1, "the middle character is one byte"
    return value[:mid] + new + value[mid + 1 :]


def _cases() -> Iterator[Any]:
    for file in sorted(VALID.glob("*.json")):
        event = json.loads(file.read_text("utf-8"))
        for path in _leaves(event):
            yield pytest.param(file.name, path, id=f"{file.stem}:{_name(path)}")


@pytest.mark.parametrize(("file", "path"), list(_cases()))
def test_one_byte_change_fails_the_check_named_for_the_field(
    file: str, path: tuple[Any, ...]
) -> None:
    event = json.loads((VALID / file).read_text("utf-8"))
    assert check_author_event(event).ok
    changed = copy.deepcopy(event)
    target = changed
    for step in path[:-1]:
        target = target[step]
    target[path[-1]] = _one_byte(target[path[-1]])

    report = check_author_event(changed)

    field = _name(path)
    assert field in EXPECTED, f"{field} has no expectation: add it to the table"
    precise = "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in path)[1:]
    expected = EXPECTED[field] | EXTRA.get((file, precise), EXTRA.get((file, field), set()))
    assert not report.ok
    assert {c.name for c in report.failed} == expected, report.failed
    for check in report.failed:
        if check.name == "payload_schema":
            assert precise in check.detail or field.startswith("payload.payload_schema"), (
                check.detail
            )
        if check.name == "event_id":
            assert "signer, payload" in check.detail


def test_table_has_no_field_the_vectors_lack() -> None:
    seen = {
        _name(path)
        for file in VALID.glob("*.json")
        for path in _leaves(json.loads(file.read_text("utf-8")))
    }
    assert set(EXPECTED) == seen
