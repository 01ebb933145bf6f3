"""Recovering an outbox from its journal: `pith outbox recover`."""

from __future__ import annotations

import contextlib
import os
import secrets
import time
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from pithauthor.errors import InputError, OutboxDamaged, PithError
from pithauthor.protocol.canonical_json import b64decode, parse_json
from pithauthor.protocol.checks.event import checked_author_event
from pithauthor.protocol.timestamps import ots_digest
from pithauthor.registry.client import registry_binding
from pithauthor.registry.journal import default_path, journal_path
from pithauthor.registry.outbox import Outbox


@dataclass
class Recovered:
    """What `recover` did."""

    events: int  # rows rebuilt
    registries: dict[str, int]  # rows per registry
    accepted: int  # of them, rows the journal says their registry accepted (kept so)
    skipped: int  # journal lines that could not be read or do not verify
    moved_to: Path | None  # where the damaged file was put (None: there was none)
    held: int = 0  # of them, rows held for moderation by their registry (kept so)


def recover(path: Path | None = None) -> Recovered:
    """Rebuild a damaged (or missing) outbox from its journal: the damaged file is moved
    aside (never deleted), and every journalled row not dropped since is stored again as
    pending. Sending them again is safe: a registry answers 200 for what it already has."""
    path = path or default_path()
    journal = journal_path(path)
    if path.is_file() and path.stat().st_size:
        try:
            Outbox(path).close()
        except OutboxDamaged:
            pass
        else:
            raise InputError(f"the outbox {path} is healthy; there is nothing to recover")
    if not journal.is_file():
        raise InputError(f"the outbox's journal {journal} is missing; nothing to recover from")
    rows, accepted, held, forgotten, skipped, times = _replay(journal)
    moved = None
    if path.exists() or path.is_symlink():
        stamp = f"{time.strftime('%Y%m%dT%H%M%S')}-{secrets.token_hex(2)}"  # never overwrite one
        moved = path.with_name(f"{path.name}.damaged-{stamp}")
        os.replace(path, moved)
        for suffix in ("-wal", "-shm"):
            side = path.with_name(path.name + suffix)
            if side.exists():
                os.replace(side, moved.with_name(moved.name + suffix))
    # the new journal is written from the rows, so build the outbox beside the old journal
    old_journal = journal.with_name(f"{journal.name}.before-recovery-{secrets.token_hex(4)}")
    os.replace(journal, old_journal)
    counts: dict[str, int] = {}
    try:
        with Outbox(path) as outbox:
            for (registry, stored_at), events in _batches(rows).items():
                new, _ = outbox.store(events, registry, stored_at=stored_at)
                counts[registry] = counts.get(registry, 0) + new
            for event_id, registry in accepted:  # its answer is not journalled: null
                outbox.mark_accepted(event_id, registry, None)
            for event_id, registry in held - accepted:  # held for moderation: not sent again
                outbox.mark_held(event_id, registry, None)
            outbox.restore_ids(forgotten.values())
            for eid, kind, source, proof, complete in times:  # journalled again as kept
                outbox.store_time(eid, kind, source, proof, complete=complete)
    except BaseException:
        with contextlib.suppress(OSError):
            os.replace(old_journal, journal)
        raise
    old_journal.unlink()
    return Recovered(
        sum(counts.values()), counts, len(accepted), skipped, moved, len(held - accepted)
    )


MAX_JOURNAL_LINE = 1 << 20
"""1 MiB: a journal line holds one event (a registry takes 64 KiB bodies); a longer line is
damage, skipped without being read whole."""


Row = tuple[dict[str, object], str]  # (the event, when it was first stored)


Pairs = set[tuple[str, str]]


