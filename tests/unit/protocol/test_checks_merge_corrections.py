"""Corrections in the local merge: a replacement shows instead of what it replaces, a withdrawal
removes a statement, neither is an equivocation; links by another key, to an unknown event, to
another subject, or older than their target are invalid; `pith verify` recomputes all of it."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from support.examples_budget import examples
from support.registry import (
    CITING,
    REAL_NUMBER,
    SUBJECT,
    T0,
    T1,
    T2,
    TestSigner,
    cite_event,
    claim_event,
    event_ids,
    make_bundle,
    make_state,
)

from pithauthor.errors import EventError
from pithauthor.protocol.checks.bundle import check_bundle
from pithauthor.protocol.checks.merge import Applied, apply_events, order_key
from pithauthor.protocol.checks.state import check_state
from pithauthor.protocol.events import seal, signer_block, unsigned_event
from pithauthor.protocol.subject import Subject
from pithauthor.sign import attest_authorship, sign_citation, withdraw


def test_a_replaced_claim_shows_only_the_new_one_and_is_no_equivocation(tmp_path: Path) -> None:
    ada = TestSigner()
    old = claim_event(ada, 2)
    new = claim_event(ada, 3, T1, replaces=old["event_id"])
    state, trust = make_state(tmp_path, [new, old])
    assert event_ids(state["current"]["author_attestations"]) == [new["event_id"]]
    assert state["equivocation_count"] == 0 and state["equivocations"] == []
    assert state["superseded"] == [
        {"event": old, "superseded_by": new["event_id"], "how": "replaced"}
    ]
    assert state["invalid_event_count"] == 0
    report = check_state(state, trust)
    assert report.ok, report.failed


def test_without_the_link_the_same_change_is_an_equivocation(tmp_path: Path) -> None:
    """The contrast that makes the test above mean something."""
    ada = TestSigner()
    state, _ = make_state(tmp_path, [claim_event(ada, 2), claim_event(ada, 3, T1)])
    assert state["equivocation_count"] == 1
    assert "superseded" not in state


def test_a_withdrawn_citation_leaves_current_and_the_withdrawal_is_listed(tmp_path: Path) -> None:
    ada = TestSigner()
    cited = cite_event(ada, "extends")
    gone = dict(withdraw(ada, cited, created_at=T1))
    assert gone["payload"]["withdraws"] == cited["event_id"]
    assert gone["event_type"] == "citation_signature"
    state, trust = make_state(tmp_path, [cited, gone])
    assert state["current"]["citation_signatures"] == []
    assert state["withdrawals"] == [gone]
    assert state["superseded"][0]["how"] == "withdrawn"
    assert state["equivocation_count"] == 0
    assert check_state(state, trust).ok


def test_a_chain_of_replacements_keeps_the_last(tmp_path: Path) -> None:
    ada = TestSigner()
    a = cite_event(ada, "cites")
    b = cite_event(ada, "extends", T1, replaces=a["event_id"])
    c = cite_event(ada, "supports", T2, replaces=b["event_id"])
    state, trust = make_state(tmp_path, [c, a, b])
    assert event_ids(state["current"]["citation_signatures"]) == [c["event_id"]]
    assert [s["superseded_by"] for s in state["superseded"]] == [b["event_id"], c["event_id"]]
    assert state["equivocation_count"] == 0
    assert check_state(state, trust).ok


def test_a_replacement_in_the_same_second_comes_after_what_it_replaces(tmp_path: Path) -> None:
    """Merge order is (created_at, event_id); a link must win over the id's accident."""
    ada = TestSigner()
    for position in range(1, 60):  # some replacement sorts before its target by event_id
        old = claim_event(ada, position)
        new = claim_event(ada, position + 100, T0, replaces=old["event_id"])
        if new["event_id"] < old["event_id"]:
            break
    else:
        pytest.fail("no event_id ordering case found")
    state, _ = make_state(tmp_path, [old, new])
    assert event_ids(state["current"]["author_attestations"]) == [new["event_id"]]
    assert state["equivocation_count"] == 0


