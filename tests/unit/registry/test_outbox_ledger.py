"""The outbox's working set and its ledger, and `pith outbox drop`.

Accepted events leave the working set for the ledger, which commands read through indexes
only; an event this process just signed is stored without a second check, and whatever is read
back is checked in full; `pith outbox drop` says what it loses, asks on a terminal (needs --yes
elsewhere), and `--accepted` keeps the ids of what it drops. Real files, a real key store, a
real local registry over loopback, a real pseudo-terminal."""

from __future__ import annotations

import json
import sqlite3
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from support.cli import LAUNCHER, OnTerminal, RunPith, assert_one_line_error, use_fast_kdf
from support.paths import FIXTURES
from support.registry import REAL_NUMBER, TestSigner, citations, manifest_file, start_server

from pithauthor.errors import EventError, InputError
from pithauthor.protocol.checks.event import checked_author_event
from pithauthor.registry import outbox as outbox_module
from pithauthor.registry.outbox import Outbox
from pithauthor.registry.submit import store_in_outbox

LOCAL = "http://127.0.0.1:9"  # never contacted
RECORD = str(FIXTURES / "record-2302.12445v2.json")


def _three(home: Path) -> list[str]:
    """Three citations for LOCAL: one accepted, one rejected, one pending (in that order)."""
    events = citations(3, TestSigner())
    store_in_outbox(events, LOCAL)
    ids = [e["event_id"] for e in events]
    with Outbox() as outbox:
        assert outbox.mark_accepted(ids[0], LOCAL, {"status": "accepted"})
        assert outbox.mark_rejected(ids[1], LOCAL, "no", None)
    return ids


def test_an_accepted_event_leaves_the_working_set_for_the_ledger(
    isolated_home: Path, pith: RunPith
) -> None:
    accepted, rejected, pending = _three(isolated_home)
    with sqlite3.connect(isolated_home / "outbox" / "outbox.sqlite3") as conn:
        working = {r[0] for r in conn.execute("SELECT event_id FROM outbox")}
        ledger = {r[0] for r in conn.execute("SELECT event_id FROM ledger")}
    assert working == {rejected, pending} and ledger == {accepted}
    listed = pith("outbox", "list", "--json")
    assert {r["event_id"] for r in json.loads(listed.stdout)} == {rejected, pending}
    text = pith("outbox", "list")
    assert "1 pending, 1 accepted, 1 rejected" in text.stderr  # counted, not listed
    assert len(text.stdout.splitlines()) == 2
    everything = json.loads(pith("outbox", "list", "--all", "--json").stdout)
    assert {r["event_id"]: r["state"] for r in everything} == {
        accepted: "accepted", rejected: "rejected", pending: "pending"
    }  # fmt: skip
    only = json.loads(pith("outbox", "list", "--state", "accepted", "--json").stdout)
    assert [r["event_id"] for r in only] == [accepted]


def test_storing_an_accepted_event_again_is_already_there_not_pending(
    isolated_home: Path,
) -> None:
    events = citations(1, TestSigner())
    store_in_outbox(events, LOCAL)
    with Outbox() as outbox:
        assert outbox.mark_accepted(events[0]["event_id"], LOCAL, None)
        assert outbox.store(events, LOCAL) == (0, 1)
        assert outbox.counts() == {"pending": 0, "accepted": 1, "rejected": 0}


def test_drop_without_a_terminal_needs_yes_and_says_what_is_lost(
    isolated_home: Path, pith: RunPith
) -> None:
    accepted, _, pending = _three(isolated_home)
    refused = pith("outbox", "drop", "--accepted", "--pending")
    assert_one_line_error(refused, 2)  # the lines of what would be lost are not errors
    assert "1 pending event(s) will never be sent" in refused.stderr
    assert "the bodies of 1 accepted event(s) will be gone; their ids stay" in refused.stderr
    assert "--yes" in refused.stderr
    with Outbox() as outbox:  # nothing was dropped
        assert outbox.counts() == {"pending": 1, "accepted": 1, "rejected": 1}
        assert outbox.get(accepted).stored is not None  # type: ignore[union-attr]
    done = pith("outbox", "drop", "--accepted", "--pending", "--yes")
    assert done.returncode == 0, done.stderr
    assert "dropped 2 event(s)" in done.stderr
    with Outbox() as outbox:
        # the accepted one keeps its id and labels (the ledger); the pending one is gone
        assert outbox.counts() == {"pending": 0, "accepted": 1, "rejected": 1}
        kept = outbox.get(accepted)
        assert kept is not None and kept.stored is None and kept.state == "accepted"
        assert outbox.get(pending) is None
        with pytest.raises(EventError, match="kept only the id"):
            kept.event  # noqa: B018 - the property is what is tested
    again = pith("outbox", "drop", "--accepted", "--yes")
    assert again.returncode == 0 and "nothing to drop" in again.stderr


