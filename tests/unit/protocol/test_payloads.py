"""The payload JSON Schemas: valid draft-07, shipped in the package, and judged the same by the
fast compiled validator pithauthor uses and by the reference `jsonschema` implementation."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import fastjsonschema
import jsonschema
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from support.examples_budget import examples

from pithauthor.protocol.ids import PithNumber
from pithauthor.protocol.payloads import (
    EVENT_TYPES,
    OUTCOMES,
    PROOF_SYSTEMS,
    RELATIONSHIPS,
    _field_rule,
    _flat_rules,
    _meets_flat,
    _validator,
    built_payload_violation,
    citation_payload,
    load_schema,
    schema_violation,
)

VECTORS = Path(__file__).parents[2] / "vectors" / "events"
FRACTION = "must be an integer without a fraction"


@pytest.mark.parametrize("event_type", EVENT_TYPES)
def test_schema_is_valid_draft_07_and_names_its_version(event_type: str) -> None:
    schema = load_schema(event_type)
    jsonschema.Draft7Validator.check_schema(schema)
    assert schema["properties"]["payload_schema"]["const"] == f"pithauthor.{event_type}.v1"
    assert schema["additionalProperties"] is False


def test_schema_lists_match_the_python_constants() -> None:
    assert load_schema("citation_signature")["properties"]["relationship"]["enum"] == list(
        RELATIONSHIPS
    )
    rep = load_schema("replication_record")
    assert rep["properties"]["kind"]["enum"] == list(OUTCOMES)
    assert rep["properties"]["proof_system"]["enum"] == list(PROOF_SYSTEMS)
    per_kind = {
        rule["if"]["properties"]["kind"]["const"]: rule["then"]["properties"]["outcome"]["enum"]
        for rule in rep["allOf"]
    }
    assert per_kind == {kind: list(outcomes) for kind, outcomes in OUTCOMES.items()}


def _payloads() -> list[tuple[str, Any]]:
    out = []
    for path in sorted(VECTORS.glob("*/*.json")):
        event = json.loads(path.read_text("utf-8"))
        if isinstance(event, dict) and event.get("event_type") in EVENT_TYPES:
            out.append((event["event_type"], event["payload"]))
    return out


@pytest.mark.parametrize(("event_type", "payload"), _payloads())
def test_reference_jsonschema_agrees_on_every_vector_payload(event_type: str, payload: Any) -> None:
    reference = jsonschema.Draft7Validator(load_schema(event_type)).is_valid(payload)
    violation = schema_violation(event_type, payload)
    if violation is not None and violation.endswith(FRACTION):
        assert reference  # the one rule beyond JSON Schema: 3.0 is an `integer` there
    else:
        assert reference == (violation is None)


def test_invalid_vectors_include_schema_failures_both_validators_reject() -> None:
    index = json.loads((VECTORS / "invalid" / "index.json").read_text("utf-8"))
    schema_cases = [n for n, v in index.items() if v["failed_checks"] == ["payload_schema"]]
    assert len(schema_cases) >= 8
    for name in schema_cases:
        event = json.loads((VECTORS / "invalid" / name).read_text("utf-8"))
        if (schema_violation(event["event_type"], event["payload"]) or "").endswith(FRACTION):
            continue
        validator = jsonschema.Draft7Validator(load_schema(event["event_type"]))
        assert not validator.is_valid(event["payload"]), name
        assert schema_violation(event["event_type"], event["payload"]) is not None, name


def test_schemas_are_package_data() -> None:
    import pithauthor.schemas

    folder = Path(pithauthor.schemas.__file__).parent
    assert {p.name for p in folder.glob("*.schema.json")} == {
        f"{t}.schema.json" for t in EVENT_TYPES
    }


# --- the direct check of payloads pithauthor built ------------------------------------------------

CITED_SHA = hashlib.sha256(b"a cited paper").hexdigest()
CITED = PithNumber.from_digest(CITED_SHA, 2023)
CITING = "pith:2024:" + PithNumber.from_digest(hashlib.sha256(b"citing").hexdigest(), 2024).body
EID = "sha256:" + "0f" * 32


def _citation(**changes: Any) -> dict[str, Any]:
    payload: dict[str, Any] = dict(
        citation_payload(
            CITED_SHA, citing=CITING, relationship="extends", citation_key="k1", context="in 2"
        )
    )
    for name, value in changes.items():
        if value is _DROP:
            payload.pop(name)
        else:
            payload[name] = value
    return payload


class _Drop:
    """The field is left out (its repr names the test case the same in every xdist worker)."""

    def __repr__(self) -> str:
        return "DROP"


_DROP = _Drop()
# each a way a built payload could be wrong: one past a bound, a look-alike, a wrong type
EDGE_CASES: list[dict[str, Any]] = [
    {},
    {"canonical_sha256": CITED_SHA.upper()},
    {"canonical_sha256": CITED_SHA + "\n"},  # Python's `$` would match before the newline
    {"canonical_sha256": CITED_SHA[:63]},
    {"citing_pith_number": CITING + "\n"},
    {"citing_pith_number": CITING.lower()},
    {"relationship": "Extends"},
    {"relationship": "replaces"},
    {"relationship": 3},
    {"citation_key": "a" * 200},
    {"citation_key": "a" * 201},
    {"citation_key": ""},
    {"citation_key": "two words"},
    {"citation_key": "key\n"},
    {"citation_key": "nbsp\u00a0key"},  # a Unicode space is white space to `\S`
    {"citation_key": 7},
    {"context": "x" * 500},
    {"context": "x" * 501},
    {"context": "   "},
    {"context": 1.0},
    {"context": None},
    {"payload_schema": "pithauthor.citation_signature.v2"},
    {"relationship": _DROP},
    {"canonical_sha256": _DROP},
    {"context": _DROP, "citation_key": _DROP},
    {"extra": "field"},
    {"replaces": EID},
    {"withdraws": EID},
    {"replaces": EID, "withdraws": EID},
    {"replaces": EID.upper()},
    {"replaces": EID + "\n"},
]


@pytest.mark.parametrize("rule", [{"required": ["replaces"]}, {"required": ["withdraws"]}, {}])
def test_a_schema_with_another_top_level_not_is_refused_by_the_direct_rules_too(
    monkeypatch: pytest.MonkeyPatch, rule: dict[str, Any]
) -> None:
    """The direct rules (`_flat_rules`, what the signer reads) refuse a schema whose `not` is
    not the replaces-and-withdraws rule checked apart, as the compiled schema does, without
    compiling it (`pith cite` no longer loads fastjsonschema)."""
    from pithauthor.protocol import payloads

    schema = {**payloads.load_schema("citation_signature"), "not": rule}
    monkeypatch.setattr(payloads, "load_schema", lambda event_type: schema)
    for cached in (payloads._flat_rules, payloads._validator):
        cached.cache_clear()
    try:
        with pytest.raises(ValueError, match="unexpected top-level 'not'"):
            payloads._flat_rules("citation_signature")
        with pytest.raises(ValueError, match="unexpected top-level 'not'"):
            payloads._validator("citation_signature")
    finally:
        payloads._flat_rules.cache_clear()
        payloads._validator.cache_clear()


def test_citations_take_the_direct_check_and_nested_types_the_full_schema() -> None:
    # without a direct check for citations, the agreement tests below would prove nothing
    assert _flat_rules("citation_signature") is not None
    assert _flat_rules("author_attestation") is None  # nested author object, an integer
    assert _flat_rules("replication_record") is None  # an array, per-kind rules (allOf)


@pytest.mark.parametrize("changes", EDGE_CASES, ids=lambda c: repr(c)[:60])
def test_direct_check_gives_the_full_schemas_verdict_on_edge_cases(changes: dict[str, Any]) -> None:
    payload = _citation(**changes)
    expected = schema_violation("citation_signature", payload)
    reference = jsonschema.Draft7Validator(load_schema("citation_signature")).is_valid(payload)
    assert reference == (expected is None)
    assert _meets_flat(payload, _flat_rules("citation_signature")) == (expected is None)
    assert built_payload_violation("citation_signature", payload) == expected


@settings(max_examples=examples(300), deadline=None)
@given(
    key=st.text(max_size=210),
    context=st.text(max_size=510),
    relationship=st.sampled_from([*RELATIONSHIPS, "", "extend", "supports "]),
)
def test_direct_check_agrees_with_the_schema_on_any_text(
    key: str, context: str, relationship: str
) -> None:
    payload = _citation(citation_key=key, context=context, relationship=relationship)
    expected = schema_violation("citation_signature", payload)
    assert _meets_flat(payload, _flat_rules("citation_signature")) == (expected is None)


@pytest.mark.parametrize("event_type", EVENT_TYPES)
def test_replaces_and_withdraws_together_are_refused_by_every_schema(event_type: str) -> None:
    # the schemas' top-level `not`, checked outside the compiled validator (payload_schema)
    assert load_schema(event_type)["not"] == {"required": ["replaces", "withdraws"]}
    vector = next(p for t, p in _payloads() if t == event_type and schema_violation(t, p) is None)
    both = {**vector, "replaces": EID, "withdraws": EID}
    assert not jsonschema.Draft7Validator(load_schema(event_type)).is_valid(both)
    assert schema_violation(event_type, both) == "payload must not hold both replaces and withdraws"
    assert schema_violation(event_type, {**vector, "replaces": EID}) is None


def test_a_float_in_a_citation_is_refused_without_the_fraction_walk() -> None:
    # citations admit no number anywhere, so the schema itself refuses a float
    assert _validator("citation_signature")[1] is False
    assert _validator("author_attestation")[1] is True  # author.position is an integer
    assert schema_violation("citation_signature", _citation(context=2.0)) is not None


def test_direct_check_reads_dollar_as_the_end_of_the_text_as_fastjsonschema_does() -> None:
    # the shipped patterns have fixed lengths, so this is the rule in general: `^a$` in Python
    # alone would accept "a\n"
    rule = _field_rule({"type": "string", "pattern": "^a$"})
    assert rule is not None and rule[3] is not None
    compiled = fastjsonschema.compile({"type": "string", "pattern": "^a$"})
    with pytest.raises(fastjsonschema.JsonSchemaValueException):
        compiled("a\n")
    assert rule[3].search("a\n") is None
    assert rule[3].search("a") is not None
