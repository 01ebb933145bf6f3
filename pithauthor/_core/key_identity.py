"""How an Ed25519 public key is named (section 3 rule, plus this project's key-id DESIGN).

- `public_key_fingerprint` = first 16 bytes of sha256(raw public key), as 32 hex characters
  (VERIFIED on the registry key).
- `key_id` (DESIGN) = `ed25519:` + the first 26 characters of base32(sha256(raw public key)),
  the same base32 fingerprint the registry manifest publishes; any verifier recomputes it from
  the public key alone.
- `signer_id` (DESIGN) = `orcid:<ORCID iD>` when the author gave one, else the key id.
"""

from __future__ import annotations

import hashlib
import re
from functools import lru_cache

from pithauthor._core.canonical import base32_nopad
from pithauthor.errors import InputError

KEY_ID_PREFIX = "ed25519:"
PUBLIC_KEY_LENGTH = 32
KEY_ID_RE = re.compile(r"ed25519:[A-Z2-7]{26}")


@lru_cache(maxsize=256)  # pure; an author signs and checks many events with one key
def fingerprint_hex(public_key: bytes) -> str:
    """First 16 bytes of sha256(raw key), lower-case hex (32 characters)."""
    return hashlib.sha256(public_key).digest()[:16].hex()


def fingerprint_b32(public_key: bytes) -> str:
    """First 26 characters of base32(sha256(raw key)), as in the registry's manifest."""
    return base32_nopad(hashlib.sha256(public_key).digest())[:26]


@lru_cache(maxsize=256)
def key_id(public_key: bytes) -> str:
    """The author key id: `ed25519:` + base32 fingerprint."""
    return KEY_ID_PREFIX + fingerprint_b32(public_key)


def signer_id(public_key: bytes, orcid: str | None) -> str:
    """`orcid:<iD>` when an ORCID iD is known, else the key id."""
    return f"orcid:{orcid}" if orcid else key_id(public_key)


def parse_key_id(text: str) -> str:
    """A key id the user typed (`--signer`), upper-cased base32; InputError when malformed."""
    prefix, _, body = text.strip().partition(":")
    candidate = f"{prefix.lower()}:{body.upper()}"
    if not KEY_ID_RE.fullmatch(candidate):
        shown = text if len(text) <= 60 else text[:57] + "..."
        raise InputError(f"{shown!r} is not a key id ({KEY_ID_PREFIX} + 26 base32 characters)")
    return candidate