def test_drop_on_a_terminal_asks_and_no_keeps_everything(
    isolated_home: Path, terminal: OnTerminal
) -> None:
    _three(isolated_home)
    argv = [sys.executable, LAUNCHER, "outbox", "drop", "--rejected"]
    code, shown = terminal(argv, [b"n"])
    assert code == 2, shown
    assert "1 rejected event(s) and the registry's reasons will be gone" in shown
    assert "Drop 1 event(s) from the outbox?" in shown and "nothing was dropped" in shown
    with Outbox() as outbox:
        assert outbox.counts()["rejected"] == 1
    code, shown = terminal(argv, [b"y"])
    assert code == 0 and "dropped 1 event(s)" in shown, shown
    with Outbox() as outbox:
        assert outbox.counts()["rejected"] == 0


def test_an_event_signed_here_is_stored_without_a_second_check_and_an_altered_one_is_checked(
    isolated_home: Path, monkeypatch: pytest.MonkeyPatch, cite_author: str
) -> None:
    from pithauthor import sign_citation
    from pithauthor.keys import load_signing_key
    from pithauthor.protocol import PithNumber, Subject

    key = load_signing_key()
    cited = Subject.from_document(json.loads(Path(RECORD).read_text("utf-8")))
    citing = PithNumber.parse("pith:2024:AAAAAAAAAAAAAAAAAAAAAAAAAA")
    made = [sign_citation(key, cited, citing, r) for r in ("cites", "extends", "uses_method")]
    altered = {**made[2], "payload": {**made[2]["payload"], "relationship": "refutes"}}
    others = citations(1, TestSigner())  # signed by a key that is not this process's own

    def no_check(event: object) -> Any:
        raise AssertionError("checked again")

    with monkeypatch.context() as patched, Outbox() as outbox:
        patched.setattr(outbox_module, "checked_author_event", no_check)
        assert outbox.store(made[:2], LOCAL) == (2, 0)  # as signed: not checked again
        with pytest.raises(AssertionError, match="checked again"):
            outbox.store([altered], LOCAL)  # changed since it was signed: checked
        with pytest.raises(AssertionError, match="checked again"):
            outbox.store(others, LOCAL)  # another signer's: checked
    with Outbox() as outbox:
        with pytest.raises(EventError, match="does not verify"):
            outbox.store([altered], LOCAL)
        # what is read back is checked in full where it is used: a row altered on disk fails
        outbox._conn.execute(
            "UPDATE outbox SET body=? WHERE event_id=?",
            (json.dumps({**made[0], "created_at": "2026-01-01T00:00:00Z"}), made[0]["event_id"]),
        )
        stored = outbox.get(made[0]["event_id"])
        assert stored is not None
        with pytest.raises(EventError, match="damaged entry"):
            stored.event  # noqa: B018 - the property is what is tested


def test_events_of_a_deferred_key_are_stored_unchecked_once_its_key_signed_them(
    isolated_home: Path, monkeypatch: pytest.MonkeyPatch, cite_author: str
) -> None:
    """`pith cite` signs with a DeferredKey (the passphrase asked after the preview): its
    events are vouched for once the opened key put their signatures in, and an
    event altered since is still checked, and refused."""
    from pithauthor.keys.author import deferred_signing_key
    from pithauthor.protocol import PithNumber, Subject
    from pithauthor.sign import citation_signer

    key = deferred_signing_key()
    cited = Subject.from_document(json.loads(Path(RECORD).read_text("utf-8")))
    citing = PithNumber.parse("pith:2024:AAAAAAAAAAAAAAAAAAAAAAAAAA")
    sign = citation_signer(key, citing, created_at="2026-12-06T12:00:00Z")
    made = [sign(cited, r, None) for r in ("cites", "extends", "uses_method")]
    checked: list[object] = []

    def counting(event: object) -> Any:
        checked.append(event)
        return checked_author_event(event)

    with monkeypatch.context() as patched, Outbox() as outbox:
        patched.setattr(outbox_module, "checked_author_event", counting)
        with pytest.raises(EventError, match="does not verify"):
            outbox.store(made[:1], LOCAL)  # its signature still pending: checked, refused
        assert len(checked) == 1
        key.sign_pending(made)
        altered = {**made[2], "payload": {**made[2]["payload"], "relationship": "refutes"}}
        assert outbox.store(made[:2], LOCAL) == (2, 0)  # signed by the key: not checked again
        assert len(checked) == 1
        with pytest.raises(EventError, match="does not verify"):
            outbox.store([altered], LOCAL)  # changed since it was signed: checked
        assert len(checked) == 2
    # once the key is open, an event it signs at once is vouched for as it is made
    late = sign(cited, "supports", None)
    with monkeypatch.context() as patched, Outbox() as outbox:
        patched.setattr(outbox_module, "checked_author_event", counting)
        assert outbox.store([late], LOCAL) == (1, 0)
        assert len(checked) == 2


