"""Where one stored event stands (`Statements.standing`, what `pith withdraw` asks) is merged
from the events joined to it by slot and link only, not from everything the key said of that
type about that paper; it must decide and refuse exactly as the merge of the whole group does.
Each test compares the two on the same outbox: the whole group merged first (`merged`), and a
fresh `Statements` asked only for the standing. Real signed events in a real outbox file."""

from __future__ import annotations

import random
import sqlite3
from pathlib import Path
from typing import Any

import pytest
from support.registry import SUBJECT, TestSigner, citing_number

from pithauthor.errors import EventError, InputError
from pithauthor.protocol.canonical_json import canonical
from pithauthor.protocol.events import seal, signer_block, unsigned_event
from pithauthor.protocol.ids import PithNumber
from pithauthor.protocol.subject import Subject
from pithauthor.registry import statements as statements_module
from pithauthor.registry.journal import default_path
from pithauthor.registry.outbox import Outbox
from pithauthor.registry.statements import OnChange, Standing, Statements
from pithauthor.registry.submit import store_in_outbox

LOCAL = "http://127.0.0.1:9"  # never contacted
OTHER = Subject(PithNumber.from_digest("cd" * 32, 2023), "cd" * 32)


def _cite(
    signer: TestSigner,
    citing: int,
    relationship: str = "cites",
    at: str = "2026-11-29T12:00:00Z",
    link: tuple[str, str] | None = None,
    subject: Subject = SUBJECT,
) -> dict[str, Any]:
    """A citation of `subject` by citing paper `citing`; `link` (replaces|withdraws, id)."""
    payload: dict[str, Any] = {
        "payload_schema": "pithauthor.citation_signature.v1",
        "canonical_sha256": subject.canonical_sha256,
        "citing_pith_number": citing_number(citing),
        "relationship": relationship,
    }
    if link is not None:
        payload[link[0]] = link[1]
    unsigned = unsigned_event(
        "citation_signature", subject.pith_number, at, signer_block(signer), payload
    )
    return seal(unsigned, signer)


def _withdrawal(signer: TestSigner, of: dict[str, Any], at: str) -> dict[str, Any]:
    return _cite(
        signer,
        _citing_index(of),
        of["payload"]["relationship"],
        at,
        ("withdraws", of["event_id"]),
    )


_INDEX = {citing_number(i): i for i in range(64)}


def _citing_index(event: dict[str, Any]) -> int:
    return _INDEX[event["payload"]["citing_pith_number"]]


def _store(events: list[dict[str, Any]], accepted: int = 0) -> None:
    """Store `events` for LOCAL; the first `accepted` of them move to the ledger."""
    store_in_outbox(events, LOCAL)
    with Outbox() as outbox:
        for event in events[:accepted]:
            assert outbox.mark_accepted(event["event_id"], LOCAL, {"status": "accepted"})


def _whole(event_id: str) -> Standing | None:
    """The standing as before: the whole group merged (and every row of it checked)."""
    held = Statements.from_outbox(LOCAL)
    event = held.event(event_id)
    if event is None:  # a row whose body is another event's: no event of that id is held
        return None
    held.merged(
        event["signer"]["public_key_fingerprint"],
        event["event_type"],
        event["subject_pith_number"],
    )
    return held.standing(event_id)


def _part(event_id: str) -> Standing | None:
    """The standing as `pith withdraw` asks it now (a fresh `Statements`)."""
    return Statements.from_outbox(LOCAL).standing(event_id)


