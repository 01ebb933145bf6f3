"""Trusted time for signed events, end to end: asking the authorities and calendars for the
proofs an event lacks (`fetch_time`), keeping them in sidecar files beside a file of events
(`read_sidecar_file`, `write_sidecar_file`), and checking an event's sidecar offline into the
times it proves (`check_time`; every event of a verified file: `verify_time`; the sidecars a
bundle or state carries: `carried_sidecars`). The outbox keeps
them too (`pithauthor.registry.trusted_time`).

Fetching never fails the caller: a source that cannot be asked is a problem line, and the proof
is fetched on a later run. A source that failed once is not asked again in the same run, so a
down authority costs one timeout, not one per event.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any, Literal

from pithauthor.errors import InputError, NetworkError, PithError, VerificationError
from pithauthor.fs import MAX_JSON_BYTES, read_user_text, replace_file
from pithauthor.net import RetryPolicy
from pithauthor.protocol.canonical_json import JSONFault, parse_json
from pithauthor.protocol.checks.state import state_inputs
from pithauthor.protocol.timestamps import (
    CARRIED_KEY,
    SIDECAR_SUFFIX,
    Sidecar,
    SidecarFault,
    build_sidecar,
    headers_of,
    merge_sidecars,
    ots_digest,
    parse_sidecar,
    proofs_of,
    sidecar_json,
    signature_message,
    tokens_of,
)
from pithauthor.protocol.utc import utc_stamp
from pithauthor.protocol.verdict import FAILED, PASSED, UNVERIFIABLE, Check, Report
from pithauthor.timestamps.headers import (
    PRODUCTION_FLOOR,
    Floor,
    HeaderSource,
    HeaderSources,
    ShippedHeaders,
    headers_from_env,
)
from pithauthor.timestamps.ots import block_heights, check_proof, stamp, upgrade
from pithauthor.timestamps.proven import ProvenTime
from pithauthor.timestamps.rfc3161 import check_token, request_token
from pithauthor.timestamps.time_sources import (
    DEFAULT_AUTHORITIES,
    Authority,
    Sources,
    authorities_from_env,
)

#: Seconds each authority or calendar is given right after signing and by `pith submit` (once
#: each): neither waits long on what it is not for.
SIGNING_TIMEOUT = 5.0

#: Seconds each is given by `pith timestamp` (three attempts).
FETCH_TIMEOUT = 10.0

Kind = Literal["rfc3161", "ots"]


@dataclass(frozen=True)
class Fetched:
    """One proof got: for `event_id`, of `kind`, from `source`."""

    event_id: str
    kind: Kind
    source: str
    proof: bytes
    complete: bool = False


@dataclass
class Fetch:
    """What a run of `fetch_time` got, and the sources it could not ask (one line each)."""

    fetched: list[Fetched] = field(default_factory=list)
    problems: dict[str, str] = field(default_factory=dict)  # source -> why

    def sidecars(self, have: Mapping[str, Sidecar] | None = None) -> dict[str, Sidecar]:
        """The sidecars of the events fetched for, merged with `have` (what was kept before)."""
        by_event: dict[str, list[Fetched]] = {}
        for one in self.fetched:
            by_event.setdefault(one.event_id, []).append(one)
        out: dict[str, Sidecar] = dict(have or {})
        for eid, got in by_event.items():
            new = build_sidecar(
                eid,
                [(g.source, g.proof) for g in got if g.kind == "rfc3161"],
                [(g.source, g.proof, g.complete) for g in got if g.kind == "ots"],
            )
            out[eid] = merge_sidecars([out[eid], new]) if eid in out else new
        return out

    def warning(self) -> str | None:
        """The one warning line for the sources that could not be asked, or None."""
        if not self.problems:
            return None
        said = "; ".join(f"{src}: {why}" for src, why in self.problems.items())
        return f"warning: no trusted time yet from {said}"


def fetch_time(
    events: Iterable[Mapping[str, object]],
    sources: Sources,
    have: Mapping[str, Sidecar] | None = None,
    *,
    timeout: float = FETCH_TIMEOUT,
    attempts: int = 3,
) -> Fetch:
    """Ask for what each event's sidecar in `have` lacks: a token from each authority that
    gave none, a proof from each calendar that gave none, and an upgrade of each pending
    proof. Never raises for a source: its failure is kept in `problems`, and it is not asked
    again in this run. `attempts`: per request (1 right after signing: signing never waits on
    a source that is down; later runs retry).

    The sources are asked at once, one thread each (each goes through the events in order):
    a bibliography's hundred citations wait on the slowest source, not on the sum of all."""
    retry = RetryPolicy(max_attempts=attempts, base_delay=0.5, max_delay=2.0)
    todo = []
    for event in events:
        eid = str(event.get("event_id"))
        try:
            todo.append((eid, signature_message(event), ots_digest(eid)))
        except ValueError:
            continue  # not a signed event: nothing to stamp (the caller checked its events)
    kept = have or {}

    def by_authority(authority: Authority) -> tuple[list[Fetched], str | None]:
        got: list[Fetched] = []
        for eid, message, _ in todo:
            sidecar = kept.get(eid)
            if sidecar is not None and authority.url in dict(tokens_of(sidecar)):
                continue
            try:
                token = request_token(message, authority, timeout=timeout, retry=retry)
            except PithError as exc:
                return got, _short(exc)  # not asked again in this run
            got.append(Fetched(eid, "rfc3161", authority.url, token))
        return got, None

    def by_calendar(calendar: str) -> tuple[list[Fetched], str | None]:
        got: list[Fetched] = []
        for eid, _, digest in todo:
            sidecar = kept.get(eid)
            held = {u: (p, c) for u, p, c in proofs_of(sidecar)}.get(calendar) if sidecar else None
            if held is not None and held[1]:
                continue  # complete: nothing more to get
            try:
                if held is None:
                    proof = stamp(digest, calendar, timeout=timeout, retry=retry)
                    got.append(Fetched(eid, "ots", calendar, proof))
                    continue
                proof, complete = upgrade(held[0], digest, calendar, timeout=timeout, retry=retry)
            except PithError as exc:
                return got, _short(exc)
            if complete:
                got.append(Fetched(eid, "ots", calendar, proof, True))
        return got, None

    run = Fetch()
    if not todo or sources.empty:
        return run
    # here: a threads' pool (queue, heapq) only when something is asked for
    from concurrent.futures import ThreadPoolExecutor

    jobs: list[tuple[str, Callable[[], tuple[list[Fetched], str | None]]]] = [
        (a.url, partial(by_authority, a)) for a in sources.authorities
    ]
    jobs += [(c, partial(by_calendar, c)) for c in sources.calendars]
    with ThreadPoolExecutor(max_workers=len(jobs)) as pool:
        futures = [(url, pool.submit(job)) for url, job in jobs]
        for url, future in futures:  # in the sources' order: the same report every run
            got, problem = future.result()
            run.fetched += got
            if problem is not None:
                run.problems[url] = problem
    return run


