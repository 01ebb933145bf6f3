"""Bearer tokens for registries that want sign-in, each bound to one origin.

- `PITH_TOKEN` is for the origin of `PITH_REGISTRY` (https://pith.science when unset) only.
- `pith auth login` stores a token for the registry's origin (`scheme://host:port`): in the OS
  keyring when a usable one answers (the key store's probe), else in
  `<PITH_HOME>/auth/tokens.json` (folder 0700, file 0600). That file always lists which origins
  have a token and where it is; it holds a token's value only when no keyring was usable.
- The client sends a token only to its own origin, and on reads only when that registry asked
  (see `pithauthor.net.RegistryHttp`).
"""

from __future__ import annotations

import contextlib
import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from pithauthor.errors import AuthError, InputError, KeyringUnavailable
from pithauthor.fs import (
    MAX_KEY_FILE_BYTES,
    check_private,
    private_dir,
    read_user_json,
    replace_file,
)
from pithauthor.keys import keyring_store
from pithauthor.net import DEFAULT_REGISTRY, check_url, origin

# filelock is imported when the token file is written (it loads asyncio).

TOKEN_ENV = "PITH_TOKEN"
FILE_VERSION = 2
_KEYRING_PREFIX = "token:"  # one keyring service holds key seeds too (by key id): kept apart


def _path() -> Path:
    return private_dir("auth") / "tokens.json"


def _origin(registry: str) -> str:
    return origin(check_url(registry))


@contextlib.contextmanager
def _locked() -> Iterator[Path]:
    import filelock

    path = _path()
    with filelock.FileLock(path.with_name(".tokens.lock"), timeout=60, mode=0o600):
        yield path


def _read(path: Path) -> dict[str, dict[str, str]]:
    """origin -> {"store": "keyring"} or {"store": "file", "token": ...}."""
    if not path.exists():
        return {}
    check_private(path, is_dir=False)
    try:
        doc: Any = read_user_json(path, InputError, "a token store", limit=MAX_KEY_FILE_BYTES)
    except InputError as exc:
        raise InputError(f"{exc}; it is not a token file pith wrote: remove it") from None
    if not isinstance(doc, dict):
        raise InputError(f"{path} is not a token file pith wrote; remove it")
    if doc.get("version") != FILE_VERSION:  # the first format: {registry URL: token}
        return {
            _origin(str(url)): {"store": "file", "token": str(token)}
            for url, token in doc.items()
            if isinstance(token, str)
        }
    entries = doc.get("tokens")
    if not isinstance(entries, dict):
        raise InputError(f"{path} is not a token file pith wrote; remove it")
    return {str(k): {str(a): str(b) for a, b in v.items()} for k, v in entries.items()}


def _write(path: Path, entries: dict[str, dict[str, str]]) -> None:
    # keyring-held tokens are listed here too: a keyring cannot be asked what it holds, and
    # `stored_registries` must answer without the secrets
    doc = {"version": FILE_VERSION, "tokens": entries}
    replace_file(path, json.dumps(doc, indent=2, sort_keys=True) + "\n", mode=0o600)


def env_token_origin() -> str:
    """The origin `PITH_TOKEN` belongs to: that of `PITH_REGISTRY`, else of the default."""
    return _origin(os.environ.get("PITH_REGISTRY") or DEFAULT_REGISTRY)


def token_for(registry: str) -> str | None:
    """The token for `registry`'s origin: PITH_TOKEN if it is for that origin, else the one
    stored for it, else None."""
    where = _origin(registry)
    env = os.environ.get(TOKEN_ENV, "").strip()
    # only for PITH_REGISTRY's origin: a `--registry` pointing elsewhere (anyone's server)
    # must not receive the token a CI job set for its own registry
    if env and where == env_token_origin():
        return env
    entry = _read(_path()).get(where)
    if entry is None:
        return None
    if entry.get("store") == "keyring":
        try:
            return keyring_store.load(_KEYRING_PREFIX + where)
        except KeyringUnavailable as exc:
            raise AuthError(
                f"the token for {where} is in the OS keyring, which failed: {exc}"
            ) from None
    return entry.get("token")


def store_token(registry: str, token: str) -> str:
    """Store `token` for `registry`'s origin; returns where it went ("keyring" or the file)."""
    token = token.strip()
    # it goes into an `Authorization` header: a line break there would start another header
    if not token or any(c.isspace() for c in token):
        raise InputError("a token is one non-empty word (no spaces or line breaks)")
    where = _origin(registry)
    with _locked() as path:
        entries = _read(path)
        store = "file"
        if keyring_store.probe().usable:
            try:
                keyring_store.store(_KEYRING_PREFIX + where, token)
                if keyring_store.load(_KEYRING_PREFIX + where) == token:
                    store = "keyring"
            except KeyringUnavailable:
                pass
        if store == "file" and entries.get(where, {}).get("store") == "keyring":
            with contextlib.suppress(KeyringUnavailable):
                keyring_store.delete(_KEYRING_PREFIX + where)
        entries[where] = (
            {"store": "keyring"} if store == "keyring" else {"store": "file", "token": token}
        )
        _write(path, entries)
    return "the OS keyring" if store == "keyring" else str(path)


def forget_token(registry: str) -> bool:
    """Remove the token stored for `registry`'s origin; False if there was none."""
    where = _origin(registry)
    with _locked() as path:
        entries = _read(path)
        entry = entries.pop(where, None)
        if entry is None:
            return False
        if entry.get("store") == "keyring":
            keyring_store.delete(_KEYRING_PREFIX + where)
        _write(path, entries)
    return True


def stored_registries() -> list[str]:
    """The origins a token is stored for (never the tokens)."""
    return sorted(_read(_path()))