def _checked_rows(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The stored texts the standing reads as statements (each checked in full)."""
    seen: list[str] = []
    real = statements_module.stored_event

    def counting(text: str) -> Any:
        seen.append(text)
        return real(text)

    monkeypatch.setattr(statements_module, "stored_event", counting)
    return seen


def _story(signer: TestSigner) -> dict[str, dict[str, Any]]:
    """Citations of SUBJECT by one key, with every kind of standing: a plain one among many,
    a correction naming an event of another citing paper (it moves into a slot that says
    something else: an equivocation), a withdrawal, a repeat and a withdrawal naming the
    repeat, an equivocation, a replacement of an unknown event and one older than its
    target (both broken), and a replacement of a withdrawal."""
    e: dict[str, dict[str, Any]] = {}
    e["plain"] = _cite(signer, 0)
    e["a1"] = _cite(signer, 1, at="2026-11-29T12:00:01Z")
    e["b2"] = _cite(signer, 2, "extends", at="2026-11-29T12:00:02Z")
    # citing paper 2 corrects citing paper 1's citation: it moves into slot 2, which says
    # "extends": an equivocation, and a1 stays current
    e["r2"] = _cite(signer, 2, at="2026-11-29T12:00:03Z", link=("replaces", e["a1"]["event_id"]))
    e["a3"] = _cite(signer, 3, at="2026-11-29T12:00:01Z")
    e["w3"] = _withdrawal(signer, e["a3"], "2026-11-29T12:00:05Z")
    e["a4"] = _cite(signer, 4, at="2026-11-29T12:00:01Z")
    e["a4again"] = _cite(signer, 4, at="2026-11-29T12:00:02Z")  # the same statement again
    e["w4"] = _withdrawal(signer, e["a4again"], "2026-11-29T12:00:06Z")
    e["a5"] = _cite(signer, 5, at="2026-11-29T12:00:01Z")
    e["a5other"] = _cite(signer, 5, "extends", at="2026-11-29T12:00:02Z")
    e["r6"] = _cite(signer, 6, at="2026-11-29T12:00:07Z", link=("replaces", "sha256:" + "0" * 64))
    e["a7"] = _cite(signer, 7, at="2026-11-29T12:00:09Z")
    e["r7early"] = _cite(
        signer, 7, "extends", "2026-11-29T12:00:08Z", ("replaces", e["a7"]["event_id"])
    )
    e["a8"] = _cite(signer, 8, at="2026-11-29T12:00:01Z")
    # a correction across slots that takes: citing paper 9 (empty) replaces citing 8's
    e["r9"] = _cite(signer, 9, at="2026-11-29T12:00:04Z", link=("replaces", e["a8"]["event_id"]))
    e["w9"] = _withdrawal(signer, e["r9"], "2026-11-29T12:00:05Z")
    e["r9again"] = _cite(
        signer, 9, "extends", "2026-11-29T12:00:06Z", ("replaces", e["w9"]["event_id"])
    )
    for i in range(10, 40):  # the many others of the group
        e[f"other{i}"] = _cite(signer, i, at="2026-11-29T11:00:00Z")
    return e


def test_each_standing_is_what_the_whole_merge_decides(isolated_home: Path) -> None:
    story = _story(TestSigner())
    events = list(story.values())
    _store(events, accepted=len(events) // 2)
    found = {}
    for name, event in story.items():
        whole = _whole(event["event_id"])
        assert _part(event["event_id"]) == whole, name
        found[name] = (whole.status, whole.by) if whole is not None else None
    ids = {name: e["event_id"] for name, e in story.items()}
    # the story tells what it says it tells (else the comparison proves little)
    assert found["plain"] == ("current", None)
    assert found["a1"] == ("current", None) and found["r2"] == ("equivocation", ids["b2"])
    assert found["a3"] == ("withdrawn", ids["w3"]) and found["w3"] == ("withdrawal", None)
    assert found["a4"] == ("withdrawn", ids["w4"])
    assert found["a5other"] == ("equivocation", ids["a5"])
    assert found["r6"] == ("invalid", None) and found["r7early"] == ("invalid", None)
    assert found["a8"] == ("replaced", ids["r9"]) and found["r9"] == ("withdrawn", ids["w9"])
    assert found["r9again"] == ("invalid", None)


def test_only_the_events_joined_by_slot_and_link_are_read_as_statements(
    isolated_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    story = _story(TestSigner())
    _store(list(story.values()), accepted=10)
    checked = _checked_rows(monkeypatch)
    assert _part(story["other20"]["event_id"]) == Standing(story["other20"], "current")
    assert len(checked) == 1  # its own slot, nothing links to it (was all 48 of the group)
    checked.clear()
    # a1 -> r2 (link) -> slot 2 (b2): all three, nothing else
    assert _part(story["a1"]["event_id"]) is not None
    assert sorted(checked) == sorted(canonical(story[n]).decode() for n in ("a1", "b2", "r2"))


def _tamper(event_id: str, column: str, value: str) -> None:
    """Change a column of the stored rows of `event_id` by hand, as anyone with the file can."""
    with sqlite3.connect(default_path()) as conn:
        for table in ("outbox", "ledger"):
            conn.execute(f"UPDATE {table} SET {column}=? WHERE event_id=?", (value, event_id))


def _body(event_id: str) -> str:
    with Outbox() as outbox:
        entry = outbox.get(event_id)
    assert entry is not None and entry.stored is not None
    return entry.stored


def test_a_tampered_row_that_decides_the_standing_is_refused_as_before(
    isolated_home: Path,
) -> None:
    story = _story(TestSigner())
    _store(list(story.values()), accepted=20)
    # w3 withdraws a3: with its relationship changed, its signature no longer holds
    _tamper(
        story["w3"]["event_id"],
        "body",
        _body(story["w3"]["event_id"]).replace('"cites"', '"extends"'),
    )
    for way in (_whole, _part):
        with pytest.raises(EventError, match="damaged entry"):
            way(story["a3"]["event_id"])
    # a text that is no JSON (read back strictly) is refused by both, wherever it is
    _tamper(story["other30"]["event_id"], "body", '{"event_id": "sha256:x", ')
    for way in (_whole, _part):
        with pytest.raises(EventError, match="damaged entry"):
            way(story["plain"]["event_id"])


def test_a_tampered_row_of_another_slot_that_links_nothing_is_not_read(
    isolated_home: Path,
) -> None:
    """As the rows about other papers are not: the standing is the one decided before."""
    story = _story(TestSigner())
    _store(list(story.values()), accepted=20)
    before = _whole(story["a3"]["event_id"])
    body = _body(story["other30"]["event_id"])
    _tamper(story["other30"]["event_id"], "body", body.replace('"cites"', '"extends"'))
    with pytest.raises(EventError, match="damaged entry"):
        _whole(story["a3"]["event_id"])
    assert _part(story["a3"]["event_id"]) == before


def test_rows_whose_columns_disagree_with_their_bodies_are_merged_as_their_bodies_say(
    isolated_home: Path,
) -> None:
    """The group is chosen by the columns (as before); slots and links are read from the
    bodies, as the merge reads them."""
    signer = TestSigner()
    story = _story(signer)
    # about another paper, its subject column set to SUBJECT: in SUBJECT's group
    elsewhere = _cite(signer, 3, "extends", "2026-11-29T12:00:04Z", subject=OTHER)
    _store([*story.values(), elsewhere], accepted=5)
    _tamper(elsewhere["event_id"], "subject", SUBJECT.pith_number.full)
    # a citing column that names another citing paper than the body
    _tamper(story["b2"]["event_id"], "citing", citing_number(30))
    _tamper(story["a5"]["event_id"], "citing", citing_number(1))
    # a row whose body is another event of the group (an id column that lies)
    _tamper(story["other31"]["event_id"], "body", _body(story["a7"]["event_id"]))
    for name in ("a3", "w3", "a1", "r2", "b2", "a5", "a5other", "a7", "r7early", "other31"):
        event_id = story[name]["event_id"]
        assert _part(event_id) == _whole(event_id), name
    assert _part(story["a3"]["event_id"]) == Standing(
        story["a3"], "withdrawn", story["w3"]["event_id"]
    )


def test_a_body_dropped_from_the_group_merges_the_whole_group_as_before(
    isolated_home: Path,
) -> None:
    story = _story(TestSigner())
    events = list(story.values())
    _store(events, accepted=len(events))
    with Outbox() as outbox:
        assert outbox.forget([story["other12"]["event_id"]], LOCAL) == 1
    for way in (_whole, _part):  # no copy of it anywhere: named, as before
        with pytest.raises(Exception, match="kept only the id"):
            way(story["plain"]["event_id"])


@pytest.mark.parametrize("seed", range(6))
def test_random_corrections_across_citing_papers_stand_as_the_whole_merge_says(
    isolated_home: Path, seed: int
) -> None:
    rng = random.Random(seed)
    signer = TestSigner(bytes([seed]) * 32)
    events: list[dict[str, Any]] = []
    for n in range(40):
        at = f"2026-11-29T12:{rng.randrange(60):02d}:{rng.randrange(60):02d}Z"
        citing, relationship = rng.randrange(6), rng.choice(("cites", "extends"))
        kind = rng.random()
        if events and kind < 0.25:
            target = rng.choice(events)
            events.append(_withdrawal(signer, target, at))
        elif events and kind < 0.55:
            target = rng.choice(events)
            events.append(_cite(signer, citing, relationship, at, ("replaces", target["event_id"])))
        else:
            events.append(_cite(signer, citing, relationship, at))
        if n % 7 == 0:  # a repeat, word for word, later
            events.append(_cite(signer, citing, relationship, at[:-3] + "59Z"))
    _store(events, accepted=rng.randrange(len(events)))
    statuses = set()
    for event in events:
        whole = _whole(event["event_id"])
        assert _part(event["event_id"]) == whole
        statuses.add(whole.status if whole is not None else None)
    assert "current" in statuses and len(statuses) >= 3  # corrections of several kinds


def _settle(held: Statements, unsigned: dict[str, Any], on_change: OnChange) -> object:
    """What `settle` decides of `unsigned`, and what `settled` then reads off it."""
    try:
        decided = held.settle(on_change)(unsigned)  # type: ignore[arg-type]
    except InputError as exc:
        return ("refused", str(exc))
    if decided is unsigned:
        return ("new",)
    settled = held.settled(decided) if "signature" in decided else None  # type: ignore[arg-type]
    return (dict(decided), settled)


@pytest.mark.parametrize("seed", range(3))
def test_what_a_slot_holds_is_settled_as_the_whole_merge_settles_it(
    isolated_home: Path, seed: int
) -> None:
    """`pith cite --to`, `claim`, `replicate` of a paper already stated about: the statement's
    slot is merged from the part of the group joined to it; reused, refused or corrected as
    the whole group's merge decides (and a reused event is said reused)."""
    rng = random.Random(seed)
    signer = TestSigner(bytes([seed + 100]) * 32)
    story = list(_story(signer).values())
    for _ in range(20):
        at = f"2026-11-29T13:{rng.randrange(60):02d}:{rng.randrange(60):02d}Z"
        target = rng.choice(story)
        citing, relationship = rng.randrange(12), rng.choice(("cites", "extends"))
        link = (rng.choice(("replaces", "withdraws")), target["event_id"])
        if link[0] == "withdraws":
            story.append(_withdrawal(signer, target, at))
        else:
            story.append(_cite(signer, citing, relationship, at, link))
    _store(story, accepted=len(story) // 3)
    key = (story[0]["signer"]["public_key_fingerprint"], "citation_signature")
    outcomes = set()
    for citing in range(14):
        for relationship in ("cites", "extends"):
            unsigned = {k: v for k, v in _cite(signer, citing, relationship).items()}
            unsigned = {k: v for k, v in unsigned.items() if k not in ("event_id", "signature")}
            for on_change in ("refuse", "auto", "keep"):
                whole = Statements.from_outbox(LOCAL)
                whole.merged(*key, SUBJECT.pith_number.full)
                expected = _settle(whole, unsigned, on_change)
                assert _settle(Statements.from_outbox(LOCAL), unsigned, on_change) == expected
                outcomes.add(str(expected)[:8])
    assert len(outcomes) >= 3  # new, refused, reused or corrected: several kinds seen
