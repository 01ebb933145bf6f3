"""Verification of one author-signed event: the envelope, then the payload rules.

Payload checks, after the envelope's (see `envelope.check_envelope`):

- `payload_schema`: the payload meets its event type's JSON Schema; the detail names the JSON
  path of the first failing field (`payload.relationship must be one of [...]`);
- `payload_subject`: the payload's `canonical_sha256` is the digest that
  `subject_pith_number` was cut from (base32(digest)[:26] = BODY);
- `payload_orcid` (attestations that name an ORCID iD): the iD's check digit is right, and it
  is the signer's when the signer is identified by an ORCID iD;
- `payload_identity_proofs` (attestations that carry them): each locator suits its kind, and an
  ORCID proof names the author's own iD (docs/identity.md). Fetching them is not done here.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pithauthor._core.checks import FAILED, Report
from pithauthor._core.envelope import check_envelope
from pithauthor._core.identity import proofs_problem
from pithauthor._core.orcid import is_orcid
from pithauthor._core.payload_schema import schema_violation
from pithauthor._core.payloads import (
    ATTESTATION,
    EVENT_TYPES,
    digest_matches_number,
    payload_orcid,
)
from pithauthor._core.pith_number import PithNumber


def check_author_event(event: Any) -> Report:
    """Every rule an author event must meet, each as a named check."""
    report = check_envelope(event)
    if report.checks[0].name == "structure" and report.checks[0].status == FAILED:
        return report
    etype, payload = event["event_type"], event["payload"]
    if etype not in EVENT_TYPES:
        return report  # already failed as event_type
    violation = schema_violation(etype, payload)
    report.add("payload_schema", violation is None, violation or f"pithauthor.{etype}.v1")
    if violation is not None:
        return report
    subject = _subject_number(report, event["subject_pith_number"])
    if subject is not None:
        digest = payload["canonical_sha256"]
        bound = digest_matches_number(digest, subject)
        verb = "gives" if bound else "does not give"
        report.add(
            "payload_subject", bound, f"payload.canonical_sha256 {digest[:12]}... {verb} {subject}"
        )
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
