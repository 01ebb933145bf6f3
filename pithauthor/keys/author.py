"""Author keys: create, list, export, back up, restore, rotate, delete, and load one for signing.

The public key names itself (see `pithauthor.protocol.identity`):

    public_key_fingerprint = hex(sha256(pk)[:16])
    key_id                 = "ed25519:" + base32(sha256(pk))[:26]

The 32-byte secret seed lives in the OS keyring or in an argon2id/SecretBox-encrypted file under
`$PITH_HOME/keys/`; public facts live in `keys.json` beside it. See docs/keys.md.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pithauthor.errors import (
    InputError,
    KeyExists,
    KeyFileTampered,
    KeyNotFound,
    KeyRetired,
    NetworkError,
)
from pithauthor.fs import MAX_KEY_FILE_BYTES, pith_home, read_user_json
from pithauthor.keys import secrets
from pithauthor.keys.passphrase import PassphraseSource, backup_passphrase_source, passphrase_source
from pithauthor.keys.secrets import (
    Note,
    PreparedSecret,
    load_seed,
    new_seed,
    prepare_seed,
    public_key_of,
    remove_seed,
    stderr_note,
)
from pithauthor.keys.storage import (
    METADATA_FILE,
    KeyRecord,
    create_private,
    keystore_lock,
    load_records,
    save_records,
)
from pithauthor.protocol.canonical_json import b64decode, b64encode
from pithauthor.protocol.checks.event import vouch
from pithauthor.protocol.events import signature_block
from pithauthor.protocol.identity import fingerprint_hex, key_id, normalize_orcid, signer_id
from pithauthor.protocol.text import text_problem
from pithauthor.protocol.utc import utc_now

if TYPE_CHECKING:
    from pithauthor.protocol.documents import AuthorEvent

__all__ = [
    "BACKED_UP_AT",
    "BACKUP_FILE",
    "PENDING_SIGNATURE",
    "AuthorKey",
    "DeferredKey",
    "backup",
    "deferred_signing_key",
    "delete",
    "export_public",
    "generate",
    "import_backup",
    "known_keys",
    "list_keys",
    "load_key",
    "load_signing_key",
    "rotate",
    "set_public_name",
    "show",
]


_NAME_RE = re.compile(r"[A-Za-z0-9][A-Za-z0-9._@+-]{0,63}")


class _KeyFacts:
    """What a key's public record says, shared by a loaded key (`AuthorKey`) and one whose
    secret is opened later (`DeferredKey`); each says where its public key comes from."""

    __slots__ = ()
    _record: KeyRecord

    @property
    def public_key(self) -> bytes:
        raise NotImplementedError

    @property
    def signer_id(self) -> str:
        return signer_id(self.public_key, self.orcid)

    @property
    def key_id(self) -> str:
        return self._record.key_id

    @property
    def name(self) -> str:
        return self._record.name

    @property
    def orcid(self) -> str | None:
        return self._record.orcid

    @property
    def public_name(self) -> str | None:
        """The author's name as on their papers (signed into claims); None until set."""
        return self._record.public_name

    @property
    def status(self) -> str:
        return self._record.status


class AuthorKey(_KeyFacts):
    """A loaded author key: satisfies the envelope's `Signer` protocol. Never shows its secret."""

    __slots__ = ("_crypto_sign", "_public", "_record", "_secret", "_signing_key")

    def __init__(self, seed: bytes, record: KeyRecord) -> None:
        from nacl.bindings import crypto_sign, crypto_sign_seed_keypair
        from nacl.signing import SigningKey

        self._signing_key = SigningKey(seed)
        # the public half and the 64-byte secret key libsodium signs with (what `SigningKey`
        # keeps): `sign_digest` calls PyNaCl's public binding `crypto_sign(message, secret)`
        # itself, which `SigningKey.sign` calls before it splits the signed message through
        # three encoder calls into a `SignedMessage` (whose `signature` was then copied): the
        # same libsodium signature, about a microsecond less per event of a bibliography
        self._public, self._secret = crypto_sign_seed_keypair(seed)
        self._crypto_sign = crypto_sign
        self._record = record

    def __repr__(self) -> str:
        return f"AuthorKey(name={self.name!r}, key_id={self.key_id!r}, status={self.status!r})"

    __str__ = __repr__

    def __reduce__(self) -> Any:
        # a pickle or a deep copy would carry the seed wherever it goes (a process pool's pipe,
        # a cache on disk): a loaded key stays in this process
        raise TypeError("an AuthorKey holds a secret and cannot be pickled or copied")

    @property
    def public_key(self) -> bytes:
        return self._public  # (bytes: immutable, so one object serves every event)

    @property
    def fingerprint(self) -> str:
        return self._record.public_key_fingerprint

    @property
    def created_at(self) -> str:
        return self._record.created_at

    @property
    def record(self) -> KeyRecord:
        """The public metadata of this key (a copy)."""
        return KeyRecord.from_json(self._record.to_json())

    def self_test(self) -> None:
        """Sign and verify a fixed message (any status); KeyFileTampered if that fails."""
        from nacl.exceptions import BadSignatureError
        from nacl.signing import VerifyKey

        digest = hashlib.sha256(b"pithauthor key self-test").digest()
        signature = self._crypto_sign(digest, self._secret)[:64]  # as `sign_digest` signs
        try:
            VerifyKey(b64decode(self._record.public_key_b64)).verify(digest, signature)
        except BadSignatureError:
            raise KeyFileTampered(f"key {self.key_id} does not sign for its public key") from None

    def sign_digest(self, digest: bytes) -> bytes:
        """Ed25519 signature (64 bytes) over the 32 raw bytes of a SHA-256 digest."""
        # refused here, where every signature is made, whatever path led to the key
        if self.status != "active":
            raise KeyRetired(f"key {self.name!r} ({self.key_id}) is retired; it cannot sign")
        if len(digest) != 32:
            raise ValueError("sign_digest takes the 32 raw bytes of a SHA-256 digest")
        return self._crypto_sign(digest, self._secret)[:64]  # the signature, then the digest