def _short(exc: PithError) -> str:
    return str(exc).splitlines()[0] if str(exc) else type(exc).__name__


def ship_headers(sidecar: Sidecar, have: HeaderSource) -> Sidecar:
    """`sidecar` with the headers `have` holds of the blocks its complete OpenTimestamps proofs
    name (`bitcoin_headers`), so a reader checks them with no fetch; unchanged when it holds
    none. A damaged proof ships nothing (its check says what is wrong)."""
    digest = ots_digest(sidecar["event_id"])
    found: list[tuple[int, bytes]] = []
    for _, proof, complete in proofs_of(sidecar):
        if not complete:
            continue
        try:
            heights = block_heights(proof, digest)
        except VerificationError:
            continue
        for height in heights:
            raw = have.header(height)
            if raw is not None:
                found.append((height, raw))
    if not found:
        return sidecar
    return merge_sidecars([sidecar, build_sidecar(sidecar["event_id"], headers=found)])


# --- sidecar files ------------------------------------------------------------------------------


def sidecar_path(events_file: Path | str) -> Path:
    """Where the proofs of the events of `events_file` are kept (`X.jsonl.time.jsonl`)."""
    return Path(str(events_file) + SIDECAR_SUFFIX)


def read_sidecar_file(path: Path) -> dict[str, Sidecar]:
    """The sidecars of a `.time.jsonl` file by event id (several lines for one event merged);
    empty when there is no such file. InputError, one line, for a line that is no sidecar."""
    if not path.exists():
        return {}
    text = read_user_text(path, InputError, "trusted-time sidecar", limit=MAX_JSON_BYTES)
    found: dict[str, list[Sidecar]] = {}
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            sidecar = parse_sidecar(parse_json(line))
        except (JSONFault, SidecarFault) as exc:
            raise InputError(f"{path} line {number} is not a trusted-time sidecar: {exc}") from None
        found.setdefault(sidecar["event_id"], []).append(sidecar)
    return {eid: merge_sidecars(all_) for eid, all_ in found.items()}


