"""What you have said, and what a registry shows of it: the statements your outbox holds for one
registry (said once, changed only by an explicit correction), a paper's page from verified
documents, and the list of your papers.
"""

from __future__ import annotations

import json
import weakref
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, NamedTuple

from pithauthor.errors import InputError
from pithauthor.keys.author import list_keys
from pithauthor.protocol.canonical_json import parse_json
from pithauthor.protocol.checks.event import checked_author_event
from pithauthor.protocol.checks.merge import (
    Applied,
    Slot,
    apply_events,
    order_key,
    slot_and_claim,
)
from pithauthor.protocol.documents import AuthorEvent, UnsignedEvent
from pithauthor.protocol.subject import link_of, replacing, statement_key, unlinked
from pithauthor.registry.client import RegistryClient, registry_binding
from pithauthor.registry.journal import default_path
from pithauthor.registry.outbox import Outbox, OutboxEntry, stored_event
from pithauthor.registry.submit import record_titles, signed_nodes_in_state

__all__ = [
    "OnChange",
    "Settled",
    "Standing",
    "Statements",
    "events_in_file",
    "gist",
    "key_lineage",
    "my_papers",
    "own_events_in_state",
    "papers_on_registry",
]


# What you have already said: the statements your outbox holds for one registry, so that
# signing the same thing twice publishes it once, and changing it is an explicit correction.
#
#     held = Statements.from_outbox("http://127.0.0.1:8787")  # the registry the events are for
#     event = attest_authorship(key, paper, name="Ada Lovelace", settle=held.settle("refuse"))
#     held.settled(event)  # Settled("reused" | "new" | "replaces", ...)
#
# A statement is the signed fields but `created_at` (`statement_key`). Before anything is
# signed, `settle` merges what the outbox holds for the same key, type and subject exactly as
# the local registry merges (`apply_events`), and looks at the slot the new statement fills
# (the author's claim on a paper, a citation by one citing paper, a replication of one kind and
# artifacts):
#
# - the slot already holds this statement: that event is **reused**, nothing is signed;
# - the slot holds another statement: `refuse` (claim, replicate without `--replace`) raises
#   `InputError` naming it; `replace` and `auto` (a changed citation) sign the new one as the
#   correction that **replaces** it; `keep` (an anchor: a second proof of the same paper's
#   hash says nothing new) **reuses** the event it holds;
# - the slot is empty: a **new** event (`replace` refuses: there is nothing to replace).
#
# With `-o FILE`, the events FILE already holds count too (`events_in_file`): writing the same
# statement into the same file twice is a reuse, not a second line.
#
# The registry is the author's memory too: a claim, replication or withdrawal first `learn`s the
# events of the paper's merged state signed by this key (`own_events_in_state`), so that a
# statement made from another machine with the same key (restored from its backup), or dropped
# from the outbox, is reused or corrected exactly as one made here. Events of the key's retired
# predecessors (`key_lineage`: the key store knows rotations) are learnt too: the same statement
# made by a predecessor is reused; a different one is another key's slot, which only that key
# could correct, so it is named, never replaced.
#
# The outbox is asked, through its indexes, about the papers a command signs about only
# (`Outbox.said`, `holds`, `holding`): what a command costs does not grow with the history.
# Within a paper, what a slot holds and where an event stands are merged from the statements
# joined to them by slot and link (`Statements._around`), not from all the key said of the
# paper (a paper cited from 333 papers was 333 events read and checked per command). An
# accepted event whose body `pith outbox drop --accepted` dropped keeps its id there: it is
# taken from what was learnt (or `recall`), checked against its id, and else named, never
# taken for no statement.

#: What to do when the slot holds a different statement (see the module docstring); `keep`
#: reuses what the slot holds (a timestamp anchor: any anchor of the paper by the key is the
#: same claim, its proof is not signed again).
OnChange = Literal["refuse", "replace", "auto", "keep"]

_NOUNS = {
    "author_attestation": "author claim",
    "citation_signature": "citation",
    "replication_record": "replication record",
    "timestamp_anchor": "timestamp anchor",
    "storage_attestation": "storage attestation",
}


class Settled(NamedTuple):
    """What became of one statement (`Statements.settled`): `reused` (the event `event_id` was
    stored before), `new`, or `replaces` (`replaced` names the corrected event)."""

    decision: Literal["reused", "new", "replaces"]
    subject: str
    event_type: str
    event_id: str | None = None
    replaced: str | None = None