PENDING_SIGNATURE = bytes(64)
"""What a `DeferredKey` signs with until its key is opened: 64 zero bytes, which no Ed25519
public key verifies (an event that kept it would fail every check, never pass one)."""


class DeferredKey(_KeyFacts):
    """An author key whose secret is opened only when its signatures are due. Events are built
    and named (their event_id covers the public key, never the signature) with its public half
    from the key list; each signature is left pending (PENDING_SIGNATURE), and `sign_pending`
    opens the key -- asking the passphrase then -- and puts the real signatures in. What a
    signing command shows before it asks "Sign?" needs no secret: the passphrase is asked after
    the author has seen what will be signed, and said yes. Satisfies the envelope's `Signer`."""

    __slots__ = ("_key", "_made", "_passphrase", "_pending", "_record")

    def __init__(self, record: KeyRecord, passphrase: PassphraseSource | None = None) -> None:
        if record.status != "active":  # as load_signing_key refuses it
            raise KeyRetired(
                f"key {record.name!r} ({record.key_id}) is retired; sign with the active key"
            )
        self._record = record
        self._passphrase = passphrase
        self._pending: set[bytes] = set()
        self._made: set[bytes] = set()  # pending digests of events `pithauthor.sign` built
        self._key: AuthorKey | None = None

    def __repr__(self) -> str:
        return f"DeferredKey(name={self.name!r}, key_id={self.key_id!r})"

    @property
    def public_key(self) -> bytes:
        return b64decode(self._record.public_key_b64)

    @property
    def pending(self) -> int:
        """How many signatures wait for the key."""
        return len(self._pending)

    def sign_digest(self, digest: bytes) -> bytes:
        """PENDING_SIGNATURE, the digest remembered for `sign_pending`."""
        if len(digest) != 32:
            raise ValueError("sign_digest takes the 32 raw bytes of a SHA-256 digest")
        if self._key is not None:  # opened already: a real signature at once
            return self._key.sign_digest(digest)
        self._pending.add(digest)
        return PENDING_SIGNATURE

    def made_here(self, event: AuthorEvent) -> None:
        """`event` was built and named by `pithauthor.sign` with this key's public half: it is
        vouched for (`pithauthor.protocol.checks.event.vouch`: the outbox stores it without
        checking it again) once its signature is the key's own, at once if the key is open
        (its signature was made by it), else when `sign_pending` puts it in. The opened key
        signs for this public key (`unlock` compares them), as an `AuthorKey`'s events are
        vouched for (a 300-entry `pith cite` checked its 300 events again)."""
        digest = bytes.fromhex(event["event_id"].removeprefix("sha256:"))
        if digest in self._pending:
            self._made.add(digest)
        elif self._key is not None:
            vouch(event)

    def unlock(self) -> AuthorKey:
        """Open the key (once; the passphrase is asked now, when one is needed)."""
        if self._key is None:
            key = load_signing_key(self.name, passphrase=self._passphrase)
            if key.public_key != self.public_key:
                raise KeyFileTampered(
                    f"key {self.key_id}: its secret does not match its public key in keys.json"
                )
            self._key = key
        return self._key

    def sign_pending(self, events: Iterable[AuthorEvent]) -> None:
        """Put the real signature into each of `events` whose signature is pending (in place:
        every holder of the event sees it signed). Opens the key only when one is pending."""
        todo = []
        for event in events:
            digest = bytes.fromhex(event["event_id"].removeprefix("sha256:"))
            if digest in self._pending:
                todo.append((event, digest))
        if not todo:
            return
        key = self.unlock()
        for event, digest in todo:
            event["signature"] = signature_block(key.sign_digest(digest))
            self._pending.discard(digest)
            if digest in self._made:  # built by pithauthor.sign, now signed by this key
                self._made.discard(digest)
                vouch(event)


