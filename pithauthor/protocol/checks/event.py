"""Verification of one author-signed event: the envelope, then the payload rules.

Payload checks, after the envelope's (see `envelope.check_envelope`):

- `payload_schema`: the payload meets its event type's JSON Schema; the detail names the JSON
  path of the first failing field (`payload.relationship must be one of [...]`);
- `payload_subject`: the payload's `canonical_sha256` is the digest that
  `subject_pith_number` was cut from (base32(digest)[:26] = BODY);
- `payload_orcid` (attestations that name an ORCID iD): the iD's check digit is right, and it
  is the signer's when the signer is identified by an ORCID iD;
- `payload_text`: no text field holds a control character or a bidirectional control
  (`pithauthor.protocol.text`: the rule every signed text field meets when it is signed);
- `payload_citing` (citations): the citing paper is not the cited one (the subject);
- `payload_identity_proofs` (attestations that carry them): each locator suits its kind, and an
  ORCID proof names the author's own iD (docs/identity.md). Fetching them is not done here.

Parsed JSON becomes a typed `AuthorEvent` here only: `checked_author_event` (every rule) or
`typed_author_event` (the shape, for events this package stored after checking them in full).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, cast

from pithauthor.protocol.documents import AuthorEvent
from pithauthor.protocol.events import EVENT_TARGETS, check_envelope, shape_faults
from pithauthor.protocol.identity import is_orcid, proofs_problem
from pithauthor.protocol.ids import PithNumber
from pithauthor.protocol.payloads import (
    ATTESTATION,
    CITATION,
    EVENT_TYPES,
    digest_matches_number,
    payload_orcid,
    schema_violation,
    self_citation_problem,
)
from pithauthor.protocol.text import payload_text_problem
from pithauthor.protocol.verdict import FAILED, Report


def check_author_event(event: Any) -> Report:
    """Every rule an author event must meet, each as a named check."""
    report = check_envelope(event)
    # the checks below index the fields by name: only a sound structure guarantees them
    if report.checks[0].name == "structure" and report.checks[0].status == FAILED:
        return report
    etype, payload = event["event_type"], event["payload"]
    if etype not in EVENT_TYPES:
        return report  # already failed as event_type
    violation = schema_violation(etype, payload)
    report.add("payload_schema", violation is None, violation or f"pithauthor.{etype}.v1")
    if violation is not None:
        return report  # likewise: the payload's fields are read as the schema promises them
    subject = _subject_number(report, event["subject_pith_number"])
    # 130 bits (what a number carries) bind the payload to the subject here; where the record
    # itself is at hand (a bundle, a state) all 256 are compared (`payload_record`)
    if subject is not None:
        digest = payload["canonical_sha256"]
        bound = digest_matches_number(digest, subject)
        verb = "gives" if bound else "does not give"
        report.add(
            "payload_subject", bound, f"payload.canonical_sha256 {digest[:12]}... {verb} {subject}"
        )
    problem = payload_text_problem(payload)
    report.add("payload_text", problem is None, problem or "no control or bidirectional characters")
    if etype == CITATION:
        subject_number = event["subject_pith_number"]
        problem = self_citation_problem(payload["citing_pith_number"], subject_number)
        report.add("payload_citing", problem is None, problem or "cites another paper")
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


def checked_author_event(doc: object) -> tuple[Report, AuthorEvent | None]:
    """Every rule (`check_author_event`), and `doc` as a typed event when it meets them all."""
    report = check_author_event(doc)
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


def _subject_number(report: Report, value: str) -> PithNumber | None:
    """The subject as a number, when the envelope's `subject` check found it well formed."""
    if any(c.name == "subject" and c.status == FAILED for c in report.checks):
        return None
    _, year, body = value.split(":")
    return PithNumber(body=body, year=int(year))


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
