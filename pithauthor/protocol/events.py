"""The signed-event envelope of section 5 (DESIGN): build, id, sign, and check the envelope.

    event_id  = "sha256:" + sha256(canonical(event without event_id and signature))
    signature = Ed25519 over the 32 raw digest bytes that event_id names

Payload rules per event type live in `pithauthor.protocol.payloads`; this module knows nothing of
them, so a change of payload never touches the envelope.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Mapping
from datetime import datetime
from functools import lru_cache
from typing import Any, Protocol

from pithauthor.errors import PithNumberError
from pithauthor.protocol.canonical_json import (
    b64decode,
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
from pithauthor.protocol.identity import PUBLIC_KEY_LENGTH, fingerprint_hex, is_orcid, key_id
from pithauthor.protocol.ids import FIRST_YEAR, PithNumber
from pithauthor.protocol.verdict import FAILED, PASSED, Check, Report

# PyNaCl is imported where a signature is checked: commands that check none skip it.

EVENT_TARGETS: dict[EventType, EventTarget] = {
    "author_attestation": "author",
    "citation_signature": "citation",
    "replication_record": "replication",
}
# the exact field sets shape_faults enforces: the TypedDicts of `documents`, so they cannot drift
SIGNED_FIELDS = fields(UnsignedEvent)
SIGNER_FIELDS = fields(EventSigner)
SIGNATURE_FIELDS = fields(EventSignature)
EVENT_FIELDS = fields(AuthorEvent)
TEXT_FIELDS = ("event_type", "target", "subject_pith_number", "created_at", "event_id")
SIGNED_MESSAGE = "event_id_bytes"
SIGNATURE_LENGTH = 64
BAD_SIGNATURE = "Ed25519 signature does not verify over the event_id digest"
CREATED_AT_RE = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}Z")
EVENT_ID_RE = re.compile(r"sha256:[0-9a-f]{64}")
FULL_NUMBER_RE = re.compile(r"pith:[0-9]{4}:[A-Z2-7]{26}")


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
# event were a tenth of signing, issue 27), and copied into each event (no event shares a dict).
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


@lru_cache(maxsize=256)
def _key_from_b64(text: str) -> tuple[bytes, str, str] | None:
    """The raw key `text` is the canonical base64 of, with its fingerprint and key_id; None when
    it is not canonical base64 of 32 bytes. Cached per text (the same pure derivation)."""
    raw = _public_key(text)
    return None if raw is None else (raw, fingerprint_hex(raw), key_id(raw))


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
    return "sha256:" + _event_digest(event).hex()


def _event_digest(event: Mapping[str, Any]) -> bytes:
    """The 32 bytes event_id names: SHA-256 of the canonical signed fields, serialised once."""
    return hashlib.sha256(_signed_bytes(event)).digest()


def _signed_bytes(event: Mapping[str, Any]) -> bytes:
    """`canonical` of the signed fields of `event`, byte for byte.

    The signed fields of an event are four texts, the `signer` object and the payload. The
    `signer` block of one key is the same in every event it signs, so its canonical text is
    kept (`_signer_text`); the payload goes to the C encoder; the four texts are escaped as
    JSON strings and put in their sorted places. That is the encoder's own output for two
    fifths less work (issue 27); an event with a field of another type takes `canonical`
    itself. tests/unit/protocol/test_sign.py checks that both agree on any event."""
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
        return _signer_text_of(tuple(signer.items()))
    except TypeError:  # a value that cannot be hashed (a list): no JSON text field either
        return None


# Keyed by the block's items: a tuple equal to one of text only holds text (among JSON values
# only a str equals a str; `1 == True` makes other tuples alike, so they are never kept).
@lru_cache(maxsize=256)
def _signer_text_of(items: tuple[tuple[Any, Any], ...]) -> str | None:
    if not all(type(k) is str and type(v) is str for k, v in items):
        return None
    return canonical_text(dict(items))


def seal(unsigned: UnsignedEvent, signer: Signer) -> AuthorEvent:
    """Add event_id and the signature over its 32 raw digest bytes."""
    digest = _event_digest(unsigned)  # signed as bytes, named in hex: one hash for both
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


def shape_faults(event: Any) -> list[str]:
    """What keeps `event` from being exactly an event: an object of the six signed fields,
    `event_id` and `signature`; `signer` and `signature` objects of exactly their text fields;
    `payload` an object. Unknown fields anywhere are faults, so nothing unsigned rides along."""
    if _well_shaped(event):
        return []
    if not isinstance(event, Mapping):
        return ["an event is a JSON object"]
    faults = _exact_keys(event, EVENT_FIELDS, "") + _not_text(event, TEXT_FIELDS, "")
    for name, names in (("signer", SIGNER_FIELDS), ("signature", SIGNATURE_FIELDS)):
        block = event.get(name)
        if isinstance(block, Mapping):
            faults += _exact_keys(block, names, name + ".") + _not_text(block, names, name + ".")
        elif name in event:
            faults.append(f"{name} (not an object)")
    if "payload" in event and not isinstance(event["payload"], Mapping):
        faults.append("payload (not an object)")
    return faults


_EVENT_KEYS, _SIGNER_KEYS, _SIGNATURE_KEYS = map(
    frozenset, (EVENT_FIELDS, SIGNER_FIELDS, SIGNATURE_FIELDS)
)


def _well_shaped(event: Any) -> bool:
    """The common case of `shape_faults` finding nothing, in a few C-speed set comparisons:
    a dict of exactly the event's keys, `signer` and `signature` dicts of exactly theirs, all
    text, and a `payload` object. Anything else takes the field-by-field walk, which names the
    faults (the walk made a seventh of verifying an event, issue 27)."""
    if type(event) is not dict or event.keys() != _EVENT_KEYS:
        return False
    signer, signature = event["signer"], event["signature"]
    if type(signer) is not dict or signer.keys() != _SIGNER_KEYS:
        return False
    if type(signature) is not dict or signature.keys() != _SIGNATURE_KEYS:
        return False
    # the types of every text field, gathered by C loops (a generator per event was a third of
    # this test): exactly str, the type the JSON reader gives (a subclass takes the walk)
    kinds = {*map(type, signer.values()), *map(type, signature.values())}
    kinds.update(map(type, map(event.__getitem__, TEXT_FIELDS)))
    payload = event["payload"]  # a dict first: the ABC costs more than the rest
    return kinds == _STR_ONLY and (type(payload) is dict or isinstance(payload, Mapping))


_STR_ONLY = {str}


def _exact_keys(obj: Mapping[Any, Any], fields: tuple[str, ...], prefix: str) -> list[str]:
    missing = [f"{prefix}{k} (missing)" for k in fields if k not in obj]
    unknown = [f"{prefix}{_shown(k)} (unknown field)" for k in obj if k not in fields]
    more = [f"and {len(unknown) - 5} more unknown fields"] if len(unknown) > 5 else []
    return missing + unknown[:5] + more


def _not_text(obj: Mapping[Any, Any], fields: tuple[str, ...], prefix: str) -> list[str]:
    return [f"{prefix}{k} (not text)" for k in fields if k in obj and not isinstance(obj[k], str)]


def _shown(key: Any) -> str:
    """A field name from someone else's document, quoted and cut short for a one-line detail."""
    text = repr(key)
    return text if len(text) <= 40 else text[:36] + "...'"


