"""OpenTimestamps proofs over an event id: stamped at a calendar, upgraded to a Bitcoin block
proof when the calendar has one, and checked offline against block headers (headers.py).

The proof format and its operations are python-opentimestamps' (`opentimestamps.core`: the
reference implementation, LGPL-3, used as a library): a proof is a serialized `Timestamp` for
the 32-byte digest, without the detached-file header (the digest is the event id, known beside
it). Its HTTP goes through `pithauthor.net` (the one network layer), not the library's urllib
client (`RemoteCalendar`); the calendar protocol it speaks is the one that client speaks:

- `POST <calendar>/digest` with the 32 digest bytes: 200 and a pending proof (the digest's
  operations up to a commitment, and a `PendingAttestation` naming the calendar that holds it);
- `GET <calendar>/timestamp/<hex commitment>`: 404 while the commitment waits for a block,
  200 and the commitment's operations up to a `BitcoinBlockHeaderAttestation` once mined.

A pending attestation names the calendar to ask (a public aggregator forwards to one of its
calendars: `a.pool.opentimestamps.org` hands out proofs pending at
`alice.btc.calendar.opentimestamps.org`). `upgrade` asks only a calendar the author chose or a
known public one (`KNOWN_CALENDARS`): a proof is not a licence to make pith call any host.
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any, cast
from urllib.parse import urlsplit

from pithauthor.errors import InputError, NetworkError, VerificationError
from pithauthor.net import RetryPolicy, check_url, exchange
from pithauthor.timestamps.headers import Floor, HeaderSource, check_header
from pithauthor.timestamps.proven import ProvenTime

if TYPE_CHECKING:
    from opentimestamps.core.timestamp import Timestamp

# python-opentimestamps loads pycryptodome's Keccak and cffi's parser (about 40 ms): it is
# imported where a proof is read or written, never by a command that asks no calendar

DIGEST_BYTES = 32

MAX_PROOF_BYTES = 64 * 1024
"""The largest proof read or accepted: a real Bitcoin proof is a few kilobytes (a pending one a
few hundred bytes); the reference client caps a calendar's answer at 10,000 bytes."""

KNOWN_CALENDARS = (
    "*.calendar.opentimestamps.org",
    "*.calendar.eternitywall.com",
    "*.calendar.catallaxy.com",
)
"""Hosts (https) a pending attestation may name and `upgrade` will ask: the reference client's
whitelist. Any calendar given to `upgrade` is asked too."""

ACCEPT = {"Accept": "application/vnd.opentimestamps.v1"}


# --- the proof --------------------------------------------------------------------------------


def _check_digest(digest: bytes) -> None:
    if len(digest) != DIGEST_BYTES:
        raise InputError(f"an OpenTimestamps digest here is 32 bytes, not {len(digest)}")


def parse_proof(proof: bytes, digest: bytes) -> Timestamp:
    """The proof's operations from `digest` (a `Timestamp`); VerificationError when the bytes
    are no whole proof (truncated, unknown operation, trailing bytes, too large)."""
    _check_digest(digest)
    return parse_proof_for(proof, digest)


def serialize_proof(stamp: Timestamp) -> bytes:
    """The proof's bytes (the serialized `Timestamp`, no file header)."""
    from opentimestamps.core.serialize import BytesSerializationContext

    context = BytesSerializationContext()
    stamp.serialize(context)
    return cast(bytes, context.getbytes())


def _attestations(stamp: Timestamp) -> Iterator[tuple[Timestamp, Any]]:
    """Every (node, attestation) in the proof's tree."""
    for attestation in stamp.attestations:
        yield stamp, attestation
    for child in stamp.ops.values():
        yield from _attestations(child)


def is_complete(stamp: Timestamp) -> bool:
    """True when the proof reaches a Bitcoin block attestation."""
    from opentimestamps.core.notary import BitcoinBlockHeaderAttestation

    return any(isinstance(a, BitcoinBlockHeaderAttestation) for _, a in _attestations(stamp))


