"""`check_authors_at` (a document's list of author events checked as one, what depends only
on the document decided once) reports exactly what each event at its place must report (a
reference made here from the event's own checks and the rules, not by the code under test),
and `check_author_at` of one event likewise, check for check (names, statuses, details,
paths); the list keeps the same `checked` entries for the merge and the hash. On passing
events and on every kind of failure a list can hold (another subject, another record, another
type for the list, a broken signature, a missing or extra field, a value that is not an
event), with and without a subject, a digest and an expected type.
"""

from __future__ import annotations

import types
from collections.abc import Mapping
from typing import Any

import pytest
from support.registry import SUBJECT, TestSigner, attestation, citation

from pithauthor.protocol.checks.contents import check_author_at, check_authors_at
from pithauthor.protocol.checks.event import checked_author_event
from pithauthor.protocol.checks.fields import EVENT_CHECKED
from pithauthor.protocol.checks.merge import CheckedEntry
from pithauthor.protocol.ids import PithNumber
from pithauthor.protocol.verdict import PASSED, Report, uncovered

SIGNER = TestSigner(b"l" * 32)


def _events() -> list[Any]:
    good = [citation(SIGNER, i) for i in range(3)]
    other_subject = citation(SIGNER, 4)
    other_subject["subject_pith_number"] = "pith:2024:AAAAAAAAAAAAAAAAAAAAAAAAAA"
    other_record = citation(SIGNER, 5)
    other_record["payload"]["canonical_sha256"] = "0" * 64
    bad_signature = citation(SIGNER, 6)
    bad_signature["signature"]["signature_b64"] = "A" * 86 + "=="
    extra = {**citation(SIGNER, 7), "note": "not signed"}
    missing = citation(SIGNER, 8)
    del missing["created_at"]
    no_payload = {**citation(SIGNER, 9), "payload": "text"}
    return [
        *good,
        attestation(SIGNER),  # another type: fails `list` where a type is expected
        other_subject,
        other_record,
        bad_signature,
        extra,
        missing,
        no_payload,
        types.MappingProxyType(citation(SIGNER, 10)),  # a Mapping that is not a dict
        "not an event",
        None,
        [citation(SIGNER, 11)],
    ]


def _one_by_one(
    events: list[Any],
    subject: PithNumber | None,
    digest: Any,
    etype: str | None,
    checked: dict[int, CheckedEntry] | None,
    where: str = "current.list",
) -> Report:
    """The reference: each event's own checks (`checked_author_event`), then the document's
    three, each made here as the rules say (not by the code under test), at `where[i]`."""
    report = Report("state")
    full = subject.full if subject is not None else None
    for index, event in enumerate(events):
        texts: list[str] = []
        sub, typed = checked_author_event(event, texts)
        structure_ok = sub.checks[0].name == "structure" and sub.checks[0].status == PASSED
        if checked is not None:
            failed = [c.name for c in sub.failed]
            checked[id(event)] = (event, failed, typed, texts[0] if texts else None)
        if isinstance(event, Mapping):
            about = full is not None and event.get("subject_pith_number") == full
            sub.add("subject_matches", about, f"the event is about {full or 'this record'}")
            payload = event.get("payload")
            sub.add(
                "payload_record",
                isinstance(payload, Mapping) and payload.get("canonical_sha256") == digest,
                "payload.canonical_sha256 is this record's (all 256 bits)",
            )
            if etype is not None:
                sub.add(
                    "list",
                    event.get("event_type") == etype,
                    f"an {etype} list holds only {etype} events",
                )
            if not structure_ok:
                sub.not_signed("not_signed", uncovered(event, EVENT_CHECKED))
        at = f"{where}[{index}]."
        report.extend(sub, prefix=at, path_prefix=at)
    return report


@pytest.mark.parametrize("subject", [SUBJECT.pith_number, None])
@pytest.mark.parametrize("digest", [SUBJECT.canonical_sha256, None])
@pytest.mark.parametrize("etype", ["citation_signature", None])
@pytest.mark.parametrize("keep", [True, False])
def test_a_list_checked_at_once_reports_what_each_event_checked_at_its_place_reports(
    subject: PithNumber | None, digest: Any, etype: str | None, keep: bool
) -> None:
    events = _events()
    once: dict[int, CheckedEntry] | None = {} if keep else None
    each: dict[int, CheckedEntry] | None = {} if keep else None
    listed = Report("state")
    check_authors_at(listed, events, "current.list", subject, digest, etype, once)
    expected = _one_by_one(events, subject, digest, etype, each)
    assert listed.checks == expected.checks
    single = Report("state")
    for index, event in enumerate(events):  # one at a time, as a bundle's are checked
        check_author_at(single, event, f"current.list[{index}]", subject, digest, etype, None)
    assert single.checks == expected.checks
    assert not listed.ok
    failed = {c.name for c in listed.failed}
    assert ("current.list[3].list" in failed) == (etype is not None)  # the attestation
    assert once == each


def test_a_list_of_passing_events_passes_and_keeps_their_texts() -> None:
    events = [citation(SIGNER, i) for i in range(5)]
    checked: dict[int, CheckedEntry] = {}
    report = Report("state")
    check_authors_at(
        report,
        events,
        "current.citation_signatures",
        SUBJECT.pith_number,
        SUBJECT.canonical_sha256,
        "citation_signature",
        checked,
    )
    assert report.ok
    assert (
        report.checks
        == _one_by_one(
            events,
            SUBJECT.pith_number,
            SUBJECT.canonical_sha256,
            "citation_signature",
            None,
            "current.citation_signatures",
        ).checks
    )
    names = [c.name for c in report.checks]
    assert "current.citation_signatures[4].subject_matches" in names
    for event in events:
        kept, failed, typed, text = checked[id(event)]
        assert kept is event and failed == [] and typed is event and text is not None
