"""Checks of one author event (pure): its envelope and payload rules, and whether its signer is
the identity that was asked for (from proofs fetched by `pithauthor.identity`).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from functools import lru_cache
from hashlib import sha256
from operator import itemgetter
from typing import Any, NamedTuple, TypeGuard, cast

from pithauthor.errors import PithNumberError
from pithauthor.protocol.canonical_json import b64decode
from pithauthor.protocol.documents import AuthorEvent, EventSignature, EventSigner, fields
from pithauthor.protocol.events import (
    EVENT_TARGETS,
    SIGNED_FIELDS,
    SIGNED_MESSAGE,
    compute_event_id,
    created_at_ok,
    event_digest,
    named_text,
    signer_text_of,
)
from pithauthor.protocol.identity import (
    PUBLIC_KEY_LENGTH,
    Finding,
    after_retirement,
    event_key_id,
    event_orcid,
    event_proofs,
    fingerprint_hex,
    is_orcid,
    key_id,
    proofs_problem,
)
from pithauthor.protocol.ids import FIRST_YEAR, PithNumber
from pithauthor.protocol.payloads import (
    ANCHOR,
    ATTESTATION,
    CITATION,
    EVENT_TYPES,
    STORAGE,
    anchor_problem,
    body_bits_match,
    built_payload_violation,
    citation_text,
    digest_matches_body,
    payload_orcid,
    schema_violation,
    self_citation_problem,
    storage_problem,
)
from pithauthor.protocol.text import payload_text_problem
from pithauthor.protocol.timestamps import Proven
from pithauthor.protocol.utc import utc_stamp
from pithauthor.protocol.verdict import FAILED, PASSED, UNVERIFIABLE, Check, Report

# --- the envelope: shape, ids, signature ---

# PyNaCl is imported where a signature is checked: commands that check none skip it.

# the exact field sets shape_faults enforces: the TypedDicts of `documents`, so they cannot drift
SIGNER_FIELDS = fields(EventSigner)
SIGNATURE_FIELDS = fields(EventSignature)
EVENT_FIELDS = fields(AuthorEvent)
TEXT_FIELDS = ("event_type", "target", "subject_pith_number", "created_at", "event_id")
SIGNATURE_LENGTH = 64
BAD_SIGNATURE = "Ed25519 signature does not verify over the event_id digest"
EVENT_ID_RE = re.compile(r"sha256:[0-9a-f]{64}")
FULL_NUMBER_RE = re.compile(r"pith:[0-9]{4}:[A-Z2-7]{26}")


@lru_cache(maxsize=256)
def _key_from_b64(text: str) -> tuple[bytes, str, str] | None:
    """The raw key `text` is the canonical base64 of, with its fingerprint and key_id; None when
    it is not canonical base64 of 32 bytes. Cached per text (the same pure derivation)."""
    raw = _public_key(text)
    return None if raw is None else (raw, fingerprint_hex(raw), key_id(raw))


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


# `_well_shaped` finds the keys by name and counts them: the event's text fields and its three
# objects are every one of its fields (else no event would be well shaped: held by the tests)
_OBJECT_FIELDS = ("signer", "signature", "payload")
_SHAPE_COMPLETE = set(EVENT_FIELDS) == {*TEXT_FIELDS, *_OBJECT_FIELDS}


def _well_shaped(event: Any) -> bool:
    """The common case of `shape_faults` finding nothing, asked in C-speed steps: a dict of
    exactly the event's keys, `signer` and `signature` dicts of exactly theirs, all text, and a
    `payload` object. Anything else takes the field-by-field walk, which names the faults (the
    walk made a seventh of verifying an event).

    "Exactly the keys" is asked as: as many keys as the fields, and each field found by its
    name (a dict's keys are distinct, so no other key is left). That is one look-up per field,
    which also gives its value for the type test; comparing the key views with sets of the
    names looked each key up once more, before the values were read (a third of this test)."""
    if type(event) is not dict or len(event) != len(EVENT_FIELDS) or not _SHAPE_COMPLETE:
        return False
    try:
        # every text field exactly str, the type the JSON reader gives (a subclass takes the
        # walk): plain loops, which stop at the first other type
        for name in TEXT_FIELDS:
            if type(event[name]) is not str:
                return False
        signer, signature, payload = event["signer"], event["signature"], event["payload"]
        if type(signer) is not dict or len(signer) != len(SIGNER_FIELDS):
            return False
        if type(signature) is not dict or len(signature) != len(SIGNATURE_FIELDS):
            return False
        for name in SIGNER_FIELDS:
            if type(signer[name]) is not str:
                return False
        for name in SIGNATURE_FIELDS:
            if type(signature[name]) is not str:
                return False
    except KeyError:  # a field missing (so another key in its place)
        return False
    return type(payload) is dict or isinstance(payload, Mapping)  # a dict first: the ABC costs


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
        digest = event_digest(event)
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
# the next. Each cache is bounded; a text an attacker varies only costs a miss.
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
    ok = created_at_ok(value)
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


def _signer_id_ok(value: str, kid: str) -> tuple[bool, str]:
    """`orcid:<iD with a valid check digit>`, or the key id itself (key_identity DESIGN).
    Anyone can write any iD here: only identity proofs (`identity_report`) tie it to the key."""
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


# --- the payload ---

# Verification of one author-signed event: the envelope, then the payload rules.
#
# Payload checks, after the envelope's (`check_envelope`, above):
#
# - `payload_schema`: the payload meets its event type's JSON Schema; the detail names the JSON
#   path of the first failing field (`payload.relationship must be one of [...]`);
# - `payload_subject`: the payload's `canonical_sha256` is the digest that
#   `subject_pith_number` was cut from (base32(digest)[:26] = BODY);
# - `payload_orcid` (attestations that name an ORCID iD): the iD's check digit is right, and it
#   is the signer's when the signer is identified by an ORCID iD;
# - `payload_text`: no text field holds a control character or a bidirectional control
#   (`pithauthor.protocol.text`: the rule every signed text field meets when it is signed);
# - `payload_citing` (citations): the citing paper is not the cited one (the subject);
# - `payload_proofs` (timestamp anchors): each proof canonical base64, each calendar once, the
#   headers ascending (`payloads.anchor_problem`); whether a proof reaches the paper's hash is
#   the anchor verdict's (docs/protocol.md, "Anchors and archive copies"), not a rule of the event;
# - `payload_captures` (storage attestations): one capture of the PDF, with its sha256; every
#   capture URL the Wayback form of its url and timestamp (`payloads.storage_problem`);
# - `payload_identity_proofs` (attestations that carry them): each locator suits its kind, and an
#   ORCID proof names the author's own iD (docs/identity.md). Fetching them is not done here.
#
# Parsed JSON becomes a typed `AuthorEvent` here only: `checked_author_event` (every rule) or
# `typed_author_event` (the shape, for events this package stored after checking them in full).


def check_author_event(event: Any, texts: list[str] | None = None) -> Report:
    """Every rule an author event must meet, each as a named check. `texts` (a document's
    checks): the event's canonical text is appended when the tight path proved it."""
    report = _passing_citation(event, texts)
    return report if report is not None else checked_in_full(event)


def checked_in_full(event: Any) -> Report:
    """`check_author_event` by the strict path alone: each rule in turn, each as a check (every
    event that `_passing_citation` does not vouch for, and the reference its tests compare
    with)."""
    report, sound, subject_ok = envelope_checks(event)
    # the checks below index the fields by name: only a sound structure guarantees them
    if not sound:
        return report
    etype, payload = event["event_type"], event["payload"]
    if etype not in EVENT_TYPES:
        return report  # already failed as event_type
    # the full schema's verdict (by the direct check when a flat schema's payload passes it)
    violation = built_payload_violation(etype, payload)
    checks = report.checks
    if violation is not None:
        checks.append(Check("payload_schema", FAILED, violation))
        return report  # likewise: the payload's fields are read as the schema promises them
    checks.append(_SCHEMA_OK[etype])
    subject_number = event["subject_pith_number"]
    # 130 bits (what a number carries) bind the payload to the subject here; where the record
    # itself is at hand (a bundle, a state) all 256 are compared (`payload_record`). A subject
    # that failed its check is not taken apart: a passed one is exactly pith:YYYY:BODY
    if subject_ok:
        digest = payload["canonical_sha256"]
        bound = digest_matches_body(digest, subject_number[10:])
        verb = "gives" if bound else "does not give"
        checks.append(
            Check(
                "payload_subject",
                PASSED if bound else FAILED,
                f"payload.canonical_sha256 {digest[:12]}... {verb} {subject_number}",
            )
        )
    problem = payload_text_problem(payload)
    checks.append(_TEXT_OK if problem is None else Check("payload_text", FAILED, problem))
    if etype == CITATION:
        problem = self_citation_problem(payload["citing_pith_number"], subject_number)
        checks.append(_CITING_OK if problem is None else Check("payload_citing", FAILED, problem))
    if etype == ANCHOR:
        problem = anchor_problem(payload)
        report.add(
            "payload_proofs",
            problem is None,
            problem or "proofs in base64, a calendar once each; headers ascending",
        )
    if etype == STORAGE:
        problem = storage_problem(payload)
        report.add("payload_captures", problem is None, problem or "one PDF capture, Wayback URLs")
    if etype == ATTESTATION:
        _check_orcid(report, payload, event["signer"]["signer_id"])
        proofs = payload.get("identity_proofs")
        if proofs is not None:
            problem = proofs_problem(proofs, payload_orcid(payload))
            report.add(
                "payload_identity_proofs",
                problem is None,
                problem or ", ".join(f"{p['kind']} {p['locator']}" for p in proofs),
            )
    return report


# The payload checks that pass with a fixed detail, made once (a Check is an immutable tuple)
_SCHEMA_OK = {
    etype: Check("payload_schema", PASSED, f"pithauthor.{etype}.v1") for etype in EVENT_TYPES
}
_TEXT_OK = Check("payload_text", PASSED, "no control or bidirectional characters")
_CITING_OK = Check("payload_citing", PASSED, "cites another paper")


# The tight path: a citation, the bulk of what is verified (a bibliography signs
# thousands, a bundle or a state carries them), is asked every rule of the strict path above as
# a yes-or-no question, cheapest first, without making a check or a message for each; only the
# checks whose detail names this event (subject, event_id, payload_subject) are written, once
# all of them have passed. The first rule it cannot vouch for (whatever fails, or is unusual: a
# subject in another spelling, text `isprintable` doubts) hands the event to the strict path,
# which asks everything again and names what failed. Every question is the strict path's own
# test on the same fields, so the report is the one the strict path makes, check for check;
# tests/unit/protocol/test_checks_event_fast_path.py compares the two on valid, mutated and
# re-signed events. The signature comes last: once everything else passed, its verdict (and its
# message, by the strict path's `_signature_ok`) completes the report, so no event is verified
# twice.


def _passing_citation(event: Any, texts: list[str] | None = None) -> Report | None:
    """The report of a citation that passes every rule before its signature, with the
    signature's verdict; None for any other event (the strict path then checks it)."""
    if not _well_shaped(event):
        return None
    subject = event["subject_pith_number"]
    if (
        event["event_type"] != CITATION
        or event["target"] != _CITATION_TARGET
        or FULL_NUMBER_RE.fullmatch(subject) is None
        or int(subject[5:9]) < FIRST_YEAR
    ):
        return None
    created = _created_check(event["created_at"])
    signer = _signer_of(event["signer"])
    if created.status != PASSED or signer is None:
        return None
    payload = event["payload"]
    # the schema's rules and the text rule (`payload_text_problem`'s fast case, `isprintable`)
    # asked with the payload's canonical text written: None when any of them doubts it
    payload_text = citation_text(payload) if type(payload) is dict else None
    if payload_text is None:
        return None
    # the schema passed: every field is text, the digest 64 lower-case hex; the subject's body
    # 26 upper-case base32 characters (its pattern passed). So the payload's binding to it
    # (`digest_matches_body`) is the 130 bits alone, and the last pair that held is kept: a
    # document's events share one subject; a bibliography's each cite another (a cache of
    # pairs missed on every one of those, and cost twice the comparison)
    digest = payload["canonical_sha256"]
    last = _LAST_BOUND[0]
    if last[0] != digest or last[1] != subject:
        if not body_bits_match(digest, subject[10:]):
            return None
        _LAST_BOUND[0] = (digest, subject)  # one assignment: a thread reads the old or the new
    if payload["citing_pith_number"] == subject:
        return None
    signer_checks, public_key, signer_text, verify, bad_signature = signer
    # the signed bytes as `events._signed_bytes` writes them, in one step: the event's type and
    # target are these constants, and the subject and the stamp (their patterns passed) hold
    # nothing JSON escapes. Bytes that differed from the canonical ones could only give another
    # id, which fails the comparison below: the strict path then judges the event
    raw = sha256(
        f'{{"created_at":"{event["created_at"]}","event_type":"{CITATION}",'
        f'"payload":{payload_text},"signer":{signer_text},'
        f'"subject_pith_number":"{subject}","target":"{_CITATION_TARGET}"}}'.encode()
    ).digest()
    expected_id = "sha256:" + raw.hex()
    if event["event_id"] != expected_id:
        return None
    # `_signature_ok` (the strict path's), without its look-ups: the key's VerifyKey is kept
    # with the signer's checks. Any fault but a signature that does not verify takes it
    signature = event["signature"]
    make = tuple.__new__  # a Check without the NamedTuple's Python-level __new__
    try:
        if signature["algorithm"] != "ed25519" or signature["signed_message"] != SIGNED_MESSAGE:
            raise ValueError
        sig = b64decode(signature["signature_b64"])  # ValueError unless canonical base64
        if len(sig) != SIGNATURE_LENGTH:
            raise ValueError
        verify(sig + raw, public_key)  # what `VerifyKey.verify(raw, sig)` calls
        verdict = _SIGNATURE_OK
        if texts is not None:  # canonical(event) (a state's hash): every text in it is proven
            # JSON-plain above (patterns, constants, canonical base64), the rest canonical text
            texts.append(
                f'{{"created_at":"{event["created_at"]}","event_id":"{expected_id}",'
                f'"event_type":"{CITATION}","payload":{payload_text},"signature":'
                f'{{"algorithm":"ed25519","signature_b64":"{signature["signature_b64"]}",'
                f'"signed_message":"{SIGNED_MESSAGE}"}},"signer":{signer_text},'
                f'"subject_pith_number":"{subject}","target":"{_CITATION_TARGET}"}}'
            )
    except bad_signature:
        verdict = make(Check, ("signature", FAILED, BAD_SIGNATURE, ()))
    except ValueError:
        ok, detail = _signature_ok(signature, expected_id, public_key, raw)
        verdict = _SIGNATURE_OK if ok else make(Check, ("signature", FAILED, detail, ()))
    # the three checks whose detail names this event are written when the report is read
    # (`_write_details`); until then a stand-in of their status (passed) holds each place
    return Report.pending(
        "event",
        [
            _STRUCTURE_OK,
            *_CITATION_TYPE,
            _STAND_IN,  # subject
            created,
            *signer_checks,
            _STAND_IN,  # event_id
            verdict,
            _SCHEMA_OK[CITATION],
            _STAND_IN,  # payload_subject
            _TEXT_OK,
            _CITING_OK,
        ],
        _write_details,
        subject,
        expected_id,
        digest,
    )


_STAND_IN = Check("(being written)", PASSED)
_LAST_BOUND: list[tuple[str, str]] = [("", "")]  # (digest, subject) of the last binding that held


def _write_details(checks: list[Check], subject: str, expected_id: str, digest: str) -> None:
    """The passed checks of `_passing_citation` that name the event, in their places (the
    signer block's four checks put event_id at 9)."""
    make = tuple.__new__  # a Check without the NamedTuple's Python-level __new__
    checks[3] = make(Check, ("subject", PASSED, subject, ()))
    checks[9] = make(Check, ("event_id", PASSED, _EVENT_ID_DETAIL + expected_id, ()))
    checks[12] = make(
        Check,
        (
            "payload_subject",
            PASSED,
            f"payload.canonical_sha256 {digest[:12]}... gives {subject}",
            (),
        ),
    )


_CITATION_TARGET = EVENT_TARGETS[CITATION]
_CITATION_TYPE = _type_checks(CITATION, _CITATION_TARGET)
_EVENT_ID_DETAIL = "sha256 of the canonical signed fields = "

_GoodSigner = tuple[tuple[Check, ...], bytes, str, Callable[[bytes, bytes], bytes], type[Exception]]


@lru_cache(maxsize=256)
def _good_signer(items: tuple[tuple[str, str], ...]) -> _GoodSigner | None:
    """What the tight path needs of a `signer` block whose checks all pass: its checks, its
    raw key, its canonical text, the verifying function and the error it raises on a bad
    signature; None when a check fails. One look-up per event (a key signs many).

    The function is PyNaCl's public binding `crypto_sign_open(signature + message, key)`,
    which `VerifyKey.verify(message, signature)` calls after testing that the signature is
    64 bytes and the key 32 (the tight path has: `SIGNATURE_LENGTH`, `_public_key`); the same
    libsodium verification without a Python frame and an encoder call per event."""
    checks, public_key = _signer_checks(items)
    text = signer_text_of(items)
    if public_key is None or text is None or FAILED in map(itemgetter(1), checks):
        return None
    if len(checks) != 4:  # `_write_details` places the event's checks after these four
        return None
    from nacl.bindings import crypto_sign_open
    from nacl.exceptions import BadSignatureError

    _verify_key(public_key)  # PyNaCl's own test of the key (32 bytes), kept for the strict path
    return checks, public_key, text, crypto_sign_open, BadSignatureError


# `_good_signer` by the block's key text, the block kept beside its verdict and compared whole:
# one dict comparison in C instead of a tuple of the block's items built and hashed per event.
# The verdict does not depend on the items' order (`_signer_checks` reads them by name, the
# canonical text sorts them). A block that differs from the one kept (another field under the
# same key) is judged by `_good_signer` and kept instead; the table is emptied past its bound.
_SIGNERS: dict[str, tuple[dict[str, str], _GoodSigner | None]] = {}
_SIGNERS_LIMIT = 256


def _signer_of(block: dict[str, str]) -> _GoodSigner | None:
    """`_good_signer` of a `signer` block that `_well_shaped` passed (a dict of exactly its
    five fields, each exactly text)."""
    kept = _SIGNERS.get(block["public_key_b64"])
    if kept is not None and kept[0] == block:
        return kept[1]
    found = _good_signer(tuple(block.items()))
    if len(_SIGNERS) >= _SIGNERS_LIMIT:
        _SIGNERS.clear()
    _SIGNERS[block["public_key_b64"]] = (block.copy(), found)
    return found


def checked_author_event(
    doc: object, texts: list[str] | None = None
) -> tuple[Report, AuthorEvent | None]:
    """Every rule (`check_author_event`), and `doc` as a typed event when it meets them all."""
    report = check_author_event(doc, texts)
    return report, (_typed(doc) if report.ok and isinstance(doc, dict) else None)


def typed_author_event(doc: object) -> AuthorEvent | None:
    """`doc` as a typed event when its shape is an event's (exactly the envelope's fields, a known
    type and its target, a payload meeting its schema); None otherwise. Signatures and ids are
    not checked: this is for events stored after `checked_author_event` passed."""
    if not isinstance(doc, dict) or shape_faults(doc):
        return None
    etype = doc["event_type"]
    if etype not in EVENT_TYPES or doc["target"] != EVENT_TARGETS[etype]:
        return None
    return _typed(doc) if schema_violation(etype, doc["payload"]) is None else None


def _typed(doc: object) -> AuthorEvent:
    """The one cast to AuthorEvent, made only once the shape of `doc` is checked."""
    return cast(AuthorEvent, doc)


def _check_orcid(report: Report, payload: Mapping[str, Any], signer_id: str) -> None:
    orcid = payload_orcid(payload)
    if orcid is None:
        return
    if not is_orcid(orcid):
        report.add("payload_orcid", False, f"payload.author.orcid {orcid}: wrong check digit")
    elif signer_id.startswith("orcid:") and signer_id != f"orcid:{orcid}":
        report.add(
            "payload_orcid",
            False,
            f"payload.author.orcid {orcid} is not the signer's ({signer_id})",
        )
    else:
        report.add("payload_orcid", True, f"payload.author.orcid {orcid}")


# From fetched proofs to named checks: is the event's signer the identity that was asked for?
#
# "Identity-bound": an event whose key an outside source (the ORCID record the event names, or a
# web page the author controls) lists as the author's, as current or as retired after the event
# was signed. A signature alone proves only that the key signed; being identity-bound is what
# ties the key to a person. Proofs are DESIGN (docs/identity.md); a proof that could not be
# fetched is `unverifiable` (pithauthor.protocol.verdict): it neither binds nor refutes.
#
# Pure: the proofs are fetched by `pithauthor.identity.proofs`, which hands each one here as a
# `ProofCheck` (where it was fetched, and what was found there, or why it could not be).
#
# Checks, in order:
#
# - `identity.signer` (`--signer KEY_ID`): the event's `signer.key_id` is that key id;
# - `identity.orcid` (`--orcid ID`): the event names that iD (`signer_id` `orcid:ID`, or the
#   attestation's `payload.author.orcid`) and no other;
# - `identity_proof.<kind>`: one per proof checked: passed when the source names the key (as
#   current or as retired, said in the detail), failed when it does not, unverifiable when it
#   could not be fetched;
# - `identity.retired`: failed when a source (the ORCID link, the web document, the local key
#   store) says the key was retired, or does not say when, and no trusted time (the event's
#   sidecar, `late_retirements`) proves the event was signed before: `created_at` is the
#   signer's word, and a leaked key can backdate;
# - `identity_bound` (`--orcid`): an ORCID proof for that iD names the key, and the key was not
#   retired before the event's proven time. Unverifiable proofs do not count: an identity was
#   asked for, so not knowing fails;
# - `identity` (nothing asked): "not identity-bound" when the claim carries no proofs
#   (unverifiable, which does not fail the event).


class ProofCheck(NamedTuple):
    """One proof as checked: its kind and locator, where it was fetched, and the outcome.

    `finding` is None when the source could not be read; `problem` then says why, and
    `network` whether the cause was the network (a timeout, a refused connection, a 5xx)."""

    kind: str
    locator: str
    where: str
    finding: Finding | None = None
    problem: str = ""
    network: bool = False

    def as_check(self, retired_by: Sequence[str] = ()) -> Check:
        """The check; `retired_by` names other proofs that mark the key retired, so that a
        proof that cannot say so itself (a PDF) is not reported as current."""
        name = f"identity_proof.{self.kind}"
        if self.finding is None:
            return Check(name, UNVERIFIABLE, f"{self.where}: {self.problem}")
        standing = self.finding.standing
        if standing == "named":  # shows only that the file names the key: reported, not passed
            return Check(
                name, UNVERIFIABLE, f"named, not bound: {self.where}: {self.finding.detail}"
            )
        status = FAILED if standing == "absent" else PASSED
        label = {"current": "current", "retired": "RETIRED key", "absent": "no proof"}[standing]
        if standing == "current" and retired_by:
            label = f"RETIRED key (per {', '.join(retired_by)})"
        return Check(name, status, f"{label}: {self.where}: {self.finding.detail}")


def late_retirements(
    event: Mapping[str, Any],
    proofs: Sequence[ProofCheck],
    local_retired: str | None = None,
    proven: Sequence[Proven] = (),
) -> list[tuple[str, str | None]]:
    """(source, retired_at) of every source saying the key was retired (the ORCID link, the
    web document, the local key store) where no trusted time proves the event was signed
    before (`proven`: the times its sidecar proves, docs/protocol.md "Trusted time").

    The event's own `created_at` does not count: it is whatever the signer wrote, and a leaked
    key can date a claim before its retirement. A key retired after a proven time leaves the
    event bound: rotating a key must not unbind every claim it made while it was current. A
    retirement without a date cannot be placed, so it counts against the event."""
    said: list[tuple[str, str | None]] = [
        (p.kind, p.finding.retired_at)
        for p in proofs
        if p.finding is not None and p.finding.standing == "retired"
    ]
    if local_retired is not None:
        said.append(("the local key store", local_retired))
    earliest = _earliest(proven)
    stamp = utc_stamp(earliest.time) if earliest is not None else None
    return [(who, when) for who, when in dict.fromkeys(said) if after_retirement(stamp, when)]


def _earliest(proven: Sequence[Proven]) -> Proven | None:
    return min(proven, key=lambda p: p.time) if proven else None


def _retired_detail(
    event: Mapping[str, Any], late: Sequence[tuple[str, str | None]], proven: Sequence[Proven]
) -> str:
    sources = "; ".join(f"per {who}, {when or 'at an unstated date'}" for who, when in late)
    earliest = _earliest(proven)
    if earliest is None:
        why = (
            f"no trusted time proves this event was signed before (it says "
            f"{event.get('created_at')}, which its signer wrote)"
        )
    else:
        why = (
            f"its earliest proven time, {utc_stamp(earliest.time)} by {earliest.by}, "
            "is not before it"
        )
    return (
        f"the key was retired ({sources}) and {why}: a retired key's events are identity-bound "
        "only when a trusted time proves them earlier"
    )


def identity_report(
    event: Mapping[str, Any],
    proofs: Sequence[ProofCheck],
    *,
    orcid: str | None = None,
    signer: str | None = None,
    local_retired: str | None = None,
    proven: Sequence[Proven] = (),
) -> Report:
    """The identity checks of one event, given the proofs already fetched, when the local
    key store holds the key as retired, its `retired_at`, and the times its trusted-time
    sidecar proves (`proven`, checked by `pithauthor.timestamps`)."""
    report = Report(kind="identity")
    kid = event_key_id(event)
    if signer is not None:
        report.add("identity.signer", kid == signer, f"signer.key_id {kid}, expected {signer}")
    named = event_orcid(event)
    if orcid is not None:
        payload = event.get("payload")
        stated = payload_orcid(payload) if isinstance(payload, Mapping) else None
        others = {o for o in (named, stated) if o is not None and o != orcid}
        ok = named == orcid and not others
        detail = f"the event names {named or 'no ORCID iD'}" + (
            f" and {', '.join(sorted(others))}" if others and named == orcid else ""
        )
        report.add("identity.orcid", ok, f"{detail}; expected {orcid}")
    retired_by = sorted(
        {p.kind for p in proofs if p.finding is not None and p.finding.standing == "retired"}
    )
    for proof in proofs:
        report.checks.append(proof.as_check(retired_by))
    late = late_retirements(event, proofs, local_retired, proven)
    why = _retired_detail(event, late, proven) if late else None
    if why is not None:
        report.add("identity.retired", False, why)
    if orcid is not None:
        report.checks.append(_bound(proofs, orcid, why))
    elif signer is None and not proofs:
        listed = event_proofs(event)
        if listed:
            names = ", ".join(f"{p.get('kind')} {p.get('locator')}" for p in listed)
            report.unverifiable(
                "identity", f"carries {names}; not checked (give --orcid ID or --signer KEY_ID)"
            )
        else:
            report.unverifiable(
                "identity", "not identity-bound: the claim carries no identity proofs"
            )
    return report


def _bound(proofs: Sequence[ProofCheck], orcid: str, late: str | None) -> Check:
    """`late`: why the key's retirement predates the event, when it does."""
    mine = [p for p in proofs if p.kind == "orcid" and p.locator == orcid]
    held = [
        p for p in mine if p.finding is not None and p.finding.standing in ("current", "retired")
    ]
    if held and late is not None:
        return Check("identity_bound", FAILED, f"not bound to ORCID iD {orcid}: {late}")
    if held:
        retired = any(p.finding is not None and p.finding.standing == "retired" for p in held)
        how = "as a retired key" if retired else "as a current key"
        return Check("identity_bound", PASSED, f"the ORCID record {orcid} names the key {how}")
    unknown = [p for p in mine if p.finding is None]
    if unknown:
        return Check(
            "identity_bound",
            FAILED,
            f"the ORCID proof for {orcid} is unverifiable ({unknown[0].problem}); "
            "an identity was asked for, so it is not established",
        )
    return Check("identity_bound", FAILED, f"no proof binds the key to ORCID iD {orcid}")


def only_network_failed(report: Report, proofs: Sequence[ProofCheck]) -> bool:
    """True when the report fails only because a needed proof could not be fetched over the
    network (so a later retry may pass): the CLI exits 3 then, not 1."""
    failed = {c.name for c in report.failed}
    return failed == {"identity_bound"} and any(
        p.finding is None and p.network and p.kind == "orcid" for p in proofs
    )


# Events this process made with one of its own keys (`pithauthor.sign` vouches for them), by
# event_id: their signature block and key. The outbox stores such an event without checking it
# again (re-verifying what was just signed cost more than signing it), once
# `vouched` has seen that its signed fields still hash to its id and its signature and key are
# the ones made: the bytes stored are the bytes signed. Whatever is read back from disk is
# checked in full where it is used (`checked_author_event`), never vouched for.
_MADE: dict[str, tuple[EventSignature, str]] = {}
_MADE_LIMIT = 1 << 20  # the oldest forgotten past this (a long-lived process signing on and on)


def vouch(event: AuthorEvent) -> None:
    """Remember `event` as made here, by a key of this process that signs for its public key
    (`pithauthor.sign` calls this for the events it builds and checks as it signs)."""
    if len(_MADE) >= _MADE_LIMIT:  # forgotten: it is then checked in full when stored
        del _MADE[next(iter(_MADE))]
    _MADE[event["event_id"]] = (event["signature"].copy(), event["signer"]["public_key_b64"])


def vouched(event: object) -> AuthorEvent | None:
    """`event` typed, when this process made it (`vouch`) and it is unchanged since: its
    fields exactly an event's, its signed fields hashing to its id, its signature block and
    key the ones made. None otherwise (then check it in full)."""
    if not _made_here(event):
        return None
    return _typed(event) if compute_event_id(event) == event["event_id"] else None


def vouched_text(event: object) -> tuple[AuthorEvent, str] | None:
    """`vouched(event)` and the canonical text of `event`, from one serialisation: what the
    outbox stores of an event just signed (`pithauthor.protocol.events.named_text`). The
    proof is `vouched`'s, asked of the very bytes kept: the signed fields in that text hash
    to its id, and its signature and key are the ones made. None otherwise (then check it in
    full)."""
    if not _made_here(event):
        return None
    eid, text = named_text(event)
    return (_typed(event), text) if eid == event["event_id"] else None


def _made_here(event: object) -> TypeGuard[AuthorEvent]:
    """True when `event` has the shape of an event (`_well_shaped`) and the id, signature
    block and key of one this process made (`vouch`); its id is not recomputed here."""
    if not isinstance(event, dict) or not _MADE:
        return False
    eid = event.get("event_id")
    made = _MADE.get(eid) if type(eid) is str else None  # anything may be in a tampered one
    if made is None or not _well_shaped(event):
        return False
    signature, key = made
    return bool(event["signature"] == signature and event["signer"].get("public_key_b64") == key)
