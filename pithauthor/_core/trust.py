"""Registry keys a client trusts, read from a mirror manifest (section 3, VERIFIED).

Words used here and by every verdict that names a key:

- the pinned key: the Pith registry's key shipped inside the package (`PINNED_KEY_ID`, from
  `pithauthor/data/pith-mirrors.json`). It is trusted without asking anyone, and no manifest
  can name its key id with another key: otherwise a manifest handed to a user could replace
  pith.science's key and vouch for forged receipts (issue 12, finding 4);
- a local key (`RegistryKey.local`): a key the user chose to trust (a manifest file,
  PITH_TRUST, `--trust-local-registry`); its `source` says where it came from and is shown in
  each check it passes, so that a verdict never passes off a local key's word as Pith's;
- VERIFIED: the manifest's fingerprints are recomputed from its key (section 3 rules) and a
  manifest whose fingerprint disagrees with its key is refused.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from pithauthor._core.canonical import b64decode
from pithauthor._core.key_identity import PUBLIC_KEY_LENGTH, fingerprint_b32, fingerprint_hex
from pithauthor.errors import DocumentError

# PyNaCl is imported where a signature is checked: commands that check none skip it.

PINNED_SOURCE = "pinned manifest"
PINNED_KEY_ID = "pith-v1-2026-05"
"""The key id of the key shipped with the package: no manifest can name it with another key."""


@dataclass(frozen=True, slots=True)
class RegistryKey:
    """One registry signing key. `local` marks a key of a local (non-Pith) registry; `source`
    says where it came from (shown in every check it passes); `base_url` is the registry's
    address from the manifest (the only origin its records may link to)."""

    key_id: str
    public_key: bytes
    source: str = PINNED_SOURCE
    local: bool = False
    base_url: str | None = None

    @property
    def fingerprint(self) -> str:
        return fingerprint_hex(self.public_key)

    def verify_digest(self, digest: bytes, signature: bytes) -> bool:
        """True when `signature` is this key's Ed25519 signature over `digest`."""
        from nacl.exceptions import BadSignatureError
        from nacl.signing import VerifyKey

        try:
            VerifyKey(self.public_key).verify(digest, signature)
        except BadSignatureError:
            return False
        return True


@dataclass(frozen=True, slots=True)
class Trust:
    """The set of registry keys a verifier accepts, by key id."""

    keys: Mapping[str, RegistryKey] = field(default_factory=dict)

    @classmethod
    def from_manifest(
        cls, manifest: Mapping[str, Any], *, local: bool = False, source: str | None = None
    ) -> Trust:
        """Every mirror key of a manifest, each checked for self-consistency and labelled with
        `source` (where the manifest came from)."""
        if not isinstance(manifest, Mapping):
            raise DocumentError("not a Pith mirror manifest (not a JSON object)")
        if manifest.get("manifest_type") != "pith_mirror_manifest":
            raise DocumentError("not a Pith mirror manifest (manifest_type)")
        mirrors = manifest.get("mirrors", [])
        if not isinstance(mirrors, list) or not all(isinstance(m, Mapping) for m in mirrors):
            raise DocumentError("the manifest's mirrors are not a list of objects")
        if source is None:
            source = "local registry manifest" if local else PINNED_SOURCE
        keys: dict[str, RegistryKey] = {}
        for mirror in mirrors:
            key = _key_from_manifest_entry(mirror.get("public_key") or {}, local=local)
            base = mirror.get("base_url")
            key = RegistryKey(
                key.key_id, key.public_key, source, local, base if isinstance(base, str) else None
            )
            if key.key_id in keys and keys[key.key_id].public_key != key.public_key:
                raise DocumentError(f"the manifest names key id {key.key_id} twice, two keys")
            keys.setdefault(key.key_id, key)
        if not keys:
            raise DocumentError("the manifest names no public key")
        return cls(keys)

    def with_keys(self, extra: Iterable[RegistryKey]) -> Trust:
        """This trust plus `extra` keys (a manifest the user chose to trust).

        A key already trusted is never replaced: the same key again is a no-op (the first
        label stays), another key under a trusted key id (above all the pinned
        `pith-v1-2026-05`) is refused with `DocumentError` (exit 2)."""
        merged = dict(self.keys)
        for key in extra:
            known = merged.get(key.key_id)
            if known is None:
                merged[key.key_id] = key
            elif known.public_key != key.public_key:
                raise DocumentError(
                    f"{key.source} names key id {key.key_id!r} with another key than the one "
                    f"already trusted ({known.source}); refused: a trusted key is never replaced"
                )
        return Trust(merged)

    def get(self, key_id: str) -> RegistryKey | None:
        return self.keys.get(key_id)


def _key_from_manifest_entry(entry: Mapping[str, Any], *, local: bool) -> RegistryKey:
    key_id = entry.get("key_id")
    if not isinstance(key_id, str) or not key_id:
        raise DocumentError("a manifest key has no key_id")
    if entry.get("algorithm") != "ed25519":
        raise DocumentError(f"manifest key {key_id}: algorithm is not ed25519")
    try:
        raw = b64decode(str(entry.get("public_key_b64", "")))
    except ValueError:
        raise DocumentError(f"manifest key {key_id}: public_key_b64 is not base64") from None
    if len(raw) != PUBLIC_KEY_LENGTH:
        raise DocumentError(f"manifest key {key_id}: the key is not 32 bytes")
    if "public_key_hex" in entry and entry["public_key_hex"] != raw.hex():
        raise DocumentError(f"manifest key {key_id}: hex and base64 forms disagree")
    if "fingerprint_sha256_hex" in entry and entry["fingerprint_sha256_hex"] != fingerprint_hex(
        raw
    ):
        raise DocumentError(f"manifest key {key_id}: hex fingerprint does not match the key")
    b32 = entry.get("fingerprint_sha256_b32_first128bits")
    if b32 is not None and b32 != fingerprint_b32(raw):
        raise DocumentError(f"manifest key {key_id}: base32 fingerprint does not match the key")
    return RegistryKey(key_id=key_id, public_key=raw, local=local)