def test_another_key_cannot_withdraw_or_replace_someone_elses_claim(tmp_path: Path) -> None:
    ada, mallory = TestSigner(), TestSigner()
    claim = claim_event(ada, 2)
    with pytest.raises(EventError, match="only the key that signed"):
        withdraw(mallory, claim)
    forged = dict(sign_citation(mallory, SUBJECT, CITING, "cites", created_at=T1))
    hostile_withdrawal = claim_event(mallory, 2, T1, replaces=claim["event_id"])
    state, trust = make_state(tmp_path, [claim, hostile_withdrawal, forged])
    assert event_ids(state["current"]["author_attestations"]) == [claim["event_id"]]
    assert state["invalid_events"] == [
        {"event": hostile_withdrawal, "reasons": ["replaces_signer"]}
    ]
    assert check_state(state, trust).ok


def test_a_replacement_older_than_its_target_is_invalid(tmp_path: Path) -> None:
    ada = TestSigner()
    old = claim_event(ada, 2, T1)
    backdated = claim_event(ada, 3, T0, replaces=old["event_id"])
    state, _ = make_state(tmp_path, [old, backdated])
    assert event_ids(state["current"]["author_attestations"]) == [old["event_id"]]
    assert state["invalid_events"][0]["reasons"] == ["replaces_order"]


def test_a_link_to_an_event_the_state_lacks_is_invalid_until_it_arrives(tmp_path: Path) -> None:
    ada = TestSigner()
    old = claim_event(ada, 2)
    new = claim_event(ada, 3, T1, replaces=old["event_id"])
    alone, _ = make_state(tmp_path / "a", [new])
    assert alone["invalid_events"][0]["reasons"] == ["replaces_unknown"]
    assert alone["current"]["author_attestations"] == []
    both, _ = make_state(tmp_path / "b", [new, old])
    assert event_ids(both["current"]["author_attestations"]) == [new["event_id"]]


def test_a_link_to_another_papers_event_or_type_is_invalid() -> None:
    ada = TestSigner()
    other = Subject(CITING, "e3beb26c87a6d30d7373b0956294a4d9837dce5a1ab5f253ff36b58cbbf843e1")
    elsewhere = dict(attest_authorship(ada, other, name="Ada Lovelace", created_at=T0))
    cite = cite_event(ada, "cites")
    moved = claim_event(ada, 2, T1, replaces=elsewhere["event_id"])
    retyped = claim_event(ada, 2, T1, replaces=cite["event_id"])
    applied = apply_events([elsewhere, cite, moved, retyped])  # type: ignore[list-item]
    assert applied.broken_links[moved["event_id"]] == ["replaces_subject"]
    assert applied.broken_links[retyped["event_id"]] == ["replaces_type"]


def test_two_corrections_of_one_event_the_second_is_an_equivocation(tmp_path: Path) -> None:
    ada = TestSigner()
    old = claim_event(ada, 2)
    first = claim_event(ada, 3, T1, replaces=old["event_id"])
    second = claim_event(ada, 4, T2, replaces=old["event_id"])
    late_withdrawal = dict(withdraw(ada, old, created_at=T2))
    state, trust = make_state(tmp_path, [old, first, second, late_withdrawal])
    assert event_ids(state["current"]["author_attestations"]) == [first["event_id"]]
    assert {e["kept_event_id"] for e in state["equivocations"]} == {first["event_id"]}
    assert state["equivocation_count"] == 2
    assert check_state(state, trust).ok


