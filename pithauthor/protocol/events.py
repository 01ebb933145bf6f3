"""The signed-event envelope of section 5 (DESIGN): build it, name it by its id, and seal it.

    event_id  = "sha256:" + sha256(canonical(event without event_id and signature))
    signature = Ed25519 over the 32 raw digest bytes that event_id names

Payload rules per event type live in `pithauthor.protocol.payloads`; this module knows nothing of
them, so a change of payload never touches the envelope. The envelope is checked in
`pithauthor.protocol.checks.event`, which reads the ids and signed bytes made here.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Mapping
from datetime import datetime
from functools import lru_cache
from typing import Any, Protocol

from pithauthor.protocol.canonical_json import (
    b64encode,
    canonical,
    canonical_text,
    json_string,
)
from pithauthor.protocol.documents import (
    AuthorEvent,
    AuthorPayload,
    EventSignature,
    EventSigner,
    EventTarget,
    EventType,
    UnsignedEvent,
    fields,
)
from pithauthor.protocol.identity import fingerprint_hex, key_id
from pithauthor.protocol.ids import PithNumber

EVENT_TARGETS: dict[EventType, EventTarget] = {
    "author_attestation": "author",
    "citation_signature": "citation",
    "replication_record": "replication",
    "timestamp_anchor": "timestamp",
    "storage_attestation": "storage",
}
# the signed fields: the TypedDict of `documents`, so they cannot drift
SIGNED_FIELDS = fields(UnsignedEvent)
SIGNED_MESSAGE = "event_id_bytes"
CREATED_AT_RE = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}Z")


class Signer(Protocol):
    """What the envelope needs of a key: its public half, an identity, and a way to sign."""

    @property
    def public_key(self) -> bytes: ...

    @property
    def signer_id(self) -> str: ...

    def sign_digest(self, digest: bytes) -> bytes:
        """Ed25519 signature (64 bytes) over `digest`."""
        ...


def signer_block(signer: Signer) -> EventSigner:
    """The `signer` object of an event made by `signer`."""
    return signer_parts(signer.public_key, signer.signer_id)[0].copy()


# A key's names are pure functions of its 32 bytes, and one key signs thousands of events in a
# row: its block and the block's canonical text are made once (two SHA-256 and a base64 per
# event were a tenth of signing), and copied into each event (no event shares a dict).
@lru_cache(maxsize=256)
def signer_parts(public_key: bytes, signer_id: str) -> tuple[EventSigner, str]:
    """The `signer` object of a key and signer id, and its canonical text."""
    block: EventSigner = {
        "key_id": key_id(public_key),
        "public_key_fingerprint": fingerprint_hex(public_key),
        "public_key_b64": b64encode(public_key),
        "signer_id": signer_id,
        "signer_type": "author",
    }
    return block, canonical_text(block)


def unsigned_event(
    event_type: EventType,
    subject: PithNumber,
    created_at: str,
    signer: EventSigner,
    payload: AuthorPayload,
) -> UnsignedEvent:
    """The fields that event_id covers, in protocol form."""
    if event_type not in EVENT_TARGETS:
        raise ValueError(f"unknown event type {event_type!r}")
    if not created_at_ok(created_at):
        raise ValueError("created_at must be UTC at second precision, YYYY-MM-DDTHH:MM:SSZ")
    return {
        "event_type": event_type,
        "target": EVENT_TARGETS[event_type],
        "subject_pith_number": subject.full,
        "created_at": created_at,
        "signer": signer.copy(),
        "payload": payload.copy(),
    }


def compute_event_id(event: Mapping[str, Any]) -> str:
    """`sha256:` + hex SHA-256 of the canonical signed fields of `event` (any mapping: the
    checker recomputes it for events it has not typed yet)."""
    return "sha256:" + event_digest(event).hex()


def event_digest(event: Mapping[str, Any]) -> bytes:
    """The 32 bytes event_id names: SHA-256 of the canonical signed fields, serialised once."""
    return hashlib.sha256(_signed_bytes(event)).digest()


def named_text(event: Mapping[str, Any]) -> tuple[str, str]:
    """(the event_id the signed fields of `event` name, the canonical text of the whole
    `event`), from one serialisation of the signed fields.

    Canonical JSON writes an object's members in key order with nothing between them, so the
    whole text is the signed bytes with two members put in their places: `event_id` right
    after `created_at` (the first key), `signature` right before `signer` (the last object
    member among the signed fields: after it come `signer`'s own texts and two texts, in
    which `,"` cannot occur, a quote inside a JSON string being escaped). Storing an event
    just signed (`pithauthor.protocol.checks.event.vouched_text`) serialised it twice, once
    to hash its signed fields and once for the text kept. For an event whose text fields
    are text and whose `signature` is an object of text, as `pithauthor.protocol.checks.event`
    finds them before it asks; tests/unit/protocol/test_checks_event_vouched_text.py holds
    the text to `canonical` byte for byte."""
    raw = _signed_bytes(event)
    signed = raw.decode("utf-8")
    head = len(json_string(event["created_at"])) + len('{"created_at":,')
    at = signed.rfind(',"signer":')
    text = (
        f'{signed[:head]}"event_id":{json_string(event["event_id"])},{signed[head:at]}'
        f',"signature":{canonical_text(event["signature"])}{signed[at:]}'
    )
    return "sha256:" + hashlib.sha256(raw).hexdigest(), text


def _signed_bytes(event: Mapping[str, Any]) -> bytes:
    """`canonical` of the signed fields of `event`, byte for byte.

    The signed fields of an event are four texts, the `signer` object and the payload. The
    `signer` block of one key is the same in every event it signs, so its canonical text is
    kept (`_signer_text`); the payload goes to the C encoder; the four texts are escaped as
    JSON strings and put in their sorted places. That is the encoder's own output for two
    fifths less work; an event with a field of another type takes `canonical`
    itself. tests/unit/sign/test_sign.py checks that both agree on any event."""
    created_at, event_type = event["created_at"], event["event_type"]
    subject, target = event["subject_pith_number"], event["target"]
    signer, payload = event["signer"], event["payload"]
    signer_text = _signer_text(signer) if type(signer) is dict else None
    if (
        signer_text is None
        or type(payload) is not dict
        or type(created_at) is not str
        or type(event_type) is not str
        or type(subject) is not str
        or type(target) is not str
    ):
        return canonical({k: event[k] for k in SIGNED_FIELDS})
    return envelope_bytes(
        created_at, event_type, canonical_text(payload), signer_text, subject, target
    )


def envelope_bytes(
    created_at: str, event_type: str, payload: str, signer: str, subject: str, target: str
) -> bytes:
    """The canonical signed bytes from the four texts and the canonical texts of `payload` and
    `signer`: the keys of SIGNED_FIELDS in sorted order, as `sort_keys` writes them."""
    return (
        f'{{"created_at":{json_string(created_at)},"event_type":{json_string(event_type)},'
        f'"payload":{payload},"signer":{signer},'
        f'"subject_pith_number":{json_string(subject)},"target":{json_string(target)}}}'
    ).encode()


def _signer_text(signer: dict[Any, Any]) -> str | None:
    """The canonical text of a `signer` object of text fields, kept per block; None for any
    other (it is then serialised with the rest)."""
    try:
        return signer_text_of(tuple(signer.items()))
    except TypeError:  # a value that cannot be hashed (a list): no JSON text field either
        return None


# Keyed by the block's items: a tuple equal to one of text only holds text (among JSON values
# only a str equals a str; `1 == True` makes other tuples alike, so they are never kept).
@lru_cache(maxsize=256)
def signer_text_of(items: tuple[tuple[Any, Any], ...]) -> str | None:
    """The canonical text of a `signer` block given as its items; None unless all are text."""
    if not all(type(k) is str and type(v) is str for k, v in items):
        return None
    return canonical_text(dict(items))


def seal(unsigned: UnsignedEvent, signer: Signer) -> AuthorEvent:
    """Add event_id and the signature over its 32 raw digest bytes."""
    digest = event_digest(unsigned)  # signed as bytes, named in hex: one hash for both
    signature = signer.sign_digest(digest)
    return {
        **unsigned,
        "event_id": "sha256:" + digest.hex(),
        "signature": signature_block(signature),
    }


def signature_block(signature: bytes) -> EventSignature:
    """The `signature` object of an event: Ed25519 over the 32 raw bytes of its event_id."""
    return {
        "algorithm": "ed25519",
        "signed_message": SIGNED_MESSAGE,
        "signature_b64": b64encode(signature),
    }


def created_at_ok(value: Any) -> bool:
    """`YYYY-MM-DDTHH:MM:SSZ` naming a real instant (UTC, second precision)."""
    return isinstance(value, str) and _real_stamp(value)


# The events of one batch share a signing time (and a registry's events a few), so the verdict
# on a stamp is kept: the same text always gets the same answer.
@lru_cache(maxsize=1024)
def _real_stamp(value: str) -> bool:
    if not CREATED_AT_RE.fullmatch(value):
        return False
    try:  # the pattern admits 2026-02-30T25:61:00Z: the calendar does not
        datetime.fromisoformat(value[:-1])
    except ValueError:
        return False
    return True
