"""Block headers judged without a node (pithauthor/timestamps/headers.py): a real header meets
its own target, the floors say what each height needs, and headers fetched from a block explorer
(the loopback one beside tests/support/ots_calendar.py) are checked, then cached once."""

from __future__ import annotations

import hashlib
from collections.abc import Iterator
from pathlib import Path

import pytest
from support.ots_calendar import BLOCK_TIME, TEST_FLOOR, TEST_HEIGHT, Calendar, ots_calendar

from pithauthor.errors import InputError, VerificationError
from pithauthor.timestamps import headers
from pithauthor.timestamps.headers import (
    DIFFICULTY_1_TARGET,
    PRODUCTION_FLOOR,
    BlockHeader,
    ExplorerHeaders,
    Floor,
    HeaderSources,
    ShippedHeaders,
    bits_to_target,
    block_hash,
    check_header,
)

# Bitcoin's genesis block header, and its hash as explorers show it
GENESIS = bytes.fromhex(
    "01000000" + "00" * 32 + "3ba3edfd7a7b12b27ac72c3e67768f617fc81bc3888a51323a9fb8aa4b1e5e4a"
    "29ab5f49" + "ffff001d" + "1dac2b7c"
)
GENESIS_HASH = "000000000019d6689c085ae165831e934ff763ae46a2a6c172b3f1b60a8ce26f"
# block 840,000, the halving of 2024-04-20: where the production floor's first row starts
HALVING = bytes.fromhex(
    "00e05f2aab948491071265ad552351d0ad625745668da54b017201000000000000000000"
    "4f89a5d73bd4d4887f25981fe81892ccafda10c27f52d6f3dd28183a7c411b03"
    "b7072366" + "19420317" + "7d9863ea"
)
HALVING_HASH = "0000000000000000000320283a032748cef8227873ff4872689bf23f1cda83a5"


@pytest.fixture
def calendar() -> Iterator[Calendar]:
    with ots_calendar() as running:
        running.mine()
        yield running


def test_the_genesis_header_meets_its_own_target() -> None:
    assert block_hash(GENESIS)[::-1].hex() == GENESIS_HASH
    header = BlockHeader.parse(GENESIS)
    assert (header.time, header.bits, header.nonce) == (1231006505, 0x1D00FFFF, 2083236893)
    assert bits_to_target(header.bits) == DIFFICULTY_1_TARGET
    every_height = Floor("difficulty 1", ((0, DIFFICULTY_1_TARGET),))
    assert check_header(GENESIS, 0, every_height) == header


def test_the_production_floor_accepts_a_real_mainnet_header_where_it_starts() -> None:
    assert block_hash(HALVING)[::-1].hex() == HALVING_HASH
    header = check_header(HALVING, 840_000, PRODUCTION_FLOOR)
    assert (header.bits, header.time) == (0x17034219, 1713571767)  # 2024-04-20T00:09:27Z
    # the same header claimed for a height before the floor's first row is not judged
    with pytest.raises(VerificationError, match="older than the mainnet difficulty floor"):
        check_header(HALVING, 839_999, PRODUCTION_FLOOR)


def test_the_production_floor_does_not_reach_blocks_before_any_pith_event() -> None:
    assert PRODUCTION_FLOOR.max_target(839_999) is None
    with pytest.raises(VerificationError, match="older than the mainnet difficulty floor"):
        check_header(GENESIS, 0, PRODUCTION_FLOOR)


def test_the_production_floor_asks_more_work_as_the_chain_grows() -> None:
    targets = [PRODUCTION_FLOOR.max_target(h) for h in (840_000, 899_999, 900_000, 2_000_000)]
    assert targets[0] == targets[1] == DIFFICULTY_1_TARGET // 40_000_000_000_000
    assert targets[2] == targets[3] == DIFFICULTY_1_TARGET // 50_000_000_000_000
    heights = [height for height, _ in PRODUCTION_FLOOR.rows]
    assert heights == sorted(heights)


def test_a_negative_or_zero_target_is_refused() -> None:
    for bits in (0x1D80FFFF, 0x1D000000):
        with pytest.raises(VerificationError, match="no valid target"):
            bits_to_target(bits)


def test_a_header_of_another_length_is_refused() -> None:
    with pytest.raises(VerificationError, match="80 bytes, not 79"):
        check_header(GENESIS[:79], 0, TEST_FLOOR)


def test_sources_are_asked_in_order() -> None:
    first, second = ShippedHeaders({1: b"a" * 80}), ShippedHeaders({1: b"b" * 80, 2: b"c" * 80})
    both = HeaderSources(first, second)
    assert (both.header(1), both.header(2), both.header(3)) == (b"a" * 80, b"c" * 80, None)


def test_a_header_fetched_from_the_explorer_is_checked_and_cached(
    calendar: Calendar, isolated_home: Path
) -> None:
    explorer = ExplorerHeaders(calendar.url, floor=TEST_FLOOR)
    raw = explorer.header(TEST_HEIGHT)
    assert raw == calendar.headers[TEST_HEIGHT]
    assert BlockHeader.parse(raw).time == BLOCK_TIME
    asked = len(calendar.requests)
    assert asked == 2  # the hash for the height, then the header
    assert ExplorerHeaders(calendar.url, floor=TEST_FLOOR).header(TEST_HEIGHT) == raw
    assert len(calendar.requests) == asked  # from the cache, under PITH_HOME
    assert list((isolated_home / "cache" / "bitcoin-headers").iterdir())


def test_a_block_the_explorer_does_not_know_is_none(calendar: Calendar) -> None:
    assert ExplorerHeaders(calendar.url, floor=TEST_FLOOR).header(TEST_HEIGHT + 1) is None


def test_a_header_below_the_floor_from_the_explorer_is_refused_and_not_cached(
    calendar: Calendar,
) -> None:
    explorer = ExplorerHeaders(calendar.url)  # the production floor
    for _ in range(2):
        with pytest.raises(VerificationError, match="below the mainnet difficulty floor"):
            explorer.header(TEST_HEIGHT)
    assert len(calendar.requests) == 4  # asked again: nothing was kept


def test_a_header_that_is_not_the_block_the_explorer_named_is_refused(
    calendar: Calendar,
) -> None:
    real = calendar.headers[TEST_HEIGHT]
    swapped = real[:36] + hashlib.sha256(b"another root").digest() + real[68:]
    original = calendar.answer

    def lying(method: str, path: str, body: bytes) -> tuple[int, bytes]:
        status, answer = original(method, path, body)
        return (status, swapped.hex().encode()) if path.endswith("/header") else (status, answer)

    calendar.answer = lying
    with pytest.raises(VerificationError, match="not the block it named"):
        ExplorerHeaders(calendar.url, floor=TEST_FLOOR).header(TEST_HEIGHT)


def test_the_explorer_comes_from_pith_btc_headers() -> None:
    default = headers.headers_from_env({})
    assert default is not None and default.base_url == "https://blockstream.info/api"
    assert headers.headers_from_env({"PITH_BTC_HEADERS": "none"}) is None
    mine = headers.headers_from_env({"PITH_BTC_HEADERS": "http://127.0.0.1:3002/api/"})
    assert mine is not None and mine.base_url == "http://127.0.0.1:3002/api"
    with pytest.raises(InputError, match="PITH_BTC_HEADERS"):
        headers.headers_from_env({"PITH_BTC_HEADERS": "ftp://example.org"})