def test_a_withdrawal_is_final_and_must_restate_what_it_withdraws(tmp_path: Path) -> None:
    ada = TestSigner()
    cited = cite_event(ada, "extends")
    gone = dict(withdraw(ada, cited, created_at=T1))
    revived = cite_event(ada, "cites", T2, replaces=gone["event_id"])
    state, _ = make_state(tmp_path / "a", [cited, gone, revived])
    assert state["invalid_events"][0]["reasons"] == ["replaces_withdrawal"]
    fresh = cite_event(ada, "cites", T2)  # a new statement after a withdrawal is applied
    state, _ = make_state(tmp_path / "b", [cited, gone, fresh])
    assert event_ids(state["current"]["citation_signatures"]) == [fresh["event_id"]]
    assert state["equivocation_count"] == 0


def test_verify_fails_a_state_whose_correction_was_tampered_with(tmp_path: Path) -> None:
    ada = TestSigner()
    old = claim_event(ada, 2)
    new = claim_event(ada, 3, T1, replaces=old["event_id"])
    state, trust = make_state(tmp_path, [old, new])
    hidden = copy.deepcopy(state)
    del hidden["superseded"]  # the replaced event left out: the link has no target
    from pithauthor.protocol.checks.merge import state_hash

    hidden["state_sha256"] = state_hash(hidden)
    report = check_state(hidden, trust)
    assert not report.ok
    assert "merge" in {c.name for c in report.failed}
    assert state["pith_number"] == REAL_NUMBER


def test_verify_checks_a_link_in_a_jsonl_file_and_says_when_it_cannot(tmp_path: Path) -> None:
    from pithauthor.verify import verify_documents

    ada, mallory = TestSigner(), TestSigner()
    old = claim_event(ada, 2)
    new = claim_event(ada, 3, T1, replaces=old["event_id"])
    both = verify_documents([old, new])
    assert both.ok
    assert next(c for c in both.checks if c.name == "[2].link").status == "passed"
    alone = verify_documents([new])
    link = next(c for c in alone.checks if c.name == "link")
    assert link.status == "unverifiable" and "not at hand" in link.detail
    hostile = claim_event(mallory, 3, T1, replaces=old["event_id"])
    report = verify_documents([old, hostile])
    assert not report.ok
    assert {c.name for c in report.failed} == {"[2].link"}
    assert "replaces_signer" in next(c.detail for c in report.failed)


def test_the_local_registry_refuses_a_correction_of_another_keys_event_over_http(
    tmp_path: Path,
) -> None:
    """At the door: a withdrawal or replacement naming a stored event it may not correct is 422
    with the rule; one naming an event not stored yet is taken (it may come later)."""
    import httpx
    from support.registry import start_server

    server = start_server(tmp_path / "reg")
    try:
        ada, mallory = TestSigner(), TestSigner()
        claim = claim_event(ada, 2)
        hostile = claim_event(mallory, 2, T1, replaces=claim["event_id"])
        early = claim_event(
            ada, 3, T1, replaces=claim_event(ada, 4)["event_id"]
        )  # target never sent

        def post(event: dict[str, Any]) -> httpx.Response:
            url = f"{server.url}/pith/{SUBJECT.pith_number.body}/action/author_attestation"
            return httpx.post(url, json=event, headers={"Idempotency-Key": event["event_id"]})

        assert post(claim).status_code == 201
        refused = post(hostile)
        assert refused.status_code == 422
        assert refused.json()["failed_checks"] == ["replaces_signer"]
        assert post(early).status_code == 201
        state = httpx.get(f"{server.url}/pith/{SUBJECT.pith_number.body}/state.json").json()
        assert [e["event_id"] for e in state["current"]["author_attestations"]] == [
            claim["event_id"]
        ]
        assert state["invalid_events"][0]["reasons"] == ["replaces_unknown"]
    finally:
        server.stop()


