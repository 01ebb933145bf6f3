"""Submit signed events: store them in the outbox, then send each exactly once.

Every event is stored in the outbox before any network I/O, bound to the registry it is for;
`submit_pending` sends what is pending for one registry, in parallel, and records each answer
(only that registry's answer counts for its rows), so a batch arrives exactly once whatever
fails; `submit_everywhere` does so for every registry the outbox holds rows for.
Concurrent `pith submit` processes share the work: each event is sent by the one process that
holds its lease in the outbox (see `pithauthor.registry.outbox`); the others wait for its answer.
Talking to one registry (fetch, verify, POST one event) is `pithauthor.registry.client`.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pithauthor.errors import (
    ActionNotNamed,
    AuthError,
    EventRefused,
    FormatRefused,
    InputError,
    NetworkError,
    PithError,
    RegistryRejected,
)
from pithauthor.fs import append_lines, check_output_file, pith_home
from pithauthor.protocol.documents import AuthorEvent
from pithauthor.protocol.subject import Subject
from pithauthor.registry.client import DB_NAME as CACHE_NAME
from pithauthor.registry.client import (
    RecordCache,
    RegistryClient,
    is_hold,
    registry_binding,
)
from pithauthor.registry.outbox import Note, Outbox, OutboxEntry, new_lease_owner

__all__ = [
    "SubmitResult",
    "append_jsonl",
    "check_destination",
    "combined",
    "deliver",
    "paper_titles",
    "pending_by_registry",
    "record_titles",
    "registries_to_visit",
    "state_event_ids",
    "store_in_outbox",
    "submit_events",
    "submit_everywhere",
    "submit_pending",
]

Progress = Callable[[int, int], None]
LEASE_SECONDS = 600.0  # longer than one event's POST with every retry; then another may send it
WAIT_POLL = 0.2  # seconds between looks at the rows another process holds (a few SELECTs)


@dataclass
class SubmitResult:
    """What a submission did. `error` is the one problem that stopped it, if any."""

    registry: str
    accepted: list[str] = field(default_factory=list)
    duplicates: list[str] = field(default_factory=list)
    rejected: dict[str, str] = field(default_factory=dict)
    pending: list[str] = field(default_factory=list)
    # held for moderation there (202, or a status naming a hold): never sent again
    held: list[str] = field(default_factory=list)
    # of the rows held before this pass, those the paper's merged state now lists (accepted)
    confirmed: list[str] = field(default_factory=list)
    elsewhere: list[str] = field(default_factory=list)
    # with `only`: the pending rows for this registry that were left alone (not asked for)
    others_pending: list[str] = field(default_factory=list)
    error: PithError | None = None

    @property
    def ok(self) -> bool:
        return self.error is None and not self.rejected and not self.pending

    def summary(self) -> str:
        """`accepted 3 (1 already there), rejected 0, pending 0 at URL`; `, held 1` when the
        registry holds events for moderation, `(1 confirmed since held)` when some held
        earlier now count."""
        dup = f" ({len(self.duplicates)} already there)" if self.duplicates else ""
        if self.confirmed:
            dup += f" ({len(self.confirmed)} confirmed since held)"
        other = f"; {len(self.elsewhere)} sent by another pith submit" if self.elsewhere else ""
        held = f", held {len(self.held)}" if self.held else ""
        return (
            f"accepted {len(self.accepted) + len(self.confirmed)}{dup}, rejected "
            f"{len(self.rejected)}, pending {len(self.pending)}{held} at {self.registry}{other}"
        )

    def held_line(self) -> str | None:
        """What a hold means and what the author can do, in one line (None: nothing held)."""
        if not self.held:
            return None
        n = len(self.held)
        what = "1 event is" if n == 1 else f"{n} events are"
        return (
            f"held for moderation at {self.registry}: {what} stored there but not yet "
            "public; sign in there to confirm it (`pith submit` then marks it accepted; it is "
            "never sent again)"
        )

    def raise_for_failure(self) -> None:
        """Raise the problem that stopped the batch, else RegistryRejected (exit 1) when the
        registry refused some events."""
        if self.error is not None:
            raise self.error
        if self.rejected:
            raise RegistryRejected(f"the registry rejected {len(self.rejected)} event(s)")

    def as_dict(self) -> dict[str, object]:
        """The result for `--json` (a report, not a protocol document)."""
        return {
            "ok": self.ok,
            "registry": self.registry,
            "accepted": self.accepted,
            "duplicates": self.duplicates,
            "rejected": self.rejected,
            "pending": self.pending,
            "held": self.held,
            "confirmed": self.confirmed,
            "elsewhere": self.elsewhere,
            "error": str(self.error) if self.error else None,
        }


def combined(results: Sequence[SubmitResult]) -> dict[str, object]:
    """Several registries' results as one `--json` report: the lists joined, `ok` when every
    one is, `registry` when there was one, and each registry's own result in `registries`."""
    joined: dict[str, object] = {
        "ok": all(r.ok for r in results),
        "registry": results[0].registry if len(results) == 1 else None,
    }
    for name in ("accepted", "duplicates", "pending", "held", "confirmed", "elsewhere"):
        joined[name] = [eid for r in results for eid in getattr(r, name)]
    joined["rejected"] = {k: v for r in results for k, v in r.rejected.items()}
    errors = [str(r.error) for r in results if r.error is not None]
    joined["error"] = errors[0] if errors else None
    joined["registries"] = [r.as_dict() for r in results]
    return joined


