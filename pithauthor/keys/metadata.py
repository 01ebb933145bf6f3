"""Private files: written atomically with mode 0600 (`pithauthor.fs`), never overwriting a
secret, read only when nobody else can read them.

The public key list (`keys.json` beside the key files): never holds a secret.

The key-store lock: one `filelock` lock around every read-modify-write of `keys.json` and the
key files, so concurrent `pith keys` commands never lose a key or leave one half-made.

Readers need no lock: every write is atomic (`pithauthor.fs`), and a key file is written
before the key list names it.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from pithauthor.errors import KeyExists, KeyFileTampered, KeyStoreError
from pithauthor.fs import (
    MAX_KEY_FILE_BYTES,
    check_private,
    create_file,
    pith_home,
    private_dir,
    read_user_text,
    replace_file,
)
from pithauthor.protocol.canonical_json import parse_json


def create_private(path: Path, text: str) -> None:
    """Write a new 0600 file at `path`; KeyExists if something is already there."""
    try:
        create_file(path, text, mode=0o600)
    except FileExistsError:
        raise KeyExists(f"{path} already exists; refusing to overwrite it") from None


def replace_private(path: Path, text: str) -> None:
    """Atomically replace `path` (or create it) with a 0600 file holding `text`."""
    replace_file(path, text, mode=0o600)


def read_private(path: Path) -> str:
    """The text of `path` after checking that it and its folder are private."""
    check_private(path.parent, is_dir=True)
    check_private(path, is_dir=False)
    return read_user_text(path, KeyFileTampered, "a key store file", limit=MAX_KEY_FILE_BYTES)


METADATA_FILE = "keys.json"


METADATA_VERSION = 1


BACKENDS = ("keyring", "file", "plaintext")


STATUSES = ("active", "retired")


@dataclass
class KeyRecord:
    """Public facts about one key."""

    name: str
    key_id: str
    public_key_fingerprint: str
    public_key_b64: str
    created_at: str
    backend: str
    status: str = "active"
    orcid: str | None = None
    file: str | None = None
    retired_at: str | None = None
    replaces: str | None = None
    replaced_by: str | None = None
    public_name: str | None = None  # the name signed into claims, e.g. "Ada Lovelace"
    extra: dict[str, Any] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        out = asdict(self)
        extra = out.pop("extra")
        return {**out, **extra}

    @classmethod
    def from_json(cls, obj: Any) -> KeyRecord:
        if not isinstance(obj, dict):
            raise ValueError("a key entry is not an object")
        known = {f for f in cls.__dataclass_fields__ if f != "extra"}
        record = cls(**{k: v for k, v in obj.items() if k in known})
        record.extra = {k: v for k, v in obj.items() if k not in known}
        if record.backend not in BACKENDS or record.status not in STATUSES:
            raise ValueError(f"bad backend or status for {record.key_id}")
        return record


def keys_dir() -> Path:
    """`$PITH_HOME/keys`, created 0700 (refused when others can reach it)."""
    return private_dir("keys")


def metadata_path() -> Path:
    return keys_dir() / METADATA_FILE


def load_records() -> list[KeyRecord]:
    """Every key entry (empty list when there is no metadata file yet)."""
    path = metadata_path()
    if not path.exists():
        return []
    try:
        doc = parse_json(read_private(path))
        if not isinstance(doc, dict) or doc.get("version") != METADATA_VERSION:
            raise ValueError("unknown metadata version")
        return [KeyRecord.from_json(item) for item in doc.get("keys", [])]
    except (ValueError, TypeError) as exc:
        raise KeyFileTampered(f"{path} is damaged: {exc}") from None


def save_records(records: list[KeyRecord]) -> None:
    """Write the key list atomically."""
    doc = {"version": METADATA_VERSION, "keys": [r.to_json() for r in records]}
    replace_private(metadata_path(), json.dumps(doc, indent=2, ensure_ascii=False) + "\n")


def retired_here(key_id: str) -> str | None:
    """When this machine's key store holds `key_id` as retired: its `retired_at` (`""` when
    it does not say). None when the store does not hold it retired, has no key list yet, or
    cannot be read: `pith verify` asks, and never creates a key folder to."""
    if not (pith_home() / "keys" / METADATA_FILE).is_file():
        return None
    try:
        records = load_records()
    except KeyStoreError:  # an unsafe or damaged store is `pith doctor`'s to report
        return None
    for r in records:
        if r.key_id == key_id and r.status == "retired":
            return r.retired_at or ""
    return None


# filelock is imported when the lock is taken (it loads asyncio).

LOCK_FILE = ".keys.lock"


LOCK_TIMEOUT_ENV = "PITH_KEYS_LOCK_TIMEOUT"


DEFAULT_LOCK_TIMEOUT = 60.0


def lock_timeout() -> float:
    """Seconds to wait for another pith command (PITH_KEYS_LOCK_TIMEOUT, default 60)."""
    try:
        return max(0.0, float(os.environ.get(LOCK_TIMEOUT_ENV, DEFAULT_LOCK_TIMEOUT)))
    except ValueError:
        return DEFAULT_LOCK_TIMEOUT


@contextmanager
def keystore_lock() -> Iterator[None]:
    """Hold the key-store lock; KeyStoreError when another command keeps it too long."""
    import filelock

    path = keys_dir() / LOCK_FILE
    lock = filelock.FileLock(path, timeout=lock_timeout(), mode=0o600)
    try:
        lock.acquire()
    except filelock.Timeout:
        raise KeyStoreError(
            f"the key store is busy: another pith command holds {path}; try again"
        ) from None
    try:
        yield
    finally:
        lock.release()
