"""Where keys are kept: private files (atomic, mode 0600), the public key list `keys.json`
(never a secret), the key-store lock, and the OS keyring (time-limited, real secret stores only).
"""

from __future__ import annotations

import contextlib
import json
import os
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, NamedTuple, TypeVar

from pithauthor.errors import KeyExists, KeyFileTampered, KeyringUnavailable, KeyStoreError
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

# Private files: written atomically with mode 0600 (`pithauthor.fs`), never overwriting a
# secret, read only when nobody else can read them.
#
# The public key list (`keys.json` beside the key files): never holds a secret.
#
# The key-store lock: one `filelock` lock around every read-modify-write of `keys.json` and the
# key files, so concurrent `pith keys` commands never lose a key or leave one half-made.
#
# Readers need no lock: every write is atomic (`pithauthor.fs`), and a key file is written
# before the key list names it.


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
    # every record of the key, not the first: the earliest retirement stands
    said = [r.retired_at or "" for r in records if r.key_id == key_id and r.status == "retired"]
    return min(said) if said else None


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


# The OS keyring, reached through `keyring` with a time limit on every call.
#
# A backend is used only when it is a real secret store: the `fail`/`null` backends and the
# `keyrings.alt` file backends (plaintext or self-made encryption) are refused, and any call that
# does not answer within the timeout (a locked desktop keyring waiting for a dialog, a hung
# D-Bus) counts as "no keyring". Calls run in a daemon thread so a hung backend never blocks exit.

# keyring is imported when the keyring is used: it is the slowest library to load.

SERVICE = "pithauthor"

PROBE_USER = "pithauthor-probe"

TIMEOUT_ENV = "PITH_KEYRING_TIMEOUT"

DEFAULT_TIMEOUT = 3.0  # a keyring waiting on an unlock dialog nobody sees is "no keyring"

_REFUSED_MODULES = ("keyring.backends.fail", "keyring.backends.null", "keyrings.alt")

T = TypeVar("T")


class KeyringStatus(NamedTuple):
    """What the keyring probe found."""

    usable: bool
    backend: str
    reason: str


def timeout() -> float:
    """Seconds a keyring call may take (PITH_KEYRING_TIMEOUT, default 3)."""
    try:
        return max(0.1, float(os.environ.get(TIMEOUT_ENV, DEFAULT_TIMEOUT)))
    except ValueError:
        return DEFAULT_TIMEOUT


def _call(fn: Callable[[], T], what: str) -> T:
    """Run `fn` in a daemon thread; KeyringUnavailable if it raises or exceeds the timeout."""
    box: dict[str, Any] = {}

    def target() -> None:
        try:
            box["value"] = fn()
        except Exception as exc:  # any backend failure means "unusable"
            # the type only: a backend's message may quote what it was handed, a secret included
            box["error"] = f"{type(exc).__name__}"

    limit = timeout()
    worker = threading.Thread(target=target, name=f"pith-keyring-{what}", daemon=True)
    worker.start()
    worker.join(limit)
    if worker.is_alive():
        raise KeyringUnavailable(f"keyring did not answer {what} within {limit:g} s")
    if "error" in box:
        raise KeyringUnavailable(f"keyring {what} failed ({box['error']})")
    return box["value"]  # type: ignore[no-any-return]


def _backend_name(backend: Any) -> str:
    cls = type(backend)
    return f"{cls.__module__}.{cls.__qualname__}"


def _refusal(backend: Any) -> str | None:
    """Why `backend` is not a secret store we trust, or None."""
    inner = getattr(backend, "backends", None)
    if _backend_name(backend).startswith("keyring.backends.chainer"):
        if not inner:
            return "no keyring backend is installed"
        backend = inner[0]
    name = _backend_name(backend)
    if name.startswith(_REFUSED_MODULES):
        if name.startswith("keyrings.alt"):
            return "it keeps secrets in a file pithauthor cannot vouch for"
        return "it is not a secret store"
    return None


def probe() -> KeyringStatus:
    """Find the configured backend and check that it answers a harmless read in time."""
    import keyring

    try:
        backend = _call(keyring.get_keyring, "the backend lookup")
    except KeyringUnavailable as exc:
        return KeyringStatus(False, "unknown", str(exc))
    name = _backend_name(backend)
    refused = _refusal(backend)
    if refused:
        return KeyringStatus(False, name, refused)
    try:
        _call(lambda: backend.get_password(SERVICE, PROBE_USER), "a test read")
    except KeyringUnavailable as exc:
        return KeyringStatus(False, name, str(exc))
    return KeyringStatus(True, name, "answered a test read")


def store(username: str, secret: str) -> None:
    """Save `secret`; KeyringUnavailable on failure or timeout."""
    import keyring

    _call(lambda: keyring.set_password(SERVICE, username, secret), "saving the key")


def load(username: str) -> str | None:
    """The secret saved for `username`, or None."""
    import keyring

    value = _call(lambda: keyring.get_password(SERVICE, username), "reading the key")
    return value if isinstance(value, str) else None


def delete(username: str) -> None:
    """Remove the secret for `username` (no error if it is already gone)."""
    import keyring
    import keyring.errors

    def remove() -> None:
        with contextlib.suppress(keyring.errors.PasswordDeleteError):
            keyring.delete_password(SERVICE, username)

    _call(remove, "deleting the key")
