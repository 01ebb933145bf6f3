"""`payloads.citation_text`, a verifier's one pass over a citation payload from outside: it
writes the canonical text exactly when the schema and the text rule both pass (the question the
tight path of `checks.event` asked before, in three steps), and that text is `json.dumps`'s."""

from __future__ import annotations

import base64
import hashlib
import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from support.examples_budget import examples

from pithauthor.protocol.payloads import (
    CITATION,
    RELATIONSHIPS,
    body_bits_match,
    built_payload_violation,
    citation_text,
    digest_matches_body,
)

DIGEST = hashlib.sha256(b"a cited paper").hexdigest()
EID = "sha256:" + hashlib.sha256(b"an earlier event").hexdigest()
FIELDS = (
    "payload_schema",
    "canonical_sha256",
    "citing_pith_number",
    "relationship",
    "citation_key",
    "context",
    "replaces",
    "withdraws",
)


def _payload(**changes: Any) -> dict[str, Any]:
    payload: dict[str, Any] = {
        "payload_schema": "pithauthor.citation_signature.v1",
        "canonical_sha256": DIGEST,
        "citing_pith_number": "pith:2023:NFG5PAOXQUVIWDX5F7YSYYL7EW",
        "relationship": "uses_method",
        "citation_key": "smith2020",
        "context": 'We use "its" schedule \\ for all-reduce.',
    }
    payload.update(changes)
    return {k: v for k, v in payload.items() if v is not _GONE}


class _Gone:
    """A field left out (its repr names the test the same in every worker)."""

    def __repr__(self) -> str:
        return "GONE"


_GONE = _Gone()


def _slow(payload: dict[str, Any]) -> bool:
    """What the tight path asked before: the schema passes, and every text is printable
    (`text.payload_text_problem`'s fast case)."""
    if built_payload_violation(CITATION, payload) is not None:
        return False
    values = list(payload.values())
    return all(type(v) is str for v in values) and "a".join(values).isprintable()


def _agrees(payload: dict[str, Any]) -> None:
    text = citation_text(payload)
    assert (text is not None) == _slow(payload), payload
    if text is not None:
        assert text == json.dumps(
            payload, sort_keys=True, separators=(",", ":"), ensure_ascii=False
        )


EDGE_CASES: list[dict[str, Any]] = [
    {},
    {"citation_key": _GONE},
    {"context": _GONE},
    {"citation_key": _GONE, "context": _GONE},
    {"replaces": EID},
    {"withdraws": EID},
    {"replaces": EID, "withdraws": EID},
    {"replaces": EID.upper()},
    {"withdraws": EID[:-1]},
    {"replaces": None},
    {"citation_key": None},
    {"context": None},
    {"extra": "field"},
    {"payload_schema": _GONE},
    {"payload_schema": "pithauthor.citation_signature.v2"},
    {"canonical_sha256": DIGEST.upper()},
    {"canonical_sha256": DIGEST + "\n"},
    {"canonical_sha256": DIGEST[:63]},
    {"canonical_sha256": 7},
    {"citing_pith_number": "pith:2023:nfg5paoxquviwdx5f7ysyyl7ew"},
    {"citing_pith_number": "pith:2023:NFG5PAOXQUVIWDX5F7YSYYL7EW\n"},
    {"citing_pith_number": ["pith:2023:NFG5PAOXQUVIWDX5F7YSYYL7EW"]},
    {"relationship": "cites "},
    {"relationship": ["cites"]},
    {"relationship": {"cites": 1}},
    {"relationship": _GONE},
    {"citation_key": ""},
    {"citation_key": "a b"},
    {"citation_key": "a\u00a0b"},
    {"citation_key": "x" * 200},
    {"citation_key": "x" * 201},
    {"context": " "},
    {"context": "a\u202eb"},
    {"context": "a\tb"},
    {"context": "a\u00a0b"},
    {"context": 'é \U0001f600 "q" \\'},
    {"context": "x" * 501},
    {"context": 1.5},
]


@pytest.mark.parametrize("changes", EDGE_CASES, ids=lambda c: repr(c)[:60])
def test_the_canonical_text_exactly_when_the_schema_and_the_text_rule_pass(
    changes: dict[str, Any],
) -> None:
    _agrees(_payload(**changes))


