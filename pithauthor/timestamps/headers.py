"""Bitcoin block headers judged without a node: each header's own proof of work against its
nBits target and against a pinned per-height difficulty floor, and where headers come from
(shipped beside a proof, or fetched once from a block explorer and cached).

Why a floor, and why it is enough here (docs/protocol.md, "Trusted time", DESIGN): an
OpenTimestamps proof ends in "the digest is in the merkle root of block H". Without a node,
nothing says which header is block H's; but a header whose hash meets a high target is costly
to make, whoever made it. The floor pins, for each range of heights, the highest target
(lowest difficulty) a mainnet header of that range may claim: forging a header that passes costs
at least the work of a real block of that range. It does not prove the header is in the chain
(a miner could withhold one), and it does not bind the header's time beyond what consensus
lets a miner choose (about two hours); it makes a forged proven time cost a block's work.

The production floor (`PRODUCTION_FLOOR`) has no row before height 840,000 (April 2024): no pith
event existed then, and a header claiming an older height could be forged cheaply at that
era's difficulty. Its values are round numbers at most half the real mainnet difficulty of each
range (see `PRODUCTION_FLOOR`); tests use a floor of their own, which the production floor
refuses.
"""

from __future__ import annotations

import hashlib
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from pithauthor.errors import NetworkError, VerificationError
from pithauthor.fs import private_dir, replace_file
from pithauthor.net import check_url, exchange

HEADER_BYTES = 80

DIFFICULTY_1_TARGET = 0xFFFF << 208
"""The target of difficulty 1 (nBits 0x1d00ffff, Bitcoin's proof-of-work limit): difficulty D
means a target of DIFFICULTY_1_TARGET // D, and about D * 2**32 hashes to meet it."""

HEADERS_ENV = "PITH_BTC_HEADERS"
"""Where missing headers are fetched: the base URL of an Esplora-style block explorer API
(`GET <base>/block-height/<h>` answers the block's hash, `GET <base>/block/<hash>/header` its
80-byte header in hex), or `none` to fetch nothing."""

DEFAULT_HEADERS_URL = "https://blockstream.info/api"
"""Blockstream's public Esplora API. Trusted for nothing: each header it sends must hash to the
hash it named, meet its own target and the floor; a lie costs the work of a block."""


@dataclass(frozen=True)
class BlockHeader:
    """The fields of an 80-byte Bitcoin block header (hashes in the header's own byte order)."""

    version: int
    previous: bytes
    merkle_root: bytes
    time: int
    bits: int
    nonce: int

    @classmethod
    def parse(cls, raw: bytes) -> BlockHeader:
        """The header's fields; VerificationError when `raw` is not 80 bytes."""
        if len(raw) != HEADER_BYTES:
            raise VerificationError(f"a Bitcoin block header is 80 bytes, not {len(raw)}")
        little = int.from_bytes
        return cls(
            version=little(raw[0:4], "little"),
            previous=raw[4:36],
            merkle_root=raw[36:68],
            time=little(raw[68:72], "little"),
            bits=little(raw[72:76], "little"),
            nonce=little(raw[76:80], "little"),
        )


def block_hash(raw: bytes) -> bytes:
    """The header's hash (double SHA-256) in its own byte order; explorers show it reversed."""
    return hashlib.sha256(hashlib.sha256(raw).digest()).digest()


def bits_to_target(bits: int) -> int:
    """The target an nBits field encodes (Bitcoin's compact form); VerificationError for a
    negative or zero one, which no valid block has."""
    exponent, mantissa = bits >> 24, bits & 0x007FFFFF
    if bits & 0x00800000 or mantissa == 0:
        raise VerificationError(f"the header's nBits {bits:#010x} is no valid target")
    if exponent <= 3:
        return mantissa >> (8 * (3 - exponent))
    return mantissa << (8 * (exponent - 3))


@dataclass(frozen=True)
class Floor:
    """A pinned difficulty floor: for each range of heights (from `from_height` up to the next
    row's), the highest target a header there may have. No row: no floor, refused."""

    name: str
    rows: tuple[tuple[int, int], ...]
    """(from_height, max_target), heights ascending."""

    def max_target(self, height: int) -> int | None:
        """The highest target allowed at `height`; None below the first row."""
        found = None
        for from_height, target in self.rows:
            if height >= from_height:
                found = target
        return found