def check_envelope(event: Any) -> Report:
    """Every envelope rule, each as a named check. Payload checks are added by the caller."""
    return envelope_checks(event)[0]


def envelope_checks(event: Any) -> tuple[Report, bool, bool]:
    """`check_envelope`; whether the structure is sound (so that the payload checks may read
    the fields by name); and whether `subject_pith_number` is exactly `pith:YYYY:BODY` (so
    that they may take it apart)."""
    faults = shape_faults(event)
    if faults:
        return Report("event", [Check("structure", FAILED, "; ".join(faults))]), False, False
    signer = event["signer"]
    subject = _subject_check(event["subject_pith_number"])
    checks = [
        _STRUCTURE_OK,
        *_type_checks(event["event_type"], event["target"]),
        subject,
        _created_check(event["created_at"]),
    ]
    subject_ok = subject.status == PASSED
    # everything the `signer` block decides, found once per block (one key signs many events)
    key_checks, public_key = _signer_checks(tuple(signer.items()))
    checks += key_checks
    report = Report("event", checks)
    if public_key is None:
        return report, True, subject_ok
    try:
        digest = _event_digest(event)
    except UnicodeEncodeError:
        # a lone UTF-16 surrogate in a signed text: no UTF-8 bytes, so no event_id, and no
        # signature can cover it. JSON never holds one (`parse_json` refuses them); an event
        # built in Python may, and fails here rather than raising
        checks.append(Check("event_id", FAILED, _NO_BYTES))
        return report, True, subject_ok
    expected_id = "sha256:" + digest.hex()
    stated = event["event_id"]
    same = stated == expected_id
    checks.append(
        Check(
            "event_id",
            PASSED,
            f"sha256 of the canonical signed fields = {expected_id}",
        )
        if same
        else Check(
            "event_id",
            FAILED,
            f"recomputed {expected_id} differs: one of {', '.join(SIGNED_FIELDS)} was changed "
            "after signing, or event_id itself",
        )
    )
    # over the *stated* event_id (docs/protocol.md, "Verification", check 12), so the two checks
    # tell apart what happened: a field changed after signing fails `event_id` (the signature
    # still holds for the old id); an id recomputed for the change fails `signature`. When the
    # two ids agree, the stated one names the digest just computed: it is not decoded again.
    ok, detail = _signature_ok(event["signature"], stated, public_key, digest if same else None)
    checks.append(_SIGNATURE_OK if ok else Check("signature", FAILED, detail))
    return report, True, subject_ok