def test_every_relationship_is_written() -> None:
    for relationship in RELATIONSHIPS:
        payload = _payload(relationship=relationship)
        assert citation_text(payload) is not None
        _agrees(payload)


_JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(), inner, max_size=3),
    max_leaves=5,
)


def _near(field: str) -> st.SearchStrategy[Any]:
    """Values close to what the field holds: its own text changed by a character, a piece of
    another field's text, any text, any JSON value."""
    own = str(_payload(replaces=EID)[field]) if field != "withdraws" else EID
    return st.one_of(
        st.builds(
            lambda i, c: own[:i] + c + own[i + 1 :],
            st.integers(0, len(own)),
            st.characters(),
        ),
        st.sampled_from([DIGEST, EID, "pith:2023:NFG5PAOXQUVIWDX5F7YSYYL7EW", *RELATIONSHIPS]),
        st.text(max_size=80),
        _JSON,
    )


@st.composite
def _mutated(draw: st.DrawFn) -> dict[str, Any]:
    payload = _payload()
    for _ in range(draw(st.integers(1, 3))):
        field = draw(st.sampled_from([*FIELDS, "unknown"]))
        action = draw(st.sampled_from(["set", "drop"]))
        if action == "drop":
            payload.pop(field, None)
        else:
            payload[field] = draw(_near(field)) if field != "unknown" else draw(_JSON)
    return payload


@settings(max_examples=examples(600), deadline=None)
@given(_mutated())
def test_hostile_payloads_get_the_slow_verdict_and_json_dumps_text(payload: dict[str, Any]) -> None:
    _agrees(payload)


@settings(max_examples=examples(300), deadline=None)
@given(key=st.text(min_size=1, max_size=210), context=st.text(min_size=1, max_size=510))
def test_any_text_of_the_caller_gets_the_slow_verdict(key: str, context: str) -> None:
    _agrees(_payload(citation_key=key, context=context))


@settings(max_examples=examples(300), deadline=None)
@given(st.binary(min_size=32, max_size=32), st.binary(min_size=32, max_size=32))
def test_the_bits_alone_agree_with_base32_of_the_digest(digest: bytes, other: bytes) -> None:
    # `body_bits_match` is `digest_matches_body` once both spellings are proven: the body is the
    # first 26 base32 characters of the digest's bytes
    body = base64.b32encode(digest).decode()[:26]
    wrong = base64.b32encode(other).decode()[:26]
    assert body_bits_match(digest.hex(), body)
    assert body_bits_match(digest.hex(), wrong) == (wrong == body)
    assert digest_matches_body(digest.hex(), wrong) == (wrong == body)


def _bits_as_text(digest: str, body: str) -> bool | str:
    """`body_bits_match` as it read the body, by `str.translate` on any text (or its error)."""
    table = str.maketrans("ABCDEFGHIJKLMNOPQRSTUVWXYZ234567", "0123456789abcdefghijklmnopqrstuv")
    try:
        return int(digest[:34], 16) >> 6 == int(body.translate(table), 32)
    except ValueError as exc:
        return type(exc).__name__


@settings(max_examples=examples(300), deadline=None)
@given(
    st.binary(min_size=32, max_size=32),
    st.one_of(
        st.text(
            st.sampled_from("ABCDEFGHIJKLMNOPQRSTUVWXYZ234567abc019 _=\u0663\uff13"), max_size=28
        ),
        st.text(max_size=28),
    ),
)
def test_the_body_read_as_bytes_gives_what_it_gave_as_text(digest: bytes, body: str) -> None:
    """The body's ASCII text is translated as bytes now: the same verdict (or the same error)
    as the text's translation on any body, near misses and non-ASCII digits included."""
    real = base64.b32encode(digest).decode()[:26]
    for candidate in (body, real, real[:25] + body[:1], real.lower()):
        try:
            got: bool | str = body_bits_match(digest.hex(), candidate)
        except ValueError as exc:
            got = type(exc).__name__
        assert got == _bits_as_text(digest.hex(), candidate)
