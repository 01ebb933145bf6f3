"""The tight verification path and the lazy report give what the strict path gives.

`check_author_event` asks a citation every rule as a yes-or-no question and hands anything it
cannot vouch for to the strict path (`checked_in_full`). Here both judge the same events, genuine,
mutated (a field set to another value, a near miss of its own value, or deleted) and re-signed
after the mutation (so that the rules after the signature's are reached with a valid signature):
the reports must be equal, check for check, details included.

A document's report renames each event's checks only when they are read (`Report.extend`): the
checks read afterwards are those renaming at once gave, in the same order, and `ok`,
`strict_ok` and `failed` say what they said.
"""

from __future__ import annotations

import copy
import hashlib
import json
from collections.abc import Mapping
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from support.examples_budget import examples
from support.signer import FixedSigner

from pithauthor.protocol.canonical_json import b64encode, canonical
from pithauthor.protocol.checks.event import (
    EVENT_FIELDS,
    SIGNATURE_FIELDS,
    SIGNER_FIELDS,
    TEXT_FIELDS,
    _passing_citation,
    _well_shaped,
    check_author_event,
    checked_in_full,
    shape_faults,
)
from pithauthor.protocol.events import SIGNED_FIELDS
from pithauthor.protocol.ids import PithNumber
from pithauthor.protocol.subject import Subject
from pithauthor.protocol.verdict import FAILED, NOT_SIGNED, PASSED, UNVERIFIABLE, Check, Report
from pithauthor.sign import sign_citation

SIGNER = FixedSigner()
DIGEST = hashlib.sha256(b"the cited paper").hexdigest()
NUMBER = PithNumber.from_digest(DIGEST, 2021)
SUBJECT = Subject(NUMBER, DIGEST)
CITING = PithNumber.parse("pith:2023:NFG5PAOXQUVIWDX5F7YSYYL7EW")


def _citation(citation_key: str | None = None, context: str | None = None) -> dict[str, Any]:
    event = sign_citation(
        SIGNER, SUBJECT, CITING, "extends", citation_key=citation_key, context=context
    )
    return dict(event)


GENUINE = _citation(citation_key="smith2021", context="We extend its method to graphs.")


def _reseal(event: dict[str, Any]) -> None:
    """Give `event` the event_id and signature of its (perhaps changed) signed fields, when they
    can be serialised; as the signer would have written them."""
    try:
        digest = hashlib.sha256(canonical({k: event[k] for k in SIGNED_FIELDS})).digest()
    except (KeyError, TypeError, ValueError):
        return
    event["event_id"] = "sha256:" + digest.hex()
    signature = event.get("signature")
    if isinstance(signature, dict):
        signature["signature_b64"] = b64encode(SIGNER.sign_digest(digest))


def _same_verdict(event: Any) -> Report:
    texts: list[str] = []
    fast, strict = check_author_event(event, texts), checked_in_full(event)
    assert fast == strict
    assert (fast.ok, fast.strict_ok, fast.failed) == (strict.ok, strict.strict_ok, strict.failed)
    # the canonical text the tight path writes for a state's hash: only for an event that
    # passed everything, and then exactly `json.dumps`'s canonical serialisation of it
    assert len(texts) <= 1 and (fast.ok or not texts)
    if texts:
        assert texts[0] == json.dumps(
            event, sort_keys=True, separators=(",", ":"), ensure_ascii=False
        )
    return fast


def test_a_genuine_citation_takes_the_tight_path_with_the_strict_report() -> None:
    texts: list[str] = []
    passed = _passing_citation(GENUINE, texts)
    assert passed is not None  # else the comparisons below would not test the tight path
    assert texts == [canonical(GENUINE).decode()]  # and the text for a state's hash is written
    assert passed == checked_in_full(GENUINE)
    assert passed.ok and [c.status for c in passed.checks] == [PASSED] * len(passed.checks)
    _same_verdict(_citation())  # the optional fields left out


