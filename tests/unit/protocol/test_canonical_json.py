"""The one strict JSON reader refuses what other JSON readers would read differently."""

from __future__ import annotations

import json

import pytest

from pithauthor.protocol.canonical_json import MAX_DEPTH, JSONFault, parse_json


@pytest.mark.parametrize(
    ("text", "fault"),
    [
        ("NaN", "NaN"),
        ('{"a": Infinity}', "Infinity"),
        ("[-Infinity]", "Infinity"),
        (str(2**53), "2**53"),
        (str(-(2**53)), "2**53"),
        ("1" * 5000, "2**53"),
        ("1e400", "overflows"),
        ('"\\ud800"', "surrogate"),
        ('{"\\udc00": 1}', "surrogate"),
        ('[{"x": ["\\uDBFF"]}]', "surrogate"),
        ('["\\ud83d\\ude00", "\\ude00"]', "surrogate"),
        ('{"a": 1, "a": 1}', "duplicate key"),
        ("[" * (MAX_DEPTH + 1) + "]" * (MAX_DEPTH + 1), "deeper"),
        ('{"a": ' * (MAX_DEPTH + 1) + "1" + "}" * (MAX_DEPTH + 1), "deeper"),
        ('[1, "x", {"a": [' + "[" * (MAX_DEPTH - 2) + "]" * (MAX_DEPTH - 2) + "]}]", "deeper"),
        ("[" * 200_000, "deeper"),
        ("[1, 2", "not JSON"),
        ("", "not JSON"),
    ],
)
@pytest.mark.parametrize("as_bytes", [False, True], ids=["text", "bytes"])
def test_strict_reader_refuses_ambiguous_json(text: str, fault: str, as_bytes: bool) -> None:
    """Text and bytes alike: bytes are checked for depth alone when they hold no escaped
    surrogate (UTF-8 cannot carry one), so both ways must refuse the same."""
    with pytest.raises(JSONFault, match=fault.replace("*", r"\*")):
        parse_json(text.encode("utf-8") if as_bytes else text)


def test_strict_reader_refuses_bytes_that_are_not_utf8() -> None:
    with pytest.raises(JSONFault, match="UTF-8"):
        parse_json(b'"\xff"')


def test_strict_reader_reads_what_every_reader_agrees_on() -> None:
    doc = {"a": [1, -(2**53 - 1), 2**53 - 1, 1.5, None, True, "é\U0001f600"], "b": {"c": ""}}
    assert parse_json(json.dumps(doc)) == doc
    assert parse_json(b"\xef\xbb\xbf" + json.dumps(doc).encode()) == doc
    assert parse_json("[" * MAX_DEPTH + "]" * MAX_DEPTH) == eval("[" * MAX_DEPTH + "]" * MAX_DEPTH)
    deep = '{"a": ' * (MAX_DEPTH - 1) + "[]" + "}" * (MAX_DEPTH - 1)
    assert parse_json(deep.encode()) == json.loads(deep)  # the deepest allowed, as bytes
    pair = '["\\ud83d\\ude00", "\\\\ud800"]'  # an escaped pair; an escaped backslash
    assert parse_json(pair.encode()) == ["\U0001f600", "\\ud800"]
