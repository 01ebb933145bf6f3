"""The OS keyring, reached through `keyring` with a time limit on every call.

A backend is used only when it is a real secret store: the `fail`/`null` backends and the
`keyrings.alt` file backends (plaintext or self-made encryption) are refused, and any call that
does not answer within the timeout (a locked desktop keyring waiting for a dialog, a hung
D-Bus) counts as "no keyring". Calls run in a daemon thread so a hung backend never blocks exit.
"""

from __future__ import annotations

import contextlib
import os
import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TypeVar

from pithauthor.errors import KeyringUnavailable

# keyring is imported when the keyring is used: it is the slowest library to load.

SERVICE = "pithauthor"
PROBE_USER = "pithauthor-probe"
TIMEOUT_ENV = "PITH_KEYRING_TIMEOUT"
DEFAULT_TIMEOUT = 3.0  # a keyring waiting on an unlock dialog nobody sees is "no keyring"
_REFUSED_MODULES = ("keyring.backends.fail", "keyring.backends.null", "keyrings.alt")

T = TypeVar("T")


@dataclass(frozen=True)
class KeyringStatus:
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
