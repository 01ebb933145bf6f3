"""A loopback OpenTimestamps calendar (127.0.0.1, port 0, real sockets) speaking the protocol
the public calendars and the reference client speak, and a block explorer beside it.

- `POST /digest` (the digest's bytes as the body): 200 and a pending proof, as a public
  calendar makes it: the digest, a 16-byte nonce appended, SHA-256, the calendar's time
  prepended, and a `PendingAttestation` naming this calendar's URL;
- `GET /timestamp/<hex commitment>`: 404 "Pending confirmation in Bitcoin blockchain" while the
  commitment waits, 404 "Not found" for one never submitted, 200 and the commitment's path
  into a block once `mine()` was called: the calendar's merkle tree over its commitments, a
  transaction holding the tip (prefix and suffix around it, SHA-256d: its txid), the block's
  merkle tree beside a coinbase txid, and a `BitcoinBlockHeaderAttestation(height)`;
- `mine()` makes that block: an 80-byte header committing to the merkle root, mined at test
  difficulty (nBits 0x207fffff, regtest's: every other hash meets it), which the test floor
  (`TEST_FLOOR`) accepts and the production floor refuses;
- the explorer (Esplora's two calls, as `headers.ExplorerHeaders` asks them):
  `GET /block-height/<h>` answers the block's hash in hex, `GET /block/<hash>/header` its
  header in hex.

Everything is built with python-opentimestamps' own classes, so what the calendar answers is
what a real one would: the reference client (`opentimestamps.calendar.RemoteCalendar`) reads it.
"""

from __future__ import annotations

import hashlib
import os
import struct
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from opentimestamps.core.notary import BitcoinBlockHeaderAttestation, PendingAttestation
from opentimestamps.core.op import OpAppend, OpPrepend, OpSHA256
from opentimestamps.core.serialize import BytesSerializationContext
from opentimestamps.core.timestamp import Timestamp, cat_sha256d, make_merkle_tree

from pithauthor.timestamps.headers import Floor, bits_to_target, block_hash

TEST_BITS = 0x207FFFFF
"""Regtest's nBits: the easiest target there is; mining takes a couple of hashes."""

TEST_FLOOR = Floor("test", ((0, bits_to_target(TEST_BITS)),))
"""A floor that accepts headers mined at test difficulty (tests only)."""

TEST_HEIGHT = 950_000
"""Where the test blocks are: past the production floor's first row, so that the production
floor refuses their headers for their difficulty, not for their height."""

BLOCK_TIME = 1_777_000_000  # 2026-04-24T03:06:40Z


def mine_header(
    merkle_root: bytes, *, time: int, bits: int = TEST_BITS, prev: bytes = b""
) -> bytes:
    """An 80-byte header committing to `merkle_root` whose hash meets the target of `bits`."""
    previous = (prev or hashlib.sha256(b"previous block").digest())[:32]
    target = bits_to_target(bits)
    for nonce in range(1 << 32):
        raw = struct.pack("<I32s32sIII", 0x20000000, previous, merkle_root, time, bits, nonce)
        if int.from_bytes(block_hash(raw), "little") <= target:
            return raw
    raise AssertionError("no nonce meets the target")


def serialize(stamp: Timestamp) -> bytes:
    context = BytesSerializationContext()
    stamp.serialize(context)
    return bytes(context.getbytes())