class Standing(NamedTuple):
    """Where one stored event stands in the merge of the outbox: `current`, `replaced` or
    `withdrawn` by `by`, `equivocation` (kept out in favour of `by`), or a `withdrawal`."""

    event: AuthorEvent
    status: Literal["current", "replaced", "withdrawn", "equivocation", "withdrawal", "invalid"]
    by: str | None = None


class _Said:
    """The outbox, asked for the statements of one registry through its indexes (opened once,
    kept open while the `Statements` are in use)."""

    def __init__(self, outbox: Outbox, registry: str) -> None:
        self.outbox = outbox
        self.registry = registry
        weakref.finalize(self, outbox.close)

    def said(self, key: tuple[str, str, str]) -> tuple[list[AuthorEvent], list[str]]:
        return self.outbox.said(*key, registry=self.registry)

    def holds(self, key: tuple[str, str, str]) -> bool:
        return self.outbox.holds(*key, registry=self.registry)

    def holding(self, fingerprint: str, event_type: str, subjects: list[str]) -> set[str]:
        return self.outbox.holding(fingerprint, event_type, subjects, self.registry)

    def starting(self, prefix: str) -> list[OutboxEntry]:
        return self.outbox.starting(prefix, self.registry)

    def texts(self, key: tuple[str, str, str]) -> list[tuple[str, str | None]]:
        return self.outbox.said_texts(*key, registry=self.registry)


