"""OpenTimestamps proofs (pithauthor/timestamps/ots.py) against a loopback calendar speaking the
real protocol (tests/support/ots_calendar.py): stamped, pending (404), upgraded once the block
is mined, checked offline against the block's header; the reference library
(python-opentimestamps) reads the same proofs and its own client talks to the same calendar.
Refused: a flipped proof byte, a header that does not commit to the digest, a header below the
floor, a header without its proof of work."""

from __future__ import annotations

import hashlib
from collections.abc import Iterator
from datetime import UTC, datetime

import pytest
from bitcoin.core import CBlockHeader
from opentimestamps.calendar import CommitmentNotFoundError, RemoteCalendar
from opentimestamps.core.notary import BitcoinBlockHeaderAttestation, PendingAttestation
from opentimestamps.core.op import OpSHA256
from opentimestamps.core.serialize import BytesDeserializationContext
from opentimestamps.core.timestamp import DetachedTimestampFile, Timestamp
from support.ots_calendar import (
    BLOCK_TIME,
    TEST_FLOOR,
    TEST_HEIGHT,
    Calendar,
    mine_header,
    ots_calendar,
    serialize,
)

from pithauthor.errors import InputError, NetworkError, VerificationError
from pithauthor.timestamps import ots, time_sources
from pithauthor.timestamps.headers import PRODUCTION_FLOOR, ShippedHeaders, block_hash

DIGEST = hashlib.sha256(b"an author event's canonical bytes").digest()


@pytest.fixture
def calendar() -> Iterator[Calendar]:
    with ots_calendar() as running:
        yield running


def _complete(calendar: Calendar) -> bytes:
    pending = ots.stamp(DIGEST, calendar.url)
    calendar.mine()
    proof, complete = ots.upgrade(pending, DIGEST, calendar.url)
    assert complete
    return proof


def test_a_stamped_digest_is_pending_then_proven_by_the_block_that_commits_to_it(
    calendar: Calendar,
) -> None:
    pending = ots.stamp(DIGEST, calendar.url)
    assert calendar.submitted == [DIGEST]
    headers = ShippedHeaders(calendar.headers)
    assert ots.check_proof(pending, DIGEST, headers, TEST_FLOOR) is None

    same, complete = ots.upgrade(pending, DIGEST, calendar.url)  # 404: not in a block yet
    assert (same, complete) == (pending, False)
    assert calendar.requests[-1].startswith("GET /timestamp/")

    calendar.mine()
    proof, complete = ots.upgrade(pending, DIGEST, calendar.url)
    assert complete and proof != pending
    proven = ots.check_proof(proof, DIGEST, ShippedHeaders(calendar.headers), TEST_FLOOR)
    assert proven is not None
    assert proven.time == datetime.fromtimestamp(BLOCK_TIME, UTC)
    assert proven.by == f"bitcoin block {TEST_HEIGHT}"


def test_a_complete_proof_keeps_only_its_path_to_the_block(calendar: Calendar) -> None:
    proof = _complete(calendar)
    tree = ots.parse_proof(proof, DIGEST)
    kinds = {type(a) for _, a in tree.all_attestations()}
    assert kinds == {BitcoinBlockHeaderAttestation}
    again, complete = ots.upgrade(proof, DIGEST, calendar.url)  # nothing left to ask
    asked = len(calendar.requests)
    assert (again, complete) == (proof, True)
    assert len(calendar.requests) == asked


def test_the_reference_library_verifies_the_proof_against_the_header(calendar: Calendar) -> None:
    proof = _complete(calendar)
    stamp = Timestamp.deserialize(BytesDeserializationContext(proof), DIGEST)
    header = CBlockHeader.deserialize(calendar.headers[TEST_HEIGHT])
    times = [
        attestation.verify_against_blockheader(msg, header)
        for msg, attestation in stamp.all_attestations()
        if isinstance(attestation, BitcoinBlockHeaderAttestation)
    ]
    assert times == [BLOCK_TIME]
    # and as the `ots` command's .ots file: the same timestamp behind its header, round-tripped
    detached = DetachedTimestampFile(OpSHA256(), stamp)
    context = BytesDeserializationContext(serialize_detached(detached))
    assert DetachedTimestampFile.deserialize(context) == detached


