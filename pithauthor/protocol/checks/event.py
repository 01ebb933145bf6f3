"""Checks of one author event (pure): its envelope and payload rules, and whether its signer is
the identity that was asked for (from proofs fetched by `pithauthor.identity`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from hashlib import sha256
from operator import itemgetter
from typing import Any, cast

from pithauthor.protocol.canonical_json import b64decode, canonical_text
from pithauthor.protocol.documents import AuthorEvent, EventSignature
from pithauthor.protocol.events import (
    _SIGNATURE_OK,
    _STRUCTURE_OK,
    BAD_SIGNATURE,
    EVENT_TARGETS,
    FULL_NUMBER_RE,
    SIGNATURE_LENGTH,
    SIGNED_MESSAGE,
    _created_check,
    _signature_ok,
    _signer_checks,
    _signer_text_of,
    _type_checks,
    _verify_key,
    _well_shaped,
    compute_event_id,
    envelope_checks,
    shape_faults,
)
from pithauthor.protocol.identity import (
    Finding,
    after_retirement,
    event_key_id,
    event_orcid,
    event_proofs,
    is_orcid,
    proofs_problem,
)
from pithauthor.protocol.ids import FIRST_YEAR
from pithauthor.protocol.payloads import (
    ATTESTATION,
    CITATION,
    EVENT_TYPES,
    built_payload_violation,
    digest_matches_body,
    payload_orcid,
    schema_violation,
    self_citation_problem,
)
from pithauthor.protocol.text import payload_text_problem
from pithauthor.protocol.verdict import FAILED, PASSED, UNVERIFIABLE, Check, Report

# Verification of one author-signed event: the envelope, then the payload rules.
#
# Payload checks, after the envelope's (see `envelope.check_envelope`):
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


# The tight path (issue 27): a citation, the bulk of what is verified (a bibliography signs
# thousands, a bundle or a state carries them), is asked every rule of the strict path above as
# a yes-or-no question, cheapest first, without making a check or a message for each; only the
# checks whose detail names this event (subject, event_id, payload_subject) are written, once
# all of them have passed. The first rule it cannot vouch for (whatever fails, or is unusual: a
# subject in another spelling, text `isprintable` doubts) hands the event to the strict path,
# which asks everything again and names what failed. Every question is the strict path's own
# test on the same fields, so the report is the one the strict path makes, check for check;
# tests/unit/protocol/test_verify_fast.py compares the two on valid, mutated and re-signed
# events. The signature comes last: once everything else passed, its verdict (and its message,
# by the strict path's `_signature_ok`) completes the report, so no event is verified twice.


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
    signer = _good_signer(tuple(event["signer"].items()))
    if created.status != PASSED or signer is None:
        return None
    payload = event["payload"]
    if type(payload) is not dict or built_payload_violation(CITATION, payload) is not None:
        return None
    # the schema passed: every field is text, the digest 64 lower-case hex
    digest = payload["canonical_sha256"]
    if (
        not digest_matches_body(digest, subject[10:])
        or not "a".join(payload.values()).isprintable()  # `payload_text_problem`'s fast case
        or payload["citing_pith_number"] == subject
    ):
        return None
    signer_checks, public_key, signer_text, verify_key, bad_signature = signer
    # the signed bytes as `events._signed_bytes` writes them, in one step: the event's type and
    # target are these constants, and the subject and the stamp (their patterns passed) hold
    # nothing JSON escapes. Bytes that differed from the canonical ones could only give another
    # id, which fails the comparison below: the strict path then judges the event
    payload_text = canonical_text(payload)
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
        verify_key.verify(raw, sig)
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

_GoodSigner = tuple[tuple[Check, ...], bytes, str, Any, type[Exception]]


@lru_cache(maxsize=256)
def _good_signer(items: tuple[tuple[str, str], ...]) -> _GoodSigner | None:
    """What the tight path needs of a `signer` block whose checks all pass: its checks, its
    raw key, its canonical text, PyNaCl's VerifyKey and the error it raises on a bad signature;
    None when a check fails. One look-up per event (a key signs many)."""
    checks, public_key = _signer_checks(items)
    text = _signer_text_of(items)
    if public_key is None or text is None or FAILED in map(itemgetter(1), checks):
        return None
    if len(checks) != 4:  # `_write_details` places the event's checks after these four
        return None
    from nacl.exceptions import BadSignatureError

    return checks, public_key, text, _verify_key(public_key), BadSignatureError


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
#   store) says the key was retired before the event's `created_at`, or does not say when;
# - `identity_bound` (`--orcid`): an ORCID proof for that iD names the key, and the key was not
#   retired before the event. Unverifiable proofs do not count: an identity was asked for, so
#   not knowing fails;
# - `identity` (nothing asked): "not identity-bound" when the claim carries no proofs
#   (unverifiable, which does not fail the event).


@dataclass(frozen=True, slots=True)
class ProofCheck:
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
    event: Mapping[str, Any], proofs: Sequence[ProofCheck], local_retired: str | None = None
) -> list[tuple[str, str | None]]:
    """(source, retired_at) of every source saying the key was retired before the event was
    made (or not saying when): the ORCID link, the web document, the local key store. A key
    retired after the event leaves the event bound: rotating a key must not unbind every claim
    it made while it was current. A retirement without a date cannot be placed, so it counts
    against the event."""
    said: list[tuple[str, str | None]] = [
        (p.kind, p.finding.retired_at)
        for p in proofs
        if p.finding is not None and p.finding.standing == "retired"
    ]
    if local_retired is not None:
        said.append(("the local key store", local_retired))
    created = event.get("created_at")
    return [(who, when) for who, when in dict.fromkeys(said) if after_retirement(created, when)]


def _retired_detail(event: Mapping[str, Any], late: Sequence[tuple[str, str | None]]) -> str:
    sources = "; ".join(f"per {who}, {when or 'at an unstated date'}" for who, when in late)
    return (
        f"the key was retired ({sources}) and this event is dated {event.get('created_at')}, "
        "after it (or not known to be before): a retired key's later events are not "
        "identity-bound"
    )


def identity_report(
    event: Mapping[str, Any],
    proofs: Sequence[ProofCheck],
    *,
    orcid: str | None = None,
    signer: str | None = None,
    local_retired: str | None = None,
) -> Report:
    """The identity checks of one event, given the proofs already fetched and, when the local
    key store holds the key as retired, its `retired_at`."""
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
    late = late_retirements(event, proofs, local_retired)
    if late:
        report.add("identity.retired", False, _retired_detail(event, late))
    if orcid is not None:
        report.checks.append(_bound(proofs, orcid, _retired_detail(event, late) if late else None))
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
# again (issue 39: re-verifying what was just signed cost more than signing it), once
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
    if not isinstance(event, dict) or not _MADE:
        return None
    eid = event.get("event_id")
    made = _MADE.get(eid) if type(eid) is str else None  # anything may be in a tampered one
    if made is None or not _well_shaped(event):
        return None
    signature, key = made
    signer = event["signer"]
    if event["signature"] != signature or signer.get("public_key_b64") != key:
        return None
    return _typed(event) if compute_event_id(event) == event["event_id"] else None
