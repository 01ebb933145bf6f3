"""The Bitcoin anchor of a paper's record (the record page's checklist, row 1; DESIGN,
docs/protocol.md "Anchors and archive copies"): its canonical SHA-256 stamped on the
OpenTimestamps calendars, the pending proofs kept per paper until a calendar has its block,
the complete ones judged against block headers, and the verdict on the anchors a registry
lists (`anchor_verdict`: what `pith status` and `pith verify` say).

The stamped digest is the 32 raw bytes of the record's `canonical_sha256`, not an event id:
the anchor proves the record existed by a block's time, whoever signed the event that carries
the proof. The calendar protocol, the proof format and the header checks are `ots` and
`headers` (the same machinery as trusted time); this module keeps the pending proofs under
PITH_HOME (`anchors/<Pith Number body>.json`, 0600 in a 0700 folder, through `pithauthor.fs`),
so that a run days later upgrades what an earlier run stamped.

Floors: every check here takes the difficulty floor as a parameter; `FLOOR` is the one the CLI
passes (the production floor). Tests set it to their own, which accepts headers mined at test
difficulty: the production floor refuses those.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pithauthor.errors import InputError, NetworkError, PithError, VerificationError
from pithauthor.fs import private_dir, read_user_text, replace_file
from pithauthor.net import RetryPolicy
from pithauthor.protocol.canonical_json import (
    b64decode,
    b64encode,
    canonical_sha256,
    canonical_text,
)
from pithauthor.protocol.checklist import Verdict
from pithauthor.protocol.checks.event import check_author_event
from pithauthor.protocol.ids import PithNumber
from pithauthor.protocol.utc import utc_now, utc_stamp
from pithauthor.protocol.verdict import FAILED, PASSED, UNVERIFIABLE, Check
from pithauthor.timestamps import ots
from pithauthor.timestamps.headers import (
    PRODUCTION_FLOOR,
    Floor,
    HeaderSource,
    HeaderSources,
    ShippedHeaders,
    headers_from_env,
)
from pithauthor.timestamps.proven import ProvenTime

__all__ = [
    "FLOOR",
    "Anchored",
    "PendingAnchor",
    "Progress",
    "advance",
    "anchor_check",
    "anchor_checks",
    "anchor_events",
    "anchor_status",
    "anchor_verdict",
    "load_pending",
]

FLOOR: Floor = PRODUCTION_FLOOR
"""The difficulty floor `pith anchor` and `pith verify` judge anchors' headers by (tests set
their own here, as the trusted-time tests pass theirs to the checks)."""

ANCHOR_TYPE = "timestamp_anchor"
PENDING_FOLDER = "anchors"
PENDING_VERSION = 1
MAX_PENDING_BYTES = 1 << 20


# --- the proofs kept between runs ---------------------------------------------------------------


@dataclass
class PendingAnchor:
    """The proofs of one paper's canonical SHA-256, by calendar: (proof bytes, complete)."""

    pith_number: str
    canonical_sha256: str
    stamped_at: str
    proofs: dict[str, tuple[bytes, bool]] = field(default_factory=dict)

    @property
    def digest(self) -> bytes:
        """The stamped digest: the 32 raw bytes of `canonical_sha256`."""
        return bytes.fromhex(self.canonical_sha256)

    @property
    def waiting(self) -> list[str]:
        """The calendars whose proof is still pending, sorted."""
        return sorted(url for url, (_, complete) in self.proofs.items() if not complete)

    @property
    def complete(self) -> list[str]:
        """The calendars whose proof reaches a block attestation, sorted."""
        return sorted(url for url, (_, complete) in self.proofs.items() if complete)

    def as_json(self) -> str:
        return canonical_text(
            {
                "version": PENDING_VERSION,
                "pith_number": self.pith_number,
                "canonical_sha256": self.canonical_sha256,
                "stamped_at": self.stamped_at,
                "opentimestamps": [
                    {"calendar": url, "proof": b64encode(proof), "complete": complete}
                    for url, (proof, complete) in sorted(self.proofs.items())
                ],
            }
        )


def pending_path(pith_number: str) -> Path:
    """Where the proofs of `pith_number` are kept (`anchors/<body>.json` under PITH_HOME)."""
    return private_dir(PENDING_FOLDER) / f"{PithNumber.parse(pith_number).body}.json"


