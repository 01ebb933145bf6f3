"""Building and signing the three author event types with `pithauthor.sign`."""

from __future__ import annotations

import hashlib
import json
import re
from datetime import UTC, datetime, timedelta, timezone
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from support.examples_budget import examples
from support.paths import load_fixture
from support.signer import VECTOR_ORCID, FixedSigner

from pithauthor.errors import DocumentError, EventError, KeyRetired
from pithauthor.protocol.canonical_json import canonical
from pithauthor.protocol.checks.event import check_author_event
from pithauthor.protocol.events import SIGNED_FIELDS, _signed_bytes
from pithauthor.protocol.ids import PithNumber
from pithauthor.protocol.payloads import RELATIONSHIPS
from pithauthor.protocol.record import build_canonical_record, summarise
from pithauthor.protocol.record import parse_arxiv_metadata as parse_meta
from pithauthor.protocol.subject import Subject
from pithauthor.sign import attest_authorship, record_replication, sign_citation

DEAR = "pith:2023:NFG5PAOXQUVIWDX5F7YSYYL7EW"  # the registry's number for arXiv 2302.12445
SHA = "ab" * 32


@pytest.fixture
def dear() -> Subject:
    return Subject.from_document(load_fixture("record-2302.12445v2.json"))


@pytest.fixture
def pipeline() -> Subject:
    return Subject.from_document(load_fixture("state-2204.10562v1.json"))


def _failed(event: dict[str, Any]) -> list[str]:
    return [c.name for c in check_author_event(event).failed]


def test_attestation_verifies_and_carries_the_subject_digest(dear: Subject) -> None:
    event = attest_authorship(
        FixedSigner(), dear, name="Josiah Carberry", orcid=VECTOR_ORCID, position=2
    )
    assert _failed(event) == []
    assert event["subject_pith_number"] == DEAR
    assert event["target"] == "author"
    assert (
        event["payload"]["canonical_sha256"]
        == load_fixture("record-2302.12445v2.json")["canonical_sha256"]
    )
    assert event["payload"]["author"] == {
        "name": "Josiah Carberry",
        "orcid": VECTOR_ORCID,
        "position": 2,
    }
    assert event["payload"]["statement"] == "I am an author of this paper."


def test_optional_keys_are_omitted_not_null(dear: Subject, pipeline: Subject) -> None:
    att = attest_authorship(FixedSigner(orcid=None), dear, name="A. Author")
    cit = sign_citation(FixedSigner(), pipeline, dear.pith_number, "cites")
    assert att["payload"]["author"] == {"name": "A. Author"}
    assert set(cit["payload"]) == {
        "payload_schema",
        "canonical_sha256",
        "citing_pith_number",
        "relationship",
    }
    assert "null" not in json.dumps([att, cit])
    assert att["signer"]["signer_id"] == att["signer"]["key_id"]


def test_citation_subject_is_the_cited_paper(dear: Subject, pipeline: Subject) -> None:
    event = sign_citation(
        FixedSigner(), pipeline, dear.pith_number, "extends", citation_key="li2022", context="ok"
    )
    assert _failed(event) == []
    assert event["subject_pith_number"] == pipeline.pith_number.full
    assert event["payload"]["citing_pith_number"] == DEAR
    assert event["payload"]["canonical_sha256"] == pipeline.canonical_sha256


@pytest.mark.parametrize("relationship", RELATIONSHIPS)
def test_each_of_the_eight_relationships_signs(
    relationship: str, dear: Subject, pipeline: Subject
) -> None:
    assert _failed(sign_citation(FixedSigner(), pipeline, dear.pith_number, relationship)) == []