def serialize_detached(detached: DetachedTimestampFile) -> bytes:
    from opentimestamps.core.serialize import BytesSerializationContext

    context = BytesSerializationContext()
    detached.serialize(context)
    return bytes(context.getbytes())


def test_the_reference_client_speaks_to_the_loopback_calendar(calendar: Calendar) -> None:
    remote = RemoteCalendar(calendar.url)
    stamp = remote.submit(DIGEST, timeout=5)
    ((commitment, attestation),) = stamp.all_attestations()
    assert attestation == PendingAttestation(calendar.url)
    with pytest.raises(CommitmentNotFoundError, match="Pending confirmation"):
        remote.get_timestamp(commitment, timeout=5)
    calendar.mine()
    upgraded = remote.get_timestamp(commitment, timeout=5)
    assert [type(a) for _, a in upgraded.all_attestations()] == [BitcoinBlockHeaderAttestation]
    # and pith checks what the reference client assembled
    for node, _ in _pending_nodes(stamp):
        node.merge(upgraded)
    proven = ots.check_proof(serialize(stamp), DIGEST, ShippedHeaders(calendar.headers), TEST_FLOOR)
    assert proven is not None and proven.by == f"bitcoin block {TEST_HEIGHT}"


def _pending_nodes(stamp: Timestamp) -> list[tuple[Timestamp, PendingAttestation]]:
    found = [(stamp, a) for a in stamp.attestations if isinstance(a, PendingAttestation)]
    for child in stamp.ops.values():
        found += _pending_nodes(child)
    return found


def test_every_flipped_byte_of_a_complete_proof_is_refused(calendar: Calendar) -> None:
    proof = _complete(calendar)
    headers = ShippedHeaders(calendar.headers)
    accepted = []
    for index in range(len(proof)):
        for bit in (0x01, 0x80):
            flipped = bytearray(proof)
            flipped[index] ^= bit
            try:
                result = ots.check_proof(bytes(flipped), DIGEST, headers, TEST_FLOOR)
            # NetworkError: a flip in the height names a block with no header here, so the
            # proof is unjudged (an explorer's header for that block would not commit to it)
            except (VerificationError, NetworkError):
                continue
            accepted.append((index, bit, result))
    assert accepted == []


def test_a_proof_for_another_digest_is_refused(calendar: Calendar) -> None:
    proof = _complete(calendar)
    other = hashlib.sha256(b"another event").digest()
    with pytest.raises(VerificationError, match="does not commit to the digest"):
        ots.check_proof(proof, other, ShippedHeaders(calendar.headers), TEST_FLOOR)


def test_a_header_that_does_not_commit_to_the_digest_is_refused(calendar: Calendar) -> None:
    proof = _complete(calendar)
    stranger = mine_header(hashlib.sha256(b"another block's root").digest(), time=BLOCK_TIME)
    with pytest.raises(VerificationError, match="does not commit to the digest"):
        ots.check_proof(proof, DIGEST, ShippedHeaders({TEST_HEIGHT: stranger}), TEST_FLOOR)


def test_the_production_floor_refuses_a_header_mined_at_test_difficulty(
    calendar: Calendar,
) -> None:
    proof = _complete(calendar)
    with pytest.raises(VerificationError, match="below the mainnet difficulty floor"):
        ots.check_proof(proof, DIGEST, ShippedHeaders(calendar.headers), PRODUCTION_FLOOR)


def test_a_header_without_its_proof_of_work_is_refused(calendar: Calendar) -> None:
    proof = _complete(calendar)
    header = bytearray(calendar.headers[TEST_HEIGHT])
    target = 0x7FFFFF << 232
    for nonce in range(1000):  # a nonce whose hash misses the (easy) target
        header[76:80] = nonce.to_bytes(4, "little")
        if int.from_bytes(block_hash(bytes(header)), "little") > target:
            break
    with pytest.raises(VerificationError, match="does not meet its own target"):
        ots.check_proof(proof, DIGEST, ShippedHeaders({TEST_HEIGHT: bytes(header)}), TEST_FLOOR)


def test_a_complete_proof_without_its_header_is_unjudged_not_proven(calendar: Calendar) -> None:
    proof = _complete(calendar)
    with pytest.raises(NetworkError, match=f"no header of Bitcoin block {TEST_HEIGHT}"):
        ots.check_proof(proof, DIGEST, ShippedHeaders({}), TEST_FLOOR)