def load_pending(pith_number: str, canonical_sha256: str) -> PendingAnchor | None:
    """The proofs kept for the paper, or None when none are. A file that is not one this
    module wrote (edited, truncated) is refused in one line: its proofs are not trusted, and
    deleting it lets `pith anchor` stamp again."""
    path = pending_path(pith_number)
    if not path.exists():
        return None
    text = read_user_text(path, InputError, "kept anchor proofs", limit=MAX_PENDING_BYTES)
    damaged = f"{path} is not the anchor proofs pith keeps; delete it to stamp the paper again"
    try:
        doc = json.loads(text)
        proofs = {
            entry["calendar"]: (b64decode(entry["proof"]), entry["complete"] is True)
            for entry in doc["opentimestamps"]
        }
        kept = PendingAnchor(doc["pith_number"], doc["canonical_sha256"], doc["stamped_at"])
    except (ValueError, KeyError, TypeError):
        raise InputError(damaged) from None
    if kept.pith_number != pith_number or kept.canonical_sha256 != canonical_sha256:
        raise InputError(damaged + f" (it is of {kept.pith_number})")
    kept.proofs = proofs
    return kept


def save_pending(pending: PendingAnchor) -> None:
    """Keep the proofs (atomically: a run cut short leaves the previous version)."""
    replace_file(pending_path(pending.pith_number), pending.as_json() + "\n")


# --- stamping, upgrading, judging -----------------------------------------------------------------


@dataclass(frozen=True)
class Anchored:
    """Complete proofs that reach the paper's hash and headers the floor accepts: what an
    anchor event carries, and the earliest time they prove."""

    proven: ProvenTime
    height: int
    proofs: list[tuple[str, str]]  # (calendar, base64 proof)
    headers: list[tuple[int, str]]  # (height, 160 hex)


@dataclass
class Progress:
    """One run of `advance`: the proofs kept, the calendars stamped now, those that could not
    be asked (why), and the anchor once a complete proof is judged."""

    pending: PendingAnchor
    stamped: list[str] = field(default_factory=list)
    failed: dict[str, str] = field(default_factory=dict)
    anchored: Anchored | None = None


def advance(
    pith_number: str,
    canonical_sha256: str,
    calendars: Sequence[str],
    *,
    stamp_new: bool = True,
    headers: HeaderSource | None,
    floor: Floor,
    timeout: float = 10.0,
    retry: RetryPolicy | None = None,
) -> Progress:
    """Take the paper's anchor as far as it goes now: stamp its digest on every calendar of
    `calendars` that holds no proof of it yet (not with `stamp_new=False`), ask each pending
    proof's calendar for its block, keep what was had, then judge the complete proofs (headers
    from `headers`, under `floor`).

    InputError when nothing was ever stamped and `stamp_new` is off; NetworkError when no
    calendar could stamp it; VerificationError when a complete proof does not reach the hash
    or its header (one line naming the calendar; nothing of it is kept, so nothing is signed
    from it); NetworkError when no header of its block can be had."""
    kept = load_pending(pith_number, canonical_sha256)
    if kept is None and not stamp_new:
        raise InputError(
            f"no proof of {pith_number} is kept here to upgrade",
            hint=f"`pith anchor {pith_number}` stamps it",
        )
    pending = kept or PendingAnchor(pith_number, canonical_sha256, utc_now())
    progress = Progress(pending)
    digest = pending.digest
    for url in calendars if stamp_new else ():
        if url in pending.proofs:
            continue
        try:
            pending.proofs[url] = (ots.stamp(digest, url, timeout=timeout, retry=retry), False)
        except NetworkError as exc:
            progress.failed[url] = _short(exc)
            continue
        progress.stamped.append(url)
    if not pending.proofs:
        raise NetworkError(
            "no OpenTimestamps calendar could stamp the record's hash: "
            + "; ".join(f"{url}: {why}" for url, why in progress.failed.items())
        )
    if progress.stamped:
        save_pending(pending)  # before anything else can fail: a stamp is never lost
    upgraded = dict(pending.proofs)
    for url in pending.waiting:
        try:
            upgraded[url] = ots.upgrade(
                pending.proofs[url][0], digest, url, timeout=timeout, retry=retry
            )
        except NetworkError as exc:
            progress.failed[url] = _short(exc)
        except VerificationError as exc:  # the kept proof itself is damaged
            raise VerificationError(
                f"the proof kept from {url} is damaged: {_short(exc)}"
            ) from None
    # judged before it is kept: a proof that reaches another hash never joins the others
    anchored = judge(digest, upgraded, headers, floor) if _any_complete(upgraded) else None
    if upgraded != pending.proofs:
        pending.proofs = upgraded
        save_pending(pending)
    progress.anchored = anchored
    return progress


def _any_complete(proofs: Mapping[str, tuple[bytes, bool]]) -> bool:
    return any(complete for _, complete in proofs.values())


