"""The same statement signed twice (the same command run again, `-o FILE` twice, one key on two
machines) counts once in the local merge: the earliest stays in `current`, the repeat is listed
under `duplicates`, it is never an equivocation, and `pith verify` recomputes it. A state
without repeats has no `duplicates` key (it is the state this merge made before)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from support.registry import (
    CITING,
    SUBJECT,
    T0,
    T1,
    T2,
    TestSigner,
    cite_event,
    claim_event,
    event_ids,
    make_state,
)

from pithauthor.protocol.checks.merge import apply_events
from pithauthor.protocol.checks.state import check_state
from pithauthor.sign import attest_authorship, withdraw


def test_the_same_claim_signed_twice_is_one_claim_and_no_equivocation(tmp_path: Path) -> None:
    ada = TestSigner()
    first, again = claim_event(ada, 2, T0), claim_event(ada, 2, T1)
    assert first["event_id"] != again["event_id"]  # two events, one statement
    state, trust = make_state(tmp_path, [again, first])
    assert event_ids(state["current"]["author_attestations"]) == [first["event_id"]]
    assert state["equivocation_count"] == 0
    assert state["duplicates"] == [{"event": again, "duplicate_of": first["event_id"]}]
    assert state["invalid_event_count"] == 0
    assert check_state(state, trust).ok


def test_the_same_citation_from_two_machines_counts_once(tmp_path: Path) -> None:
    ada = TestSigner()
    events = [
        cite_event(ada, "extends", T0),
        cite_event(ada, "extends", T1),
        cite_event(ada, "extends", T2),
    ]
    state, trust = make_state(tmp_path, events)
    assert event_ids(state["current"]["citation_signatures"]) == [events[0]["event_id"]]
    assert [d["event"]["event_id"] for d in state["duplicates"]] == event_ids(events[1:])
    assert state["equivocation_count"] == 0
    assert check_state(state, trust).ok


def test_a_restatement_with_other_words_is_still_a_repeat_in_the_slot_not_a_duplicate(
    tmp_path: Path,
) -> None:
    """Only word for word is a duplicate: another statement text is the documented repeat."""
    ada = TestSigner()
    plain = claim_event(ada, 2, T0)
    other = dict(
        attest_authorship(
            ada, SUBJECT, name="Ada Lovelace", position=2, created_at=T1, statement="Mine."
        )
    )
    state, _ = make_state(tmp_path, [plain, other])
    assert event_ids(state["current"]["author_attestations"]) == event_ids([plain, other])
    assert "duplicates" not in state


def test_a_state_without_repeats_has_no_duplicates_key(tmp_path: Path) -> None:
    ada, grace = TestSigner(), TestSigner()
    state, _ = make_state(tmp_path, [claim_event(ada, 2), cite_event(grace, "cites")])
    assert "duplicates" not in state
    assert len(state["current"]["author_attestations"]) == 1


def test_a_withdrawal_of_the_repeat_takes_the_statement_out_and_a_second_one_is_a_duplicate(
    tmp_path: Path,
) -> None:
    """Machine 2 knows only its own copy: withdrawing that copy withdraws the statement."""
    ada = TestSigner()
    first, again = cite_event(ada, "extends", T0), cite_event(ada, "extends", T1)
    gone = dict(withdraw(ada, again, created_at=T2))
    gone_again = dict(withdraw(ada, again, created_at="2026-11-29T12:15:00Z"))
    state, trust = make_state(tmp_path, [first, again, gone, gone_again])
    assert state["current"]["citation_signatures"] == []
    assert state["equivocation_count"] == 0
    assert [d["event"]["event_id"] for d in state["duplicates"]] == event_ids([again, gone_again])
    assert check_state(state, trust).ok


def test_verify_fails_a_state_that_hides_a_duplicate_in_current(tmp_path: Path) -> None:
    ada = TestSigner()
    state, trust = make_state(tmp_path, [claim_event(ada, 2, T0), claim_event(ada, 2, T1)])
    forged: dict[str, Any] = {**state, "current": dict(state["current"])}
    forged["current"]["author_attestations"] = [
        *state["current"]["author_attestations"],
        state["duplicates"][0]["event"],
    ]
    del forged["duplicates"]
    assert not check_state(forged, trust).ok


def test_apply_events_on_an_outbox_with_repeats_holds_one() -> None:
    ada = TestSigner()
    applied = apply_events([cite_event(ada, "cites", T0), cite_event(ada, "cites", T1)])  # type: ignore[list-item]
    assert len(applied.current) == 1 and len(applied.duplicates) == 1
    assert applied.equivocations == []
    assert CITING.full == applied.current[0]["payload"]["citing_pith_number"]
