"""The registry keys pithauthor trusts: the pinned Pith manifest, plus keys the user adds."""

from __future__ import annotations

from functools import cache
from importlib import resources
from pathlib import Path

from pithauthor._core.strict_json import parse_json
from pithauthor._core.trust import RegistryKey, Trust
from pithauthor.errors import DocumentError

__all__ = ["RegistryKey", "Trust", "load_manifest_file", "pinned_trust"]

PINNED_MANIFEST = "pith-mirrors.json"


@cache
def pinned_trust() -> Trust:
    """The Pith registry key shipped with the package (`pithauthor/data/pith-mirrors.json`)."""
    text = resources.files("pithauthor").joinpath("data", PINNED_MANIFEST).read_text("utf-8")
    return Trust.from_manifest(parse_json(text))


def load_manifest_file(path: Path, *, local: bool = True) -> Trust:
    """Keys from a manifest file the user chose to trust (e.g. a local registry's)."""
    from pithauthor._files import MAX_MANIFEST_BYTES, read_user_json

    doc = read_user_json(path, DocumentError, "a mirror manifest", limit=MAX_MANIFEST_BYTES)
    mirrors = doc.get("mirrors", []) if isinstance(doc, dict) else None
    if not isinstance(mirrors, list) or not all(
        isinstance(m, dict) and isinstance(m.get("public_key", {}), dict) for m in mirrors
    ):
        raise DocumentError(f"{path} is not a mirror manifest (a JSON object with mirrors)")
    try:
        return Trust.from_manifest(doc, local=local)
    except DocumentError as exc:
        raise DocumentError(f"{path}: {exc}") from None
