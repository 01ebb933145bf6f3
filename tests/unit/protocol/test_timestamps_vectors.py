"""The published trusted-time vector (tests/vectors/timestamps): the sidecar of the vector
citation reads strictly, its token proves the time it says (the TEST-ONLY root pinned), its
OpenTimestamps proof proves the block's time under the test floor and not the production
floor, and neither proves anything for another event."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

from support.ots_calendar import TEST_FLOOR

from pithauthor.protocol.canonical_json import parse_json
from pithauthor.protocol.timestamps import headers_of, parse_sidecar, sidecar_json
from pithauthor.timestamps.flow import check_time
from pithauthor.timestamps.headers import PRODUCTION_FLOOR, ShippedHeaders
from pithauthor.timestamps.time_sources import Authority, pem_certificates

VECTORS = Path(__file__).parents[2] / "vectors"
HERE = VECTORS / "timestamps"


def _load() -> tuple[dict[str, object], dict[str, object], Authority, ShippedHeaders]:
    event = json.loads((VECTORS / "events/valid/citation_signature.json").read_text("utf-8"))
    text = (HERE / "citation_signature.time.json").read_text("utf-8")
    sidecar = parse_sidecar(parse_json(text))
    assert sidecar_json(sidecar) + "\n" == text  # written canonical
    roots = pem_certificates((HERE / "tsa-root.pem").read_bytes())
    authority = Authority("http://127.0.0.1:9/tsa", roots)
    raw = json.loads((HERE / "headers.json").read_text("utf-8"))
    headers = ShippedHeaders({int(h): bytes.fromhex(x) for h, x in raw.items()})
    return event, dict(sidecar), authority, headers


def test_the_vector_sidecar_proves_its_token_time_and_its_block_time() -> None:
    event, sidecar, authority, headers = _load()
    assert sidecar["event_id"] == event["event_id"]
    proven, checks = check_time(event, sidecar, [authority], headers, TEST_FLOOR)  # type: ignore[arg-type]
    assert [c.status for c in checks] == ["passed", "passed"]
    times = {p.by: p.time for p in proven}
    assert times["rfc3161 http://127.0.0.1:9/tsa"] == datetime(2026, 11, 29, 12, 0, 30, tzinfo=UTC)
    assert times["bitcoin block 950000"] == datetime(2026, 4, 24, 3, 6, 40, tzinfo=UTC)


def test_the_vector_sidecar_with_its_header_shipped_proves_its_block_with_no_other_source() -> None:
    event, _, authority, _ = _load()
    text = (HERE / "citation_signature.headers.time.json").read_text("utf-8")
    sidecar = parse_sidecar(parse_json(text))
    assert sidecar_json(sidecar) + "\n" == text  # written canonical
    assert [h for h, _ in headers_of(sidecar)] == [950000]
    # no header source at all (PITH_BTC_HEADERS=none): the shipped header is the one read
    proven, checks = check_time(event, sidecar, [authority], None, TEST_FLOOR)
    assert [c.status for c in checks] == ["passed", "passed"]
    assert {p.by: p.time for p in proven}["bitcoin block 950000"] == datetime(
        2026, 4, 24, 3, 6, 40, tzinfo=UTC
    )
    # a shipped header is judged as a fetched one: the production floor refuses it
    _, checks = check_time(event, sidecar, [authority], None, PRODUCTION_FLOOR)
    assert [c.status for c in checks] == ["passed", "failed"]


def test_the_vector_block_is_refused_by_the_production_floor() -> None:
    event, sidecar, authority, headers = _load()
    _, checks = check_time(event, sidecar, [authority], headers, PRODUCTION_FLOOR)  # type: ignore[arg-type]
    assert [c.status for c in checks] == ["passed", "failed"]


def test_the_vector_sidecar_proves_nothing_for_another_event() -> None:
    _, sidecar, authority, headers = _load()
    other = json.loads((VECTORS / "events/valid/author_attestation.json").read_text("utf-8"))
    sidecar = {**sidecar, "event_id": other["event_id"]}
    proven, checks = check_time(other, sidecar, [authority], headers, TEST_FLOOR)  # type: ignore[arg-type]
    assert proven == [] and [c.status for c in checks] == ["failed", "failed"]
