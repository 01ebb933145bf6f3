"""The payload JSON Schemas shipped in `pithauthor/schemas/`, compiled once per process.

Schemas are JSON Schema draft-07 files; validation uses `fastjsonschema`, which compiles each
schema to Python once (a 15-20x speed-up over interpreting it per payload, which matters when
thousands of events are signed or verified). `tests/test_event_schemas.py` checks that the
reference implementation `jsonschema` agrees.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from functools import cache
from importlib import resources
from typing import Any

import fastjsonschema

from pithauthor._core.payloads import EVENT_TYPES
from pithauthor._core.strict_json import parse_json

Validate = Callable[[Any], Any]


def schema_file(event_type: str) -> str:
    """The file name of `event_type`'s payload schema inside `pithauthor/schemas/`."""
    if event_type not in EVENT_TYPES:
        raise ValueError(f"unknown event type {event_type!r}")
    return f"{event_type}.schema.json"


@cache
def load_schema(event_type: str) -> dict[str, Any]:
    """The payload schema of `event_type`, as parsed JSON."""
    text = (
        resources.files("pithauthor.schemas").joinpath(schema_file(event_type)).read_text("utf-8")
    )
    schema: dict[str, Any] = parse_json(text)
    return schema


@cache
def _validator(event_type: str) -> Validate:

    validate: Validate = fastjsonschema.compile(load_schema(event_type))
    return validate


def schema_violation(event_type: str, payload: Mapping[str, Any]) -> str | None:
    """None when `payload` meets its schema; else the first failure, naming its JSON path
    (`payload.relationship must be one of [...]`)."""

    try:
        _validator(event_type)(payload)
    except fastjsonschema.JsonSchemaValueException as exc:
        message = str(exc.message)
        return "payload" + message[4:] if message.startswith("data") else message
    return _fraction(payload, "payload") if _has_float(payload) else None


def _has_float(value: Any) -> bool:
    """Whether `value` holds a float anywhere (the walk of `_fraction` without its paths)."""
    if isinstance(value, float):
        return True
    if isinstance(value, Mapping):
        return any(_has_float(v) for v in value.values() if not isinstance(v, str))
    if isinstance(value, list):
        return any(_has_float(v) for v in value if not isinstance(v, str))
    return False


def _fraction(value: Any, path: str) -> str | None:
    """JSON Schema's `integer` admits 3.0, which canonical JSON writes as `3.0` in Python and `3`
    elsewhere: payloads hold integers only, written without a fraction."""
    if isinstance(value, float):
        return f"{path} must be an integer without a fraction"
    if isinstance(value, Mapping):
        items: Any = ((f"{path}.{k}", v) for k, v in value.items())
    elif isinstance(value, list):
        items = ((f"{path}[{i}]", v) for i, v in enumerate(value))
    else:
        return None
    return next((f for p, v in items if (f := _fraction(v, p))), None)