def store_in_outbox(
    events: Iterable[AuthorEvent],
    registry: str | None = None,
    *,
    note: Note | None = None,
    outbox: Outbox | None = None,
) -> tuple[int, int]:
    """Store signed events in the outbox for `registry` (default: the default registry),
    atomically; an event already there for it is kept. Returns (new, already there). `outbox`:
    the default outbox, already open (left open), else it is opened here and closed."""
    if outbox is not None:
        return outbox.store(events, registry)
    with Outbox(note=note) as opened:
        return opened.store(events, registry)


def submit_pending(
    *,
    registry: str | None = None,
    parallel: int = 8,
    client: RegistryClient | None = None,
    progress: Progress | None = None,
    outbox_path: Path | None = None,
    lease_seconds: float = LEASE_SECONDS,
    note: Note | None = None,
    only: Iterable[str] | None = None,
) -> SubmitResult:
    """Send the pending events bound to one registry (`client`'s, else `registry`, else the
    default); each answer is recorded as it comes. Rows bound to other registries are not
    touched (`submit_everywhere` sends those). With `only` (event ids), just those events go:
    a signing command's `--submit` sends what it showed, never what an earlier run left
    (the rest are counted in `others_pending`).

    An event another live process is sending is left to it: this call waits (at most
    `lease_seconds`) for its answer and lists it in `elsewhere`.
    """
    if parallel < 1:
        raise InputError("--parallel must be at least 1")
    own = client is None
    client = client or RegistryClient(registry, max_connections=max(parallel, 4))
    try:
        with Outbox(outbox_path, note=note) as outbox:
            wanted = None if only is None else frozenset(only)
            return Submission(client, outbox, lease_seconds, wanted).run(parallel, progress)
    finally:
        if own:
            client.close()


def pending_by_registry(
    outbox_path: Path | None = None, *, note: Note | None = None
) -> dict[str, int]:
    """How many pending events are bound to each registry."""
    with Outbox(outbox_path, note=note) as outbox:
        return {r: outbox.counts(r)["pending"] for r in outbox.registries("pending")}


def registries_to_visit(outbox_path: Path | None = None) -> list[str]:
    """The registries `pith submit` talks to: those with pending rows (to send) or held rows
    (to look whether the paper's state lists them now), sorted."""
    with Outbox(outbox_path) as outbox:
        return sorted({*outbox.registries("pending"), *outbox.registries("held")})


def submit_everywhere(
    connect: Callable[[str], RegistryClient],
    *,
    parallel: int = 8,
    progress: Callable[[str], Progress | None] | None = None,
    outbox_path: Path | None = None,
    lease_seconds: float = LEASE_SECONDS,
    note: Note | None = None,
) -> list[SubmitResult]:
    """Send every pending event to the registry it is bound to: one `submit_pending` per
    registry, with the client `connect(registry)` builds. A registry that fails (cannot be
    reached, refuses the token) does not stop the others: its result carries the error."""
    results = []
    pending_by_registry(outbox_path, note=note)  # opens (and migrates) the outbox once
    for where in registries_to_visit(outbox_path):
        try:
            client = connect(where)
        except PithError as exc:
            with Outbox(outbox_path) as outbox:
                left = [e.event_id for e in outbox.entries("pending", where)]
            results.append(SubmitResult(registry=where, pending=left, error=exc))
            continue
        with client:
            results.append(
                submit_pending(
                    client=client,
                    parallel=parallel,
                    progress=progress(where) if progress else None,
                    outbox_path=outbox_path,
                    lease_seconds=lease_seconds,
                )
            )
    return results