PRODUCTION_FLOOR = Floor(
    "mainnet",
    (
        # Block 840,000 (the halving, 2024-04-20) states nBits 0x17034219: difficulty 86.4 T
        # (its header is in tests/unit/timestamps/test_headers.py), and difficulty has stayed
        # above 80 T since; 40 T is less than half. Forging a header that meets it: about
        # 40e12 * 2**32 = 1.7e26 hashes.
        (840_000, DIFFICULTY_1_TARGET // 40_000_000_000_000),
        # About 120 T (1.2e14) around block 900,000 (June 2025); 50 T leaves more than half
        # of the real difficulty as room for a fall in hash rate.
        (900_000, DIFFICULTY_1_TARGET // 50_000_000_000_000),
    ),
)
"""The production floor for Bitcoin mainnet. Where the numbers come from: the difficulty each
header states in its nBits (the chain's own record, shown by any node's `getblockheader` or any
explorer's difficulty chart), rounded down to at most half. A later release may add rows as
the chain grows; lowering a row only ever accepts more."""


def check_header(raw: bytes, height: int, floor: Floor) -> BlockHeader:
    """The header, when its hash meets its own nBits target and that target is no easier than
    `floor` allows at `height`; VerificationError saying which check failed."""
    header = BlockHeader.parse(raw)
    target = bits_to_target(header.bits)
    if int.from_bytes(block_hash(raw), "little") > target:
        raise VerificationError(
            f"the header given for Bitcoin block {height} does not meet its own target "
            "(no proof of work)"
        )
    allowed = floor.max_target(height)
    if allowed is None:
        raise VerificationError(
            f"Bitcoin block {height} is older than the {floor.name} difficulty floor reaches: "
            "its header cannot be judged without a node"
        )
    if target > allowed:
        raise VerificationError(
            f"the header given for Bitcoin block {height} is below the {floor.name} difficulty "
            f"floor (difficulty {difficulty(target):.3g}, at least "
            f"{difficulty(allowed):.3g} required)"
        )
    return header


def difficulty(target: int) -> float:
    """The difficulty a target stands for (1.0 at Bitcoin's proof-of-work limit)."""
    return DIFFICULTY_1_TARGET / target if target else float("inf")


# --- where headers come from ---------------------------------------------------------------


class HeaderSource(Protocol):
    """Block headers by height, as 80 raw bytes; None when this source has none."""

    def header(self, height: int) -> bytes | None:
        """The header of block `height`, or None."""
        ...


class ShippedHeaders:
    """Headers that travel beside a proof: {height: 80 bytes}."""

    def __init__(self, headers: Mapping[int, bytes]) -> None:
        self._headers = dict(headers)

    def header(self, height: int) -> bytes | None:
        """The header shipped for `height`, or None."""
        return self._headers.get(height)


class HeaderSources:
    """Several sources, asked in order: the first that has a header answers."""

    def __init__(self, *sources: HeaderSource) -> None:
        self._sources = sources

    def header(self, height: int) -> bytes | None:
        """The first source's header for `height`, or None when none has it."""
        for source in self._sources:
            raw = source.header(height)
            if raw is not None:
                return raw
        return None


_HASH_HEX = re.compile(r"[0-9a-f]{64}")
_HEADER_HEX = re.compile(r"[0-9a-f]{160}")


class ExplorerHeaders:
    """Headers fetched from an Esplora-style block explorer (`HEADERS_ENV`), each once: a header
    that passed the checks (it hashes to the hash the explorer named for the height, meets its
    own target and `floor`) is kept in PITH_HOME's cache and read from there afterwards."""

    def __init__(
        self, base_url: str, *, floor: Floor = PRODUCTION_FLOOR, timeout: float = 10.0
    ) -> None:
        self.base_url = check_url(base_url, HEADERS_ENV)
        self.floor = floor
        self.timeout = timeout

    def header(self, height: int) -> bytes | None:
        """Block `height`'s header: from the cache, else from the explorer (then cached);
        None when the explorer knows no such block. NetworkError when it cannot be asked;
        VerificationError when what it sends fails the checks."""
        cached = self._cached(height)
        if cached is not None:
            return cached
        what = f"the block explorer at {self.base_url}"
        answer = exchange(
            "GET", f"{self.base_url}/block-height/{height}", what=what, timeout=self.timeout
        )
        if answer.status == 404:
            return None
        shown = answer.body.strip().decode("ascii", "replace").lower()
        if answer.status != 200 or not _HASH_HEX.fullmatch(shown):
            raise NetworkError(f"{what} answered {answer.status} with no block hash for {height}")
        answer = exchange(
            "GET", f"{self.base_url}/block/{shown}/header", what=what, timeout=self.timeout
        )
        text = answer.body.strip().decode("ascii", "replace").lower()
        if answer.status != 200 or not _HEADER_HEX.fullmatch(text):
            raise NetworkError(f"{what} answered {answer.status} with no header for {height}")
        raw = bytes.fromhex(text)
        if block_hash(raw)[::-1].hex() != shown:
            raise VerificationError(
                f"{what} sent a header for block {height} that is not the block it named"
            )
        check_header(raw, height, self.floor)
        self._keep(height, raw)
        return raw

    def _cached(self, height: int) -> bytes | None:
        return CachedHeaders(self.floor).header(height)

    def _keep(self, height: int, raw: bytes) -> None:
        CachedHeaders(self.floor).keep(height, raw)


class CachedHeaders:
    """The headers `ExplorerHeaders` fetched and checked before (PITH_HOME's cache, one file
    per floor and height), never fetching: what pith has, to ship beside a proof."""

    def __init__(self, floor: Floor = PRODUCTION_FLOOR) -> None:
        self.floor = floor

    def _path(self, height: int) -> Path:
        return private_dir("cache", "bitcoin-headers") / f"{self.floor.name}-{height}.hex"

    def header(self, height: int) -> bytes | None:
        """The cached header of `height`, or None. A cache that cannot be read is a miss
        (fetched again by an explorer), never a failure."""
        try:
            with open(self._path(height), encoding="ascii") as handle:
                text = handle.read(200).strip()
        except (OSError, UnicodeDecodeError):
            return None
        return bytes.fromhex(text) if _HEADER_HEX.fullmatch(text) else None

    def keep(self, height: int, raw: bytes) -> None:
        """Cache a header that passed the checks under this floor."""
        replace_file(self._path(height), raw.hex() + "\n", durable=False)


def headers_from_env(
    env: Mapping[str, str] | None = None, *, floor: Floor = PRODUCTION_FLOOR
) -> ExplorerHeaders | None:
    """The explorer `PITH_BTC_HEADERS` names (Blockstream's by default); None for `none`."""
    value = (os.environ if env is None else env).get(HEADERS_ENV, "").strip()
    if value.lower() == "none":
        return None
    return ExplorerHeaders(value or DEFAULT_HEADERS_URL, floor=floor)
