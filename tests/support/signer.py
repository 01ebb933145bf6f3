"""A test-only signer: a fixed-seed Ed25519 key wrapped to meet `events.Signer`.

Never use a seed like this for a real key: the library has no API taking raw seeds on purpose.
"""

from __future__ import annotations

import hashlib

from nacl.signing import SigningKey

from pithauthor.protocol.identity import key_id, signer_id

# The published test-vector key (tests/vectors/events/key.json): TEST ONLY.
VECTOR_SEED = hashlib.sha256(b"pithauthor test vector key 1 -- TEST ONLY").digest()
VECTOR_ORCID = "0000-0002-1825-0097"


class FixedSigner:
    """A `Signer` from a fixed 32-byte seed; `status` and `name` as the key store's keys have."""

    def __init__(
        self,
        seed: bytes = VECTOR_SEED,
        orcid: str | None = VECTOR_ORCID,
        *,
        status: str = "active",
        name: str | None = "Josiah Carberry",
    ) -> None:
        self._key = SigningKey(seed)
        self.orcid = orcid
        self.status = status
        self.name = name

    @property
    def public_key(self) -> bytes:
        return bytes(self._key.verify_key)

    @property
    def signer_id(self) -> str:
        return signer_id(self.public_key, self.orcid)

    @property
    def key_id(self) -> str:
        return key_id(self.public_key)

    def sign_digest(self, digest: bytes) -> bytes:
        return bytes(self._key.sign(digest).signature)
