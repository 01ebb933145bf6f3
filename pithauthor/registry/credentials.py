"""What this machine holds for registries: the keys it trusts (the pinned Pith manifest, plus
manifests the user adds) and the sign-in tokens, each bound to one origin.
"""

from __future__ import annotations

import contextlib
import json
import os
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from pithauthor.errors import AuthError, DocumentError, InputError, KeyringUnavailable
from pithauthor.fs import (
    MAX_KEY_FILE_BYTES,
    MAX_MANIFEST_BYTES,
    check_private,
    private_dir,
    read_user_json,
    replace_file,
)
from pithauthor.keys import storage
from pithauthor.net import DEFAULT_REGISTRY, check_url
from pithauthor.protocol.urls import origin
from pithauthor.protocol.verdict import Trust
from pithauthor.verify import pinned_trust

__all__ = [
    "default_trust",
    "load_manifest_file",
]


# The registry keys pithauthor trusts: the pinned Pith manifest, plus keys the user adds.

TRUST_ENV = "PITH_TRUST"


TRUST_LOCAL_ENV = "PITH_TRUST_LOCAL_REGISTRY"
"""`1`: `--trust-local-registry` for every command of a session (a loopback registry only), so
that one `export` beside `PITH_REGISTRY` tries a whole page of the docs on a local registry."""


def load_manifest_file(path: Path, *, local: bool = True, label: str = "manifest") -> Trust:
    """Keys from a manifest file the user chose to trust (e.g. a local registry's), each
    labelled `<label> <path>` (`--trust-manifest`, `PITH_TRUST`). `local` by default: a key
    the user adds is reported as theirs to vouch for, never as the pinned key's word."""
    doc = read_user_json(path, DocumentError, "a mirror manifest", limit=MAX_MANIFEST_BYTES)
    mirrors = doc.get("mirrors", []) if isinstance(doc, dict) else None
    if not isinstance(mirrors, list) or not all(
        isinstance(m, dict) and isinstance(m.get("public_key", {}), dict) for m in mirrors
    ):
        raise DocumentError(f"{path} is not a mirror manifest (a JSON object with mirrors)")
    try:
        return Trust.from_manifest(doc, local=local, source=f"{label} {path}")
    except DocumentError as exc:
        raise DocumentError(f"{path}: {exc}") from None


def default_trust(manifests: Iterable[Path | str] = ()) -> Trust:
    """The pinned key, plus the manifests in `$PITH_TRUST` (OS path separator) and
    `manifests` (`--trust-manifest`), each key labelled with where it came from. A manifest
    naming a trusted key id with another key is refused (`DocumentError`, exit 2)."""
    trust = pinned_trust()
    paths = [p for p in os.environ.get(TRUST_ENV, "").split(os.pathsep) if p.strip()]
    sources = [(p, f"{TRUST_ENV} manifest") for p in paths]
    sources += [(str(p), "--trust-manifest") for p in manifests]
    for path, label in sources:
        trust = trust.with_keys(load_manifest_file(Path(path), label=label).keys.values())
    return trust


# Bearer tokens for registries that want sign-in, each bound to one origin.
#
# - `PITH_TOKEN` is for the origin of `PITH_REGISTRY` (https://pith.science when unset) only.
# - `pith auth login` stores a token for the registry's origin (`scheme://host:port`): in the OS
#   keyring when a usable one answers (the key store's probe), else in
#   `<PITH_HOME>/auth/tokens.json` (folder 0700, file 0600). That file always lists which origins
#   have a token and where it is; it holds a token's value only when no keyring was usable.
# - The client sends a token only to its own origin, and on reads only when that registry asked
#   (see `pithauthor.net.RegistryHttp`).

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
            return storage.load(_KEYRING_PREFIX + where)
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
        if storage.probe().usable:
            try:
                storage.store(_KEYRING_PREFIX + where, token)
                if storage.load(_KEYRING_PREFIX + where) == token:
                    store = "keyring"
            except KeyringUnavailable:
                pass
        if store == "file" and entries.get(where, {}).get("store") == "keyring":
            with contextlib.suppress(KeyringUnavailable):
                storage.delete(_KEYRING_PREFIX + where)
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
            storage.delete(_KEYRING_PREFIX + where)
        _write(path, entries)
    return True


def stored_registries() -> list[str]:
    """The origins a token is stored for (never the tokens)."""
    return sorted(_read(_path()))