def write_sidecar_file(path: Path, sidecars: Mapping[str, Sidecar]) -> None:
    """Merge `sidecars` into the file at `path` (written whole and atomically, one canonical
    sidecar a line, in event-id order)."""
    kept = read_sidecar_file(path)
    for eid, sidecar in sidecars.items():
        kept[eid] = merge_sidecars([kept[eid], sidecar]) if eid in kept else sidecar
    text = "".join(sidecar_json(kept[eid]) + "\n" for eid in sorted(kept))
    replace_file(path, text, mode=0o644)


# --- checking -----------------------------------------------------------------------------------


def check_time(
    event: Mapping[str, object],
    sidecar: Sidecar,
    authorities: Sequence[Authority],
    headers: HeaderSource | None,
    floor: Floor,
) -> tuple[list[ProvenTime], list[Check]]:
    """The times `sidecar` proves for `event`, and one check per proof: passed with the time
    and what proved it, failed for a proof that does not hold (another message, an untrusted
    root, a broken proof, a header under the floor...), unverifiable for a pending
    OpenTimestamps proof or a header that could not be fetched. Offline but for headers:
    those the sidecar ships (`bitcoin_headers`) are read before `headers` is asked, and judged
    as any other."""

    proven: list[ProvenTime] = []
    checks: list[Check] = []
    if sidecar["event_id"] != event.get("event_id"):
        checks.append(Check("trusted_time", FAILED, "the sidecar is of another event"))
        return proven, checks
    message = signature_message(event)
    for url, token in tokens_of(sidecar):
        name = "trusted_time.rfc3161"
        try:
            got = check_token(token, message, authorities)
        except VerificationError as exc:
            checks.append(Check(name, FAILED, f"token from {url}: {_short(exc)}"))
            continue
        proven.append(got)
        checks.append(Check(name, PASSED, f"{utc_stamp(got.time)} by {got.by}"))
    digest = ots_digest(sidecar["event_id"])
    shipped = headers_of(sidecar)
    if shipped:
        given: HeaderSource = ShippedHeaders(dict(shipped))
        headers = HeaderSources(given, headers) if headers is not None else given
    for url, proof, complete in proofs_of(sidecar):
        name = "trusted_time.opentimestamps"
        if headers is None and complete:
            checks.append(
                Check(
                    name,
                    UNVERIFIABLE,
                    f"proof from {url}: no block headers to check it "
                    "against (PITH_BTC_HEADERS=none)",
                )
            )
            continue
        try:
            found = check_proof(proof, digest, headers or _NoHeaders(), floor)
        except VerificationError as exc:
            checks.append(Check(name, FAILED, f"proof from {url}: {_short(exc)}"))
            continue
        except NetworkError as exc:
            checks.append(Check(name, UNVERIFIABLE, f"proof from {url}: {_short(exc)}"))
            continue
        if found is None:
            checks.append(
                Check(name, UNVERIFIABLE, f"proof from {url} is pending (not in a block yet)")
            )
            continue
        proven.append(found)
        checks.append(Check(name, PASSED, f"{utc_stamp(found.time)} by {found.by}"))
    return proven, checks