def judge(
    digest: bytes,
    proofs: Mapping[str, tuple[bytes, bool]],
    headers: HeaderSource | None,
    floor: Floor,
) -> Anchored:
    """The complete proofs of `proofs`, each checked from `digest` against `headers` and
    `floor`. Every one must hold: VerificationError naming the calendar of the first that
    does not; NetworkError when a block's header cannot be had."""
    source = headers or _NoHeaders()
    found: list[tuple[str, str, ProvenTime]] = []
    heights: set[int] = set()
    for url in sorted(u for u, (_, complete) in proofs.items() if complete):
        proof = proofs[url][0]
        try:
            proven = ots.check_proof(proof, digest, source, floor)
        except VerificationError as exc:
            raise VerificationError(
                f"the OpenTimestamps proof from {url} does not prove the record's hash: "
                f"{_short(exc)}; nothing was signed"
            ) from None
        if proven is None:  # `upgrade` said complete: a block attestation pith cannot read
            raise VerificationError(f"the proof from {url} names no block pith can check")
        found.append((url, b64encode(proof), proven))
        heights.update(ots.block_heights(proof, digest))
    earliest = min(found, key=lambda f: f[2].time)[2]
    shipped: list[tuple[int, str]] = []
    for height in sorted(heights):
        raw = source.header(height)
        if raw is None:  # asked a moment ago by the check: a source that changed its mind
            raise NetworkError(f"no header of Bitcoin block {height} to ship with the anchor")
        shipped.append((height, raw.hex()))
    return Anchored(
        proven=earliest,
        height=int(earliest.by.rsplit(" ", 1)[1]),
        proofs=[(url, proof) for url, proof, _ in found],
        headers=shipped,
    )


class _NoHeaders:
    """No header source (`PITH_BTC_HEADERS=none`)."""

    def header(self, height: int) -> bytes | None:
        return None


def _short(exc: PithError) -> str:
    return str(exc).rstrip(".")


# --- the verdict on anchor events -----------------------------------------------------------------


def anchor_events(state_or_events: Any) -> list[Mapping[str, Any]]:
    """The timestamp anchors of a merged state (every event of `current.timestamp_anchors`,
    a registry's own too, which may name no type), a bundle (its `events` of that type) or a
    list of events (likewise); anything else holds none."""
    if isinstance(state_or_events, Mapping):
        current = state_or_events.get("current")
        if isinstance(current, Mapping):
            listed = current.get("timestamp_anchors")
            return [e for e in listed if isinstance(e, Mapping)] if isinstance(listed, list) else []
        found = state_or_events.get("events")
    else:
        found = state_or_events
    if not isinstance(found, list | tuple):
        return []
    return [e for e in found if isinstance(e, Mapping) and e.get("event_type") == ANCHOR_TYPE]


def anchor_check(
    event: Mapping[str, Any],
    canonical_sha256: str,
    headers: HeaderSource | None,
    floor: Floor,
) -> tuple[Check, ProvenTime | None]:
    """The `anchor` check of one anchor event: passed when its signature verifies and one of
    its proofs, checked from the 32 bytes of `canonical_sha256` against the headers it ships
    (then `headers`) under `floor`, gives a block time; failed when the event does not verify,
    is of another record, or a proof reaches another hash or header; unverifiable when its
    proofs are pending or no header can be had. Offline unless `headers` fetches."""
    eid = str(event.get("event_id", "?"))[:19] + "…"
    signer = event.get("signer")
    if isinstance(signer, Mapping) and signer.get("signer_type") != "author":
        # a registry's own anchor: its format is not published, so its proof cannot be read
        detail = f"anchor {eid} is the registry's own: claimed by the registry, not checked"
        return Check("anchor", UNVERIFIABLE, detail), None
    report = check_author_event(event)
    if not report.ok:
        failed = ", ".join(c.name for c in report.failed)
        return Check("anchor", FAILED, f"anchor {eid} does not verify ({failed})"), None
    payload = event["payload"]
    if payload["canonical_sha256"] != canonical_sha256:
        return Check("anchor", FAILED, f"anchor {eid} is of another record's hash"), None
    shipped = ShippedHeaders(
        {h["height"]: bytes.fromhex(h["header"]) for h in payload["bitcoin_headers"]}
    )
    source: HeaderSource = HeaderSources(shipped, headers) if headers is not None else shipped
    digest = bytes.fromhex(canonical_sha256)
    problems: list[tuple[str, str]] = []
    proven: list[tuple[str, ProvenTime]] = []
    for entry in payload["opentimestamps"]:
        url = entry["calendar"]
        try:
            got = ots.check_proof(b64decode(entry["proof"]), digest, source, floor)
        except VerificationError as exc:
            problems.append((FAILED, f"the proof from {url} does not hold: {_short(exc)}"))
            continue
        except NetworkError as exc:
            problems.append((UNVERIFIABLE, f"the proof from {url} is unjudged: {_short(exc)}"))
            continue
        if got is None:
            problems.append((UNVERIFIABLE, f"the proof from {url} is pending only"))
            continue
        proven.append((url, got))
    if proven:
        url, got = min(proven, key=lambda p: p[1].time)
        detail = f"anchor {eid}: {got.by} at {utc_stamp(got.time)} (proof from {url})"
        return Check("anchor", PASSED, detail), got
    # a failed proof is a false statement; a pending or unjudged one is not yet anything
    status = FAILED if any(s == FAILED for s, _ in problems) else UNVERIFIABLE
    reason = next(r for s, r in problems if s == status)
    return Check("anchor", status, f"anchor {eid}: {reason}"), None


