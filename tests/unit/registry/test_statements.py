"""Published once, and correctable: each signing command run twice signs and sends nothing the
second time; a changed claim needs --replace, a changed citation replaces the old one, a
withdrawal takes one back; the registry's merged state shows the newest only, with
`equivocation_count` 0, and `pith verify` checks the links. A real local registry over loopback
and a real key store throughout."""

# The local registry and key fixtures are the cite tests' (tests/conftest.py).

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import pytest
from support.cite import BIB, PASSPHRASE, run_cite, write_bib
from support.cli import RunPith, assert_one_line_error, use_fast_kdf
from support.registry import REAL_NUMBER

from pithauthor.registry.outbox import Outbox

PAPER = "2101.99903"


def _trust(cite_registry: dict[str, Any]) -> tuple[str, ...]:
    return ("--registry", cite_registry["url"], "--trust-manifest", cite_registry["manifest"])


def _state(pith: RunPith, cite_registry: dict[str, Any], ref: str, out: Path) -> dict[str, Any]:
    fetched = pith("fetch", ref, "--what", "state", "-o", str(out), *_trust(cite_registry))
    assert fetched.returncode == 0, fetched.stderr
    state: dict[str, Any] = json.loads(out.read_text("utf-8"))
    return state


def _outbox_ids() -> list[str]:
    with Outbox() as outbox:
        return [e.event_id for e in outbox.entries()]


def _claim(pith: RunPith, cite_registry: dict[str, Any], *args: str) -> Any:
    return pith("claim", PAPER, *args, "--submit", "--yes", *_trust(cite_registry))


def test_claim_twice_signs_and_sends_nothing_the_second_time(
    pith: RunPith, cite_registry: dict[str, Any], cite_author: str, tmp_path: Path
) -> None:
    first = _claim(pith, cite_registry, "--position", "1")
    assert first.returncode == 0, first.stderr
    assert "accepted 1," in first.stderr
    stored = _outbox_ids()
    again = _claim(pith, cite_registry, "--position", "1")
    assert again.returncode == 0, again.stderr
    assert "already signed: author_attestation" in again.stderr
    assert "nothing new was signed" in again.stderr
    assert "signed author_attestation" not in again.stderr
    assert "accepted 0," in again.stderr  # nothing was pending: nothing was sent
    assert _outbox_ids() == stored
    state = _state(pith, cite_registry, PAPER, tmp_path / "state.json")
    assert len(state["current"]["author_attestations"]) == 1
    assert state["equivocation_count"] == 0


def test_a_changed_claim_is_refused_without_replace_and_replaces_with_it(
    pith: RunPith, cite_registry: dict[str, Any], cite_author: str, tmp_path: Path
) -> None:
    assert _claim(pith, cite_registry, "--position", "1").returncode == 0
    stored = _outbox_ids()
    changed = _claim(pith, cite_registry)  # the same author, now without a position
    assert_one_line_error(changed, 2)
    assert "you already signed author claim" in changed.stderr
    assert "--replace" in changed.stderr
    assert _outbox_ids() == stored  # nothing signed
    replaced = _claim(pith, cite_registry, "--replace")
    assert replaced.returncode == 0, replaced.stderr
    assert f"replaces {stored[0][:19]}…" in replaced.stderr
    state_file = tmp_path / "state.json"
    state = _state(pith, cite_registry, PAPER, state_file)
    (current,) = state["current"]["author_attestations"]
    assert "position" not in current["payload"]["author"]
    assert current["payload"]["replaces"] == stored[0]
    assert [s["event"]["event_id"] for s in state["superseded"]] == stored
    assert state["equivocation_count"] == 0
    verified = pith("verify", str(state_file), "--trust-manifest", cite_registry["manifest"])
    assert verified.returncode == 0, verified.stdout + verified.stderr
    assert "current.author_attestations[0].link" in verified.stdout
    # and again: the correction itself is not signed twice
    twice = _claim(pith, cite_registry, "--replace")
    assert twice.returncode == 0, twice.stderr
    assert "already signed" in twice.stderr
    assert len(_outbox_ids()) == 2


