"""Shared helpers for the key tests: a known seed, backups made from it, secret-leak checks."""

from __future__ import annotations

import base64
import hashlib
import json
import sys
from pathlib import Path

BACKENDS_DIR = Path(__file__).parent / "keyring_backends"
if str(BACKENDS_DIR) not in sys.path:
    sys.path.insert(0, str(BACKENDS_DIR))

SENTINEL_SEED = hashlib.sha256(b"pithauthor sentinel seed: must never be printed").digest()
PASSPHRASE = "correct horse battery staple"


def seed_forms(seed: bytes) -> list[str]:
    """Every text form a leaked seed could take."""
    return [
        seed.hex(),
        seed.hex().upper(),
        base64.b64encode(seed).decode(),
        base64.b64encode(seed).decode().rstrip("="),
        base64.urlsafe_b64encode(seed).decode().rstrip("="),
        base64.b32encode(seed).decode().rstrip("="),
        seed.decode("latin-1"),
        repr(seed)[2:-1],
    ]


def assert_no_seed(text: str | bytes, seed: bytes = SENTINEL_SEED) -> None:
    """Neither raw bytes nor any text encoding of `seed` is in `text`."""
    if isinstance(text, bytes):
        assert seed not in text
        text = text.decode("latin-1")
    for form in seed_forms(seed):
        assert form not in text, "secret seed leaked"


def write_backup(path: Path, seed: bytes, passphrase: str, name: str = "sentinel") -> str:
    """A backup file holding `seed` (as `pith keys backup` writes it); returns its key id."""
    from pithauthor.keys import secrets
    from pithauthor.keys.author import _new_record

    record = _new_record(seed, name, None)
    public = {k: v for k, v in record.to_json().items() if k not in ("backend", "file")}
    doc = secrets.seal(seed, passphrase, {"kind": "backup", "key": public})
    path.write_text(json.dumps(doc), "utf-8")
    return record.key_id


def subprocess_env(**extra: str) -> dict[str, str]:
    """Environment for a `pith` subprocess that can load the test keyring backends."""
    import os

    paths = [str(BACKENDS_DIR), os.environ.get("PYTHONPATH", "")]
    return {"PYTHONPATH": os.pathsep.join(p for p in paths if p), **extra}
