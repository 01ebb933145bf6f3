"""`pith anchor PAPER` end to end, with a loopback OpenTimestamps calendar and block explorer
(tests/support/ots_calendar.py) and the local registry: pending (exit 75) until the calendar
has a block, then the anchor is shown, signed and submitted, and the registry's state lists it;
a proof that does not reach the record's hash is refused in one line, nothing signed or sent;
a registry whose record names no `anchor_timestamp` action is sent nothing."""

from __future__ import annotations

import base64
import hashlib
import json
import os
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from support.cli import RunPith, StartRegistry, error_lines
from support.ots_calendar import TEST_FLOOR, TEST_HEIGHT, Calendar, ots_calendar

from pithauthor.errors import EXIT_PENDING
from pithauthor.registry.outbox import Outbox
from pithauthor.timestamps.ots import upgrade

PAPER = "2302.12445"
DEAR = "pith:2023:NFG5PAOXQUVIWDX5F7YSYYL7EW"
DEAR_SHA = "694dd781d7852a8b0efd2ff12c617f25b959612a7c7a23e12497b4715d745ec0"
BODY = DEAR.rsplit(":", 1)[1]


@pytest.fixture
def calendar(monkeypatch: pytest.MonkeyPatch) -> Iterator[Calendar]:
    """The loopback calendar as PITH_OTS_CALENDARS and PITH_BTC_HEADERS, its test-difficulty
    headers accepted (the test floor, as `pith anchor` is told to judge by)."""
    with ots_calendar() as running:
        monkeypatch.setenv("PITH_OTS_CALENDARS", running.url)
        monkeypatch.setenv("PITH_BTC_HEADERS", running.url)
        monkeypatch.setattr("pithauthor.timestamps.anchor.FLOOR", TEST_FLOOR)
        yield running


def _flags(url: str) -> tuple[str, ...]:
    return ("--registry", url, "--trust-local-registry")


def _error(stderr: str) -> str:
    """The one line a refusal prints, beside the note every command run on a local registry
    prints (its key is not pith.science's)."""
    lines = [line for line in error_lines(stderr) if "trusting the local registry" not in line]
    assert len(lines) == 1, stderr
    assert lines[0].startswith("pith: error: ") and "Traceback" not in stderr, stderr
    return lines[0]


def _anchors(url: str) -> list[dict]:
    state = httpx.get(f"{url}/pith/{BODY}/state.json").json()
    anchors: list[dict] = state["current"]["timestamp_anchors"]
    return anchors


def test_anchor_is_pending_then_complete_then_signed_submitted_and_listed(
    pith: RunPith,
    cite_author: str,
    calendar: Calendar,
    local_registry: StartRegistry,
    tmp_path: Path,
) -> None:
    server = local_registry(tmp_path / "registry")
    flags = _flags(server.url)
    first = pith("anchor", PAPER, "--submit", "--yes", "--json", *flags)
    assert first.returncode == EXIT_PENDING, first.stderr
    last = first.stderr.strip().splitlines()[-1]
    assert last == f"pending at 1 calendar; run `pith anchor {PAPER}` again later"
    assert json.loads(first.stdout)["calendars"] == {calendar.url: "pending"}
    assert calendar.submitted == [bytes.fromhex(DEAR_SHA)]  # the record's hash, 32 raw bytes
    # kept for the next run, private as everything under PITH_HOME
    kept = Path(os.environ["PITH_HOME"]) / "anchors" / f"{BODY}.json"
    assert kept.stat().st_mode & 0o777 == 0o600 and kept.parent.stat().st_mode & 0o777 == 0o700
    assert json.loads(kept.read_text())["canonical_sha256"] == DEAR_SHA
    # a second run before the block: upgraded, still pending, nothing stamped again
    again = pith("anchor", PAPER, "--upgrade", *flags)
    assert again.returncode == EXIT_PENDING, again.stderr
    assert len(calendar.submitted) == 1
    with Outbox() as outbox:
        assert outbox.entries() == []  # nothing signed while pending
    calendar.mine()
    done = pith("anchor", PAPER, "--submit", "--yes", "--json", *flags)
    assert done.returncode == 0, done.stderr
    # the preview, before anything was signed: the paper, its hash, the block and its time
    assert f"{DEAR} (arXiv 2302.12445v2)" in done.stderr
    assert DEAR_SHA in done.stderr
    assert f"Bitcoin block {TEST_HEIGHT}, 2026-04-24T03:06:40Z" in done.stderr
    said = json.loads(done.stdout)
    assert (said["status"], said["submitted"]) == ("signed", True)
    assert said["block"] == {"height": TEST_HEIGHT, "time": "2026-04-24T03:06:40Z"}
    [listed] = _anchors(server.url)
    assert listed["event_id"] == said["event_id"]
    assert listed["payload"]["canonical_sha256"] == DEAR_SHA
    assert listed["payload"]["bitcoin_headers"] == [
        {"height": TEST_HEIGHT, "header": calendar.headers[TEST_HEIGHT].hex()}
    ]
    # `pith verify` checks the anchor's proof in the state and in the bundle
    for kind in ("state", "bundle"):
        path = tmp_path / f"{kind}.json"
        path.write_bytes(httpx.get(f"{server.url}/pith/{BODY}/{kind}.json").content)
        verified = pith("verify", str(path), "--verbose", *flags)
        assert verified.returncode == 0, verified.stdout + verified.stderr
        where = "current.timestamp_anchors[0]" if kind == "state" else "events[1]"
        assert f"{where}.anchor" in verified.stdout
        assert f"bitcoin block {TEST_HEIGHT} at 2026-04-24T03:06:40Z" in verified.stdout
    # once anchored, a run signs nothing new and stamps nothing more

    rerun = pith("anchor", PAPER, "--submit", "--yes", *flags)
    assert rerun.returncode == 0, rerun.stderr
    assert "already signed: timestamp_anchor" in rerun.stderr
    # the record's hash was stamped once (the anchor event's own trusted time is another digest)
    assert calendar.submitted.count(bytes.fromhex(DEAR_SHA)) == 1
    assert len(_anchors(server.url)) == 1