def _prune_pending(stamp: Timestamp) -> bool:
    """Drop every pending attestation, and every branch left without an attestation; True when
    `stamp` still holds one. A complete proof keeps only its paths to blocks: each of its bytes
    then counts, and a changed one is refused rather than ignored."""
    from opentimestamps.core.notary import PendingAttestation

    stamp.attestations = {a for a in stamp.attestations if not isinstance(a, PendingAttestation)}
    for op, child in list(stamp.ops.items()):
        if not _prune_pending(child):
            del stamp.ops[op]
    return bool(stamp.attestations or stamp.ops)


# --- talking to a calendar --------------------------------------------------------------------


def _calendar_url(url: str) -> str:
    return check_url(url, "the OpenTimestamps calendar URL")


def stamp(
    digest: bytes, calendar: str, *, timeout: float = 10.0, retry: RetryPolicy | None = None
) -> bytes:
    """Submit `digest` to `calendar` (`POST /digest`); its pending proof, checked to be a proof
    for this digest that names a calendar to upgrade it from. NetworkError when the calendar
    cannot be reached or answers anything else."""
    _check_digest(digest)
    base = _calendar_url(calendar)
    what = f"the OpenTimestamps calendar at {base}"
    answer = exchange(
        "POST",
        f"{base}/digest",
        what=what,
        content=digest,
        headers={**ACCEPT, "Content-Type": "application/octet-stream"},
        timeout=timeout,
        retry=retry,  # `retry`: the caller's (one attempt right after signing)
        limit=MAX_PROOF_BYTES,
    )
    if answer.status != 200:
        raise NetworkError(f"{what} refused the digest ({answer.status})")
    try:
        proof = parse_proof(answer.body, digest)
    except VerificationError as exc:
        raise NetworkError(f"{what} answered no proof: {exc}") from None
    if not any(True for _ in _attestations(proof)):
        raise NetworkError(f"{what} answered a proof with no attestation")
    return serialize_proof(proof)


def _may_ask(uri: str, calendar: str) -> bool:
    """Whether `upgrade` asks the calendar a pending attestation names."""
    if uri.rstrip("/") == calendar:
        return True
    parts = urlsplit(uri)
    host = parts.hostname or ""
    return parts.scheme == "https" and any(
        host.endswith(pattern[1:]) for pattern in KNOWN_CALENDARS
    )


def upgrade(
    proof: bytes,
    digest: bytes,
    calendar: str,
    *,
    timeout: float = 10.0,
    retry: RetryPolicy | None = None,
) -> tuple[bytes, bool]:
    """Ask for the Bitcoin part of a pending proof (`GET /timestamp/<hex commitment>` at the
    calendar each pending attestation names, when `_may_ask`): (the proof, merged with what
    the calendars had, and whether it is complete). A 404 is "still pending": the proof comes
    back as it was. A complete proof keeps only its block attestations. VerificationError for
    a damaged proof; NetworkError when a calendar cannot be reached or answers a damaged one."""
    from opentimestamps.core.notary import PendingAttestation

    tree = parse_proof(proof, digest)
    base = _calendar_url(calendar)
    if is_complete(tree):
        _prune_pending(tree)
        return serialize_proof(tree), True
    pending = [
        (node, attestation.uri)
        for node, attestation in _attestations(tree)
        if isinstance(attestation, PendingAttestation)
    ]
    failed: NetworkError | None = None
    for node, uri in pending:
        if not _may_ask(uri, base):
            continue
        try:
            found = _ask(node.msg, _calendar_url(uri), timeout, retry)
        except NetworkError as exc:
            # another calendar of the same proof may still have the block: ask it, and say
            # this failure only when none completed the proof
            failed = failed or exc
            continue
        if found is not None:
            node.merge(found)
    complete = is_complete(tree)
    if complete:
        _prune_pending(tree)
    elif failed is not None:
        raise failed
    return serialize_proof(tree), complete