class Submission:
    """One pass over the events pending for one registry: claim each (a lease in the outbox),
    POST it, record the registry's answer, and then wait for those another process holds.

    Why leases: two `pith submit` runs (or a `--submit` and a `pith submit`) may see the same
    pending rows. Each event is sent only by the process that claimed its lease, so it is
    POSTed once; the others wait for its answer (`_wait_for_others`) and take over a lease
    that expired (its owner died) without sending anything twice.

    Threads (`parallel` > 1) share `result`, `mine` and `done` under `lock`; `stop` ends the
    pass early when one failure means every other request would fail the same way."""

    def __init__(
        self,
        client: RegistryClient,
        outbox: Outbox,
        lease_seconds: float,
        only: frozenset[str] | None = None,
    ) -> None:
        self.client = client
        self.outbox = outbox
        self.lease_seconds = lease_seconds
        self.only = only
        self.owner = new_lease_owner()
        self.where = registry_binding(client.base_url)  # the rows this client may answer for
        entries = outbox.entries("pending", self.where)
        self.entries = [e for e in entries if only is None or e.event_id in only]
        held = outbox.entries("held", self.where)
        self.held = [e for e in held if only is None or e.event_id in only]
        self.result = SubmitResult(registry=client.base_url)
        self.mine: set[str] = set()  # events this pass claimed (and so sent, or tried to)
        self.stop = threading.Event()
        self.lock = threading.Lock()
        self.done = 0
        self._urls: dict[tuple[str, str], str] = {}  # (event type, subject) -> its action URL

    def run(self, parallel: int, progress: Progress | None = None) -> SubmitResult:
        """Send every entry this pass can claim, wait for the rest, and say what became of
        each (the outbox is read again at the end: it is the truth, not this pass's memory).
        Rows held for moderation are never sent again: the paper's state says when they
        count (`_check_held`)."""
        if self.held:
            self._check_held()
        if parallel == 1:  # one at a time: no pool, no hand-off between threads per event
            for entry in self.entries:
                self._send_counted(entry, progress)
        elif self.entries:
            # here: storing what `pith cite` signed (this module's `deliver`) starts no thread
            from concurrent.futures import ThreadPoolExecutor

            with ThreadPoolExecutor(max_workers=parallel, thread_name_prefix="pith-submit") as pool:
                list(pool.map(lambda entry: self._send_counted(entry, progress), self.entries))
        asked = {e.event_id for e in self.entries}
        if asked - self.mine:
            self._wait_for_others(asked - self.mine)
        result, only = self.result, self.only
        pending = [e.event_id for e in self.outbox.entries("pending", self.where)]
        result.pending = [e for e in pending if only is None or e in only]
        held = [e.event_id for e in self.outbox.entries("held", self.where)]
        result.held = [e for e in held if only is None or e in only]
        result.others_pending = [e for e in pending if only is not None and e not in only]
        result.elsewhere = sorted(asked - self.mine - set(result.pending))
        return result

    def _check_held(self) -> None:
        """Read the merged state of each paper with held rows (one GET per paper), and mark
        accepted every held event it lists. A state that cannot be read now leaves its rows
        held: nothing is lost, the next `pith submit` looks again."""
        by_paper: dict[str, list[OutboxEntry]] = {}
        for entry in self.held:
            by_paper.setdefault(entry.subject, []).append(entry)
        for subject, entries in by_paper.items():
            try:
                # not strict: a registry's own parts (its merge) are no reason to look away
                state = self.client.state(subject, strict=False)
            except (AuthError, NetworkError, FormatRefused) as exc:
                self.result.error = self.result.error or exc
                return
            except PithError:
                continue  # no state of this paper there (404), or one that does not verify
            listed = state_event_ids(state)
            for entry in entries:
                if entry.event_id in listed and self.outbox.mark_accepted(
                    entry.event_id, self.where, entry.answer
                ):
                    self.result.confirmed.append(entry.event_id)

    def send(self, entry: OutboxEntry) -> None:
        """Send `entry` if this pass can claim it (another process may hold it). A claim not
        ended by a recorded answer is released, so that the event stays pending for a later
        run (and no other process waits out the lease for nothing)."""
        if self.stop.is_set() or not self.outbox.claim(
            entry.event_id, self.owner, self.lease_seconds, registry=self.where
        ):
            return
        with self.lock:
            self.mine.add(entry.event_id)
        answered = False
        try:
            answered = self._send_claimed(entry)
        finally:
            if not answered:
                self.outbox.release(entry.event_id, self.owner, registry=self.where)

    def _send_counted(self, entry: OutboxEntry, progress: Progress | None) -> None:
        self.send(entry)
        with self.lock:
            self.done += 1
            if progress is not None:
                progress(self.done, len(self.entries))

    def _action_url(self, event: AuthorEvent) -> str:
        """Where `event` goes, looked up once per subject and type (not once per event);
        a failure is not kept, so the next event of that paper asks again."""
        key = (event["event_type"], event["subject_pith_number"])
        url = self._urls.get(key)
        if url is None:
            url = self._urls[key] = self.client.action_url(event)
        return url

    def _send_claimed(self, entry: OutboxEntry) -> bool:
        """POST one claimed event; True when its answer was recorded (which ends the lease).

        Only EventRefused (the registry's answer to this POST) marks the event rejected: a
        failure before the POST (the record not found, not verifying) is no verdict on the
        event, and one after it (no answer, a 5xx) may hide an acceptance: both leave it
        pending, with the attempt counted when it was sent."""
        eid, where = entry.event_id, self.where
        posted = False
        try:
            url = self._action_url(entry.event)
            # from here on, bytes may have reached the registry: a failure counts as an attempt
            posted = True
            status, answer = self.client.submit(entry.event, url)
        except EventRefused as exc:
            self.outbox.mark_rejected(eid, where, str(exc), exc.answer, attempted=True)
            with self.lock:
                self.result.rejected[eid] = str(exc)
            return True
        except PithError as exc:
            if posted:
                self.outbox.attempt(eid, where)
            # a type the registry takes no events of says nothing of the others: they still go
            if isinstance(exc, AuthError | NetworkError | FormatRefused) and not isinstance(
                exc, ActionNotNamed
            ):
                self.stop.set()  # every other request would fail the same way
            with self.lock:
                self.result.error = self.result.error or exc
            return False
        if is_hold(status, answer):  # stored there, not yet public: never sent again
            self.outbox.mark_held(eid, where, answer, attempted=True)
            with self.lock:
                self.result.held.append(eid)
            return True
        self.outbox.mark_accepted(eid, where, answer, attempted=True)
        with self.lock:
            self.result.accepted.append(eid)
            if status == 200:  # 200, not 201: the registry already had it (Idempotency-Key)
                self.result.duplicates.append(eid)
        return True

    def _wait_for_others(self, others: set[str]) -> None:
        """Wait until the events other processes hold are answered; take over any whose lease
        expired or whose owner died (`send` claims before it sends, so each is sent at most
        once). Gives up after one lease: a holder still alive then is stuck, and its events
        stay pending."""
        # monotonic here (leases use wall-clock time): this deadline is only this process's
        deadline = time.monotonic() + self.lease_seconds
        while not self.stop.is_set():
            waiting = [
                e
                for e in self.outbox.entries("pending", self.where)
                if e.event_id in others - self.mine
            ]
            if not waiting:
                return
            for entry in waiting:
                self.send(entry)
            held = set(self.outbox.leased_elsewhere(self.owner, self.where)) & others
            if not held or time.monotonic() > deadline:
                return
            time.sleep(WAIT_POLL)


