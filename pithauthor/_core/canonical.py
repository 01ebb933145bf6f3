"""Canonical JSON and SHA-256: the one place every hash in the protocol comes from (VERIFIED)."""

from __future__ import annotations

import base64
import hashlib
import json
from typing import Any

# One encoder for the process: `json.dumps` with non-default options builds a new JSONEncoder
# (and its C encoder) on every call, a sixth of the cost of serialising an event. The output is
# the same: `dumps` is `JSONEncoder(**options).encode(obj)`.
_CANONICAL = json.JSONEncoder(sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def canonical(obj: Any) -> bytes:
    """The protocol's canonical bytes: sorted keys, no spaces, UTF-8, non-ASCII kept as is."""
    return _CANONICAL.encode(obj).encode("utf-8")


def sha256_hex(data: bytes) -> str:
    """Lower-case hex SHA-256 of `data`."""
    return hashlib.sha256(data).hexdigest()


def canonical_sha256(obj: Any) -> str:
    """Lower-case hex SHA-256 of the canonical bytes of `obj`."""
    return hashlib.sha256(canonical(obj)).hexdigest()


def base32_nopad(data: bytes) -> str:
    """RFC 4648 base32, upper case, without padding."""
    return base64.b32encode(data).decode("ascii").rstrip("=")


def b64encode(data: bytes) -> str:
    """Standard base64 with padding, as the registry writes keys and signatures."""
    return base64.b64encode(data).decode("ascii")


def b64decode(text: str) -> bytes:
    """Canonical standard base64 only; raises ValueError on anything else.

    The bytes must encode back to exactly `text`: padding included, and zero in the unused low
    bits of the last character (`...Q==` and `...R==` would otherwise decode alike), so one byte
    string has one spelling and nothing outside a signature can be varied.
    """
    raw = base64.b64decode(text.encode("ascii"), validate=True)
    if base64.b64encode(raw).decode("ascii") != text:
        raise ValueError("not canonical base64 (padding or unused bits)")
    return raw


def hex_digest_bytes(hex_digest: str) -> bytes:
    """The 32 raw bytes named by a 64-character lower-case hex SHA-256 digest."""
    if len(hex_digest) != 64 or hex_digest != hex_digest.lower():
        raise ValueError("a SHA-256 digest is 64 lower-case hex characters")
    return bytes.fromhex(hex_digest)