def test_statements_read_only_the_papers_asked_about(isolated_home: Path) -> None:
    from pithauthor.registry.statements import Statements

    signer = TestSigner()
    events = citations(2, signer)
    store_in_outbox(events, LOCAL)
    with Outbox() as outbox:  # a row about another paper is damaged on disk
        outbox._conn.execute(
            "UPDATE outbox SET subject='pith:2020:OTHER', body='not json' WHERE event_id=?",
            (events[1]["event_id"],),
        )
    held = Statements.from_outbox(LOCAL)
    fingerprint = events[0]["signer"]["public_key_fingerprint"]
    merged = held.merged(fingerprint, "citation_signature", REAL_NUMBER)
    assert [e["event_id"] for e in merged.current] == [events[0]["event_id"]]
    assert held.holds(fingerprint, "citation_signature", REAL_NUMBER)
    assert not held.holds(fingerprint, "author_attestation", REAL_NUMBER)
    with pytest.raises(EventError, match="damaged entry"):  # read when asked: checked
        held.merged(fingerprint, "citation_signature", "pith:2020:OTHER")


@pytest.fixture
def registry(tmp_path: Path) -> Iterator[list[str]]:
    server = start_server(tmp_path / "registry")
    manifest = manifest_file(server.url, tmp_path / "registry", tmp_path / "manifest.json")
    try:
        yield ["--registry", server.url, "--trust-manifest", str(manifest)]
    finally:
        server.stop()


def test_papers_counts_a_dropped_claim_and_replace_finds_it_on_the_registry(
    isolated_home: Path,
    pith: RunPith,
    monkeypatch: pytest.MonkeyPatch,
    registry: list[str],
) -> None:
    from pithauthor.keys.author import generate

    use_fast_kdf(monkeypatch)
    monkeypatch.setenv("PITH_PASSPHRASE", "ledger tests passphrase")
    generate("ada", public_name="Chengjian Liu", backend="file", note=lambda _: None)
    claim = ["claim", REAL_NUMBER, "--record", RECORD, *registry]
    done = pith(*claim, "--submit", "--yes")
    assert done.returncode == 0, done.stderr
    with Outbox() as outbox:
        (first,) = [e.event_id for e in outbox.entries("accepted")]
    assert pith("outbox", "drop", "--accepted", "--yes").returncode == 0
    papers = json.loads(pith("papers", "--json").stdout)
    assert [p["pith_number"] for p in papers] == [REAL_NUMBER]
    (counts,) = papers[0]["registries"].values()
    assert counts["accepted"] == 1 and papers[0]["roles"] == ["claimed"]
    # the claim's body is gone, its id is not: the claim learnt from the registry's state is
    # that one (not "signed elsewhere"), and a changed claim replaces it, never stands beside it
    changed = pith(*claim, "--position", "3", "--force", "--replace", "--submit", "--yes")
    assert changed.returncode == 0, changed.stderr
    assert f"replaces {first[:19]}" in changed.stderr
    assert "signed elsewhere" not in changed.stderr
    # without the registry's copy, the id kept is named: never taken for no claim
    from pithauthor.registry import Statements

    held = Statements.from_outbox(registry[1])
    fingerprint = json.loads(pith("keys", "show", "--json").stdout)["public_key_fingerprint"]
    with pytest.raises(InputError, match="kept only the id of sha256:"):
        held.merged(fingerprint, "author_attestation", REAL_NUMBER)


