"""The registry keys pithauthor trusts: the pinned Pith manifest, plus keys the user adds."""

from __future__ import annotations

import os
from collections.abc import Iterable
from functools import cache
from importlib import resources
from pathlib import Path

from pithauthor.errors import DocumentError
from pithauthor.fs import MAX_MANIFEST_BYTES, read_user_json
from pithauthor.protocol.canonical_json import parse_json
from pithauthor.protocol.verdict import RegistryKey, Trust

__all__ = ["RegistryKey", "Trust", "default_trust", "load_manifest_file", "pinned_trust"]

PINNED_MANIFEST = "pith-mirrors.json"
TRUST_ENV = "PITH_TRUST"


@cache
def pinned_trust() -> Trust:
    """The Pith registry key shipped with the package (`pithauthor/data/pith-mirrors.json`)."""
    # shipped, never fetched: a manifest fetched from the registry would be the registry
    # vouching for itself (section 3: a client pins the key)
    text = resources.files("pithauthor").joinpath("data", PINNED_MANIFEST).read_text("utf-8")
    return Trust.from_manifest(parse_json(text))


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