# Changes the tight path must hand to the strict path, each re-signed so that the signature
# holds: whatever fails, and what it cannot vouch for alone (a no-break space `isprintable`
# refuses and the strict rule allows)
RESIGNED = {
    "self-citation": ("payload", "citing_pith_number", NUMBER.full),
    "another paper's digest": ("payload", "canonical_sha256", "0" * 64),
    "upper-case digest": ("payload", "canonical_sha256", DIGEST.upper()),
    "no-break space": ("payload", "context", "We extend\u00a0its method."),
    "bidi control": ("payload", "context", "We extend \u202eits method."),
    "unknown relationship": ("payload", "relationship", "likes"),
    "a number in the payload": ("payload", "citation_key", 7),
    "old year": ("", "subject_pith_number", "pith:1990:" + NUMBER.full[10:]),
    "short number": ("", "subject_pith_number", NUMBER.short),
    "lower-case number": ("", "subject_pith_number", NUMBER.full.lower()),
    "no such day": ("", "created_at", "2026-02-30T10:00:00Z"),
    "another type": ("", "event_type", "author_attestation"),
    "another target": ("", "target", "author"),
    "registry signer": ("signer", "signer_type", "registry"),
    "another key id": ("signer", "key_id", "ed25519:" + "A" * 26),
    "an ORCID signer": ("signer", "signer_id", "orcid:0000-0002-1825-0097"),
    "a bad ORCID": ("signer", "signer_id", "orcid:0000-0002-1825-0098"),
    "another algorithm": ("signature", "algorithm", "ed448"),
    "another message": ("signature", "signed_message", "event_bytes"),
    "another event_id": ("", "event_id", "sha256:" + DIGEST),
}


def _set(event: dict[str, Any], where: str, field: str, value: Any) -> None:
    (event[where] if where else event)[field] = value


@pytest.mark.parametrize("resign", [False, True], ids=["as changed", "re-signed"])
@pytest.mark.parametrize("change", sorted(RESIGNED))
def test_each_change_gets_the_strict_report(change: str, resign: bool) -> None:
    event = copy.deepcopy(GENUINE)
    _set(event, *RESIGNED[change])
    if resign:
        _reseal(event)
    _same_verdict(event)


def test_a_bad_signature_is_named_by_the_tight_path_as_by_the_strict_one() -> None:
    event = copy.deepcopy(GENUINE)
    event["signature"]["signature_b64"] = b64encode(bytes(64))
    report = _passing_citation(event)  # everything else passes: the tight path finishes it
    assert report is not None and report == checked_in_full(event)
    assert [c.name for c in report.failed] == ["signature"]


# A lone UTF-16 surrogate: JSON cannot carry one (`parse_json` refuses it), an event built in
# Python can. Such a text has no UTF-8 bytes, so the event has no event_id: both paths fail it
# by name (`_near_miss` below may draw one at random; these make it certain)
SURROGATE_FIELDS = [
    (where, field)
    for where, block in (("", GENUINE), *((b, GENUINE[b]) for b in ("signer", "signature")))
    for field, value in block.items()
    if isinstance(value, str)
] + [("payload", field) for field in GENUINE["payload"]]


@pytest.mark.parametrize(("where", "field"), SURROGATE_FIELDS, ids=lambda x: x or "event")
def test_a_lone_surrogate_in_any_text_fails_and_raises_nothing(where: str, field: str) -> None:
    for value in ("\ud800", (GENUINE[where] if where else GENUINE)[field] + "\udfff"):
        event = copy.deepcopy(GENUINE)
        _set(event, where, field, value)
        report = _same_verdict(event)
        assert not report.ok


# --- mutated at random -----------------------------------------------------------------------