def _replay(
    journal: Path,
) -> tuple[dict[tuple[str, str], Row], Pairs, Pairs, dict[tuple[str, str], Any], int, list[Time]]:
    """The rows the journal leaves: stored and not dropped since, keyed (event_id, registry);
    those of them accepted; those held for moderation; the ledger rows kept without their
    events (`forget` lines); how many lines were skipped (torn, unreadable, or not a
    verifying event); and the proofs of trusted time kept (`time` lines, in order)."""
    rows: dict[tuple[str, str], Row] = {}
    accepted: Pairs = set()
    held: Pairs = set()
    forgotten: dict[tuple[str, str], Any] = {}
    times: list[Time] = []
    skipped = 0
    for line in _journal_lines(journal):
        if line is None:  # longer than any journal line pith writes: skipped unread
            skipped += 1
            continue
        if not line.strip():
            continue
        try:
            # strict and bounded (`parse_json`: depth, number sizes): a line nested 200,000
            # deep is one skipped line, not a RecursionError that stops the recovery
            item = parse_json(line)
            if item["op"] == "time":  # bound to no registry: an event's, wherever it goes
                times.append(_time(item))
                continue
            op, registry = item["op"], registry_binding(item["registry"])
            if op == "store":
                event = item["event"]
                rows[(event["event_id"], registry)] = (event, str(item["stored_at"]))
            elif op == "drop":
                rows.pop((item["event_id"], registry), None)
                accepted.discard((item["event_id"], registry))
                held.discard((item["event_id"], registry))
            elif op == "accepted":
                accepted.add((str(item["event_id"]), registry))
            elif op == "held":
                held.add((str(item["event_id"]), registry))
            elif op == "forget":
                key = (str(item["event_id"]), registry)
                rows.pop(key, None)
                accepted.discard(key)
                held.discard(key)
                forgotten[key] = {**item, "registry": registry}
            else:
                skipped += 1
        except (ValueError, KeyError, TypeError, AttributeError, RecursionError, PithError):
            skipped += 1
    good = {}
    for key, row in rows.items():
        try:
            verified = checked_author_event(row[0])[1] is not None
        except (ValueError, KeyError, TypeError, AttributeError, RecursionError, PithError):
            verified = False  # whatever a hostile line holds, it is one skipped line
        if verified:
            good[key] = row
        else:
            skipped += 1
    for key in good:
        forgotten.pop(key, None)  # stored again since: the event is back
    return good, accepted & set(good), held & set(good), forgotten, skipped, times


Time = tuple[str, Literal["rfc3161", "ots"], str, bytes, bool]  # `Outbox.store_time`'s


def _time(item: Mapping[str, Any]) -> Time:
    """A `time` line's proof; ValueError (a skipped line) for one that is not."""
    kind, eid, source, complete = item["kind"], item["event_id"], item["source"], item["complete"]
    if kind not in ("rfc3161", "ots") or type(complete) is not bool:
        raise ValueError("not a proof of trusted time")
    if not isinstance(eid, str) or not isinstance(source, str):
        raise ValueError("not a proof of trusted time")
    ots_digest(eid)  # an event id
    return (eid, kind, source, b64decode(item["proof"]), complete)


def _journal_lines(journal: Path) -> Iterator[bytes | None]:
    """The journal's lines as bytes; None for a line longer than `MAX_JOURNAL_LINE`, which is
    passed over in pieces, never held whole (a damaged journal can be one huge line)."""
    with open(journal, "rb") as handle:
        while True:
            line = handle.readline(MAX_JOURNAL_LINE + 1)
            if not line:
                return
            if len(line) <= MAX_JOURNAL_LINE or line.endswith(b"\n"):
                yield line
                continue
            while line and not line.endswith(b"\n"):  # the rest of the long line
                line = handle.readline(1 << 16)
            yield None


def _batches(rows: Mapping[tuple[str, str], Row]) -> dict[tuple[str, str], list[Any]]:
    """The events by (registry, date stored): one `store` each."""
    out: dict[tuple[str, str], list[Any]] = {}
    for (_, registry), (event, stored_at) in rows.items():
        out.setdefault((registry, stored_at), []).append(event)
    return out