def test_a_proof_with_trailing_bytes_is_refused(calendar: Calendar) -> None:
    proof = _complete(calendar)
    with pytest.raises(VerificationError, match="damaged"):
        ots.check_proof(proof + b"\x00", DIGEST, ShippedHeaders(calendar.headers), TEST_FLOOR)


def test_stamp_against_a_calendar_that_is_down_is_a_network_error(
    calendar: Calendar, no_backoff: None
) -> None:
    calendar.down = True
    with pytest.raises(NetworkError, match="did not answer \\(HTTP 503\\) after 3 attempts"):
        ots.stamp(DIGEST, calendar.url)
    assert calendar.requests == ["POST /digest"] * 3


def test_stamp_refuses_a_digest_that_is_not_32_bytes(calendar: Calendar) -> None:
    with pytest.raises(InputError, match="32 bytes, not 31"):
        ots.stamp(DIGEST[:31], calendar.url)
    assert calendar.requests == []


def test_upgrade_asks_no_host_a_proof_names_unless_it_is_a_known_calendar(
    calendar: Calendar,
) -> None:
    stamp = Timestamp(DIGEST)
    stamp.ops.add(OpSHA256()).attestations.add(PendingAttestation("https://tracker.example"))
    proof = serialize(stamp)
    assert ots.upgrade(proof, DIGEST, calendar.url) == (proof, False)
    assert calendar.requests == []


def test_calendars_come_from_pith_ots_calendars() -> None:
    assert time_sources.calendars_from_env({}) == time_sources.DEFAULT_CALENDARS
    assert time_sources.calendars_from_env({"PITH_OTS_CALENDARS": "none"}) == ()
    two = "https://a.example/, http://127.0.0.1:9 https://a.example"
    assert time_sources.calendars_from_env({"PITH_OTS_CALENDARS": two}) == (
        "https://a.example",
        "http://127.0.0.1:9",
    )
    with pytest.raises(InputError, match="PITH_OTS_CALENDARS"):
        time_sources.calendars_from_env({"PITH_OTS_CALENDARS": "http://calendar.example"})


def test_a_proof_into_two_blocks_proves_the_earlier_time(calendar: Calendar) -> None:
    first = _complete(calendar)
    with ots_calendar() as other:
        pending = ots.stamp(DIGEST, other.url)
        other.mine(TEST_HEIGHT - 5, time=BLOCK_TIME - 3000)
        second, complete = ots.upgrade(pending, DIGEST, other.url)
        assert complete
        merged = ots.parse_proof(first, DIGEST)
        merged.merge(ots.parse_proof(second, DIGEST))
        headers = ShippedHeaders({**calendar.headers, **other.headers})
        proven = ots.check_proof(serialize(merged), DIGEST, headers, TEST_FLOOR)
    assert proven is not None
    assert (proven.time, proven.by) == (
        datetime.fromtimestamp(BLOCK_TIME - 3000, UTC),
        f"bitcoin block {TEST_HEIGHT - 5}",
    )


def test_a_calendar_that_fails_does_not_hide_another_that_has_the_block(
    calendar: Calendar, no_backoff: None
) -> None:
    # two pending attestations in one proof (two submissions, two commitments); the calendar
    # fails for the first commitment and has the block for the second
    merged = ots.parse_proof(ots.stamp(DIGEST, calendar.url), DIGEST)
    merged.merge(ots.parse_proof(ots.stamp(DIGEST, calendar.url), DIGEST))
    proof = serialize(merged)
    broken = sorted(node.msg.hex() for node, _ in _pending_nodes(merged))[0]
    original = calendar.answer

    def failing(method: str, path: str, body: bytes) -> tuple[int, bytes]:
        return (500, b"") if path.endswith(broken) else original(method, path, body)

    calendar.answer = failing
    with pytest.raises(NetworkError, match="HTTP 500"):  # neither in a block: the failure said
        ots.upgrade(proof, DIGEST, calendar.url)
    calendar.mine()
    upgraded, complete = ots.upgrade(proof, DIGEST, calendar.url)
    assert complete
    assert ots.check_proof(upgraded, DIGEST, ShippedHeaders(calendar.headers), TEST_FLOOR)
