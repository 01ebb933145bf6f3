"""The payload JSON Schemas: valid draft-07, shipped in the package, and judged the same by the
fast compiled validator pithauthor uses and by the reference `jsonschema` implementation."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from pithauthor._core.payload_schema import load_schema, schema_violation
from pithauthor._core.payloads import EVENT_TYPES, OUTCOMES, PROOF_SYSTEMS
from pithauthor._core.relationships import RELATIONSHIPS

VECTORS = Path(__file__).parent / "vectors" / "events"
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