PLACES = {
    "": [*GENUINE, "extra"],
    "signer": [*GENUINE["signer"], "extra"],
    "signature": [*GENUINE["signature"], "extra"],
    "payload": [*GENUINE["payload"], "replaces", "withdraws", "extra"],
}
ODD_CHARS = '\u00a0\u202e\u200d\x00\n "\\éZa9:=+/'
VALUES = st.one_of(
    st.text(max_size=6),
    st.integers(),
    st.floats(allow_nan=False),
    st.none(),
    st.booleans(),
    st.lists(st.integers(), max_size=2),
    st.dictionaries(st.text(max_size=3), st.text(max_size=3), max_size=2),
)


@st.composite
def _near_miss(draw: st.DrawFn, text: str) -> str:
    """`text` changed a little: one character replaced, added or dropped, or its case."""
    how = draw(st.sampled_from(["replace", "insert", "drop", "case"]))
    if how == "case":
        return text.swapcase()
    at = draw(st.integers(0, len(text)))
    char = draw(st.one_of(st.sampled_from(ODD_CHARS), st.characters()))
    if how == "insert":
        return text[:at] + char + text[at:]
    if how == "drop" or at == len(text):
        return text[:at] + text[at + 1 :]
    return text[:at] + char + text[at + 1 :]


FIELDS = [(where, field) for where, names in PLACES.items() for field in names]
# every text of the genuine event: put in another field, it makes the near misses no random
# text finds (the subject's number as the citing one, the event_id's digest as the payload's)
LEAVES = sorted(
    {v for v in GENUINE.values() if isinstance(v, str)}
    | {v for block in ("signer", "signature", "payload") for v in GENUINE[block].values()}
    | {GENUINE["event_id"][7:], DIGEST.upper()}
)


@st.composite
def _mutated(draw: st.DrawFn) -> dict[str, Any]:
    event = copy.deepcopy(GENUINE)
    for _ in range(draw(st.integers(1, 2))):
        where, field = draw(st.sampled_from(FIELDS))
        target = event.get(where) if where else event
        if not isinstance(target, dict):
            continue
        current = target.get(field)
        action = draw(st.sampled_from(["near", "near", "leaf", "value", "delete"]))
        if action == "delete":
            target.pop(field, None)
        elif action == "near" and isinstance(current, str):
            target[field] = draw(_near_miss(current))
        elif action == "leaf":
            target[field] = draw(st.sampled_from(LEAVES))
        else:
            target[field] = draw(VALUES)
    if draw(st.booleans()):
        _reseal(event)
    return event


