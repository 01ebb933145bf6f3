"""The local registry's signing key, its receipts and its mirror manifest.

The key is made on first start in the data folder (`registry-key.json`, mode 0600, folder 0700).
Receipts have the real registry's format: Ed25519 over the 32 raw bytes of canonical_sha256.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any

from pithauthor.errors import DocumentError, UnsafePermissions
from pithauthor.fs import MAX_KEY_FILE_BYTES, create_file, read_user_json
from pithauthor.keys.passphrase import forbid_core_dumps
from pithauthor.protocol.canonical_json import b64encode, hex_digest_bytes
from pithauthor.protocol.checks.merge import MERGE_VERSION
from pithauthor.protocol.documents import MirrorManifest, Receipt, RegistrySigner
from pithauthor.protocol.identity import fingerprint_b32, fingerprint_hex
from pithauthor.protocol.text import utc_now

# PyNaCl is imported where the registry signs: reading its key file skips it.

KEY_FILE = "registry-key.json"
REGISTRY_NAME = "pithauthor local registry"
SIGNER_ID = "pithauthor-local"
BUILDER_VERSION = "pithauthor-local-registry-v1"


def ensure_private_dir(path: Path) -> Path:
    """Create `path` (mode 0700) or check that an existing one is not open to others."""
    path.mkdir(parents=True, exist_ok=True, mode=0o700)
    if os.name == "posix" and path.stat().st_mode & 0o077:
        raise UnsafePermissions(
            f"the registry data folder {path} is open to others; fix it with: chmod 700 {path}"
        )
    return path


@dataclass(frozen=True)
class LocalKey:
    """The local registry's Ed25519 key."""

    seed: bytes = field(repr=False)  # the secret: never in a repr
    created_at: str

    # Derived once per key (the server signs a receipt for every event it takes): deriving the
    # key pair from the seed costs as much as a signature.
    @cached_property
    def _signing_key(self) -> Any:
        from nacl.signing import SigningKey

        return SigningKey(self.seed)

    @cached_property
    def public_key(self) -> bytes:
        return bytes(self._signing_key.verify_key)

    @cached_property
    def key_id(self) -> str:
        # a name of its own, never like pith.science's `pith-v1-...`: every check a local key
        # passes shows that it is a local registry's word, not Pith's
        return "pithauthor-local-" + fingerprint_b32(self.public_key)[:8].lower()

    def sign(self, message: bytes) -> str:
        return b64encode(self._signing_key.sign(message).signature)

    def receipt(self, canonical_sha256: str, signed_at: str) -> Receipt:
        """A receipt in the real registry's format, under this key."""
        return {
            "kind": "pith_receipt",
            "key_id": self.key_id,
            "algorithm": "ed25519",
            "signed_at": signed_at,
            "signature_b64": self.sign(hex_digest_bytes(canonical_sha256)),
            "signed_message": "canonical_sha256_bytes",
            "builder_version": BUILDER_VERSION,
            "receipt_version": "0.3",
            "canonical_sha256": canonical_sha256,
            "first_computed_at": signed_at,
            "last_reissued_at": signed_at,
            "signature_status": "signed_local",
            "public_key_fingerprint": fingerprint_hex(self.public_key),
        }

    def signer_block(self) -> RegistrySigner:
        """The `signer` of registry events (record_created)."""
        return {
            "key_id": self.key_id,
            "public_key_fingerprint": fingerprint_hex(self.public_key),
            "signer_id": SIGNER_ID,
            "signer_type": "pith_registry",
        }

    def manifest(self, base_url: str) -> MirrorManifest:
        """This registry's `/pith-mirrors.json`: its key, labelled as a local registry."""
        pk = self.public_key
        base = base_url.rstrip("/")
        return {
            "manifest_type": "pith_mirror_manifest",
            "manifest_version": "1.0",
            "generated_at": self.created_at,
            "merge_version": MERGE_VERSION,
            "mirrors": [
                {
                    "name": REGISTRY_NAME,
                    "mirror_type": "local",  # `--trust-local-registry` takes only such keys
                    "base_url": base,
                    "bundle_pattern": base + "/pith/{suffix}/bundle.json",
                    "state_pattern": base + "/pith/{suffix}/state.json",
                    "public_key": {
                        "key_id": self.key_id,
                        "algorithm": "ed25519",
                        "format": "raw",
                        "public_key_b64": b64encode(pk),
                        "public_key_hex": pk.hex(),
                        "fingerprint_sha256_b32_first128bits": fingerprint_b32(pk),
                        "fingerprint_sha256_hex": fingerprint_hex(pk),
                        "rotates_at": None,
                        "notes": "Key of a LOCAL pithauthor registry, made on this machine.",
                    },
                    "status": "local",
                    "notes": "A local registry run by pithauthor (`pith registry serve`); "
                    "not pith.science. Trust its key only for tests, dry runs and own mirrors.",
                }
            ],
            "notes": "This is a local registry, not the Pith registry. Its receipts are signed "
            "with its own key; states are merged with " + MERGE_VERSION + ".",
        }


def _read_key(path: Path) -> LocalKey:
    """The key file pith wrote, or DocumentError (exit 2) saying it is not."""
    doc = read_user_json(path, DocumentError, "a registry key file", limit=MAX_KEY_FILE_BYTES)
    seed_hex = doc.get("seed_hex") if isinstance(doc, dict) else None
    created = doc.get("created_at") if isinstance(doc, dict) else None
    try:
        seed = bytes.fromhex(seed_hex) if isinstance(seed_hex, str) else b""
    except ValueError:
        seed = b""
    if len(seed) != 32 or not isinstance(created, str):
        raise DocumentError(
            f"{path} is not the registry key file pith wrote (seed_hex, created_at)"
        )
    return LocalKey(seed=seed, created_at=created)


def load_or_create_key(data_dir: Path) -> LocalKey:
    """The key in `data_dir`, made (0600) on first use; from now on this process makes no
    core dump (the seed is in memory: see pithauthor.keys.passphrase)."""
    forbid_core_dumps()
    ensure_private_dir(data_dir)
    path = data_dir / KEY_FILE
    if path.exists() or path.is_symlink():  # a dangling link or a loop is read, and refused
        key = _read_key(path)
        if os.name == "posix" and path.stat().st_mode & 0o077:
            raise UnsafePermissions(f"{path} is readable by others; fix it with: chmod 600 {path}")
        return key
    key = LocalKey(seed=os.urandom(32), created_at=utc_now())
    text = json.dumps({"seed_hex": key.seed.hex(), "created_at": key.created_at})
    try:
        create_file(path, text, mode=0o600)  # never replace a key another process made first
    except FileExistsError:
        return load_or_create_key(data_dir)
    return key