def submit_events(
    events: Iterable[AuthorEvent], *, registry: str | None = None, parallel: int = 8
) -> SubmitResult:
    """Store `events` in the outbox for `registry`, then send what is pending for it."""
    store_in_outbox(events, registry)
    return submit_pending(registry=registry, parallel=parallel)


def signed_nodes_in_state(state: Mapping[str, Any]) -> Iterator[Mapping[str, Any]]:
    """Every object of a merged state that carries an author event's `event_id` and
    `signature` (a signed event, not a stub naming one), wherever the state put it: current,
    superseded by a correction, a repeat, an equivocation, a withdrawal. `invalid_events` is
    left out: those the registry refused. Not checked here: each caller checks what it takes."""
    stack: list[object] = [value for part, value in state.items() if part != "invalid_events"]
    while stack:  # a walk without recursion: a state's depth is capped by its reader anyway
        node = stack.pop()
        if isinstance(node, Mapping):
            if isinstance(node.get("event_id"), str) and "signature" in node:
                yield node
            stack.extend(node.values())
        elif isinstance(node, list):
            stack.extend(node)


def state_event_ids(state: Mapping[str, Any]) -> set[str]:
    """Every author event id a merged state lists as taken: applied, or a signed event it holds
    (`signed_nodes_in_state`). What makes a held event count, and what a second machine learns
    of its key."""
    found: set[str] = {e for e in state.get("applied_event_ids") or [] if isinstance(e, str)}
    found.update(node["event_id"] for node in signed_nodes_in_state(state))
    return found