@dataclass
class Statements:
    """The events one registry has been sent, or will be, from this outbox: `events` are the
    ones given (the `-o FILE` written to); the outbox's are asked for by what a statement is
    about (signer, type, subject), one index look-up each, never read whole."""

    events: list[AuthorEvent]
    source: _Said | None = field(default=None, repr=False)
    # the events of ids the outbox kept without their bodies (`pith outbox drop --accepted`),
    # from elsewhere (a registry's merged state): (subject, ids) -> the events found; each is
    # used only when its id is one asked for and it verifies in full
    recall: Callable[[str, list[str]], Iterable[AuthorEvent]] | None = field(
        default=None, repr=False
    )
    # fingerprints of the signing key's retired predecessors (`key_lineage`)
    predecessors: frozenset[str] = frozenset()
    # the events known only from a registry's merged state (`learn`), not from this machine
    from_registry: set[str] = field(default_factory=set)
    _merged: dict[tuple[str, str, str], Applied] = field(default_factory=dict, repr=False)
    _groups: dict[tuple[str, str, str], list[AuthorEvent]] = field(default_factory=dict, repr=False)
    _none_held: set[tuple[str, str, str]] = field(default_factory=set, repr=False)
    _loaded: set[tuple[str, str, str]] = field(default_factory=set, repr=False)
    _ids_only: dict[tuple[str, str, str], list[str]] = field(default_factory=dict, repr=False)
    # the ids of the events `_around` read of a group (not read whole)
    _parts: dict[tuple[str, str, str], set[str]] = field(default_factory=dict, repr=False)

    def __post_init__(self) -> None:
        for event in self.events:
            self._groups.setdefault(_said_by_about(event), []).append(event)

    @classmethod
    def from_outbox(
        cls,
        registry: str | None = None,
        path: Path | None = None,
        *,
        note: Callable[[str], None] | None = None,
        also: Iterable[AuthorEvent] = (),
    ) -> Statements:
        """What the outbox holds for `registry` (default: the default registry), and `also`
        (the events of the `-o FILE` written to); `note` hears what opening the outbox says
        (a migration, for one). No outbox yet: none is made."""
        source = None
        if (path or default_path()).exists():
            source = _Said(Outbox(path, note=note), registry_binding(registry))
        return cls(list(also), source=source)

    @property
    def outbox(self) -> Outbox | None:
        """The outbox these statements are read from, open while they are in use (None when
        there was none): a command that stores what it signed stores it there, rather than
        opening and checking the file a second time."""
        return None if self.source is None else self.source.outbox

    def learn(self, events: Iterable[AuthorEvent]) -> int:
        """Add events a registry's merged state holds (`own_events_in_state`) to what is
        known; returns how many were new here (an event the outbox holds, or holds the id of,
        is not counted)."""
        new = 0
        for event in events:
            key, eid = _said_by_about(event), event["event_id"]
            self._load(key)
            group = self._groups.setdefault(key, [])
            if any(e["event_id"] == eid for e in group):
                continue
            group.append(event)
            self.events.append(event)
            self._merged.pop(key, None)  # merged again with it on next use
            if eid not in self._ids_only.get(key, ()):  # the outbox kept no id of it either
                self.from_registry.add(eid)
                new += 1
        return new

    def _load(self, key: tuple[str, str, str]) -> None:
        """Read what the outbox holds of this key, type and subject, once: the events, and
        the ids kept without their bodies (`_ids_only`, looked for in `_group`)."""
        if self.source is not None and key not in self._loaded:
            self._loaded.add(key)
            events, ids_only = self.source.said(key)
            self._groups.setdefault(key, []).extend(events)
            if ids_only:
                self._ids_only[key] = ids_only

    def _group(self, key: tuple[str, str, str]) -> list[AuthorEvent]:
        """What the key said of the type about the subject: given or learnt, and held (read
        once); an id kept without its body is taken from what is known, else `recall`."""
        self._load(key)
        group = self._groups.get(key, [])
        if key in self._ids_only:
            known = {e["event_id"] for e in group}
            missing = [i for i in self._ids_only[key] if i not in known]
            if missing:  # once found, they are in the group: asked no more
                group = self._groups[key] = [*group, *self._recalled(key[2], missing)]
        return group

    def _recalled(self, subject: str, ids: list[str]) -> list[AuthorEvent]:
        """The events of `ids` (kept without their bodies) from `recall`, each checked in
        full and matched to its id; InputError when one cannot be had: a statement whose body
        is gone must not be taken for no statement (a new one would contradict it)."""
        if not ids:
            return []
        wanted = set(ids)
        found = {}
        for event in self.recall(subject, ids) if self.recall is not None else []:
            checked = checked_author_event(event)[1]
            if checked is not None and checked["event_id"] in wanted:
                found[checked["event_id"]] = checked
        missing = sorted(wanted - set(found))
        if missing:
            raise InputError(
                f"the outbox kept only the id of {missing[0][:19]}… on {subject} (its body was "
                "dropped with `pith outbox drop --accepted`), and no copy of it was found",
                hint=f"`pith fetch {subject} --what state` shows what the registry holds",
            )
        return list(found.values())

    def holds(self, fingerprint: str, event_type: str, subject: str) -> bool:
        """True when anything is held of this key, type and subject (nothing is read)."""
        key = (fingerprint, event_type, subject)
        if self._groups.get(key):
            return True
        if key in self._loaded or key in self._none_held or self.source is None:
            return False
        return self.source.holds(key)

    def look_ahead(self, fingerprint: str, event_type: str, subjects: Iterable[str]) -> None:
        """Ask the outbox about many papers at once (a bibliography's): `holds` then answers
        for those it holds nothing about without asking again."""
        if self.source is None:
            return
        wanted = [s for s in subjects if (fingerprint, event_type, s) not in self._loaded]
        held = self.source.holding(fingerprint, event_type, wanted)
        self._none_held.update((fingerprint, event_type, s) for s in wanted if s not in held)

    def merged(self, fingerprint: str, event_type: str, subject: str) -> Applied:
        """The merge of what this key said of this type about this subject."""
        key = (fingerprint, event_type, subject)
        if key not in self._merged:
            group = self._group(key)
            unique = {e["event_id"]: e for e in group}  # an event stored for two registries
            self._merged[key] = apply_events(sorted(unique.values(), key=order_key))
        return self._merged[key]

    def settle(self, on_change: OnChange) -> _Settle:
        """A `settle=` for `pithauthor.sign` (module docstring); what it decided is read off
        the event signed (`settled`)."""
        return _Settle(self, on_change)

    def settled(self, event: AuthorEvent) -> Settled:
        """What became of the statement `event` (one a `settle` of these statements let be
        signed, or gave back): `reused` when it is an event held here (the outbox's, the
        `-o FILE`'s, or learnt from the registry), `replaces` when its payload names the event
        it corrects, else `new`. Read off the event and what is held: asking again answers the
        same, and nothing is kept for the caller to read back."""
        key = _said_by_about(event)
        event_id = event["event_id"]
        # whatever `settle` gave back was merged from its key's group (a retired predecessor's
        # too, or from the part of it `_around` read), so a held event is in `_groups` or
        # `_parts`; a new one is in none (its id covers the time)
        if event_id in self._parts.get(key, ()) or any(
            e["event_id"] == event_id for e in self._groups.get(key, ())
        ):
            return Settled("reused", key[2], key[1], event_id)
        replaced = event["payload"].get("replaces")
        if replaced is not None:
            return Settled("replaces", key[2], key[1], event_id, replaced=replaced)
        return Settled("new", key[2], key[1], event_id)

    def starting(self, prefix: str) -> list[AuthorEvent]:
        """The events held whose id starts with `prefix` (`pith withdraw`), each checked in
        full; an accepted one whose body was dropped is named, not skipped."""
        found = {e["event_id"]: e for e in self.events if e["event_id"].startswith(prefix)}
        for entry in self.source.starting(prefix) if self.source is not None else []:
            if entry.event_id in found:
                continue
            if entry.stored is None:
                (found[entry.event_id],) = self._recalled(entry.subject, [entry.event_id])
            else:
                found[entry.event_id] = entry.event
        return list(found.values())

    def event(self, event_id: str) -> AuthorEvent | None:
        """The event `event_id` held, or None."""
        return next((e for e in self.starting(event_id) if e["event_id"] == event_id), None)

    def standing(self, event_id: str) -> Standing | None:
        """Where the stored event `event_id` stands, or None when the outbox lacks it."""
        event = self.event(event_id)
        if event is None:
            return None
        key = _said_by_about(event)
        merged = (
            self._merged.get(key) or self._around(key, ("event", event_id)) or self.merged(*key)
        )
        for entry in merged.superseded:
            if entry["event"]["event_id"] == event_id:
                return Standing(event, entry["how"], entry["superseded_by"])
        for equivocation in merged.equivocations:
            if equivocation["conflicting_event"]["event_id"] == event_id:
                return Standing(event, "equivocation", equivocation["kept_event_id"])
        if any(w["event_id"] == event_id for w in merged.withdrawals):
            return Standing(event, "withdrawal")
        if event_id in merged.broken_links:
            return Standing(event, "invalid")
        return Standing(event, "current")

    def _around(self, key: tuple[str, str, str], node: tuple[str, object]) -> Applied | None:
        """The merge of the part of the group `key` (`merged`) that can decide where one
        event stands (`node` ("event", its id)) or what one slot holds (("slot", the slot)),
        or None when the whole group is to be merged (`merged`).

        Where an event stands, and what a slot holds, is decided by the events of its slot
        (a repeat, an equivocation) and by the links that reach them (a correction naming one,
        or what one corrects), and by theirs in turn: whatever a fold of the group decides of
        them, a fold of the events joined to them by slot and link decides alike, in the same
        order (`apply_events`: a slot's holders, a link's target, a repeat, the order
        corrections wait for their target in, are all within that part). A key's citations
        of one paper by 333 citing papers were all read back and checked to withdraw one of
        them (45 ms at 100,000 events); the part is the citations of one citing paper and
        what links them.

        Which rows form the part is read off their stored texts unchecked (the slot and link
        of each, as the merge reads them: `slot_and_claim`, `link_of`); every row of the part
        is then read as `merged` reads it, checked in full (a damaged one refused), and the
        merge is of those only. A text that cannot be read that far, a body dropped, or a
        group read already, and the whole group is merged, as before. A row outside the part
        is not checked, as the rows about other papers are not: nothing it says can reach
        the part (a row that would have joined it before it was damaged is damaged whatever
        it says now, and is no statement either way)."""
        source = self.source
        if source is None or key in self._loaded or key in self._ids_only:
            return None
        texts = [text for _, text in source.texts(key)]
        if None in texts:
            return None  # ids kept without their bodies: `_group` recalls them, or refuses
        given = self._groups.get(key, [])  # the `-o FILE`'s: checked already
        labels = [_labels(event) for event in given]
        for text in texts:
            try:
                labels.append(_labels(json.loads(str(text))))
            except Exception:  # anything a damaged text makes the reading raise
                return None  # the whole group then: `merged` checks each and says which
        parent: dict[object, object] = {}

        def find(node: object) -> object:
            parent.setdefault(node, node)
            while parent[node] != node:
                parent[node] = parent[parent[node]]
                node = parent[node]
            return node

        for eid, slot, target in labels:
            parent[find(("event", eid))] = find(("slot", slot))
            if target is not None:
                parent[find(("event", target))] = find(("slot", slot))
        part = find(node)
        inside = [find(("event", eid)) == part for eid, _, _ in labels]
        chosen = [e for e, yes in zip(given, inside, strict=False) if yes]
        for text, yes in zip(texts, inside[len(given) :], strict=True):
            if yes:
                chosen.append(stored_event(str(text)))
        unique = {e["event_id"]: e for e in chosen}  # as `merged`: an event stored twice
        self._parts.setdefault(key, set()).update(unique)  # held: `settled` says reused
        return apply_events(sorted(unique.values(), key=order_key))


