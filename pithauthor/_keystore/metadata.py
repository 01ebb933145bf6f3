"""The public key list (`keys.json` beside the key files): never holds a secret."""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from pithauthor._core.strict_json import parse_json
from pithauthor._keystore.files import read_private, replace_private
from pithauthor._paths import pith_home, private_dir
from pithauthor.errors import KeyFileTampered, KeyStoreError

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