@pytest.mark.parametrize(
    ("kind", "outcome", "proof_system"),
    [
        ("replication", "reproduced", None),
        ("replication", "not_reproduced", None),
        ("falsification", "falsified", None),
        ("falsification", "inconclusive", None),
        ("formal_bridge", "formalized", "lean4"),
        ("formal_bridge", "not_formalized", "coq"),
        ("formal_bridge", "partially_formalized", "isabelle"),
    ],
)
def test_replication_kinds_with_their_outcomes_sign(
    kind: str, outcome: str, proof_system: str | None, dear: Subject
) -> None:
    event = record_replication(
        FixedSigner(),
        dear,
        kind=kind,
        outcome=outcome,
        summary="done",
        artifacts=[("https://example.org/a.tgz", SHA)],
        proof_system=proof_system,
    )
    assert _failed(event) == []
    assert event["payload"]["artifacts"] == [{"uri": "https://example.org/a.tgz", "sha256": SHA}]
    assert ("proof_system" in event["payload"]) == (proof_system is not None)


@pytest.mark.parametrize(
    ("kwargs", "field"),
    [
        ({"kind": "replication", "outcome": "falsified"}, "payload.outcome"),
        ({"kind": "falsification", "outcome": "reproduced"}, "payload.outcome"),
        ({"kind": "formal_bridge", "outcome": "formalized"}, "proof_system"),
        ({"kind": "replication", "outcome": "reproduced", "proof_system": "coq"}, "proof_system"),
        (
            {"kind": "formal_bridge", "outcome": "formalized", "proof_system": "agda"},
            "proof_system",
        ),
        ({"kind": "reproduction", "outcome": "reproduced"}, "payload.kind"),
        ({"kind": "replication", "outcome": "reproduced", "summary": ""}, "payload.summary"),
        (
            {"kind": "replication", "outcome": "reproduced", "artifacts": [("a b", SHA)]},
            "payload.artifacts[0].uri",
        ),
        (
            {"kind": "replication", "outcome": "reproduced", "artifacts": [("https://x", "AB")]},
            "payload.artifacts[0].sha256",
        ),
    ],
)
def test_bad_replication_is_refused_naming_the_field(
    kwargs: dict[str, Any], field: str, dear: Subject
) -> None:
    args: dict[str, Any] = {"summary": "s", **kwargs}
    with pytest.raises(EventError, match=re.escape(field)):
        record_replication(FixedSigner(), dear, **args)


def test_bad_citation_fields_are_refused(dear: Subject, pipeline: Subject) -> None:
    signer = FixedSigner()
    with pytest.raises(EventError, match=r"payload\.relationship"):
        sign_citation(signer, pipeline, dear.pith_number, "agrees")
    with pytest.raises(EventError, match=r"payload\.context"):
        sign_citation(signer, pipeline, dear.pith_number, "cites", context="x" * 501)
    assert (
        _failed(sign_citation(signer, pipeline, dear.pith_number, "cites", context="x" * 500)) == []
    )
    with pytest.raises(EventError, match=r"payload\.citation_key"):
        sign_citation(signer, pipeline, dear.pith_number, "cites", citation_key="a b")
    with pytest.raises(EventError, match="year"):
        sign_citation(signer, pipeline, PithNumber.parse(DEAR.split(":")[2]), "cites")


def test_bad_attestation_fields_are_refused(dear: Subject) -> None:
    signer = FixedSigner()
    with pytest.raises(EventError, match="check digit"):
        attest_authorship(signer, dear, name="X", orcid="0000-0002-1825-0098")
    with pytest.raises(EventError, match=r"payload\.author\.position"):
        attest_authorship(signer, dear, name="X", position=0)
    with pytest.raises(EventError, match=r"payload\.author\.name"):
        attest_authorship(signer, dear, name="   ")
    with pytest.raises(EventError, match=r"payload\.statement"):
        attest_authorship(signer, dear, name="X", statement="s" * 1001)