def _labels(event: Any) -> tuple[str, Slot, str | None]:
    """(event id, slot, id its link names) of an event, as the merge reads them; raises on a
    text that is no event (the caller merges the whole group, which refuses it)."""
    eid = event["event_id"]
    if not isinstance(eid, str):
        raise TypeError("an event id is text")
    slot = slot_and_claim(event)[0]
    hash(slot)  # a slot of a damaged text may hold what no dict key can
    link = link_of(event)
    return eid, slot, None if link is None else link[1]


class _Settle:
    """The callable `Statements.settle` returns."""

    def __init__(self, held: Statements, on_change: OnChange) -> None:
        self.held = held
        self.on_change = on_change

    def nothing_held(self, fingerprint: str, event_type: str, subject: str) -> bool:
        """True when nothing is held of this key, type and subject, so that
        a statement about it is new whatever it says: `pithauthor.sign.citation_signer` then
        signs it with the batch, without building its unsigned event for `__call__`."""
        held = self.held
        # a retired predecessor's statement may be the same (`__call__` looks)
        return self.on_change != "replace" and not any(
            held.holds(key, event_type, subject) for key in (fingerprint, *held.predecessors)
        )

    def __call__(self, unsigned: UnsignedEvent) -> UnsignedEvent | AuthorEvent:
        etype, subject = unsigned["event_type"], unsigned["subject_pith_number"]
        key = (unsigned["signer"]["public_key_fingerprint"], etype, subject)
        slot, _ = slot_and_claim(unsigned)  # type: ignore[arg-type]
        held = self.held
        # what the slot holds, from the part of the group joined to it (`Statements._around`);
        # `replace` may take the one record of the same kind in another slot (`_same_family`):
        # the whole group
        merged = held._merged.get(key)
        if merged is None and self.on_change != "replace":
            merged = held._around(key, ("slot", slot))
        if merged is None:
            merged = held.merged(*key)
        holding = [e for e in merged.current if slot_and_claim(e)[0] == slot]
        mine = statement_key(unsigned)
        same = next((e for e in holding if statement_key(e) == mine), None)
        if same is not None:
            return same
        older = self._by_predecessor(unsigned, slot)
        if older is not None and unlinked(older["payload"]) == unlinked(unsigned["payload"]):
            # the same statement, made by a retired key of this author: it stands, as made
            return older
        if not holding and self.on_change == "replace":
            holding = _same_family(merged.current, unsigned)
        if not holding:
            if self.on_change == "replace":
                if older is not None:
                    raise InputError(
                        f"--replace: your {_NOUNS[etype]} on {subject} is "
                        f"{older['event_id'][:19]}…, signed by your retired key "
                        f"{older['signer']['key_id']}, which only that key can replace; sign "
                        "this one without --replace (it stands beside it, under this key)"
                    )
                raise InputError(
                    f"--replace: neither the outbox nor the registry holds any {_NOUNS[etype]} "
                    f"of yours on {subject} to replace (sign it without --replace)"
                )
            return unsigned
        head = holding[0]
        if self.on_change == "keep":
            return head
        if self.on_change == "refuse":
            elsewhere = head["event_id"] in self.held.from_registry
            where = " (on the registry, from another machine)" if elsewhere else ""
            paper = f" --paper {subject}" if elsewhere else ""  # not in this outbox
            raise InputError(
                f"you already signed {_NOUNS[etype]} {head['event_id'][:19]}…{where} on "
                f"{subject} ({gist(head)}); give --replace to correct it, or `pith withdraw "
                f"{head['event_id'][:19]}{paper}` to take it back"
            )
        corrected = unsigned.copy()
        corrected["payload"] = replacing(unsigned["payload"], head["event_id"])
        return corrected

    def _by_predecessor(self, unsigned: UnsignedEvent, slot: Slot) -> AuthorEvent | None:
        """The current event of a retired predecessor of the signing key in the same slot
        (the slot names the key: compared without it), if any."""
        etype, subject = unsigned["event_type"], unsigned["subject_pith_number"]
        for fingerprint in sorted(self.held.predecessors):
            for event in self.held.merged(fingerprint, etype, subject).current:
                if slot_and_claim(event)[0][1:] == slot[1:]:
                    return event
        return None


