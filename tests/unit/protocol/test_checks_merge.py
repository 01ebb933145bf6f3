"""The local merge (pithauthor-local-merge-v1): order, validity, equivocation, counters, and
its recomputation by `pith verify`."""

from __future__ import annotations

import copy
import json
import random
from pathlib import Path

from support.cli import RunPith
from support.registry import TestSigner, attestation, citation, make_state

from pithauthor.protocol.canonical_json import canonical_sha256
from pithauthor.protocol.checks.state import check_state, remerge
from pithauthor.registry.local.answers import load_or_create_key


def test_merge_is_independent_of_arrival_order_and_repeats(tmp_path: Path) -> None:
    signer = TestSigner()
    events = [citation(signer, i, created_at=f"2026-11-29T12:00:0{i}Z") for i in range(5)]
    shuffled = events + events[:2]
    random.Random(4).shuffle(shuffled)
    a, _ = make_state(tmp_path / "a", events)
    b, _ = make_state(tmp_path / "a", shuffled)
    assert a == b
    ids = [e["event_id"] for e in a["current"]["citation_signatures"]]
    assert ids == [e["event_id"] for e in events]  # ordered by created_at


def test_counters_and_state_hash_follow_the_rules(tmp_path: Path) -> None:
    signer = TestSigner()
    bad = citation(signer, 9)
    bad["signature"]["signature_b64"] = citation(TestSigner(), 9)["signature"]["signature_b64"]
    state, _ = make_state(tmp_path, [citation(signer, 1), attestation(signer), bad])
    assert (state["event_count"], state["valid_event_count"], state["invalid_event_count"]) == (
        4,
        3,
        1,
    )
    assert state["invalid_events"][0]["reasons"] == ["signature"]
    body = {k: v for k, v in state.items() if k != "state_sha256"}
    assert state["state_sha256"] == canonical_sha256(body)


def test_conflicting_relationship_by_the_same_key_is_an_equivocation(tmp_path: Path) -> None:
    signer = TestSigner()
    first = citation(signer, 1, relationship="supports", created_at="2026-11-29T12:00:00Z")
    second = citation(signer, 1, relationship="refutes", created_at="2026-11-29T12:00:01Z")
    other_key = citation(TestSigner(), 1, relationship="refutes")
    state, _ = make_state(tmp_path, [second, first, other_key])
    assert state["equivocation_count"] == 1
    assert state["equivocations"][0]["kept_event_id"] == first["event_id"]
    assert state["equivocations"][0]["conflicting_event"]["event_id"] == second["event_id"]
    kept = {e["event_id"] for e in state["current"]["citation_signatures"]}
    assert kept == {first["event_id"], other_key["event_id"]}


def test_two_positions_claimed_by_one_key_is_an_equivocation(tmp_path: Path) -> None:
    signer = TestSigner()
    state, _ = make_state(
        tmp_path, [attestation(signer, position=1), attestation(signer, position=2)]
    )
    assert state["equivocation_count"] == 1
    assert len(state["current"]["author_attestations"]) == 1


def test_event_about_another_record_is_invalid(tmp_path: Path) -> None:
    from pithauthor.protocol.ids import PithNumber
    from pithauthor.protocol.subject import Subject

    other = Subject(PithNumber.from_digest("11" * 32, 2021), "11" * 32)
    state, _ = make_state(tmp_path, [citation(TestSigner(), 1, subject=other)])
    assert state["invalid_events"][0]["reasons"] == [
        "subject_matches",
        "payload_canonical_sha256",
    ]
    assert state["current"]["citation_signatures"] == []


def test_check_state_fails_a_reordered_local_state(tmp_path: Path) -> None:
    signer = TestSigner()
    state, trust = make_state(tmp_path, [citation(signer, i) for i in range(3)])
    assert remerge(state) == state
    assert check_state(state, trust).ok
    reordered = copy.deepcopy(state)
    reordered["current"]["citation_signatures"].reverse()
    reordered["state_sha256"] = canonical_sha256(
        {k: v for k, v in reordered.items() if k != "state_sha256"}
    )
    failed = [c.name for c in check_state(reordered, trust).failed]
    assert failed == ["merge"]


def test_check_state_fails_a_counter_equal_in_python_but_not_in_json(tmp_path: Path) -> None:
    """The merge is compared field by field, the state hashed once: 2.0 and False equal 2 and 0
    in Python but serialise otherwise, so a counter of another JSON type must fail the merge."""
    state, trust = make_state(tmp_path, [citation(TestSigner(), 1)])
    assert check_state(state, trust).ok
    assert (state["event_count"], state["invalid_event_count"]) == (2, 0)
    for name, forged in (("event_count", 2.0), ("invalid_event_count", False)):
        edited = copy.deepcopy(state)
        edited[name] = forged
        edited["state_sha256"] = canonical_sha256(
            {k: v for k, v in edited.items() if k != "state_sha256"}
        )
        failed = [c.name for c in check_state(edited, trust).failed]
        assert failed == ["merge"], (name, failed)
    # the record shown in `current` is compared by its bytes, too
    edited = copy.deepcopy(state)
    shown = copy.deepcopy(state["current"]["canonical_record"])  # not the payload's own object
    shown["source"]["version"] = 2.0
    edited["current"]["canonical_record"] = shown
    edited["state_sha256"] = canonical_sha256(
        {k: v for k, v in edited.items() if k != "state_sha256"}
    )
    assert "record.current_matches" in [c.name for c in check_state(edited, trust).failed]


def test_pith_verify_passes_a_local_state_and_fails_a_miscounted_one(
    tmp_path: Path, pith: RunPith
) -> None:
    state, _ = make_state(tmp_path, [citation(TestSigner(), 1)])
    manifest = tmp_path / "local.json"
    manifest.write_text(
        json.dumps(load_or_create_key(tmp_path / "reg").manifest("http://127.0.0.1:1")), "utf-8"
    )
    good = tmp_path / "state.json"
    good.write_text(json.dumps(state), "utf-8")
    ok = pith("verify", str(good), "--trust-manifest", str(manifest), "--json")
    assert ok.returncode == 0, ok.stderr
    merge = next(c for c in json.loads(ok.stdout)["checks"] if c["name"] == "merge")
    assert merge["status"] == "passed"
    state["equivocation_count"] = 1
    state["state_sha256"] = canonical_sha256(
        {k: v for k, v in state.items() if k != "state_sha256"}
    )
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(state), "utf-8")
    result = pith("verify", str(bad), "--trust-manifest", str(manifest))
    assert result.returncode == 1
    assert "merge" in result.stderr


def test_real_registry_state_stays_unverifiable_for_the_merge() -> None:
    from support.paths import load_fixture

    from pithauthor.verify import pinned_trust

    report = check_state(load_fixture("state-2204.10562v1.json"), pinned_trust())
    merge = next(c for c in report.checks if c.name == "merge")
    assert merge.status == "unverifiable"