def paper_titles(entries: Iterable[OutboxEntry]) -> dict[str, str]:
    """The titles of the papers entries are about (by Pith Number), where a record of the
    entry's registry is cached locally (`pith cite` keeps the records it fetched): a label for
    `pith outbox list`, never a check."""
    return record_titles((e.registry, e.subject) for e in entries)


def record_titles(wanted: Iterable[tuple[str, str]]) -> dict[str, str]:
    """`paper_titles` of (registry, Pith Number) pairs: each paper's title, looked up once."""
    titles: dict[str, str] = {}
    pairs = list(dict.fromkeys(wanted))  # each (registry, paper) once
    if not pairs or not (pith_home() / "cache" / CACHE_NAME).is_file():
        return titles  # no cache: none is made just to list the outbox
    cache = RecordCache()
    try:
        for registry, subject in pairs:
            if subject not in titles:
                doc = cache.record(registry, subject.rsplit(":", 1)[-1])
                title = _title(doc) if doc is not None else None
                if title:
                    titles[subject] = title
    finally:
        cache.close()
    return titles


def _title(doc: Mapping[str, object]) -> str | None:
    """The record's displayed title when its hash is the canonical record's (`Subject`)."""
    try:
        title = Subject.from_document(doc).title
    except PithError:
        return None
    return " ".join(title.split()) if title and title.strip() else None


# --- where freshly signed events go ------------------------------------------------------------


def check_destination(out: str | None) -> None:
    """Refuse, before any key is opened, a file that cannot take the events."""
    if out is not None:
        check_output_file(out, InputError, "a file to append events to")


def deliver(
    events: Sequence[AuthorEvent],
    out: str | None = None,
    *,
    show: Callable[[str], None] | None = None,
    submit: bool = False,
    registry: str | None = None,
    note: Note | None = None,
    outbox: Outbox | None = None,
) -> str:
    """Put signed events where asked: appended to `out` (JSONL), one line each to `show`
    ("stdout"), and into the outbox (bound to `registry`, default the default registry; `outbox`
    when it is open already) when `submit` is set or nowhere else was named. Returns where
    they went, e.g. `out.jsonl and the outbox`."""
    check_destination(out)
    places = []
    if out is not None:
        append_jsonl(Path(out), events)
        places.append(out)
    if show is not None:
        for event in events:
            show(_jsonl(event))
        places.append("stdout")
    if submit or not places:
        store_in_outbox(list(events), registry, note=note, outbox=outbox)
        places.append("the outbox")
    return " and ".join(places)


def _jsonl(event: Mapping[str, object]) -> str:
    return json.dumps(event, ensure_ascii=False, separators=(",", ":"))


def append_jsonl(path: Path, events: Sequence[Mapping[str, object]]) -> None:
    """Append one JSON line per event in a single write, then fsync: whole lines or nothing."""
    append_lines(path, "".join(_jsonl(e) + "\n" for e in events).encode("utf-8"), mode=0o644)