def test_replace_with_nothing_to_replace_is_refused(
    pith: RunPith, cite_registry: dict[str, Any], cite_author: str
) -> None:
    refused = _claim(pith, cite_registry, "--position", "1", "--replace")
    assert_one_line_error(refused, 2)
    assert "holds any author claim of yours" in refused.stderr
    assert _outbox_ids() == []


def test_replicate_twice_signs_nothing_the_second_time(
    pith: RunPith, cite_registry: dict[str, Any], cite_author: str, tmp_path: Path
) -> None:
    args = (
        "replicate", PAPER, "--kind", "replication", "--outcome", "reproduced",
        "--summary", "Re-ran it.", "--artifact", "https://example.org/log.txt",
        "--sha256", "ab" * 32, "--submit", "--yes", *_trust(cite_registry),
    )  # fmt: skip
    assert pith(*args).returncode == 0
    again = pith(*args)
    assert again.returncode == 0, again.stderr
    assert "already signed: replication_record" in again.stderr
    assert "accepted 0," in again.stderr
    assert len(_outbox_ids()) == 1
    other = [a if a != "reproduced" else "not_reproduced" for a in args]
    assert_one_line_error(pith(*other), 2)
    corrected = pith(*other, "--replace")
    assert corrected.returncode == 0, corrected.stderr
    assert "replaces sha256:" in corrected.stderr
    state = _state(pith, cite_registry, PAPER, tmp_path / "s.json")
    (record,) = state["current"]["replication_records"]
    assert record["payload"]["outcome"] == "not_reproduced"
    assert state["equivocation_count"] == 0
    # the replaced record cannot be withdrawn: its replacement is what stands
    (old_id,) = [s["event"]["event_id"] for s in state["superseded"]]
    refused = pith("withdraw", old_id, "--submit", "--yes", *_trust(cite_registry))
    assert_one_line_error(refused, 2)
    assert f"was replaced by {record['event_id']}" in refused.stderr


def test_cite_twice_signs_only_what_is_new_or_changed(
    pith: RunPith, cite_registry: dict[str, Any], cite_author: str, tmp_path: Path
) -> None:
    bib = write_bib(tmp_path, BIB.split("@misc{missing")[0])
    first = run_cite(pith, cite_registry, str(bib), "--submit", "--yes")
    assert first.returncode == 0, first.stderr
    assert "accepted 4" in first.stderr
    stored = set(_outbox_ids())
    again = run_cite(pith, cite_registry, str(bib), "--submit", "--yes", "--json")
    assert again.returncode == 0, again.stderr
    report = json.loads(again.stdout)
    assert "accepted 0," in again.stderr  # nothing sent again
    assert report["events"] == 0
    assert report["counts"]["already_signed"] == 4
    assert set(_outbox_ids()) == stored
    # one relationship changed: that citation alone is signed, as the replacement
    changed = run_cite(pith, cite_registry, str(bib), "--map", "byurl=extends", "--submit", "--yes",
                    "--json")  # fmt: skip
    assert changed.returncode == 0, changed.stderr
    rows = {r["key"]: r for r in json.loads(changed.stdout)["rows"]}
    assert rows["byurl"]["status"] == "signed" and "replaces sha256:" in rows["byurl"]["detail"]
    assert rows["real"]["status"] == "already_signed"
    assert len(set(_outbox_ids()) - stored) == 1
    state = _state(pith, cite_registry, PAPER, tmp_path / "state.json")  # byurl cites 2101.99903
    (citation,) = state["current"]["citation_signatures"]
    assert citation["payload"]["relationship"] == "extends"
    assert state["superseded"][0]["how"] == "replaced"
    assert state["equivocation_count"] == 0


