"""Trusted time for the events this machine signed (docs/protocol.md "Trusted time"): the
proofs fetched right after signing (`stamp_signed`), the missing ones fetched later by
`pith submit` and `pith timestamp` (`stamp_outbox`, `stamp_file`), kept in the outbox (table
`trusted_time`) and in the sidecar beside a file of events (`X.jsonl.time.jsonl`); sent by
`pith submit` to a registry whose record names a trusted-time action (`send_sidecars`).

Nothing here fails its caller for a source that cannot be asked: the `Fetch` it returns says
which could not, in one line (`Fetch.warning`), and the proof is fetched by a later run.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from pithauthor.errors import PithError
from pithauthor.protocol.ids import PithNumber
from pithauthor.protocol.timestamps import (
    TIME_ACTION_NAME,
    Sidecar,
    merge_sidecars,
    proofs_of,
    tokens_of,
)
from pithauthor.registry.outbox import Outbox, TimeKind
from pithauthor.timestamps.flow import (
    FETCH_TIMEOUT,
    SIGNING_TIMEOUT,
    Fetch,
    fetch_time,
    read_sidecar_file,
    ship_headers,
    sidecar_path,
    write_sidecar_file,
)
from pithauthor.timestamps.headers import CachedHeaders, HeaderSource
from pithauthor.timestamps.time_sources import Sources

if TYPE_CHECKING:
    from pithauthor.registry.client import RegistryClient

#: At most this many events are fetched for by one `pith submit` or `pith timestamp` (the
#: newest first): an outbox of thousands of events signed before trusted time existed is
#: stamped over several runs, never in one long wait.
FETCH_LIMIT = 200


def _keep(outbox: Outbox, got: Fetch) -> None:
    for proof in got.fetched:
        kind: TimeKind = proof.kind
        outbox.store_time(proof.event_id, kind, proof.source, proof.proof, complete=proof.complete)


def stamp_signed(
    events: Sequence[Mapping[str, object]],
    sources: Sources,
    *,
    in_outbox: bool,
    out: str | None = None,
    timeout: float = SIGNING_TIMEOUT,
) -> Fetch:
    """Right after signing: ask for each event's proofs once, with a short timeout, and keep
    them in the outbox (`in_outbox`: the events are there) and beside `out` (the file the
    events were appended to)."""
    if sources.empty or not events:
        return Fetch()
    got = fetch_time(events, sources, timeout=timeout, attempts=1)
    if in_outbox and got.fetched:
        with Outbox() as outbox:
            _keep(outbox, got)
    if out is not None and got.fetched:
        write_sidecar_file(sidecar_path(out), got.sidecars())
    return got


def stamp_outbox(
    sources: Sources,
    *,
    timeout: float = FETCH_TIMEOUT,
    limit: int = FETCH_LIMIT,
    attempts: int = 3,
) -> tuple[Fetch, int]:
    """Fetch what the outbox's events lack: a token (when authorities are set) and a complete
    OpenTimestamps proof (when calendars are: pending ones are upgraded). Returns the fetch
    and how many events were looked at. `attempts` per request (`pith submit` asks once:
    trusted time is not what it is for, and an offline submit must not wait on it)."""
    if sources.empty:
        return Fetch(), 0
    with Outbox() as outbox:
        events = outbox.needing_time(
            tokens=bool(sources.authorities), proofs=bool(sources.calendars), limit=limit
        )
        have = outbox.sidecars(e["event_id"] for e in events)
    got = fetch_time(events, sources, have, timeout=timeout, attempts=attempts)
    if got.fetched:
        with Outbox() as outbox:
            _keep(outbox, got)
    return got, len(events)


def stamp_file(
    events: Sequence[Mapping[str, object]],
    events_file: str | Path,
    sources: Sources,
    *,
    timeout: float = FETCH_TIMEOUT,
    headers: HeaderSource | None = None,
) -> tuple[Fetch, dict[str, Sidecar]]:
    """Fetch what the events of `events_file` lack and merge it into its sidecar file, which
    takes what the outbox holds of them too, and the headers pith has of the blocks its
    complete proofs name (`headers`, default the cache of those checked before: shipped so a
    reader needs no fetch). Returns the fetch and the sidecars now kept."""
    path = sidecar_path(events_file)
    have = read_sidecar_file(path)
    with Outbox() as outbox:
        for eid, kept in outbox.sidecars(str(e.get("event_id")) for e in events).items():
            have[eid] = merge_sidecars([have[eid], kept]) if eid in have else kept
    got = fetch_time(events, sources, have, timeout=timeout) if not sources.empty else Fetch()
    sidecars = got.sidecars(have)
    ids = {str(e.get("event_id")) for e in events}
    have_headers = CachedHeaders() if headers is None else headers
    mine = {eid: ship_headers(s, have_headers) for eid, s in sidecars.items() if eid in ids}
    if mine:
        write_sidecar_file(path, mine)
    return got, mine


def keep_sidecar_file(events_file: str | Path) -> int:
    """Keep in the outbox the proofs of the sidecar beside `events_file` (`pith submit FILE`
    stores the file's events there); returns how many events had some. InputError for a
    sidecar file that is not one."""
    if str(events_file) == "-":
        return 0
    sidecars = read_sidecar_file(sidecar_path(events_file))
    if not sidecars:
        return 0
    with Outbox() as outbox:
        for eid, sidecar in sidecars.items():
            for url, token in tokens_of(sidecar):
                outbox.store_time(eid, "rfc3161", url, token)
            for url, proof, complete in proofs_of(sidecar):
                outbox.store_time(eid, "ots", url, proof, complete=complete)
    return len(sidecars)


def send_sidecars(client: RegistryClient, event_ids: Iterable[str]) -> tuple[int, str | None]:
    """Send the outbox's sidecar of each of `event_ids` accepted at `client`'s registry to the
    trusted-time action its record names (`submit_trusted_time`: the local registry's; a
    registry naming none, as pith.science, is sent nothing). Returns how many were sent, and
    the first problem in one line (a sidecar not sent is sent by a later run that changes it,
    or by `pith submit FILE` again): never a failure of the caller."""
    wanted = set(event_ids)
    cached = CachedHeaders()  # the headers pith has travel too
    with Outbox() as outbox:
        entries = [
            e
            for e in outbox.entries(state="accepted", registry=client.base_url)
            if e.event_id in wanted
        ]
        sidecars = outbox.sidecars(e.event_id for e in entries)
    sent = 0
    for entry in entries:
        sidecar = sidecars.get(entry.event_id)
        if sidecar is None:
            continue
        sidecar = ship_headers(sidecar, cached)
        try:
            record = client.record(PithNumber.parse(entry.subject), attempts=1)
            url = record["agent_actions"]["actions"].get(TIME_ACTION_NAME)
            if not isinstance(url, str):
                continue  # this registry takes no sidecars: the proofs stay beside the events
            client.check_actions_here(record, TIME_ACTION_NAME)
            client.http.post_json(url, dict(sidecar))
        except PithError as exc:
            return sent, f"{entry.event_id}: {str(exc).splitlines()[0] if str(exc) else exc}"
        sent += 1
    return sent, None