def test_the_merge_with_corrections_is_independent_of_arrival_order(tmp_path: Path) -> None:
    import random

    ada, bob = TestSigner(), TestSigner()
    a = cite_event(ada, "cites")
    b = cite_event(ada, "extends", T1, replaces=a["event_id"])
    c = dict(withdraw(ada, b, created_at=T2))
    claim = claim_event(bob, 1)
    fixed = claim_event(bob, 2, T0, replaces=claim["event_id"])  # same second as its target
    events = [a, b, c, claim, fixed]
    first, _ = make_state(tmp_path / "a", events)
    for seed in range(5):
        shuffled = events + events[:2]
        random.Random(seed).shuffle(shuffled)
        again, _ = make_state(tmp_path / "a", shuffled)  # the same registry key
        assert again == first
    assert first["current"]["citation_signatures"] == []
    assert event_ids(first["current"]["author_attestations"]) == [fixed["event_id"]]


def test_replicate_replace_with_new_artifacts_corrects_the_one_record_of_that_kind() -> None:
    from pithauthor.registry.statements import Statements
    from pithauthor.sign import record_replication

    ada = TestSigner()

    def record(sha: str, outcome: str, **kw: Any) -> dict[str, Any]:
        return dict(
            record_replication(ada, SUBJECT, kind="replication", outcome=outcome, summary="s",
                               artifacts=[("https://example.org/a", sha)], created_at=T1, **kw)
        )  # fmt: skip

    old = record("aa" * 32, "reproduced")
    held = Statements([old])  # type: ignore[list-item]
    new = record("bb" * 32, "not_reproduced", settle=held.settle("replace"))
    assert new["payload"]["replaces"] == old["event_id"]
    state_held = Statements([old])  # type: ignore[list-item]
    plain = record("bb" * 32, "not_reproduced", settle=state_held.settle("refuse"))
    assert "replaces" not in plain["payload"]  # another slot: a second record, not a conflict


# --- the merge without links ----------------------------------------------------------------------
# `apply_events` asks each event's link once, and with no link at all skips the link checks and
# the reordering (which then change nothing). The net: any list of events merged as it is, and
# merged beside an event whose link names no event (broken, so applied nowhere, but it makes
# the full path run), decides the same for every other event. Without links the fold also
# holds an event whose slot is free by itself, not through `Fold.add`: the same net holds it.

_ADA, _GRACE = TestSigner(b"a" * 32), TestSigner(b"g" * 32)
_OLD_CLAIM = claim_event(_ADA, 2)
_OLD_CITE = cite_event(_GRACE, "extends")
POOL = [
    _OLD_CLAIM,
    claim_event(_ADA, 2, T1),  # a repeat
    claim_event(_ADA, 5, T1),  # an equivocation
    claim_event(_GRACE, 1, T2),
    _OLD_CITE,
    cite_event(_GRACE, "extends", T1),  # a repeat
    cite_event(_GRACE, "supports", T2),  # an equivocation
    cite_event(_ADA, "cites", T0),
    claim_event(_ADA, 3, T1, replaces=_OLD_CLAIM["event_id"]),
    cite_event(_GRACE, "supports", T1, replaces=_OLD_CITE["event_id"]),
    dict(withdraw(_GRACE, _OLD_CITE, created_at=T2)),
    claim_event(_GRACE, 3, T2, replaces=_OLD_CLAIM["event_id"]),  # another key's: broken
]
_UNKNOWN = "sha256:" + "0" * 64
_DANGLING = cite_event(_ADA, "uses_method", T2, replaces=_UNKNOWN)


def _decided(applied: Applied) -> dict[str, Any]:
    """What `apply_events` decided, but for the dangling event's own fault."""
    broken = {k: v for k, v in applied.broken_links.items() if k != _DANGLING["event_id"]}
    return {**vars(applied), "broken_links": broken}


@settings(max_examples=examples(200), deadline=None)
@given(st.lists(st.sampled_from(POOL), max_size=8, unique_by=lambda e: e["event_id"]))
def test_events_without_links_are_merged_as_the_full_path_merges_them(events: list[Any]) -> None:
    events.sort(key=order_key)
    alone = apply_events(events)
    full = apply_events(sorted([*events, _DANGLING], key=order_key))
    assert full.broken_links[_DANGLING["event_id"]] == ["replaces_unknown"]
    assert _decided(alone) == _decided(full)


