"""The key-store lock: one `filelock` lock around every read-modify-write of `keys.json` and the
key files, so concurrent `pith keys` commands never lose a key or leave one half-made.

Readers need no lock: every write is atomic (`pithauthor._atomic`), and a key file is written
before the key list names it.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager

from pithauthor._keystore.metadata import keys_dir
from pithauthor.errors import KeyStoreError

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