def deferred_signing_key(
    name: str | None = None, *, passphrase: PassphraseSource | None = None
) -> DeferredKey:
    """The key to sign with (as `load_signing_key` chooses it), its secret opened only when
    its pending signatures are put in (`DeferredKey.sign_pending`)."""
    return DeferredKey(_resolve(load_records(), name), passphrase)


# --- helpers ------------------------------------------------------------------------------------


# when a key record is made: its own name so that a test can set the clock of key creation
# alone (tests/unit/identity/test_proofs_retirement.py), not every stamp this module writes
_now = utc_now


def _check_name(name: str) -> str:
    if not _NAME_RE.fullmatch(name):
        raise InputError(
            f"key name {name!r}: use 1-64 letters, digits, '.', '_', '@', '+' or '-', "
            "starting with a letter or digit"
        )
    return name


def check_public_name(public_name: str) -> str:
    """The public name, white space folded; InputError when empty, too long or not text."""
    clean = " ".join(public_name.split())
    if not clean:
        raise InputError("the public name is empty; give the name you publish under")
    if len(clean) > 200:
        raise InputError("the public name is longer than 200 characters")
    problem = text_problem(clean)  # the rule every signed text field meets
    if problem is not None:
        raise InputError(f"the public name {problem}")
    return clean


def _new_record(
    seed: bytes,
    name: str,
    orcid: str | None,
    status: str = "active",
    public_name: str | None = None,
) -> KeyRecord:
    pk = public_key_of(seed)
    return KeyRecord(
        name=name,
        key_id=key_id(pk),
        public_key_fingerprint=fingerprint_hex(pk),
        public_key_b64=b64encode(pk),
        created_at=_now(),
        backend="file",
        status=status,
        orcid=orcid,
        public_name=public_name,
    )


def _resolve(records: list[KeyRecord], ref: str | None) -> KeyRecord:
    """The key named by `ref` (name, key id or fingerprint); None = the single active key."""
    if ref is None:
        active = [r for r in records if r.status == "active"]
        if not active:
            raise KeyNotFound("no active key; create one with: pith keys generate --name NAME")
        if len(active) > 1:
            names = ", ".join(sorted(r.name for r in active))
            raise KeyNotFound(f"several active keys ({names}); choose one with --key NAME")
        return active[0]
    # a key id or fingerprint names one key; a name may be shared by the active key and the
    # retired ones it replaced (rotation keeps the name): the active one, else the newest
    by_id = [r for r in records if ref in (r.key_id, r.public_key_fingerprint)]
    if by_id:
        return by_id[0]
    named = [r for r in records if r.name == ref]
    if not named:
        raise KeyNotFound(f"no key named {ref!r}; see: pith keys list")
    active = [r for r in named if r.status == "active"]
    if len(active) > 1:
        raise KeyFileTampered(f"the key list has several active keys named {ref!r}")
    return active[0] if active else max(named, key=lambda r: r.created_at)


def _ensure_name_free(records: list[KeyRecord], name: str) -> None:
    if any(r.name == name and r.status == "active" for r in records):
        raise KeyExists(
            f"an active key named {name!r} exists; use another name or pith keys rotate"
        )


def _commit(
    prepared: PreparedSecret,
    change: Callable[[list[KeyRecord]], list[KeyRecord]],
    note: Note,
) -> None:
    """Under the key-store lock: re-read the key list, let `change` check and extend it, write
    the key file, then the list. On any failure the new secret is removed again."""
    try:
        with keystore_lock():
            records = change(load_records())
            # the secret before the list: a crash between leaves an unlisted key file, never a
            # listed key whose secret is gone
            prepared.write()
            save_records(records)
    except BaseException:
        prepared.discard()
        raise
    if prepared.notice:
        note(prepared.notice)


# --- public API ---------------------------------------------------------------------------------


def generate(
    name: str,
    *,
    orcid: str | None = None,
    public_name: str | None = None,
    backend: str = "auto",
    passphrase: PassphraseSource | None = None,
    insecure_plaintext: bool = False,
    note: Note = stderr_note,
) -> KeyRecord:
    """Create and store a new active Ed25519 key; returns its public record. `name` labels the
    key on this machine; `public_name` is the name claims sign (the one on your papers)."""
    _check_name(name)
    clean_orcid = normalize_orcid(orcid) if orcid else None
    clean_public = check_public_name(public_name) if public_name is not None else None
    _ensure_name_free(load_records(), name)  # early answer; checked again under the lock
    seed = new_seed()
    record = _new_record(seed, name, clean_orcid, public_name=clean_public)
    prepared = prepare_seed(
        seed,
        record,
        backend=backend,
        passphrase=passphrase or passphrase_source(),
        insecure_plaintext=insecure_plaintext,
    )

    def add(records: list[KeyRecord]) -> list[KeyRecord]:
        _ensure_name_free(records, name)
        return [*records, record]

    _commit(prepared, add, note)
    return record