def _counted(home: Path, registry: str | None = None) -> dict[str, int]:
    """Rows per state read from the tables themselves (every row counted), as `counts` says
    them: the accepted ones are the ledger's, dropped bodies included."""
    where, args = (" WHERE registry=?", (registry,)) if registry is not None else ("", ())
    found = {"pending": 0, "accepted": 0, "rejected": 0}
    with sqlite3.connect(home / "outbox" / "outbox.sqlite3") as conn:
        for state, n in conn.execute(f"SELECT state, count(*) FROM outbox{where} GROUP BY 1", args):
            found[state] = found.get(state, 0) + n
        found["accepted"] += conn.execute(f"SELECT count(*) FROM ledger{where}", args).fetchone()[0]
    return {s: n for s, n in found.items() if s != "held" or n}


def test_the_tally_pith_papers_reads_follows_every_change(isolated_home: Path) -> None:
    def tallied(outbox: Outbox) -> dict[str, int]:
        found = {"pending": 0, "accepted": 0, "rejected": 0}
        for *_, state, n, _ in outbox.tally():
            found[state] = found.get(state, 0) + n
        return found

    events = citations(4, TestSigner())
    ids = [e["event_id"] for e in events]
    other = "http://127.0.0.1:10"
    with Outbox() as outbox:
        steps = [
            lambda: outbox.store(events, LOCAL),
            lambda: outbox.store(events[:2], other),  # a second registry
            lambda: outbox.mark_accepted(ids[0], LOCAL, None),
            lambda: outbox.mark_rejected(ids[1], LOCAL, "no", None),
            lambda: outbox.retry(),
            lambda: outbox.mark_rejected(ids[1], LOCAL, "no", None),
            lambda: outbox.mark_held(ids[3], LOCAL, None),
            lambda: outbox.mark_accepted(ids[3], LOCAL, None),  # held, then listed
            lambda: outbox.mark_held(ids[0], other, None),
            lambda: outbox.forget([ids[0]]),  # the id stays: still counted
            lambda: outbox.drop([ids[2]]),
            lambda: outbox.drop_state("rejected"),
            lambda: outbox.forget(None),
        ]
        for step in steps:
            step()
            # `counts` sums the accepted rows from the tally: it must say what the tables hold
            assert tallied(outbox) == _counted(isolated_home)
            assert outbox.counts() == _counted(isolated_home)
            for where in (LOCAL, other, "http://127.0.0.1:11"):
                assert outbox.counts(where) == _counted(isolated_home, where)
        assert outbox.counts() == {"pending": 1, "accepted": 2, "rejected": 0, "held": 1}
        assert {t[2] for t in outbox.tally()} == {LOCAL, other}


def test_dropping_a_held_event_says_so(isolated_home: Path, pith: RunPith) -> None:
    events = citations(1, TestSigner())
    store_in_outbox(events, LOCAL)
    with Outbox() as outbox:
        assert outbox.mark_held(events[0]["event_id"], LOCAL, {"status": "held"})
    refused = pith("outbox", "drop", events[0]["event_id"])
    assert_one_line_error(refused, 2)
    assert "1 event(s) held for moderation will be forgotten here" in refused.stderr
    assert pith("outbox", "drop", events[0]["event_id"], "--yes").returncode == 0
    with Outbox() as outbox:
        assert outbox.get(events[0]["event_id"]) is None


def test_store_counts_new_and_already_there_in_the_working_set_the_ledger_and_the_batch(
    isolated_home: Path,
) -> None:
    """`store` says what it added and what was there: a row of the working set, a ledger row
    with its body, and the same event twice in one batch are there; a ledger row whose body was
    forgotten takes the event again; a row for another registry is no row for this one."""
    a, b, c, d, e = citations(5, TestSigner())
    with Outbox() as outbox:
        assert outbox.store([a, b, c], LOCAL) == (3, 0)
        assert outbox.mark_accepted(b["event_id"], LOCAL, {"status": "accepted"})
        assert outbox.mark_accepted(c["event_id"], LOCAL, {"status": "accepted"})
        assert outbox.forget([c["event_id"]], LOCAL) == 1
        # a: working set; b: ledger with body; c: ledger, body forgotten; d twice; e new
        assert outbox.store([a, b, c, d, d, e], LOCAL) == (3, 3)
        assert {x.event_id for x in outbox.working()} == {
            a["event_id"],
            c["event_id"],
            d["event_id"],
            e["event_id"],
        }
        assert outbox.store([a, b], "http://127.0.0.1:10") == (2, 0)  # another registry
    lines = (isolated_home / "outbox" / "outbox.journal.jsonl").read_text().splitlines()
    stored = [json.loads(x)["event"]["event_id"] for x in lines if '"op":"store"' in x]
    # one journal line per row added, in order, none for what was there
    assert stored == [x["event_id"] for x in (a, b, c, c, d, e, a, b)]
