"""The trusted-time flow (pithauthor/timestamps/flow.py) against a loopback authority and a
loopback OpenTimestamps calendar: what an event lacks is fetched, a pending proof is upgraded
once its block is mined, a source down is one problem and asked once per run, and a sidecar is
checked into proven times (the test floor accepts the test block; the production floor not)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import pytest
from support.ots_calendar import TEST_FLOOR, TEST_HEIGHT, Calendar, ots_calendar
from support.registry import citations
from support.tsa_server import Pki, Tsa, TsaServer

from pithauthor.protocol.timestamps import build_sidecar, headers_of, tokens_of
from pithauthor.registry.trusted_time import stamp_file
from pithauthor.timestamps.flow import (
    check_time,
    fetch_time,
    read_sidecar_file,
    sidecar_path,
)
from pithauthor.timestamps.headers import PRODUCTION_FLOOR, CachedHeaders, ShippedHeaders
from pithauthor.timestamps.time_sources import Authority, Sources

WHEN = datetime(2026, 5, 1, 10, 0, tzinfo=UTC)


@pytest.fixture(scope="module")
def pki() -> Pki:
    return Pki()


@pytest.fixture
def tsa(pki: Pki) -> Iterator[TsaServer]:
    with TsaServer(Tsa(pki=pki, now=WHEN)) as server:
        yield server


@pytest.fixture
def calendar() -> Iterator[Calendar]:
    with ots_calendar() as running:
        yield running


def test_an_event_gets_a_token_and_a_pending_proof_then_the_block_proof(
    tsa: TsaServer, pki: Pki, calendar: Calendar
) -> None:
    (event,) = citations(1)
    authority = Authority(tsa.url, (pki.root_der,))
    sources = Sources((authority,), (calendar.url,))
    first = fetch_time([event], sources)
    assert first.problems == {}
    sidecars = first.sidecars()
    sidecar = sidecars[event["event_id"]]
    assert [e["complete"] for e in sidecar["opentimestamps"]] == [False]
    proven, checks = check_time(event, sidecar, [authority], None, TEST_FLOOR)
    assert [p.time for p in proven] == [WHEN]  # the token proves; the pending proof does not
    assert {c.name: c.status for c in checks} == {
        "trusted_time.rfc3161": "passed",
        "trusted_time.opentimestamps": "unverifiable",
    }
    # nothing to ask again while the calendar has no block: the token is kept, one 404
    again = fetch_time([event], sources, sidecars)
    assert again.fetched == [] and len(tsa.tsa.requests) == 1
    header = calendar.mine()
    upgraded = fetch_time([event], sources, sidecars)
    [proof] = upgraded.fetched
    assert proof.kind == "ots" and proof.complete
    sidecar = upgraded.sidecars(sidecars)[event["event_id"]]
    headers = ShippedHeaders({TEST_HEIGHT: header})
    proven, checks = check_time(event, sidecar, [authority], headers, TEST_FLOOR)
    assert sorted(p.by for p in proven) == [f"bitcoin block {TEST_HEIGHT}", f"rfc3161 {tsa.url}"]
    # the production floor refuses a block mined at test difficulty
    proven, checks = check_time(event, sidecar, [authority], headers, PRODUCTION_FLOOR)
    assert [p.by for p in proven] == [f"rfc3161 {tsa.url}"]
    failed = [c for c in checks if c.status == "failed"]
    assert [c.name for c in failed] == ["trusted_time.opentimestamps"]


def test_a_source_down_is_one_problem_asked_once_per_run_and_nothing_raises(
    tsa: TsaServer, pki: Pki, calendar: Calendar
) -> None:
    events = citations(3)
    tsa.tsa.http_status = 503
    calendar.down = True
    sources = Sources((Authority(tsa.url, (pki.root_der,)),), (calendar.url,))
    got = fetch_time(events, sources, attempts=1)
    assert got.fetched == []
    assert set(got.problems) == {tsa.url, calendar.url}
    assert len(tsa.tsa.requests) == 1 and len(calendar.requests) == 1
    line = got.warning()
    assert line is not None and "\n" not in line and line.startswith("warning: no trusted time")


def test_a_token_for_another_event_fails_that_events_check(tsa: TsaServer, pki: Pki) -> None:
    mine, other = citations(2)
    authority = Authority(tsa.url, (pki.root_der,))
    got = fetch_time([other], Sources((authority,), ()))
    [(url, token)] = tokens_of(got.sidecars()[other["event_id"]])
    moved = build_sidecar(mine["event_id"], [(url, token)])
    proven, checks = check_time(mine, moved, [authority], None, TEST_FLOOR)
    assert proven == []
    assert [c.status for c in checks] == ["failed"]
    assert "another message" in checks[0].detail


def test_the_headers_pith_has_are_written_beside_a_complete_proof_and_read_before_any_fetch(
    calendar: Calendar, tmp_path: Path
) -> None:
    (event,) = citations(1)
    events_file = tmp_path / "events.jsonl"
    events_file.write_text(json.dumps(event) + "\n", "utf-8")
    sources = Sources((), (calendar.url,))
    cache = CachedHeaders(TEST_FLOOR)
    stamp_file([event], events_file, sources, headers=cache)  # pending: no header to ship
    [line] = sidecar_path(events_file).read_text("utf-8").splitlines()
    assert "bitcoin_headers" not in json.loads(line)
    header = calendar.mine()
    stamp_file([event], events_file, sources, headers=cache)  # complete, but no header held
    [line] = sidecar_path(events_file).read_text("utf-8").splitlines()
    assert "bitcoin_headers" not in json.loads(line)
    cache.keep(TEST_HEIGHT, header)  # as a checked fetch leaves it
    stamp_file([event], events_file, sources, headers=cache)
    sidecars = read_sidecar_file(sidecar_path(events_file))
    sidecar = sidecars[event["event_id"]]
    assert headers_of(sidecar) == [(TEST_HEIGHT, header)]
    # a reader with no header source at all proves the block's time from the shipped header
    proven, checks = check_time(event, sidecar, [], None, TEST_FLOOR)
    assert [c.status for c in checks] == ["passed"]
    assert [p.by for p in proven] == [f"bitcoin block {TEST_HEIGHT}"]