def own_events_in_state(state: Mapping[str, Any], fingerprints: Iterable[str]) -> list[AuthorEvent]:
    """The author events a merged state holds that the keys `fingerprints` signed, whatever
    became of them there (current, replaced, withdrawn, a withdrawal, a repeat, an
    equivocation), each checked as the outbox checks one (signature and shape); the state's
    `invalid_events` are left out (the registry refused them)."""
    wanted = frozenset(fingerprints)
    found: dict[str, AuthorEvent] = {}
    for node in signed_nodes_in_state(state):
        signer = node.get("signer")
        if isinstance(signer, Mapping) and signer.get("public_key_fingerprint") in wanted:
            typed = checked_author_event(node)[1]
            if typed is not None:
                found.setdefault(typed["event_id"], typed)
    return sorted(found.values(), key=order_key)


def key_lineage(key_id: str) -> tuple[str, list[str]]:
    """The fingerprint of key `key_id` and those of its retired predecessors, newest first
    (the key store records each rotation: a key `replaces` the one before it)."""
    records = {r.key_id: r for r in list_keys()}
    record = records.get(key_id)
    if record is None:
        return "", []
    older: list[str] = []
    seen = {key_id}
    while record.replaces is not None and record.replaces not in seen:
        seen.add(record.replaces)
        found = records.get(record.replaces)
        if found is None:
            break
        older.append(found.public_key_fingerprint)
        record = found
    return records[key_id].public_key_fingerprint, older