@settings(
    max_examples=examples(600),
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(_mutated())
def test_mutated_events_get_the_strict_report(event: dict[str, Any]) -> None:
    _same_verdict(event)


# --- the shape test -------------------------------------------------------------------------
# `_well_shaped` counts the keys and finds each field by its name; the test it replaced compared
# the key views with sets of the names. A key renamed keeps the count: it must still fail.


def _shaped_by_sets(event: Any) -> bool:
    """The shape test as it was: the key views equal to the names, every text exactly str."""
    if type(event) is not dict or event.keys() != set(EVENT_FIELDS):
        return False
    signer, signature = event["signer"], event["signature"]
    if type(signer) is not dict or signer.keys() != set(SIGNER_FIELDS):
        return False
    if type(signature) is not dict or signature.keys() != set(SIGNATURE_FIELDS):
        return False
    texts = [*signer.values(), *signature.values(), *(event[n] for n in TEXT_FIELDS)]
    return all(type(v) is str for v in texts) and isinstance(event["payload"], Mapping)


class _Text(str):
    """Text of another type than the JSON reader gives: the shape walk judges it."""


@st.composite
def _reshaped(draw: st.DrawFn) -> Any:
    event = copy.deepcopy(GENUINE)
    for _ in range(draw(st.integers(1, 3))):
        where = draw(st.sampled_from(["", "signer", "signature", "payload"]))
        target = event.get(where) if where else event
        if not isinstance(target, dict):
            continue
        field = draw(st.sampled_from([*target, "extra", 1]))
        action = draw(st.sampled_from(["rename", "delete", "add", "value", "text"]))
        if action == "rename" and field in target:  # the same number of keys
            name = str(field)
            new_name = draw(st.sampled_from(["extra", 1, name.upper(), _Text(name)]))
            target[new_name] = target.pop(field)
        elif action == "delete":
            target.pop(field, None)
        elif action == "add":
            target[field] = "x"
        elif action == "text" and field in target and isinstance(target[field], str):
            target[field] = _Text(target[field])
        else:
            target[field] = draw(VALUES)
    return event if draw(st.integers(0, 9)) else draw(st.sampled_from([[], "event", None]))


@settings(max_examples=examples(600), deadline=None)
@given(_reshaped())
def test_the_shape_test_finds_exactly_the_events_the_key_sets_found(event: Any) -> None:
    assert _well_shaped(event) == _shaped_by_sets(event)
    if not _shaped_by_sets(event) and not isinstance(event, dict):
        assert shape_faults(event)  # (text of a str subclass passes the walk: it is text)


def test_a_key_renamed_in_place_fails_the_shape_test() -> None:
    for where in ("", "signer", "signature"):
        event = copy.deepcopy(GENUINE)
        block = event[where] if where else event
        name = next(n for n in block if n not in ("payload",))
        block["extra"] = block.pop(name)
        assert not _well_shaped(event) and shape_faults(event)
    assert _well_shaped(GENUINE) and shape_faults(GENUINE) == []


# --- the lazy report -------------------------------------------------------------------------


def _renamed_at_once(parts: list[Any]) -> list[Check]:
    """What `extend` wrote before it was lazy: each check renamed as it came."""
    out: list[Check] = []
    for part in parts:
        if isinstance(part, Check):
            out.append(part)
        else:
            checks, prefix, path_prefix = part
            out += [
                Check(prefix + c.name, c.status, c.detail, tuple(path_prefix + p for p in c.paths))
                for c in checks
            ]
    return out


SUB_A = [Check("signature", PASSED, "ok"), Check("not_signed", NOT_SIGNED, "x", ("a", "b[0]"))]
SUB_B = [Check("event_id", FAILED, "differs"), Check("merge", UNVERIFIABLE, "?", ("m",))]


def _report(statuses_of_b: list[Check]) -> tuple[Report, list[Any]]:
    """A report built as a document's is: own checks, events' reports, own checks between and
    after them (nothing read from it yet); and its parts, for `_renamed_at_once`."""
    report = Report("bundle")
    parts: list[Any] = []
    for name in ("required", "bundle_type"):
        report.add(name, True, "present")
        parts.append(Check(name, PASSED, "present"))
    for index, checks in enumerate([SUB_A, statuses_of_b, SUB_A]):
        sub = Report("event", list(checks))
        report.extend(sub, prefix=f"events[{index}].", path_prefix=f"events[{index}].")
        parts.append((checks, f"events[{index}].", f"events[{index}]."))
        sub.add("added_later", False)  # after `extend`: not in the document's report
        if index == 1:
            report.add("between", True)
            parts.append(Check("between", PASSED, ""))
    report.extend(Report("event", list(SUB_A)))  # no prefix
    report.extend(Report("event", list(SUB_A)), path_prefix="at.")  # a path prefix only
    parts += [(SUB_A, "", ""), (SUB_A, "", "at.")]
    report.not_signed("not_signed", ("extra",))
    parts.append(Check("not_signed", NOT_SIGNED, "extra", ("extra",)))
    return report, parts


def test_the_checks_read_are_those_renaming_at_once_gave() -> None:
    report, parts = _report(SUB_B)
    assert report.checks == _renamed_at_once(parts)
    held = report.checks
    report.add("after_reading", True)  # a check added once read goes last
    report.extend(Report("event", list(SUB_B)), prefix="late.")
    held.append(Check("appended", PASSED))  # to the list read before: it is the report's
    assert report.checks is held
    late = _renamed_at_once([Check("after_reading", PASSED, ""), (SUB_B, "late.", "")])
    assert report.checks == [*_renamed_at_once(parts), *late, Check("appended", PASSED)]


def test_a_waiting_part_counts_in_the_verdict_before_it_is_renamed() -> None:
    failing, _ = _report(SUB_B)  # one event failed, one unverifiable
    assert not failing.ok and not failing.strict_ok
    assert [c.name for c in failing.failed] == ["events[1].event_id"]
    unverifiable, _ = _report([Check("merge", UNVERIFIABLE, "?")])
    assert unverifiable.ok and not unverifiable.strict_ok and unverifiable.failed == []
    passing, _ = _report([Check("event_id", PASSED, "same")])
    assert passing.ok and passing.strict_ok and passing.failed == []
    assert passing.counts() == {PASSED: 8, FAILED: 0, UNVERIFIABLE: 0, NOT_SIGNED: 5}
    assert passing == _report([Check("event_id", PASSED, "same")])[0]
    assert passing != failing


def _write(checks: list[Check], detail: str) -> None:
    checks[1] = Check("event_id", PASSED, detail)


def test_a_pending_report_adopted_by_a_document_reads_completed_and_renamed() -> None:
    stand_in = Check("(being written)", PASSED)
    sub = Report.pending("event", [SUB_A[0], stand_in, SUB_B[0]], _write, "sha256 of ...")
    doc = Report("bundle")
    doc.add("required", True)
    doc.extend(sub, prefix="events[0].", path_prefix="events[0].", adopt=True)
    doc.add("completeness", True)
    assert not doc.ok and doc.strict_ok is False  # SUB_B[0] failed, known before any read
    assert [c.name for c in doc.failed] == ["events[0].event_id"]
    assert doc.checks == [
        Check("required", PASSED),
        Check("events[0].signature", PASSED, "ok"),
        Check("events[0].event_id", PASSED, "sha256 of ..."),
        Check("events[0].event_id", FAILED, "differs"),
        Check("completeness", PASSED),
    ]
    alone = Report.pending("event", [stand_in], _write_first, "x")
    assert alone.ok and alone == Report("event", [Check("subject", PASSED, "x")])


def _write_first(checks: list[Check], detail: str) -> None:
    checks[0] = Check("subject", PASSED, detail)


def test_the_kept_binding_is_the_last_pair_that_held_and_no_other() -> None:
    # the tight path keeps the (digest, subject) of the last citation whose payload was bound to
    # its subject: right after the genuine event, another paper's digest under the same subject,
    # and the same digest under another subject, are each re-judged (and fail as the strict
    # path fails them); the genuine event passes again after both
    assert check_author_event(GENUINE).ok
    other_digest = copy.deepcopy(GENUINE)
    _set(other_digest, "payload", "canonical_sha256", hashlib.sha256(b"another").hexdigest())
    _reseal(other_digest)
    other_subject = copy.deepcopy(GENUINE)
    another = PithNumber.from_digest(hashlib.sha256(b"another").hexdigest(), 2021)
    _set(other_subject, "", "subject_pith_number", another.full)
    _reseal(other_subject)
    for event in (other_digest, other_subject):
        report = _same_verdict(event)
        assert [c.name for c in report.failed] == ["payload_subject"]
    assert _same_verdict(GENUINE).ok


def test_a_signer_block_kept_by_its_key_is_compared_whole() -> None:
    # the tight path keeps each signer block's verdict by its key text: a block under the same
    # key with any other field changed, right after the genuine one, is judged again, and the
    # genuine one after it too
    assert check_author_event(GENUINE).ok
    for change in ("another key id", "an ORCID signer", "a bad ORCID", "registry signer"):
        event = copy.deepcopy(GENUINE)
        _set(event, *RESIGNED[change])
        _reseal(event)
        _same_verdict(event)
        assert _same_verdict(GENUINE).ok