def test_a_proof_that_does_not_reach_the_hash_is_refused_and_nothing_is_signed(
    pith: RunPith,
    cite_author: str,
    calendar: Calendar,
    local_registry: StartRegistry,
    tmp_path: Path,
) -> None:
    server = local_registry(tmp_path / "registry")
    flags = _flags(server.url)
    assert pith("anchor", PAPER, *flags).returncode == EXIT_PENDING
    # another digest in the same block; the calendar then answers our commitment with the
    # other one's path: a proof for another digest, whose merkle root the header does not hold
    calendar.submit(bytes(32))
    mine_commitment, other_commitment = list(calendar.pending)
    calendar.mine()
    calendar.done[mine_commitment] = calendar.done[other_commitment]
    refused = pith("anchor", PAPER, "--submit", "--yes", *flags)
    assert refused.returncode == 1, refused.stderr
    line = _error(refused.stderr)
    assert f"the OpenTimestamps proof from {calendar.url} does not prove the record's hash" in line
    assert "does not commit to the digest" in line
    with Outbox() as outbox:
        assert outbox.entries() == []
    assert _anchors(server.url) == []


def test_an_edited_proof_kept_between_runs_is_refused_in_one_line(
    pith: RunPith,
    cite_author: str,
    calendar: Calendar,
    local_registry: StartRegistry,
    tmp_path: Path,
) -> None:
    server = local_registry(tmp_path / "registry")
    flags = _flags(server.url)
    assert pith("anchor", PAPER, *flags).returncode == EXIT_PENDING
    calendar.mine()
    [kept] = (Path(os.environ["PITH_HOME"]) / "anchors").glob("*.json")
    doc = json.loads(kept.read_text())
    entry = doc["opentimestamps"][0]
    # completed as `pith anchor` would, then one byte of the block's path edited (the
    # coinbase txid beside the calendar's transaction): a complete proof of another root
    proof, complete = upgrade(
        base64.b64decode(entry["proof"]), bytes.fromhex(DEAR_SHA), calendar.url
    )
    coinbase = hashlib.sha256(b"coinbase %d" % TEST_HEIGHT).digest()
    assert complete and proof.count(coinbase) == 1
    edited = proof.replace(coinbase, bytes([coinbase[0] ^ 1]) + coinbase[1:])
    entry.update(proof=base64.b64encode(edited).decode(), complete=True)
    kept.write_text(json.dumps(doc))
    refused = pith("anchor", PAPER, "--submit", "--yes", *flags)
    assert refused.returncode == 1, refused.stderr
    line = _error(refused.stderr)
    assert "does not prove the record's hash" in line and "does not commit" in line
    with Outbox() as outbox:
        assert outbox.entries() == []
    assert _anchors(server.url) == []