def events_in_file(path: Path) -> list[AuthorEvent]:
    """The valid author events a JSONL file (an earlier `-o FILE`) holds; none when it does
    not exist. Lines that are no valid event are left alone: they are not statements of
    yours, and appending to the file does not touch them."""
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except (FileNotFoundError, IsADirectoryError, NotADirectoryError):
        return []
    except OSError as exc:
        raise InputError(f"cannot read {path}: {exc.strerror or exc}") from None
    found = []
    for line in text.splitlines():
        # as strict as a registry reads it: a line a lenient parser would accept (a key twice,
        # NaN) is no event anyone can publish, so it must not count as one already made
        try:
            doc = parse_json(line)
        except ValueError:  # JSONFault is a ValueError
            continue
        typed = checked_author_event(doc)[1]
        if typed is not None:
            found.append(typed)
    return found


def _said_by_about(event: UnsignedEvent) -> tuple[str, str, str]:
    """The signer key, type and subject: what one merge of the outbox groups by."""
    return (
        event["signer"]["public_key_fingerprint"],
        event["event_type"],
        event["subject_pith_number"],
    )


def _same_family(current: Iterable[AuthorEvent], unsigned: UnsignedEvent) -> list[AuthorEvent]:
    """For `--replace` of a replication whose artifacts changed (another slot): the current
    record of the same kind, when there is exactly one."""
    kind = unsigned["payload"].get("kind")
    if kind is None:
        return []
    family = [e for e in current if e["payload"].get("kind") == kind]
    return family if len(family) == 1 else []


def gist(event: AuthorEvent) -> str:
    """What a stored statement says, in a few words, for a refusal."""
    payload = event["payload"]
    if "author" in payload:
        author = payload["author"]
        position = author.get("position")
        return f"as {author['name']}" + (f", position {position}" if position else "")
    if "relationship" in payload:
        return f"{payload['relationship']} by {payload['citing_pith_number']}"
    if "opentimestamps" in payload:
        heights = ", ".join(str(h["height"]) for h in payload["bitcoin_headers"])
        return f"anchored in Bitcoin block {heights}"
    if "captures" in payload:
        return "archived at " + ", ".join(c["capture_url"] for c in payload["captures"])
    return f"{payload.get('kind')}: {payload.get('outcome')}"