def test_created_at_defaults_to_now_in_utc_at_second_precision(dear: Subject) -> None:
    before = datetime.now(UTC).replace(microsecond=0)
    event = attest_authorship(FixedSigner(), dear, name="X")
    after = datetime.now(UTC)
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ", event["created_at"])
    stamp = datetime.strptime(event["created_at"], "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=UTC)
    assert before <= stamp <= after


def test_created_at_datetime_is_converted_to_utc(dear: Subject) -> None:
    cet = timezone(timedelta(hours=1))
    when = datetime(2026, 11, 29, 13, 46, 55, 999_000, tzinfo=cet)
    event = attest_authorship(FixedSigner(), dear, name="X", created_at=when)
    assert event["created_at"] == "2026-11-29T12:46:55Z"


@pytest.mark.parametrize(
    "bad",
    [
        "2026-11-29T12:46:55.1Z",
        "2026-11-29 12:46:55Z",
        "2026-11-29T12:46:55+00:00",
        "2026-02-30T00:00:00Z",
    ],
)
def test_created_at_not_utc_seconds_is_refused(bad: str, dear: Subject) -> None:
    with pytest.raises(EventError, match="created_at"):
        attest_authorship(FixedSigner(), dear, name="X", created_at=bad)


def test_naive_datetime_is_refused(dear: Subject) -> None:
    with pytest.raises(EventError, match="time zone"):
        attest_authorship(FixedSigner(), dear, name="X", created_at=datetime(2026, 1, 1))


class _CountingSigner(FixedSigner):
    calls = 0

    def sign_digest(self, digest: bytes) -> bytes:
        self.calls += 1
        return super().sign_digest(digest)


def test_signing_with_a_retired_key_is_refused_before_signing(
    dear: Subject, pipeline: Subject
) -> None:
    signer = _CountingSigner(status="retired", name="old-key")
    with pytest.raises(KeyRetired, match="old-key"):
        attest_authorship(signer, dear, name="X")
    with pytest.raises(KeyRetired):
        sign_citation(signer, pipeline, dear.pith_number, "cites")
    with pytest.raises(KeyRetired):
        record_replication(signer, dear, kind="replication", outcome="reproduced", summary="s")
    assert signer.calls == 0


def test_same_inputs_give_the_same_event(dear: Subject) -> None:
    one = attest_authorship(FixedSigner(), dear, name="X", created_at="2026-01-01T00:00:00Z")
    two = attest_authorship(FixedSigner(), dear, name="X", created_at="2026-01-01T00:00:00Z")
    assert one == two


# --- Subject ---------------------------------------------------------------------------------


def test_subject_from_a_registry_record(dear: Subject) -> None:
    assert dear.pith_number.full == DEAR
    assert dear.source_id == "2302.12445"


@pytest.mark.parametrize(
    "spelling", [str.upper, lambda hexa: " ".join([hexa[:32], hexa[32:]])], ids=["upper", "space"]
)
def test_a_subject_digest_is_lower_case_hex_only(dear: Subject, spelling: Any) -> None:
    """The protocol shows every hash as lower-case hex (VERIFIED); `bytes.fromhex` would take
    these spellings of the same bytes, and the event signed from them could never verify."""
    with pytest.raises(DocumentError, match="does not give"):
        Subject(dear.pith_number, spelling(dear.canonical_sha256))


def test_subject_from_from_arxiv_json_equals_the_registry_record(dear: Subject) -> None:
    raw = json.dumps(load_fixture("arxiv-metadata-2302.12445.json")).encode()
    computed = summarise(build_canonical_record(parse_meta(raw)))
    assert Subject.from_document(computed) == dear


def test_subject_from_a_state_and_a_bundle(pipeline: Subject) -> None:
    state = load_fixture("state-2204.10562v1.json")
    assert pipeline.pith_number.full == state["pith_number"]
    bundle = {
        "bundle_type": "pith_open_graph_bundle",
        "pith_number": state["pith_number"],
        "canonical_record": state["current"]["canonical_record"],
        "canonical_sha256": pipeline.canonical_sha256,
        "events": [],
    }
    assert Subject.from_document(bundle) == pipeline


def test_subject_refuses_a_record_that_does_not_hash_to_its_number() -> None:
    record = load_fixture("record-2302.12445v2.json")
    record["canonical_record"]["metadata"]["primary_cat"] = "cs.AI"
    with pytest.raises(DocumentError, match="canonical_sha256"):
        Subject.from_document(record)
    record = load_fixture("record-2302.12445v2.json")
    record["pith_number"] = "pith:2023:AAAAAAAAAAAAAAAAAAAAAAAAAA"
    with pytest.raises(DocumentError, match="pith:2023:AAAA"):
        Subject.from_document(record)
    with pytest.raises(DocumentError, match="canonical_record"):
        Subject.from_document({"pith_number": DEAR})


def test_subject_number_must_be_cut_from_its_digest() -> None:
    with pytest.raises(DocumentError, match="does not give"):
        Subject(PithNumber.parse(DEAR), SHA)


@pytest.mark.parametrize("year", [1990, 10000, -1])
def test_a_subject_year_outside_the_numbers_range_is_refused(year: int) -> None:
    """A PithNumber made directly skips `parse`: a Subject of it would sign events that fail
    the verifier's subject check (the template writes the number as it is)."""
    body = PithNumber.parse(DEAR).body
    digest = load_fixture("record-2302.12445v2.json")["canonical_sha256"]
    with pytest.raises(DocumentError, match="year"):
        Subject(PithNumber(body, year), digest)
    assert Subject(PithNumber(body, 2023), digest).pith_number.full == DEAR


# any text, often with what JSON escapes (quote, backslash, controls) and non-ASCII
_TEXT = st.text(
    st.characters(exclude_categories=["Cs"]) | st.sampled_from('"\\\n\x00\x7fé\u2028'), max_size=12
)
_LEAF = st.none() | st.booleans() | st.integers(-(2**53) + 1, 2**53 - 1) | _TEXT
_PAYLOAD = st.dictionaries(
    _TEXT, st.recursive(_LEAF, lambda inner: st.lists(inner, max_size=3), max_leaves=6), max_size=6
)
_TOP = [f for f in SIGNED_FIELDS if f not in ("signer", "payload")]


@settings(max_examples=examples(150), deadline=None)
@given(
    texts=st.fixed_dictionaries({f: _TEXT for f in _TOP}),
    signer=st.dictionaries(_TEXT, _TEXT, max_size=5),
    payload=_PAYLOAD,
    spoil=st.sampled_from([None, None, None, "signer", *_TOP]),  # mostly all text
    leaf=_LEAF,
)
def test_the_signed_bytes_of_any_event_are_canonical_json_of_its_signed_fields(
    texts: dict[str, Any], signer: dict[str, Any], payload: dict[str, Any], spoil: Any, leaf: Any
) -> None:
    """`seal` and `compute_event_id` place the kept signer text and the payload in a template:
    it must be `canonical` of the six signed fields, whatever they hold (a field that is not
    text takes `canonical` itself)."""
    event = {**texts, "signer": signer, "payload": payload, "event_id": "x", "signature": {}}
    if spoil == "signer":
        event["signer"] = {**signer, "signer_type": leaf}
    elif spoil is not None:
        event[spoil] = leaf
    expected = canonical({k: event[k] for k in SIGNED_FIELDS})
    assert _signed_bytes(event) == expected
    assert _signed_bytes(event) == expected  # again: the signer text now comes from the cache


def test_a_real_events_id_is_the_hash_of_its_canonical_signed_fields(
    dear: Subject, pipeline: Subject
) -> None:
    context = 'é "quoted" \\ back'  # escaped and non-ASCII text in the template's payload
    event = sign_citation(FixedSigner(), dear, pipeline.pith_number, "extends", context=context)
    signed = {k: event[k] for k in SIGNED_FIELDS}
    raw = json.dumps(signed, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    assert event["event_id"] == "sha256:" + hashlib.sha256(raw.encode()).hexdigest()
    assert _failed(event) == []


# --- the signer's template for citations ----------------------------------------------------------
# `sign_citation` checks the fields from outside by their schema rules and writes the payload and
# the envelope in one template (`sign._template_citation`). The full path is the
# one a `settle=` takes; an identity settle forces it for the same inputs, so both must give the
# same event (Ed25519 signatures are deterministic) or the same refusal.
def _same_statement(unsigned: Any) -> Any:
    return unsigned


# any text, weighted to what the template must escape or the rules must refuse near their limits
_FIELD = st.text(
    st.characters() | st.sampled_from('"\\\n\t é\u00a0\u202e\u2028\ud800'),
    max_size=24,
) | st.sampled_from(["a" * 200, "a" * 201, "x" * 500, "x" * 501, "", " ", "k", 7, ["k"]])


def _both_ways(dear: Subject, pipeline: Subject, **fields: Any) -> tuple[Any, Any]:
    """(the template's outcome, the full path's outcome): an event, or the refusal's text."""
    outcomes = []
    for settle in (None, _same_statement):
        try:
            outcomes.append(
                sign_citation(
                    FixedSigner(),
                    pipeline,
                    dear.pith_number,
                    created_at="2026-12-01T10:00:00Z",
                    settle=settle,
                    **fields,
                )
            )
        except EventError as exc:
            outcomes.append(str(exc))
    return outcomes[0], outcomes[1]


@settings(max_examples=examples(300), deadline=None)
@given(
    key=st.none() | _FIELD,
    context=st.none() | _FIELD,
    relationship=st.sampled_from([*RELATIONSHIPS, "Extends", "cites ", "", 3, ["cites"]]),
)
def test_the_citation_template_makes_the_full_paths_event_or_its_refusal(
    key: Any, context: Any, relationship: Any
) -> None:
    dear = Subject.from_document(load_fixture("record-2302.12445v2.json"))
    pipeline = Subject.from_document(load_fixture("state-2204.10562v1.json"))
    fast, full = _both_ways(
        dear, pipeline, relationship=relationship, citation_key=key, context=context
    )
    assert fast == full
    if isinstance(fast, dict):  # and what is signed passes every strict check, id recomputed
        assert _failed(fast) == []
        signed = {k: fast[k] for k in SIGNED_FIELDS}
        assert fast["event_id"] == "sha256:" + hashlib.sha256(canonical(signed)).hexdigest()


def test_a_plain_citation_takes_the_template_not_the_full_checks(
    dear: Subject, pipeline: Subject, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Without this, the agreement above could hold because both ways are the full path."""
    import pithauthor.sign as signing

    def refuse(*_: Any) -> str:
        raise AssertionError("the full checks ran on a payload the template had checked")

    monkeypatch.setattr(signing, "built_payload_violation", refuse)
    monkeypatch.setattr(signing, "payload_text_problem", refuse)
    key, context = 'k"\\é', 'a "quoted" \\ é context'
    event = sign_citation(FixedSigner(), pipeline, dear.pith_number, "extends", citation_key=key,
                          context=context)  # fmt: skip
    assert _failed(event) == []
    assert event["payload"]["citation_key"] == key and event["payload"]["context"] == context
    # a field the template doubts (a no-break space is printable but white space) falls back
    with pytest.raises(AssertionError, match="full checks ran"):
        sign_citation(FixedSigner(), pipeline, dear.pith_number, "extends", context="a\u00a0b")


def test_the_template_events_do_not_share_dicts(dear: Subject, pipeline: Subject) -> None:
    """The signer block is kept per key: each event must still hold its own copy."""
    first, second = (
        sign_citation(FixedSigner(), pipeline, dear.pith_number, "cites", citation_key=k)
        for k in ("a", "b")
    )
    first["signer"]["signer_id"] = "changed"
    assert second["signer"]["signer_id"] != "changed"
    assert _failed(second) == []