def test_a_registry_whose_record_names_no_anchor_action_is_sent_nothing(
    pith: RunPith,
    cite_author: str,
    calendar: Calendar,
    local_registry: StartRegistry,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from pithauthor.registry.local import answers

    actions = {k: v for k, v in answers.ACTIONS.items() if k != "anchor_timestamp"}
    monkeypatch.setattr(answers, "ACTIONS", actions)
    server = local_registry(tmp_path / "registry")
    flags = _flags(server.url)
    assert pith("anchor", PAPER, *flags).returncode == EXIT_PENDING
    calendar.mine()
    done = pith("anchor", PAPER, "--submit", "--yes", *flags)
    assert done.returncode == 0, done.stderr
    assert (
        f"the registry {server.url} takes no anchors (its record names no anchor_timestamp "
        "action): the anchor stays in the outbox, sent nowhere"
    ) in done.stderr
    assert server.store.event_count() == 0
    with Outbox() as outbox:
        [entry] = outbox.entries()
    assert (entry.event_type, entry.state) == ("timestamp_anchor", "pending")
    # `pith submit` later: the anchor stays pending, and it does not hold back another event
    claimed = pith("claim", PAPER, "--yes", *flags)
    assert claimed.returncode == 0, claimed.stderr
    later = pith("submit", "--parallel", "1", *flags)  # one at a time: the anchor first
    assert later.returncode == 3, later.stderr
    assert "names no anchor_timestamp action: the registry takes no timestamp_anchor" in (
        later.stderr
    )
    with Outbox() as outbox:
        states = {e.event_type: e.state for e in outbox.entries()}
    assert states == {"timestamp_anchor": "pending", "author_attestation": "accepted"}
    assert server.store.event_count() == 1


def test_no_calendar_is_refused_in_one_line(
    pith: RunPith, cite_author: str, local_registry: StartRegistry, tmp_path: Path
) -> None:
    server = local_registry(tmp_path / "registry")
    refused = pith("anchor", PAPER, *_flags(server.url))  # PITH_OTS_CALENDARS=none (conftest)
    assert refused.returncode == 2
    line = _error(refused.stderr)
    assert "PITH_OTS_CALENDARS=none: no OpenTimestamps calendar" in line


def test_verify_fails_a_state_whose_anchor_proof_reaches_another_hash(
    pith: RunPith,
    cite_author: str,
    calendar: Calendar,
    local_registry: StartRegistry,
    tmp_path: Path,
) -> None:
    # the registry takes any well-signed anchor (it judges no proof): `pith verify` does
    from support.registry import TestSigner, anchor_event

    server = local_registry(tmp_path / "registry")
    forged = anchor_event(TestSigner(), b"not a proof of anything")
    action = f"{server.url}/pith/{BODY}/action/timestamp_anchor"
    posted = httpx.post(action, json=forged, headers={"Idempotency-Key": forged["event_id"]})
    assert posted.status_code == 201
    path = tmp_path / "state.json"
    path.write_bytes(httpx.get(f"{server.url}/pith/{BODY}/state.json").content)
    verified = pith("verify", str(path), *_flags(server.url))
    assert verified.returncode == 1, verified.stdout + verified.stderr
    [line] = [x for x in verified.stdout.splitlines() if "current.timestamp_anchors[0].anchor" in x]
    assert "failed" in line and "does not hold" in line
    assert "FAILED: state: current.timestamp_anchors[0].anchor" in verified.stderr


def test_a_calendar_down_stamps_nothing_and_says_so_in_one_line(
    pith: RunPith,
    cite_author: str,
    calendar: Calendar,
    local_registry: StartRegistry,
    tmp_path: Path,
    no_backoff: None,
) -> None:
    server = local_registry(tmp_path / "registry")
    calendar.down = True
    refused = pith("anchor", PAPER, *_flags(server.url))
    assert refused.returncode == 3, refused.stderr
    line = _error(refused.stderr)
    assert f"no OpenTimestamps calendar could stamp the record's hash: {calendar.url}" in line
    assert not (Path(os.environ["PITH_HOME"]) / "anchors" / f"{BODY}.json").exists()
    calendar.down = False  # back: the next run stamps, as the first would have
    assert pith("anchor", PAPER, *_flags(server.url)).returncode == EXIT_PENDING