# Checks are immutable tuples, so one whose detail depends only on a few texts is made once per
# texts and shared: an event's verification made fifteen of them, most alike from one event to
# the next (issue 27). Each cache is bounded; a text an attacker varies only costs a miss.
_STRUCTURE_OK = Check("structure", PASSED, "exactly the event's fields")
_TARGET_OF: dict[str, str] = {k: v for k, v in EVENT_TARGETS.items()}  # by any text
_SIGNATURE_DETAIL = "Ed25519 over the 32 raw bytes of event_id"
_SIGNATURE_OK = Check("signature", PASSED, _SIGNATURE_DETAIL)
_NO_BYTES = "a signed text holds a lone UTF-16 surrogate: it has no canonical UTF-8 bytes"


@lru_cache(maxsize=64)
def _type_checks(etype: str, target: str) -> tuple[Check, Check]:
    return (
        Check("event_type", PASSED if etype in EVENT_TARGETS else FAILED, f"{etype!r}"),
        Check(
            "target",
            PASSED if _TARGET_OF.get(etype) == target else FAILED,
            f"{target!r} for {etype!r}",
        ),
    )


def _subject_check(value: str) -> Check:
    if FULL_NUMBER_RE.fullmatch(value) and int(value[5:9]) >= FIRST_YEAR:
        return Check("subject", PASSED, value)  # the common case, without building a PithNumber
    ok, detail = _subject_ok(value)
    return Check("subject", PASSED if ok else FAILED, detail)


@lru_cache(maxsize=1024)
def _created_check(value: str) -> Check:
    ok = _real_stamp(value)
    return Check("created_at", PASSED if ok else FAILED, f"{value!r} (UTC, second precision)")


