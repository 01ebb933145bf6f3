"""The trusted-time sidecar (pithauthor/protocol/timestamps.py): built canonical, read strictly,
merged without losing a completed proof, bound to the signature bytes and the event id."""

from __future__ import annotations

import base64
import json
from typing import Any

import pytest
from support.registry import citations

from pithauthor.protocol.canonical_json import parse_json
from pithauthor.protocol.timestamps import (
    SidecarFault,
    build_sidecar,
    headers_of,
    merge_sidecars,
    ots_digest,
    parse_sidecar,
    proofs_of,
    sidecar_json,
    signature_message,
    tokens_of,
)

EID = "sha256:" + "ab" * 32


def sample() -> dict[str, Any]:
    return dict(
        build_sidecar(
            EID,
            [("https://tsa.b.test/", b"token-b"), ("https://tsa.a.test/", b"token-a")],
            [("https://cal.test", b"\x00pending", False)],
        )
    )


def test_a_sidecar_is_written_canonical_sorted_and_reads_back_the_same() -> None:
    text = sidecar_json(sample())  # type: ignore[arg-type]
    assert text == json.dumps(sample(), sort_keys=True, separators=(",", ":"))
    parsed = parse_sidecar(parse_json(text))
    assert [e["authority"] for e in parsed["rfc3161"]] == [
        "https://tsa.a.test/",
        "https://tsa.b.test/",
    ]
    assert tokens_of(parsed) == [
        ("https://tsa.a.test/", b"token-a"),
        ("https://tsa.b.test/", b"token-b"),
    ]
    assert proofs_of(parsed) == [("https://cal.test", b"\x00pending", False)]


def _broken(change: str) -> dict[str, Any]:
    doc = sample()
    if change == "extra field":
        doc["created_at"] = "2026-01-01T00:00:00Z"
    elif change == "missing field":
        del doc["opentimestamps"]
    elif change == "type":
        doc["type"] = "pith_event"
    elif change == "version true":
        doc["version"] = True
    elif change == "event id":
        doc["event_id"] = "sha256:" + "AB" * 32
    elif change == "token not canonical base64":
        doc["rfc3161"][0]["token"] = "dG9r ZW4="
    elif change == "empty token":
        doc["rfc3161"][0]["token"] = ""
    elif change == "ftp authority":
        doc["rfc3161"][0]["authority"] = "ftp://tsa.test/"
    elif change == "authority twice":
        doc["rfc3161"][1]["authority"] = doc["rfc3161"][0]["authority"]
    elif change == "complete as 1":
        doc["opentimestamps"][0]["complete"] = 1
    elif change == "unknown entry field":
        doc["opentimestamps"][0]["height"] = 840000
    elif change == "huge proof":
        doc["opentimestamps"][0]["proof"] = base64.b64encode(b"x" * (65 << 10)).decode()
    elif change == "not a list":
        doc["rfc3161"] = {}
    elif change == "empty headers":
        doc["bitcoin_headers"] = []
    elif change == "short header":
        doc["bitcoin_headers"] = [{"height": 950000, "header": "00" * 79}]
    elif change == "uppercase header":
        doc["bitcoin_headers"] = [{"height": 950000, "header": "AB" * 80}]
    elif change == "height as text":
        doc["bitcoin_headers"] = [{"height": "950000", "header": "00" * 80}]
    elif change == "height twice":
        doc["bitcoin_headers"] = [{"height": 7, "header": "00" * 80}] * 2
    elif change == "header without height":
        doc["bitcoin_headers"] = ["00" * 80]
    return doc


@pytest.mark.parametrize(
    "change",
    [
        "extra field", "missing field", "type", "version true", "event id",
        "token not canonical base64", "empty token", "ftp authority", "authority twice",
        "complete as 1", "unknown entry field", "huge proof", "not a list",
        "empty headers", "short header", "uppercase header", "height as text", "height twice",
        "header without height",
    ],
)  # fmt: skip
def test_a_broken_sidecar_is_refused_in_one_line(change: str) -> None:
    with pytest.raises(SidecarFault) as refused:
        parse_sidecar(_broken(change))
    assert "\n" not in str(refused.value) and str(refused.value)


def test_merging_keeps_every_source_and_never_goes_back_to_a_pending_proof() -> None:
    done = build_sidecar(EID, [], [("https://cal.test", b"\x01complete", True)])
    pending = build_sidecar(
        EID, [("https://tsa.c.test/", b"c")], [("https://cal.test", b"p", False)]
    )
    merged = merge_sidecars([done, pending])
    assert proofs_of(merged) == [("https://cal.test", b"\x01complete", True)]
    assert tokens_of(merged) == [("https://tsa.c.test/", b"c")]
    with pytest.raises(ValueError):
        merge_sidecars([done, build_sidecar("sha256:" + "cd" * 32)])


def test_a_token_is_bound_to_the_signature_bytes_and_a_proof_to_the_event_ids_bytes() -> None:
    (event,) = citations(1)
    assert signature_message(event) == base64.b64decode(event["signature"]["signature_b64"])
    assert len(signature_message(event)) == 64
    assert ots_digest(event["event_id"]) == bytes.fromhex(event["event_id"][7:])
    with pytest.raises(ValueError):
        ots_digest("sha256:short")


HEADER_A, HEADER_B = bytes(range(80)), bytes(80)


def test_shipped_headers_are_optional_written_by_height_and_read_back() -> None:
    assert "bitcoin_headers" not in sample()  # a sidecar without them is written as before
    built = build_sidecar(EID, headers=[(950001, HEADER_B), (950000, HEADER_A)])
    text = sidecar_json(built)
    assert '"bitcoin_headers":[{"header":"' + HEADER_A.hex() + '","height":950000}' in text
    assert headers_of(parse_sidecar(parse_json(text))) == [(950000, HEADER_A), (950001, HEADER_B)]


def test_merging_keeps_the_headers_of_every_sidecar() -> None:
    one = build_sidecar(EID, headers=[(950000, HEADER_A)])
    two = build_sidecar(EID, [("https://tsa.c.test/", b"c")], headers=[(950001, HEADER_B)])
    merged = merge_sidecars([one, two])
    assert headers_of(merged) == [(950000, HEADER_A), (950001, HEADER_B)]
    assert tokens_of(merged) == [("https://tsa.c.test/", b"c")]