# --- bundles: their correction links checked by the one rule -----------------------------


def _link_checks(report: Any) -> dict[str, tuple[str, str]]:
    return {c.name: (c.status, c.detail) for c in report.checks if c.name.endswith(".link")}


def test_a_bundle_holding_another_keys_withdrawal_of_a_claim_fails(tmp_path: Path) -> None:
    """Mallory's withdrawal of Ada's claim: refused in a state and at the registry's door,
    so a bundle carrying it is one no registry keeping the rules serves."""
    ada, mallory = TestSigner(), TestSigner()
    claim = claim_event(ada, 2)
    payload = {**claim["payload"], "withdraws": claim["event_id"]}  # Ada's words, restated
    unsigned = unsigned_event(
        "author_attestation", SUBJECT.pith_number, T1, signer_block(mallory), payload
    )
    hostile = dict(seal(unsigned, mallory))
    bundle, trust = make_bundle(tmp_path, [claim])
    bundle["events"].append(hostile)  # a bundle made by hand: no registry serves it
    report = check_bundle(bundle, trust)
    assert not report.ok
    links = _link_checks(report)
    assert [s for s, _ in links.values()] == ["failed"]
    assert "replaces_signer" in next(iter(links.values()))[1]


@pytest.mark.parametrize("fault", ["replaces_type", "replaces_subject", "replaces_order"])
def test_a_bundle_whose_correction_breaks_a_link_rule_fails(tmp_path: Path, fault: str) -> None:
    ada = TestSigner()
    if fault == "replaces_type":
        target = cite_event(ada, "cites")
        fix = claim_event(ada, 3, T1, replaces=target["event_id"])
    elif fault == "replaces_subject":
        other = Subject(CITING, "e3beb26c87a6d30d7373b0956294a4d9837dce5a1ab5f253ff36b58cbbf843e1")
        target = dict(attest_authorship(ada, other, name="Ada Lovelace", created_at=T0))
        fix = claim_event(ada, 3, T1, replaces=target["event_id"])
    else:
        target = claim_event(ada, 2, T1)
        fix = claim_event(ada, 3, T0, replaces=target["event_id"])
    bundle, trust = make_bundle(tmp_path, [target])
    bundle["events"].append(fix)
    report = check_bundle(bundle, trust)
    links = _link_checks(report)
    assert any(s == "failed" and fault in d for s, d in links.values()), links
    assert not report.ok


def test_a_bundle_with_an_honest_withdrawal_passes_its_link_check(tmp_path: Path) -> None:
    """The contrast: the same shape, signed by the claim's own key, holds."""
    ada = TestSigner()
    claim = claim_event(ada, 2)
    gone = dict(withdraw(ada, claim, created_at=T1))
    bundle, trust = make_bundle(tmp_path, [claim, gone])
    report = check_bundle(bundle, trust)
    assert report.ok, report.failed
    assert [s for s, _ in _link_checks(report).values()] == ["passed"]


def test_the_local_registry_never_serves_a_bundle_its_link_rule_fails(
    tmp_path: Path,
) -> None:
    """A correction that reached the registry before the event it names (the door could not
    check it) and breaks the rule against it once it arrives is left out of the bundle: the
    merge lists it invalid, and the bundle verifies."""
    ada, mallory = TestSigner(), TestSigner()
    claim = claim_event(ada, 2)
    hostile = claim_event(mallory, 2, T1, replaces=claim["event_id"])
    bundle, trust = make_bundle(tmp_path, [hostile, claim])
    assert hostile["event_id"] not in event_ids(bundle["events"])
    assert check_bundle(bundle, trust).ok