def anchor_verdict(
    state_or_events: Any,
    canonical_sha256: str,
    headers: HeaderSource | None,
    floor: Floor,
) -> Verdict:
    """Row 1 of the record's checklist: proven only when an anchor event of the paper (a merged
    state's `timestamp_anchors`, a bundle's events, or a list of events) verifies and carries an
    OpenTimestamps proof that reaches `canonical_sha256` and a Bitcoin header judged by its
    proof of work and `floor` (headers shipped in the event first, then `headers`: pass None to
    stay offline). Otherwise not proven, with why in one line: no anchor, a proof that does not
    reach the hash, a header that does not commit, a pending proof only, no header to judge."""
    events = anchor_events(state_or_events)
    if not events:
        return Verdict(False, "no timestamp anchor")
    checks = [anchor_check(e, canonical_sha256, headers, floor) for e in events]
    passed = [(proven, check) for check, proven in checks if proven is not None]
    if passed:
        earliest = min(passed, key=lambda pc: pc[0].time)
        return Verdict(True, earliest[1].detail)
    # a proof that is false says more than one still pending
    failed = [c for c, _ in checks if c.status == FAILED]
    first = (failed or [c for c, _ in checks])[0]
    return Verdict(False, "not proven: " + first.detail)


def anchor_status(state: Any, canonical_sha256: str, *, fetch: bool = True) -> Verdict:
    """`anchor_verdict` as `pith status` asks it: under `FLOOR`, headers shipped in each event
    first, then (`fetch`) those `PITH_BTC_HEADERS` names, fetched once per block and cached;
    `fetch=False` stays offline (a header no event ships leaves the anchor unjudged)."""
    floor = FLOOR
    headers = headers_from_env(floor=floor) if fetch and anchor_events(state) else None
    return anchor_verdict(state, canonical_sha256, headers, floor)


def document_anchors(doc: Any) -> tuple[str | None, list[tuple[str, Mapping[str, Any]]]]:
    """The record hash a document's anchors must reach, and its anchor events with their JSON
    paths: a merged state's `current.timestamp_anchors[i]`, a bundle's `events[i]`, or a
    signed anchor event itself (path "", its own payload's hash). (None, []) for any other."""
    if not isinstance(doc, Mapping):
        return None, []
    current = doc.get("current")
    if isinstance(current, Mapping):  # a merged state: the hash of its canonical record
        record = current.get("canonical_record")
        found = current.get("timestamp_anchors")
        if not isinstance(record, Mapping) or not isinstance(found, list):
            return None, []
        places = [(f"current.timestamp_anchors[{i}]", e) for i, e in enumerate(found)]
        return canonical_sha256(record), [(p, e) for p, e in places if isinstance(e, Mapping)]
    events = doc.get("events")
    if isinstance(events, list):  # a bundle: the hash it states (its own check compares it)
        digest = doc.get("canonical_sha256")
        places = [
            (f"events[{i}]", e)
            for i, e in enumerate(events)
            if isinstance(e, Mapping) and e.get("event_type") == ANCHOR_TYPE
        ]
        return (digest if isinstance(digest, str) else None), places
    payload = doc.get("payload")
    if doc.get("event_type") == ANCHOR_TYPE and isinstance(payload, Mapping):
        digest = payload.get("canonical_sha256")
        return (digest if isinstance(digest, str) else None), [("", doc)]
    return None, []


def anchor_checks(docs: Sequence[Any], headers: HeaderSource | None, floor: Floor) -> list[Check]:
    """`pith verify`'s `anchor` check of every anchor event in `docs` (states, bundles, anchor
    events; several documents prefixed `[n].` as `verify_documents` does), each named by its
    path (`current.timestamp_anchors[0].anchor`): passed, failed or unverifiable as
    `anchor_check` judges it, headers shipped in the event first, then `headers`."""
    checks: list[Check] = []
    for number, doc in enumerate(docs, start=1):
        prefix = f"[{number}]." if len(docs) > 1 else ""
        digest, places = document_anchors(doc)
        for path, event in places:
            name = prefix + (f"{path}." if path else "") + "anchor"
            if digest is None or not _HEX64.fullmatch(digest):
                checks.append(Check(name, FAILED, "the document names no record hash to reach"))
                continue
            check, _ = anchor_check(event, digest, headers, floor)
            checks.append(check._replace(name=name))
    return checks


_HEX64 = re.compile(r"[0-9a-f]{64}")