def list_keys() -> list[KeyRecord]:
    """Every key, active and retired, oldest first."""
    return sorted(load_records(), key=lambda r: r.created_at)


def known_keys() -> list[KeyRecord]:
    """`list_keys()`, but an empty list where there is no key store yet, which it does not
    create: for read-only callers (shell completion, `pith doctor`)."""
    if not (pith_home() / "keys" / METADATA_FILE).exists():
        return []
    return list_keys()


BACKED_UP_AT = "backed_up_at"


"""Key-list field (kept in KeyRecord.extra): when `backup` last wrote the key, for doctor."""


BACKUP_FILE = "backup_file"


def show(name: str | None = None) -> KeyRecord:
    """The public record of one key (None = the single active key)."""
    return _resolve(load_records(), name)


def export_public(name: str | None = None) -> dict[str, Any]:
    """The public key and its names, as a verifier needs them."""
    record = show(name)
    pk = b64decode(record.public_key_b64)
    return {
        "algorithm": "ed25519",
        "key_id": record.key_id,
        "public_key_fingerprint": record.public_key_fingerprint,
        "public_key_b64": record.public_key_b64,
        "signer_id": signer_id(pk, record.orcid),
        "name": record.name,
        "public_name": record.public_name,
        "orcid": record.orcid,
        "status": record.status,
        "created_at": record.created_at,
    }


def load_key(
    name: str | None = None, *, passphrase: PassphraseSource | None = None, note: Note = stderr_note
) -> AuthorKey:
    """Unlock any key, active or retired (a retired key still refuses to sign)."""
    record = _resolve(load_records(), name)
    seed = load_seed(record, passphrase or passphrase_source(), note)
    return AuthorKey(seed, record)


def load_signing_key(
    name: str | None = None, *, passphrase: PassphraseSource | None = None
) -> AuthorKey:
    """The key to sign with: the named one, or the single active key. KeyRetired if retired."""
    record = _resolve(load_records(), name)
    if record.status != "active":
        raise KeyRetired(
            f"key {record.name!r} ({record.key_id}) is retired; sign with the active key"
        )
    return AuthorKey(load_seed(record, passphrase or passphrase_source(), stderr_note), record)


def _note_backup(key_id: str, out: Path) -> None:
    """Remember in the key list that (and where) this key was backed up, so that `pith doctor`
    can tell a key with a backup from one whose loss would be final. The backup is already
    written: a key list that cannot be updated now only costs that note."""
    with keystore_lock():
        records = load_records()
        for record in records:
            if record.key_id == key_id:
                record.extra[BACKED_UP_AT] = utc_now()
                record.extra[BACKUP_FILE] = str(out.resolve())
        save_records(records)


def set_public_name(name: str | None, public_name: str) -> KeyRecord:
    """Set the public name of a key (the named one, or the single active key); returns its
    record. Claims signed before keep the name they were signed with."""
    clean = check_public_name(public_name)
    with keystore_lock():
        records = load_records()
        record = _resolve(records, name)
        record.public_name = clean
        save_records(records)
    return record


def delete(name: str) -> KeyRecord:
    """Remove one key, secret and record. Returns the removed record."""
    with keystore_lock():
        records = load_records()
        record = _resolve(records, name)
        remove_seed(record)
        save_records([r for r in records if r.key_id != record.key_id])
    return record


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
    orcid_retirement: Callable[[KeyRecord], str | None] | None,
    note: Note = stderr_note,
) -> KeyRecord:
    """Restore a key from a backup file into this PITH_HOME.

    A backup made before a rotation says the key is active; it comes back retired when the
    store holds the key that replaced it, or, for a key with an ORCID iD, when
    `orcid_retirement(record)` says when it was retired (`""`: at an unstated date; None: not
    retired). The caller asks that question (keys do no network I/O and sit below identity):
    the command line passes `pithauthor.identity.proofs.orcid_retirement`. It has no default,
    so no caller skips the question unawares. NetworkError from it when ORCID cannot be asked:
    pass `orcid_retirement=None` (`pith keys import --offline`) to restore the key as the
    backup says."""
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
    if record.status == "active" and record.orcid is not None and orcid_retirement is not None:
        try:  # before the lock: no network wait is held under it
            when = orcid_retirement(record)
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