def _ask(
    commitment: bytes, calendar: str, timeout: float, retry: RetryPolicy | None
) -> Timestamp | None:
    """The calendar's operations from `commitment` to a block, or None while it has none (404).
    NetworkError when it cannot be asked, or answers anything else."""
    what = f"the OpenTimestamps calendar at {calendar}"
    answer = exchange(
        "GET",
        f"{calendar}/timestamp/{commitment.hex()}",
        what=what,
        headers=ACCEPT,
        timeout=timeout,
        retry=retry,  # `retry`: the caller's (one attempt right after signing)
        limit=MAX_PROOF_BYTES,
    )
    if answer.status == 404:
        return None  # not yet in a block (or not known yet): asked again next time
    if answer.status != 200:
        raise NetworkError(f"{what} answered {answer.status} for a pending proof")
    try:
        return parse_proof_for(answer.body, commitment)
    except VerificationError as exc:
        raise NetworkError(f"{what} answered a damaged proof: {exc}") from None


def parse_proof_for(proof: bytes, message: bytes) -> Timestamp:
    """A proof's operations from any `message` (a calendar's answer starts at a commitment,
    not at a 32-byte digest); VerificationError as `parse_proof`."""
    from opentimestamps.core.serialize import BytesDeserializationContext, DeserializationError
    from opentimestamps.core.timestamp import Timestamp

    if len(proof) > MAX_PROOF_BYTES:
        raise VerificationError(f"the proof is {len(proof)} bytes, over {MAX_PROOF_BYTES}")
    try:
        context = BytesDeserializationContext(proof)
        stamp = Timestamp.deserialize(context, message)
        context.assert_eof()
    except (DeserializationError, ValueError, TypeError, KeyError, IndexError) as exc:
        raise VerificationError(f"the OpenTimestamps proof is damaged: {exc}") from None
    return stamp


def block_heights(proof: bytes, digest: bytes) -> list[int]:
    """The heights of the Bitcoin blocks a proof's attestations name (none for a pending one),
    ascending: the headers to ship beside it. VerificationError for a damaged proof."""
    from opentimestamps.core.notary import BitcoinBlockHeaderAttestation

    tree = parse_proof(proof, digest)
    return sorted(
        {
            int(a.height)
            for _, a in _attestations(tree)
            if isinstance(a, BitcoinBlockHeaderAttestation)
        }
    )


# --- checking ----------------------------------------------------------------------------------


def check_proof(
    proof: bytes, digest: bytes, headers: HeaderSource, floor: Floor
) -> ProvenTime | None:
    """The earliest time the proof proves `digest` existed by: a Bitcoin block attestation whose
    merkle root is that of the header `headers` has for its height, the header meeting its own
    target and `floor` (`ProvenTime(block time, "bitcoin block <height>")`). None when the proof
    is only pending. VerificationError when the proof is damaged, names no attestation pith
    knows, or a header fails (no proof of work, under the floor, another merkle root): one line
    saying which. NetworkError when `headers` has no header for a block the proof names (none
    shipped, the explorer cannot be asked or has none): the proof is then unjudged, not
    wrong."""
    from opentimestamps.core.notary import BitcoinBlockHeaderAttestation, PendingAttestation

    tree = parse_proof(proof, digest)
    proven: list[ProvenTime] = []
    pending = False
    for node, attestation in _attestations(tree):
        if isinstance(attestation, PendingAttestation):
            pending = True
            continue
        if not isinstance(attestation, BitcoinBlockHeaderAttestation):
            continue  # another chain's, or unknown: proves nothing here
        height = int(attestation.height)
        raw = headers.header(height)
        if raw is None:
            # not a fault of the proof: nothing to judge it by here (offline, or an explorer
            # that lacks the block); the caller reports it unverifiable, not failed
            raise NetworkError(
                f"no header of Bitcoin block {height} to check the OpenTimestamps proof against",
                hint="ship the header beside the proof, or let pith fetch it (PITH_BTC_HEADERS)",
            )
        header = check_header(raw, height, floor)
        if header.merkle_root != node.msg:
            raise VerificationError(
                f"Bitcoin block {height}'s header does not commit to the digest "
                "(the proof reaches another merkle root)"
            )
        when = datetime.fromtimestamp(header.time, UTC)
        proven.append(ProvenTime(when, f"bitcoin block {height}"))
    if proven:
        return min(proven, key=lambda p: p.time)
    if pending:
        return None
    raise VerificationError("the OpenTimestamps proof names no attestation pith can check")