# The list of the author's papers from the outbox (a paper's page: `pithauthor.registry.page`).
#
# >>> my_papers()                                       # what this machine's keys signed
#
# Everything here is data (JSON-ready dicts); the CLI prints it. Text that came from a registry or
# from someone else's event (titles) is returned as sent: whoever prints it escapes it
# (`pithauthor.protocol.text.escaped`).

# what each event type means on a paper's page, and in `pith papers`
ROLES = {
    "author_attestation": "claimed",
    "citation_signature": "cited",
    "replication_record": "replicated",
    "timestamp_anchor": "anchored",
    "storage_attestation": "archived",
}


def my_papers() -> list[dict[str, Any]]:
    """The papers this machine's keys claimed, cited or replicated (the outbox), each with what
    was signed about it and where each event stands, per registry; newest activity first.
    Counted by the outbox's database (`Outbox.tally`): no stored event is read."""
    own = {record.key_id for record in list_keys()}
    with Outbox() as outbox:
        groups = [g for g in outbox.tally() if g[1] in own]
    titles = record_titles((registry, subject) for subject, _, registry, *_ in groups)
    papers: dict[str, dict[str, Any]] = {}
    # oldest change first: a paper's roles and keys in the order they came
    for subject, key_id, registry, event_type, state, n, last in sorted(groups, key=_by_last):
        page = papers.setdefault(
            subject,
            {
                "pith_number": subject,
                "title": titles.get(subject),
                "roles": [],
                "keys": [],
                "registries": {},
                "last": "",
            },
        )
        role = ROLES.get(event_type, event_type)
        if role not in page["roles"]:
            page["roles"].append(role)
        if key_id not in page["keys"]:
            page["keys"].append(key_id)
        counts = page["registries"].setdefault(
            registry, {"pending": 0, "accepted": 0, "rejected": 0}
        )
        counts[state] = counts.get(state, 0) + n
        page["last"] = max(page["last"], last)
    return sorted(papers.values(), key=lambda p: p["last"], reverse=True)


def _by_last(group: tuple[str, str | None, str, str, str, int, str]) -> tuple[str, str]:
    return group[6], group[0]


def papers_on_registry(
    client: RegistryClient, refs: Iterable[str] = (), rows: list[dict[str, Any]] | None = None
) -> list[dict[str, Any]]:
    """`my_papers` (or `rows`), with what `client`'s registry holds of this machine's keys
    (active and retired), signed here or elsewhere: the merged state of each paper named in
    `refs` and of each paper the outbox holds rows for that registry is read (verified), and
    its events by these keys are counted under the registry's `on the registry`. No registry
    lists papers by key (none is published), so the papers asked about are those named and
    those this machine knows."""
    rows = my_papers() if rows is None else rows
    own = {r.public_key_fingerprint: r.key_id for r in list_keys()}
    where = client.base_url
    by_number = {p["pith_number"]: p for p in rows}
    bound = registry_binding(where)
    with Outbox() as outbox:  # the papers it holds rows of for that registry: its tally
        known = [subject for subject, _, registry, *_ in outbox.tally() if registry == bound]
    wanted = list(dict.fromkeys([*refs, *known]))
    for ref in wanted:
        record = client.record(ref)
        number = record["pith_number"]
        events = own_events_in_state(client.state(number, strict=False), own)
        if not events:
            continue
        page = by_number.get(number)
        if page is None:
            title = _title_of(record)
            page = by_number[number] = {
                "pith_number": number,
                "title": title,
                "roles": [],
                "keys": [],
                "registries": {},
                "last": "",
            }
            rows.append(page)
        for event in events:
            role = ROLES.get(event["event_type"], event["event_type"])
            if role not in page["roles"]:
                page["roles"].append(role)
            kid = own[event["signer"]["public_key_fingerprint"]]
            if kid not in page["keys"]:
                page["keys"].append(kid)
            page["last"] = max(page["last"], event["created_at"])
        counts = page["registries"].setdefault(where, {"pending": 0, "accepted": 0, "rejected": 0})
        counts["on the registry"] = len(events)
    return sorted(rows, key=lambda p: p["last"], reverse=True)


def _title_of(record: Mapping[str, Any]) -> str | None:
    paper = record.get("paper")
    title = paper.get("title") if isinstance(paper, Mapping) else None
    return " ".join(title.split()) if isinstance(title, str) and title.strip() else None