@dataclass
class Calendar:
    """The calendar's state: what waits, what is in a block, the blocks' headers."""

    url: str = ""
    pending: dict[bytes, Timestamp] = field(default_factory=dict)
    done: dict[bytes, Timestamp] = field(default_factory=dict)
    headers: dict[int, bytes] = field(default_factory=dict)
    submitted: list[bytes] = field(default_factory=list)
    requests: list[str] = field(default_factory=list)
    down: bool = False
    """Answer 503 to everything (the calendar is down)."""
    nonce: Callable[[], bytes] = lambda: os.urandom(16)
    """The nonce appended to each digest (fixed by the vectors' generator)."""
    lock: threading.Lock = field(default_factory=threading.Lock)

    def submit(self, digest: bytes) -> bytes:
        stamp = Timestamp(digest)
        hashed = stamp.ops.add(OpAppend(self.nonce())).ops.add(OpSHA256())
        commitment = hashed.ops.add(OpPrepend(struct.pack(">I", BLOCK_TIME - 600)))
        commitment.attestations.add(PendingAttestation(self.url))
        with self.lock:
            self.pending[commitment.msg] = Timestamp(commitment.msg)
            self.submitted.append(digest)
        return serialize(stamp)

    def mine(
        self, height: int = TEST_HEIGHT, *, time: int = BLOCK_TIME, bits: int = TEST_BITS
    ) -> bytes:
        """Put every waiting commitment in block `height` (mined at `bits`); its header."""
        with self.lock:
            leaves = list(self.pending.values())
            if not leaves:  # an empty calendar still mines a block, of one unrelated leaf
                leaves = [Timestamp(hashlib.sha256(b"nothing").digest())]
            tip = make_merkle_tree(leaves)
            # the calendar's transaction: the tip between a prefix and a suffix, as an
            # OP_RETURN output carries it; its txid is SHA-256d of the whole
            prefix = bytes.fromhex("0100000001") + b"\x11" * 36 + bytes.fromhex("00ffffffff0100")
            in_tx = tip.ops.add(OpPrepend(prefix))
            txid = cat_sha256d(in_tx, bytes.fromhex("00000000"))
            coinbase = Timestamp(hashlib.sha256(b"coinbase %d" % height).digest())
            root = cat_sha256d(coinbase, txid)
            root.attestations.add(BitcoinBlockHeaderAttestation(height))
            header = mine_header(root.msg, time=time, bits=bits)
            self.headers[height] = header
            self.done.update(self.pending)
            self.pending.clear()
            return header

    def answer(self, method: str, path: str, body: bytes) -> tuple[int, bytes]:
        with self.lock:
            self.requests.append(f"{method} {path}")
            if self.down:
                return 503, b"calendar down"
        if method == "POST" and path == "/digest":
            if not 1 <= len(body) <= 64:
                return 400, b"digest too long"
            return 200, self.submit(body)
        if method == "GET" and path.startswith("/timestamp/"):
            try:
                commitment = bytes.fromhex(path.removeprefix("/timestamp/"))
            except ValueError:
                return 400, b"commitment must be hex"
            with self.lock:
                if commitment in self.done:
                    return 200, serialize(self.done[commitment])
                if commitment in self.pending:
                    return 404, b"Pending confirmation in Bitcoin blockchain"
            return 404, b"Not found"
        if method == "GET" and path.startswith("/block-height/"):
            height = int(path.removeprefix("/block-height/"))
            header = self.headers.get(height)
            if header is None:
                return 404, b"Block not found"
            return 200, block_hash(header)[::-1].hex().encode()
        if method == "GET" and path.startswith("/block/") and path.endswith("/header"):
            wanted = path.removeprefix("/block/").removesuffix("/header")
            for header in self.headers.values():
                if block_hash(header)[::-1].hex() == wanted:
                    return 200, header.hex().encode()
            return 404, b"Block not found"
        return 404, b"Not found"


@contextmanager
def ots_calendar() -> Iterator[Calendar]:
    """A running loopback calendar (and explorer) at `calendar.url`."""
    calendar = Calendar()

    class Handler(BaseHTTPRequestHandler):
        def _reply(self, method: str) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            body = self.rfile.read(length) if length else b""
            status, answer = calendar.answer(method, self.path, body)
            self.send_response(status)
            kind = "application/octet-stream" if status == 200 else "text/plain"
            self.send_header("Content-Type", kind)
            self.send_header("Content-Length", str(len(answer)))
            self.end_headers()
            self.wfile.write(answer)

        def do_GET(self) -> None:
            self._reply("GET")

        def do_POST(self) -> None:
            self._reply("POST")

        def log_message(self, format: str, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    calendar.url = f"http://127.0.0.1:{server.server_address[1]}"
    thread = threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True)
    thread.start()
    try:
        yield calendar
    finally:
        server.shutdown()
        server.server_close()
        thread.join(5)