@lru_cache(maxsize=256)
def _signer_checks(items: tuple[tuple[str, str], ...]) -> tuple[tuple[Check, ...], bytes | None]:
    """The checks of a `signer` block (its items: text only, by `shape_faults`): signer_type,
    then the public key and what must match it; and the raw key when it is 32 bytes of
    canonical base64 (else the event's checks end there)."""
    signer = dict(items)
    kind = signer["signer_type"]
    checks = [Check("signer_type", PASSED if kind == "author" else FAILED, f"{kind!r}")]
    known = _key_from_b64(signer["public_key_b64"])
    if known is None:
        checks.append(
            Check("public_key", FAILED, "public_key_b64 is not canonical base64 of 32 bytes")
        )
        return tuple(checks), None
    public_key, fp, kid = known
    fp_ok = signer["public_key_fingerprint"] == fp
    checks.append(Check("public_key_fingerprint", PASSED if fp_ok else FAILED, f"expected {fp}"))
    checks.append(Check("key_id", PASSED if signer["key_id"] == kid else FAILED, f"expected {kid}"))
    sid_ok, detail = _signer_id_ok(signer["signer_id"], kid)
    checks.append(Check("signer_id", PASSED if sid_ok else FAILED, detail))
    return tuple(checks), public_key


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


def _signer_id_ok(value: str, kid: str) -> tuple[bool, str]:
    """`orcid:<iD with a valid check digit>`, or the key id itself (key_identity DESIGN).
    Anyone can write any iD here: only identity proofs (`checks.identity`) tie it to the key."""
    if value.startswith("orcid:"):
        orcid = value[6:]
        ok = is_orcid(orcid)
        return ok, f"{value!r}" + ("" if ok else " is not a valid ORCID iD")
    return value == kid, f"{value!r}" + ("" if value == kid else f": expected orcid:<iD> or {kid}")


def _subject_ok(value: Any) -> tuple[bool, str]:
    if not isinstance(value, str):
        return False, "subject_pith_number is not text"
    if FULL_NUMBER_RE.fullmatch(value) and int(value[5:9]) >= FIRST_YEAR:
        return True, value  # the common case, without building a PithNumber
    try:
        number = PithNumber.parse(value)
    except PithNumberError as exc:
        return False, str(exc)
    if number.year is None or number.full != value:
        return False, f"{value!r} is not in the form pith:YYYY:BODY"
    return True, value


def _public_key(text: str) -> bytes | None:
    try:
        raw = b64decode(text)
    except ValueError:
        return None
    return raw if len(raw) == PUBLIC_KEY_LENGTH else None


@lru_cache(maxsize=256)
def _verify_key(public_key: bytes) -> Any:
    """PyNaCl's VerifyKey of `public_key`, made once per key (it checks the length and type)."""
    from nacl.signing import VerifyKey

    return VerifyKey(public_key)


def _signature_ok(
    signature: Mapping[str, str], event_id: str, public_key: bytes, digest: bytes | None = None
) -> tuple[bool, str]:
    """`digest`: the 32 bytes `event_id` names, when the caller has just computed them (the
    stated id equals the recomputed one); else they are read from `event_id`."""
    from nacl.exceptions import BadSignatureError

    if signature["algorithm"] != "ed25519":
        return False, f"algorithm {signature['algorithm']!r}, expected 'ed25519'"
    if signature["signed_message"] != SIGNED_MESSAGE:
        return False, f"signed_message {signature['signed_message']!r}, expected 'event_id_bytes'"
    if digest is None:
        if not EVENT_ID_RE.fullmatch(event_id):
            return False, "event_id is not sha256:<64 hex>"
        digest = bytes.fromhex(event_id[7:])
    try:
        sig = b64decode(signature["signature_b64"])
    except ValueError:
        return False, "signature_b64 is not canonical base64 (padding, unused bits or alphabet)"
    if len(sig) != SIGNATURE_LENGTH:
        return False, f"signature is {len(sig)} bytes, expected {SIGNATURE_LENGTH}"
    try:
        _verify_key(public_key).verify(digest, sig)
    except BadSignatureError:
        return False, BAD_SIGNATURE
    return True, _SIGNATURE_DETAIL
