"""What you have already said: the statements your outbox holds for one registry, so that
signing the same thing twice publishes it once, and changing it is an explicit correction.

    held = Statements.from_outbox("http://127.0.0.1:8787")  # the registry the events are for
    event = attest_authorship(key, paper, name="Ada Lovelace", settle=held.settle("refuse"))
    held.last  # Settled("reused" | "new" | "replaces", ...)

A statement is the signed fields but `created_at` (`statement_key`). Before anything is
signed, `settle` merges what the outbox holds for the same key, type and subject exactly as
the local registry merges (`apply_events`), and looks at the slot the new statement fills
(the author's claim on a paper, a citation by one citing paper, a replication of one kind and
artifacts):

- the slot already holds this statement: that event is **reused**, nothing is signed;
- the slot holds another statement: `refuse` (claim, replicate without `--replace`) raises
  `InputError` naming it; `replace` and `auto` (a changed citation) sign the new one as the
  correction that **replaces** it;
- the slot is empty: a **new** event (`replace` refuses: there is nothing to replace).

With `-o FILE`, the events FILE already holds count too (`events_in_file`): writing the same
statement into the same file twice is a reuse, not a second line. The outbox (and that file) is
all it knows: a statement made from another machine, or dropped from the outbox,
is not seen (the registry's merged state shows it: `pith fetch REF --what state`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from pithauthor.errors import InputError
from pithauthor.protocol.canonical_json import parse_json
from pithauthor.protocol.checks.event import checked_author_event
from pithauthor.protocol.checks.merge import Applied, apply_events, order_key, slot_and_claim
from pithauthor.protocol.corrections import replacing, statement_key
from pithauthor.protocol.documents import AuthorEvent, UnsignedEvent
from pithauthor.registry.outbox import held_events

__all__ = ["OnChange", "Settled", "Standing", "Statements", "events_in_file", "gist"]

#: What to do when the slot holds a different statement (see the module docstring).
OnChange = Literal["refuse", "replace", "auto"]
_NOUNS = {
    "author_attestation": "author claim",
    "citation_signature": "citation",
    "replication_record": "replication record",
}


@dataclass(frozen=True)
class Settled:
    """What became of one statement: `reused` (`event_id` is the stored event), `new`, or
    `replaces` (`replaced` names the corrected event; `event_id` is set once signed)."""

    decision: Literal["reused", "new", "replaces"]
    subject: str
    event_type: str
    event_id: str | None = None
    replaced: str | None = None


@dataclass(frozen=True)
class Standing:
    """Where one stored event stands in the merge of the outbox: `current`, `replaced` or
    `withdrawn` by `by`, `equivocation` (kept out in favour of `by`), or a `withdrawal`."""

    event: AuthorEvent
    status: Literal["current", "replaced", "withdrawn", "equivocation", "withdrawal", "invalid"]
    by: str | None = None


@dataclass
class Statements:
    """The events one registry has been sent, or will be, from this outbox."""

    events: list[AuthorEvent]
    log: list[Settled] = field(default_factory=list)
    _merged: dict[tuple[str, str, str], Applied] = field(default_factory=dict, repr=False)
    _groups: dict[tuple[str, str, str], list[AuthorEvent]] = field(default_factory=dict, repr=False)

    def __post_init__(self) -> None:
        # one pass over the outbox: a bibliography asks about hundreds of papers
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
        (a migration, for one)."""
        return cls([*held_events(registry, path, note=note), *also])

    @property
    def last(self) -> Settled | None:
        return self.log[-1] if self.log else None

    def merged(self, fingerprint: str, event_type: str, subject: str) -> Applied:
        """The merge of what this key said of this type about this subject."""
        key = (fingerprint, event_type, subject)
        if key not in self._merged:
            group = self._groups.get(key, [])
            unique = {e["event_id"]: e for e in group}  # an event stored for two registries
            self._merged[key] = apply_events(sorted(unique.values(), key=order_key))
        return self._merged[key]

    def settle(self, on_change: OnChange) -> _Settle:
        """A `settle=` for `pithauthor.sign` (module docstring); each decision is logged."""
        return _Settle(self, on_change)

    def standing(self, event_id: str) -> Standing | None:
        """Where the stored event `event_id` stands, or None when the outbox lacks it."""
        event = next((e for e in self.events if e["event_id"] == event_id), None)
        if event is None:
            return None
        merged = self.merged(*_said_by_about(event))
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


class _Settle:
    """The callable `Statements.settle` returns."""

    def __init__(self, held: Statements, on_change: OnChange) -> None:
        self.held = held
        self.on_change = on_change

    def __call__(self, unsigned: UnsignedEvent) -> UnsignedEvent | AuthorEvent:
        etype, subject = unsigned["event_type"], unsigned["subject_pith_number"]
        merged = self.held.merged(unsigned["signer"]["public_key_fingerprint"], etype, subject)
        slot, _ = slot_and_claim(unsigned)  # type: ignore[arg-type]
        holding = [e for e in merged.current if slot_and_claim(e)[0] == slot]
        mine = statement_key(unsigned)
        same = next((e for e in holding if statement_key(e) == mine), None)
        log = self.held.log
        if same is not None:
            log.append(Settled("reused", subject, etype, same["event_id"]))
            return same
        if not holding and self.on_change == "replace":
            holding = _same_family(merged.current, unsigned)
        if not holding:
            if self.on_change == "replace":
                raise InputError(
                    f"--replace: the outbox holds no {_NOUNS[etype]} of yours on {subject} "
                    "to replace (sign it without --replace)"
                )
            log.append(Settled("new", subject, etype))
            return unsigned
        head = holding[0]
        if self.on_change == "refuse":
            raise InputError(
                f"you already signed {_NOUNS[etype]} {head['event_id'][:19]}… on {subject} "
                f"({gist(head)}); give --replace to correct it, or `pith withdraw "
                f"{head['event_id'][:19]}` to take it back"
            )
        log.append(Settled("replaces", subject, etype, replaced=head["event_id"]))
        corrected = unsigned.copy()
        corrected["payload"] = replacing(unsigned["payload"], head["event_id"])
        return corrected


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
    return f"{payload.get('kind')}: {payload.get('outcome')}"