def test_withdraw_removes_a_citation_once_and_only_its_key_may(
    pith: RunPith,
    cite_registry: dict[str, Any],
    cite_author: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    trust = _trust(cite_registry)
    cited = pith("cite", "--to", "2302.12445", "--from", "2101.99901", "--relationship",
                 "extends", "--submit", "--yes", *trust)  # fmt: skip
    assert cited.returncode == 0, cited.stderr
    (citation_id,) = _outbox_ids()
    gone = pith("withdraw", citation_id[:19], "--submit", "--yes", *trust)
    assert gone.returncode == 0, gone.stderr
    assert f"withdraws citation_signature {citation_id[:19]}…" in gone.stderr
    state_file = tmp_path / "state.json"
    state = _state(pith, cite_registry, REAL_NUMBER, state_file)
    assert state["current"]["citation_signatures"] == []
    assert state["superseded"][0]["how"] == "withdrawn"
    assert len(state["withdrawals"]) == 1
    assert state["equivocation_count"] == 0
    verified = pith("verify", str(state_file), "--trust-manifest", cite_registry["manifest"])
    assert verified.returncode == 0, verified.stdout + verified.stderr
    assert "withdrawals[0].link" in verified.stdout
    twice = pith("withdraw", citation_id, "--submit", "--yes", *trust)
    assert twice.returncode == 0, twice.stderr
    assert "withdrawn already" in twice.stderr
    assert len(_outbox_ids()) == 2
    # another author's key, same outbox: refused before anything is signed
    from pithauthor.keys.author import generate

    use_fast_kdf(monkeypatch)
    monkeypatch.setenv("PITH_PASSPHRASE", PASSPHRASE)
    generate("mallory", backend="file", note=lambda _: None)
    ada_claim = pith("claim", PAPER, "--key", "ada", "--submit", "--yes", *trust)
    assert ada_claim.returncode == 0, ada_claim.stderr
    with Outbox() as outbox:
        (claim_id,) = [e.event_id for e in outbox.entries() if e.event_type == "author_attestation"]
    ids = set(_outbox_ids())
    hostile = pith("withdraw", claim_id, "--key", "mallory", "--submit", "--yes", *trust)
    assert_one_line_error(hostile, 2)
    assert "only the key that signed an event can withdraw it" in hostile.stderr
    assert set(_outbox_ids()) == ids


def test_withdraw_of_an_unknown_or_malformed_event_is_one_line(
    pith: RunPith, cite_registry: dict[str, Any], cite_author: str
) -> None:
    unknown = pith("withdraw", "sha256:" + "0" * 64, *_trust(cite_registry))
    assert_one_line_error(unknown, 2)
    assert "the outbox holds no event" in unknown.stderr
    malformed = pith("withdraw", "1234", *_trust(cite_registry))
    assert_one_line_error(malformed, 2)
    assert "is not an event id" in malformed.stderr


def test_the_same_claim_for_another_registry_is_signed_for_it_and_reused_there_after(
    pith: RunPith, cite_registry: dict[str, Any], cite_author: str, tmp_path: Path
) -> None:
    """Reuse is per registry: what pith.science (or another local registry) was sent does not
    count as said to this one."""
    from support.registry import arxiv_metadata, manifest_file, start_server

    from pithauthor.registry.local.run import add_paper

    other = start_server(tmp_path / "other")
    try:
        meta = tmp_path / "paper.json"
        meta.write_text(json.dumps(arxiv_metadata(PAPER)), "utf-8")
        add_paper(other.store, other.key, meta)
        manifest = manifest_file(other.url, tmp_path / "other", tmp_path / "other.json")
        there = ("--registry", other.url, "--trust-manifest", str(manifest))
        assert _claim(pith, cite_registry, "--position", "1").returncode == 0
        first = pith("claim", PAPER, "--position", "1", "--submit", "--yes", *there)
        assert first.returncode == 0, first.stderr
        assert "signed author_attestation" in first.stderr
        assert "already signed" not in first.stderr
        again = pith("claim", PAPER, "--position", "1", "--submit", "--yes", *there)
        assert "already signed" in again.stderr
        with Outbox() as outbox:
            assert len(outbox.entries(registry=other.url)) == 1
            assert len(outbox.entries(registry=cite_registry["url"])) == 1
    finally:
        other.stop()


def test_a_bibliography_signed_already_asks_nothing_and_signs_nothing(tmp_path: Path) -> None:
    """sign_bibliography's `fresh` (what `pith cite` asks the author about) holds only what is
    new: a second run has nothing to ask."""
    from support.registry import SUBJECT, TestSigner

    from pithauthor import PithNumber, read_bibliographies
    from pithauthor.bibliography.cite import sign_bibliography
    from pithauthor.registry.statements import Statements

    bib = tmp_path / "refs.bib"
    bib.write_text(f"@misc{{dear, title = {{D}}, pith = {{{REAL_NUMBER}}}}}\n", "utf-8")
    reading = read_bibliographies([bib])
    citing = PithNumber.parse("pith:2022:4O7LE3EHU3JQ243TWCKWFFFE3G")
    key = TestSigner()
    held = Statements([])
    resolved = {REAL_NUMBER: SUBJECT}
    first = sign_bibliography(reading, citing, key, resolved, held=held)
    assert len(first.events) == 1 and [e.key for e, _ in first.fresh] == ["dear"]
    assert held.settled(first.events[0]).decision == "new"
    held = Statements(list(first.events))  # what the outbox holds after the first run
    second = sign_bibliography(reading, citing, key, resolved, held=held)
    assert second.events == [] and second.fresh == []
    assert second.reused == [first.events[0]["event_id"]]
    assert [r.status for r in second.rows] == ["already_signed"]


def test_settled_reads_each_decision_off_its_event_and_asking_again_answers_the_same() -> None:
    """`Statements.settled` says what `settle` decided, read off the event it let be signed or
    gave back: new, reused (the held event), replaces (the correction names the old one). No
    log is kept, so a later signing's decision is never the one read for an earlier event."""
    from support.registry import SUBJECT, TestSigner

    from pithauthor import PithNumber
    from pithauthor.registry.statements import Settled, Statements
    from pithauthor.sign import sign_citation

    key = TestSigner()
    citing = PithNumber.parse("pith:2022:4O7LE3EHU3JQ243TWCKWFFFE3G")
    subject, kind = SUBJECT.pith_number.full, "citation_signature"
    empty = Statements([])
    first = sign_citation(key, SUBJECT, citing, "cites", settle=empty.settle("auto"))
    assert empty.settled(first) == Settled("new", subject, kind, first["event_id"])
    held = Statements([first])  # what the outbox holds after it
    again = sign_citation(key, SUBJECT, citing, "cites", settle=held.settle("auto"))
    changed = sign_citation(key, SUBJECT, citing, "extends", settle=held.settle("auto"))
    assert again == first
    assert held.settled(changed) == Settled(
        "replaces", subject, kind, changed["event_id"], replaced=first["event_id"]
    )
    # asked after the correction was signed, of the event given back before it
    assert held.settled(again) == Settled("reused", subject, kind, first["event_id"])
    assert held.settled(again) == held.settled(again)


def test_claim_into_the_same_file_twice_writes_one_line_and_says_already_signed(
    pith: RunPith, cite_registry: dict[str, Any], cite_author: str, tmp_path: Path
) -> None:
    out = tmp_path / "h.jsonl"
    args = ("claim", PAPER, "--position", "1", "-o", str(out), *_trust(cite_registry))
    assert pith(*args).returncode == 0
    again = pith(*args)
    assert again.returncode == 0, again.stderr
    assert "already signed: author_attestation" in again.stderr
    assert f"is in {out}; nothing new was signed" in again.stderr
    assert len(out.read_text("utf-8").splitlines()) == 1
    assert _outbox_ids() == []  # -o: nothing went to the outbox either


def test_the_same_claim_signed_on_two_machines_is_one_claim_in_the_registry(
    pith: RunPith, cite_registry: dict[str, Any], cite_author: str, tmp_path: Path
) -> None:
    """Two files (two outboxes, two machines) with the same statement at two times: the
    registry takes both events, and its merged state holds the claim once."""
    first, second = tmp_path / "a.jsonl", tmp_path / "b.jsonl"
    for out in (first, second):
        if out is second:
            # created_at has whole seconds (int(time.time())): the second machine signs in a
            # later second. Waiting for the next one, not 1.1 s after each signing, saves about
            # 1.6 s of the edit loop's wall time; two equal stamps would fail the count below.
            time.sleep(1.02 - time.time() % 1)
        signed = pith("claim", PAPER, "--position", "1", "-o", str(out), *_trust(cite_registry))
        assert signed.returncode == 0, signed.stderr
    both = tmp_path / "both.jsonl"
    both.write_text(first.read_text("utf-8") + second.read_text("utf-8"), "utf-8")
    ids = [json.loads(line)["event_id"] for line in both.read_text("utf-8").splitlines()]
    assert len(set(ids)) == 2  # two events (two created_at), one statement
    sent = pith("submit", str(both), *_trust(cite_registry))
    assert sent.returncode == 0, sent.stderr
    state_file = tmp_path / "state.json"
    state = _state(pith, cite_registry, PAPER, state_file)
    assert len(state["current"]["author_attestations"]) == 1
    assert state["equivocation_count"] == 0
    assert [d["event"]["event_id"] for d in state["duplicates"]] == ids[1:]  # the later one
    assert state["current"]["author_attestations"][0]["event_id"] == ids[0]
    verified = pith("verify", str(state_file), "--trust-manifest", cite_registry["manifest"])
    assert verified.returncode == 0, verified.stdout + verified.stderr


def test_cite_submit_sends_only_what_it_showed_and_leaves_older_rows_pending(
    pith: RunPith, cite_registry: dict[str, Any], cite_author: str, tmp_path: Path
) -> None:
    older = pith("claim", PAPER, "--position", "1", *_trust(cite_registry))  # into the outbox
    assert older.returncode == 0, older.stderr
    (older_id,) = _outbox_ids()
    bib = write_bib(tmp_path, BIB.split("@misc{missing")[0])
    sent = run_cite(pith, cite_registry, str(bib), "--submit", "--yes")
    assert sent.returncode == 0, sent.stderr
    assert "accepted 4," in sent.stderr  # the 4 citations shown, not the claim
    assert "1 other pending row stays in the outbox" in sent.stderr
    assert "(not shown here): `pith submit --registry " in sent.stderr
    with Outbox() as outbox:
        assert [e.event_id for e in outbox.entries("pending")] == [older_id]


def test_cite_a_bibliography_into_the_same_file_twice_writes_each_citation_once(
    pith: RunPith, cite_registry: dict[str, Any], cite_author: str, tmp_path: Path
) -> None:
    bib = write_bib(tmp_path, BIB.split("@misc{missing")[0])
    out = tmp_path / "k.jsonl"
    first = run_cite(pith, cite_registry, str(bib), "-o", str(out), "-y")
    assert first.returncode == 0, first.stderr
    written = out.read_text("utf-8").splitlines()
    assert len(written) == 4
    again = run_cite(pith, cite_registry, str(bib), "-o", str(out), "-y", "--json")
    assert again.returncode == 0, again.stderr
    report = json.loads(again.stdout)
    assert report["counts"]["already_signed"] == 4 and report["events"] == 0
    reused = [r for r in report["rows"] if r["status"] == "already_signed"]
    assert len(reused) == 4 and all("signed before: reused" in r["detail"] for r in reused)
    assert out.read_text("utf-8").splitlines() == written
    assert _outbox_ids() == []


def test_a_file_line_that_is_not_strict_json_is_not_taken_for_a_statement_already_made(
    tmp_path: Path,
) -> None:
    """`-o FILE` reuse reads the file as strictly as a registry would: a line with a key twice
    (lenient parsers keep the last value) is no event, so it cannot stand for one."""
    from pithauthor.registry.statements import events_in_file

    vector = Path(__file__).parents[2] / "vectors/events/valid/author_attestation.json"
    line = json.dumps(json.loads(vector.read_text("utf-8")), separators=(",", ":"))
    plain = tmp_path / "plain.jsonl"
    plain.write_text(line + "\n", "utf-8")
    assert len(events_in_file(plain)) == 1  # the clean line is one statement
    twice = tmp_path / "twice.jsonl"
    twice.write_text('{"event_type":"withdrawn",' + line[1:] + "\n", "utf-8")
    assert events_in_file(twice) == []
