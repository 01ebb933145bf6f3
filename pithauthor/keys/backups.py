"""Backups of author keys (one encrypted file per key), importing them, and rotating a key
(a new key; the old one marked retired, the two linked by `replaces` and `replaced_by`).
"""

from __future__ import annotations

import json
from pathlib import Path

from pithauthor.errors import (
    InputError,
    KeyExists,
    KeyFileTampered,
    KeyNotFound,
    KeyRetired,
    NetworkError,
)
from pithauthor.fs import MAX_KEY_FILE_BYTES, read_user_json
from pithauthor.identity.proofs import orcid_retirement
from pithauthor.keys import secrets
from pithauthor.keys.author import (
    BACKED_UP_AT,
    BACKUP_FILE,
    _check_name,
    _commit,
    _ensure_name_free,
    _new_record,
    _note_backup,
    _resolve,
)
from pithauthor.keys.passphrase import PassphraseSource, backup_passphrase_source, passphrase_source
from pithauthor.keys.secrets import (
    Note,
    load_seed,
    new_seed,
    prepare_seed,
    public_key_of,
    stderr_note,
)
from pithauthor.keys.storage import KeyRecord, create_private, load_records
from pithauthor.protocol.canonical_json import b64encode
from pithauthor.protocol.identity import fingerprint_hex, key_id

__all__ = [
    "backup",
    "import_backup",
    "rotate",
]


BACKUP_KIND = "backup"


def backup(
    name: str | None,
    out: Path,
    *,
    passphrase: PassphraseSource | None = None,
    backup_passphrase: PassphraseSource | None = None,
    note: Note = stderr_note,
) -> KeyRecord:
    """Write one key (secret + public record) to `out`, encrypted under the backup passphrase."""
    key_source = passphrase or passphrase_source()
    record = _resolve(load_records(), name)
    seed = load_seed(record, key_source, note)
    secret = (backup_passphrase or backup_passphrase_source(None, key_source)).get(
        "Backup passphrase: ", confirm=True
    )
    local = ("backend", "file", BACKED_UP_AT, BACKUP_FILE)  # this machine's facts, not the key's
    public = {k: v for k, v in record.to_json().items() if k not in local}
    doc = secrets.seal(seed, secret, {"kind": BACKUP_KIND, "key": public})
    create_private(Path(out), json.dumps(doc, indent=2) + "\n")
    _note_backup(record.key_id, Path(out))
    return record


def _retired_by_successor(record: KeyRecord, records: list[KeyRecord]) -> str | None:
    """The key in the store that replaced `record` (its `replaces`), marking it retired."""
    if record.status != "active":
        return None
    for r in records:
        if r.replaces == record.key_id:
            record.status, record.retired_at, record.replaced_by = "retired", r.created_at, r.key_id
            return f"the key store (replaced by {r.key_id})"
    return None


def import_backup(
    path: Path,
    *,
    backup_passphrase: PassphraseSource | None = None,
    backend: str = "auto",
    passphrase: PassphraseSource | None = None,
    insecure_plaintext: bool = False,
    check_orcid: bool = True,
    orcid_api: str | None = None,
    note: Note = stderr_note,
) -> KeyRecord:
    """Restore a key from a backup file into this PITH_HOME.

    A backup made before a rotation says the key is active; it comes back retired when the
    store holds the key that replaced it, or (`check_orcid`, for a key with an ORCID iD) when
    the ORCID link marks it retired. NetworkError when ORCID cannot be asked: pass
    `check_orcid=False` (`pith keys import --offline`) to restore it as the backup says."""
    key_source = passphrase or passphrase_source()
    where = f"backup {path}"
    doc = read_user_json(path, InputError, "a pithauthor key backup", limit=MAX_KEY_FILE_BYTES)
    if not isinstance(doc, dict) or doc.get("kind") != BACKUP_KIND:
        raise InputError(f"{where} is not a pithauthor key backup")
    secret = (backup_passphrase or backup_passphrase_source(None, key_source)).get(
        "Backup passphrase: "
    )
    seed = secrets.open_seed(doc, secret, where)
    try:
        record = KeyRecord.from_json({**doc.get("key", {}), "backend": "file"})
    except (ValueError, TypeError):
        raise KeyFileTampered(f"{where}: the key record is malformed") from None
    pk = public_key_of(seed)
    if (record.public_key_b64, record.key_id) != (b64encode(pk), key_id(pk)):
        raise KeyFileTampered(f"{where}: the secret does not match the public key in the backup")
    record.public_key_fingerprint = fingerprint_hex(pk)  # recomputed, never the file's word
    _check_name(record.name)
    why: list[str] = []

    def add(records: list[KeyRecord]) -> list[KeyRecord]:
        if any(r.key_id == record.key_id for r in records):
            raise KeyExists(f"key {record.key_id} is already in this key store")
        successor = _retired_by_successor(record, records)
        if successor is not None:
            why.append(successor)
        if record.status == "active":
            _ensure_name_free(records, record.name)
        return [*records, record]

    add(load_records())  # early answer, before any secret is stored; again under the lock
    # A backup from before a rotation says "active": restored so, a key the author retired
    # could sign again. Its ORCID link is the author's public word on it, so it is asked.
    if record.status == "active" and record.orcid is not None and check_orcid:
        try:  # before the lock: no network wait is held under it
            when = orcid_retirement(record, orcid_api)
        except NetworkError as exc:
            raise NetworkError(
                f"{exc}; retry, or restore it as the backup says (active) with: "
                "pith keys import --offline"
            ) from None
        if when is not None:
            record.status, record.retired_at = "retired", when or None
            why.append(f"its ORCID link ({record.orcid})")
    prepared = prepare_seed(
        seed,
        record,
        backend=backend,
        passphrase=key_source,
        insecure_plaintext=insecure_plaintext,
    )
    _commit(prepared, add, note)
    if why:
        note(
            f"key {record.key_id} restored as retired (per {why[0]}, "
            f"{record.retired_at or 'at an unstated date'}): its signatures verify; it cannot "
            "sign"
        )
    return record


def rotate(
    name: str | None = None,
    *,
    backend: str = "auto",
    passphrase: PassphraseSource | None = None,
    insecure_plaintext: bool = False,
    note: Note = stderr_note,
) -> tuple[KeyRecord, KeyRecord]:
    """Make a new active key with the same name and ORCID; the old one becomes retired.

    Returns (retired, new). The retired key's public record stays, so its signatures verify.
    """

    def current(records: list[KeyRecord]) -> KeyRecord:
        old = _resolve(records, name)
        if old.status != "active":
            raise KeyRetired(f"key {old.name!r} ({old.key_id}) is already retired")
        return old

    first = current(load_records())  # early answer; the key to retire is found again below
    seed = new_seed()
    new = _new_record(seed, first.name, first.orcid, public_name=first.public_name)
    prepared = prepare_seed(
        seed,
        new,
        backend=backend,
        passphrase=passphrase or passphrase_source(),
        insecure_plaintext=insecure_plaintext,
    )
    retired: list[KeyRecord] = []

    def retire(records: list[KeyRecord]) -> list[KeyRecord]:
        old = current(records)  # a concurrent rotate may have made another key active
        if (old.name, old.orcid) != (first.name, first.orcid):
            raise KeyNotFound(f"key {name!r} changed while rotating; run the command again")
        new.replaces = old.key_id
        old.status, old.retired_at, old.replaced_by = "retired", new.created_at, new.key_id
        retired.append(old)
        return [*records, new]

    _commit(prepared, retire, note)
    return retired[0], new