class _NoHeaders:
    """No header source (`PITH_BTC_HEADERS=none`): every header is missing."""

    def header(self, height: int) -> bytes | None:
        return None


def carried_sidecars(doc: Any, report: Report) -> tuple[list[Any], dict[str, Sidecar]]:
    """The events of a bundle or merged state, and the sidecars it carries (`trusted_time`,
    a local registry's; DESIGN, docs/protocol.md "Trusted time") by event id. A member that
    is not a list of sidecars, or a sidecar of an event the document does not hold, is a
    failed `trusted_time` check on `report` (and that sidecar is left out)."""
    if not isinstance(doc, dict) or CARRIED_KEY not in doc:
        return [], {}
    if doc.get("bundle_type") == "pith_open_graph_bundle":
        listed = doc.get("events")
        events = [e for e in listed if isinstance(e, dict)] if isinstance(listed, list) else []
    else:
        events = [e for e in state_inputs(doc) if isinstance(e, dict)]
    held = {e.get("event_id") for e in events}
    carried = doc[CARRIED_KEY]
    if not isinstance(carried, list):
        report.add(CARRIED_KEY, False, f"{CARRIED_KEY} is not a list of sidecars")
        return events, {}
    found: dict[str, list[Sidecar]] = {}
    for number, item in enumerate(carried, start=1):
        try:
            sidecar = parse_sidecar(item)
        except SidecarFault as exc:
            report.add(CARRIED_KEY, False, f"{CARRIED_KEY}[{number}] is not a sidecar: {exc}")
            continue
        if sidecar["event_id"] not in held:
            report.add(
                CARRIED_KEY, False, f"{CARRIED_KEY}[{number}] is of an event the document lacks"
            )
            continue
        found.setdefault(sidecar["event_id"], []).append(sidecar)
    return events, {eid: merge_sidecars(all_) for eid, all_ in found.items()}


def verify_time(
    docs: Sequence[Any], report: Report, sidecars: Mapping[str, Sidecar]
) -> dict[str, list[ProvenTime]]:
    """Check the trusted time of every signed event of `docs` that `sidecars` (by event id:
    the sidecar file beside the events, docs/protocol.md "Trusted time") has proofs for, adding
    `trusted_time.*` checks to `report` (prefixed `[n].` as `verify_documents` does); return
    the times proven, by event id (`verify_identity`'s `proven`).

    Tokens are checked against the pinned authorities (`PITH_TSA`'s and the defaults, also
    when `PITH_TSA=none` opts out of asking), OpenTimestamps proofs against headers fetched
    once and cached (`PITH_BTC_HEADERS`) under the production difficulty floor."""
    proven: dict[str, list[ProvenTime]] = {}
    wanted = [
        (n, d)
        for n, d in enumerate(docs, start=1)
        if isinstance(d, dict) and "signature" in d and d.get("event_id") in sidecars
    ]
    if not wanted:
        return proven
    # the defaults stay trusted whatever PITH_TSA asks: a file stamped by them elsewhere
    # verifies here too (an authority's token is judged by its pinned root, not by its URL)
    named = {a.url: a for a in (*authorities_from_env(), *DEFAULT_AUTHORITIES)}
    authorities = tuple(named.values())
    headers = headers_from_env(floor=PRODUCTION_FLOOR)
    for number, event in wanted:
        prefix = f"[{number}]." if len(docs) > 1 else ""
        try:
            times, checks = check_time(
                event, sidecars[event["event_id"]], authorities, headers, PRODUCTION_FLOOR
            )
        except ValueError as exc:  # an event without a readable signature: its checks fail
            report.add(prefix + "trusted_time", False, str(exc))
            continue
        for check in checks:
            report.checks.append(check._replace(name=prefix + check.name))
        if times:
            proven[event["event_id"]] = times
    return proven
