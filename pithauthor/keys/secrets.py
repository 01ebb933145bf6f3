"""A key's secret (its 32-byte seed): the passphrase-encrypted container that key files and
backups share (argon2id + XSalsa20-Poly1305), and reading and writing secrets in the OS keyring
or in key files.
"""

from __future__ import annotations

import contextlib
import hashlib
import hmac
import json
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NamedTuple

from pithauthor.errors import (
    InputError,
    KeyFileTampered,
    KeyNotFound,
    KeyringUnavailable,
    WrongPassphrase,
)
from pithauthor.keys import secrets, storage
from pithauthor.keys.passphrase import PROMPT_TRIES, PassphraseSource, forbid_core_dumps
from pithauthor.keys.storage import KeyRecord, create_private, keys_dir, read_private
from pithauthor.protocol.canonical_json import b64decode, b64encode, canonical, parse_json

# PyNaCl is imported where a secrets is sealed or opened: `pith keys list` skips it.

# The passphrase-encrypted container of a 32-byte seed (key files and backups share it).
#
#     out        = argon2id(passphrase, salt, opslimit, memlimit) -> 64 bytes
#     box_key    = out[:32]   XSalsa20-Poly1305 (SecretBox) key for the seed
#     check_key  = out[32:]   BLAKE2b key for two tags:
#     check      = BLAKE2b(key=check_key, person="pith-pw-check", "pithauthor passphrase check v1")
#     mac        = BLAKE2b(key=check_key, person="pith-file-mac", canonical(document minus tags))
#
# Opening: a wrong `check` means a wrong passphrase (or changed KDF fields, which cannot be told
# apart); a right `check` with a wrong `mac`, a SecretBox failure, or a seed whose public key is
# not the one written in clear means the file was changed: KeyFileTampered.

FORMAT = "pithauthor-secret"


VERSION = 1


KDF_NAME = "argon2id"


CIPHER_NAME = "xsalsa20poly1305"


SEED_LENGTH = 32


TEST_FAST_KDF = False


"""TEST ONLY: the cheapest argon2id for new files, and weak files accepted. No environment
variable or option of the installed `pith` command sets it: only Python code that imports this
module does (pithauthor's test suite, through tests/conftest.py and
tests/support/pith_launcher.py)."""


_CHECK_TEXT = b"pithauthor passphrase check v1"


_TAG_FIELDS = ("check_b64", "mac_b64")


class KdfLimits(NamedTuple):
    """argon2id cost parameters."""

    opslimit: int
    memlimit: int


def moderate_limits() -> KdfLimits:
    """PyNaCl's moderate argon2id limits: the least a real file may use."""
    from nacl.pwhash import argon2id

    return KdfLimits(argon2id.OPSLIMIT_MODERATE, argon2id.MEMLIMIT_MODERATE)


def fast_kdf_enabled() -> bool:
    """True when the test-only cheap KDF is switched on (`TEST_FAST_KDF`)."""
    return TEST_FAST_KDF


def writing_limits() -> KdfLimits:
    """The limits new files get: moderate, or the minimum under the test-only switch."""
    if fast_kdf_enabled():
        from nacl.pwhash import argon2id

        return KdfLimits(argon2id.OPSLIMIT_MIN, argon2id.MEMLIMIT_MIN)
    return moderate_limits()


def seal(seed: bytes, passphrase: str, header: dict[str, Any]) -> dict[str, Any]:
    """A secrets document holding `seed`, with `header` (public, authenticated) in clear."""
    import nacl.secret
    import nacl.utils
    from nacl.pwhash import argon2id

    if len(seed) != SEED_LENGTH:
        raise ValueError("an Ed25519 seed is 32 bytes")
    limits = writing_limits()
    salt = nacl.utils.random(argon2id.SALTBYTES)
    box_key, check_key = _derive(passphrase, salt, limits)
    nonce = nacl.utils.random(nacl.secret.SecretBox.NONCE_SIZE)
    ciphertext = nacl.secret.SecretBox(box_key).encrypt(seed, nonce).ciphertext
    doc: dict[str, Any] = {
        "format": FORMAT,
        "version": VERSION,
        **header,
        "kdf": {
            "name": KDF_NAME,
            "opslimit": limits.opslimit,
            "memlimit": limits.memlimit,
            "salt_b64": b64encode(salt),
        },
        "cipher": {
            "name": CIPHER_NAME,
            "nonce_b64": b64encode(nonce),
            "ciphertext_b64": b64encode(ciphertext),
        },
    }
    doc["check_b64"] = b64encode(_check_tag(check_key))
    doc["mac_b64"] = b64encode(_mac_tag(check_key, doc))
    return doc


def open_seed(doc: Any, passphrase: str, where: str) -> bytes:
    """The seed inside `doc`; WrongPassphrase, KeyFileTampered as described in the module doc.
    From now on this process makes no core dump (see nodump)."""
    import nacl.exceptions
    import nacl.secret

    forbid_core_dumps()

    parsed = _parse(doc, where)
    box_key, check_key = _derive(passphrase, parsed.salt, parsed.limits)
    # `check` first: under a wrong passphrase the MAC fails too, and the user would be told
    # "tampered" for a typo. Constant-time compares: the tags leak nothing by timing.
    if not hmac.compare_digest(_check_tag(check_key), parsed.check):
        raise WrongPassphrase(f"wrong passphrase for {where}")
    if not hmac.compare_digest(_mac_tag(check_key, doc), parsed.mac):
        raise KeyFileTampered(f"{where} was changed after it was written (integrity check failed)")
    try:
        seed = nacl.secret.SecretBox(box_key).decrypt(parsed.ciphertext, parsed.nonce)
    except nacl.exceptions.CryptoError:
        raise KeyFileTampered(f"{where}: the encrypted seed fails its authentication") from None
    if len(seed) != SEED_LENGTH:
        raise KeyFileTampered(f"{where}: the decrypted seed is not 32 bytes")
    return bytes(seed)


class _Parsed(NamedTuple):
    limits: KdfLimits
    salt: bytes
    nonce: bytes
    ciphertext: bytes
    check: bytes
    mac: bytes


def _parse(doc: Any, where: str) -> _Parsed:
    """Structure and KDF-limit checks, before any expensive work."""
    from nacl.pwhash import argon2id

    def bad(why: str) -> KeyFileTampered:
        return KeyFileTampered(f"{where} is damaged or not a pithauthor file: {why}")

    if not isinstance(doc, dict) or doc.get("format") != FORMAT:
        raise bad("unknown format")
    if doc.get("version") != VERSION:
        raise bad(f"unsupported version {doc.get('version')!r}")
    kdf, cipher = doc.get("kdf"), doc.get("cipher")
    if not isinstance(kdf, dict) or kdf.get("name") != KDF_NAME:
        raise bad("kdf is not argon2id")
    if not isinstance(cipher, dict) or cipher.get("name") != CIPHER_NAME:
        raise bad("cipher is not xsalsa20poly1305")
    ops, mem = kdf.get("opslimit"), kdf.get("memlimit")
    if not isinstance(ops, int) or not isinstance(mem, int) or isinstance(ops, bool):
        raise bad("kdf limits are not integers")
    # A floor: a file pith accepts is never cheap to brute-force, whoever wrote it (a file
    # swapped in with weak limits would otherwise quietly lower the cost of guessing the
    # passphrase typed into it). A ceiling: the limits are read before anything is checked, so a
    # file asking for terabytes would exhaust the machine before it could be refused.
    floor = moderate_limits()
    if not fast_kdf_enabled() and (ops < floor.opslimit or mem < floor.memlimit):
        raise KeyFileTampered(
            f"{where} uses argon2id limits below the moderate minimum "
            f"(opslimit {ops} < {floor.opslimit} or memlimit {mem} < {floor.memlimit}); refused"
        )
    if ops > argon2id.OPSLIMIT_SENSITIVE * 4 or mem > argon2id.MEMLIMIT_SENSITIVE:
        raise bad("kdf limits are implausibly high")
    try:
        parsed = _Parsed(
            limits=KdfLimits(max(ops, argon2id.OPSLIMIT_MIN), max(mem, argon2id.MEMLIMIT_MIN)),
            salt=b64decode(str(kdf.get("salt_b64"))),
            nonce=b64decode(str(cipher.get("nonce_b64"))),
            ciphertext=b64decode(str(cipher.get("ciphertext_b64"))),
            check=b64decode(str(doc.get("check_b64"))),
            mac=b64decode(str(doc.get("mac_b64"))),
        )
    except (ValueError, UnicodeEncodeError):
        raise bad("a base64 field is malformed") from None
    if len(parsed.salt) != argon2id.SALTBYTES or len(parsed.nonce) != 24:
        raise bad("salt or nonce has the wrong length")
    if len(parsed.check) != 32 or len(parsed.mac) != 32:
        raise bad("an integrity tag has the wrong length")
    return parsed


def _derive(passphrase: str, salt: bytes, limits: KdfLimits) -> tuple[bytes, bytes]:
    from nacl.pwhash import argon2id

    out = argon2id.kdf(
        64, passphrase.encode("utf-8"), salt, opslimit=limits.opslimit, memlimit=limits.memlimit
    )
    return out[:32], out[32:]


def _check_tag(check_key: bytes) -> bytes:
    return hashlib.blake2b(
        _CHECK_TEXT, key=check_key, person=b"pith-pw-check", digest_size=32
    ).digest()


def _mac_tag(check_key: bytes, doc: dict[str, Any]) -> bytes:
    # every field but the tags, the clear header (key id, public key) and the KDF and cipher
    # parameters included: none of them can be changed without the passphrase
    body = canonical({k: v for k, v in doc.items() if k not in _TAG_FIELDS})
    return hashlib.blake2b(body, key=check_key, person=b"pith-file-mac", digest_size=32).digest()


# PyNaCl is imported where a key is derived: listing keys skips it.

# Putting a seed into a backend (keyring, encrypted file, plaintext file) and getting it back.

PLAINTEXT_FORMAT = "pithauthor-plaintext-secret"


BACKEND_CHOICES = ("auto", "keyring", "file")


Note = Callable[[str], None]


def stderr_note(text: str) -> None:
    """Default reporter: a `pith:` line on stderr."""
    sys.stderr.write(f"pith: {text}\n")


def public_key_of(seed: bytes) -> bytes:
    from nacl.signing import SigningKey

    return bytes(SigningKey(seed).verify_key)


def new_seed() -> bytes:
    """A new random seed; from now on this process makes no core dump (see nodump)."""
    import nacl.utils

    forbid_core_dumps()
    return bytes(nacl.utils.random(secrets.SEED_LENGTH))


def file_name(record: KeyRecord) -> str:
    return record.key_id.split(":", 1)[1] + ".key"


@dataclass
class PreparedSecret:
    """A new key's secret, ready to go where it belongs (see `pithauthor.keys.author._commit`).

    A keyring secret is already saved (under the new, unique key id); a key file is only
    written by `write`, under the key-store lock, together with the key list. `discard` undoes
    both when the key list could not take the key, so no secret is left without its record.
    """

    record: KeyRecord
    file_text: str | None = None
    in_keyring: bool = False
    notice: str = ""
    _written: Path | None = None

    def write(self) -> None:
        if self.file_text is not None and self.record.file:
            path = keys_dir() / self.record.file
            create_private(path, self.file_text)
            self._written = path

    def discard(self) -> None:
        if self._written is not None:
            self._written.unlink(missing_ok=True)
            self._written = None
        if self.in_keyring:
            with contextlib.suppress(KeyringUnavailable):
                storage.delete(self.record.key_id)


def prepare_seed(
    seed: bytes,
    record: KeyRecord,
    *,
    backend: str,
    passphrase: PassphraseSource,
    insecure_plaintext: bool,
) -> PreparedSecret:
    """Make the secret of `record` ready to store; sets `record.backend`/`record.file`."""
    if backend not in BACKEND_CHOICES:
        raise InputError(f"unknown backend {backend!r}; choose keyring or file")
    if insecure_plaintext:
        if backend == "keyring":
            raise InputError(
                "--insecure-plaintext writes a file; it cannot go with --backend keyring"
            )
        return _plaintext(seed, record)
    fallback = ""
    if backend in ("auto", "keyring"):
        status = storage.probe()
        if status.usable:
            try:
                _store_keyring(seed, record)
                notice = f"secret key stored in the OS keyring ({status.backend})"
                return PreparedSecret(record, in_keyring=True, notice=notice)
            except KeyringUnavailable as exc:
                if backend == "keyring":
                    raise
                reason = str(exc)
        else:
            if backend == "keyring":
                raise KeyringUnavailable(f"no usable keyring: {status.reason} ({status.backend})")
            reason = f"{status.backend}: {status.reason}"
        fallback = f"no usable OS keyring ({reason}), so the "
    prepared = _encrypted(seed, record, passphrase)
    where = keys_dir() / file_name(record)
    if secrets.fast_kdf_enabled():
        weak = "a WEAK key derivation (TEST ONLY)"
        prepared.notice = f"{fallback or 'the '}secret key is in {where} under {weak}"
        return prepared
    cipher = "argon2id + XSalsa20-Poly1305"
    prepared.notice = f"{fallback or 'the '}secret key is stored encrypted ({cipher}) in {where}"
    return prepared


def _store_keyring(seed: bytes, record: KeyRecord) -> None:
    storage.store(record.key_id, b64encode(seed))
    # read back before it counts as stored: the seed exists nowhere else, and a backend that
    # accepted it without keeping it would lose the key for good
    back = storage.load(record.key_id)
    if back is None or back != b64encode(seed):
        with contextlib.suppress(KeyringUnavailable):
            storage.delete(record.key_id)
        raise KeyringUnavailable("the keyring did not return what was saved")
    record.backend, record.file = "keyring", None


def _header(record: KeyRecord) -> dict[str, Any]:
    return {"kind": "key", "key_id": record.key_id, "public_key_b64": record.public_key_b64}


def _encrypted(seed: bytes, record: KeyRecord, passphrase: PassphraseSource) -> PreparedSecret:
    secret = passphrase.get("New key passphrase: ", confirm=True)
    doc = secrets.seal(seed, secret, _header(record))
    record.backend, record.file = "file", file_name(record)
    return PreparedSecret(record, file_text=json.dumps(doc, indent=2) + "\n")


def _plaintext(seed: bytes, record: KeyRecord) -> PreparedSecret:
    record.backend, record.file = "plaintext", file_name(record)
    path = keys_dir() / record.file
    doc = {"format": PLAINTEXT_FORMAT, "version": 1, **_header(record), "seed_b64": b64encode(seed)}
    notice = f"warning: the secret key is stored UNENCRYPTED in {path} (--insecure-plaintext)"
    return PreparedSecret(record, file_text=json.dumps(doc, indent=2) + "\n", notice=notice)


def load_seed(record: KeyRecord, passphrase: PassphraseSource, note: Note) -> bytes:
    """The seed of `record`, checked against its public key; from now on this process makes
    no core dump (see nodump)."""
    forbid_core_dumps()
    where = f"key {record.name!r} ({record.key_id})"
    if record.backend == "keyring":
        text = storage.load(record.key_id)
        if text is None:
            raise KeyNotFound(f"the secret of {where} is not in the OS keyring")
        try:
            seed = b64decode(text)
        except ValueError:
            raise KeyFileTampered(f"the keyring entry of {where} is damaged") from None
    else:
        seed = _load_from_file(record, passphrase, where, note)
    # the public key in the key list is the one readers trust: another seed in the keyring or
    # the file (swapped, or another key's) must never sign under this key's name
    if len(seed) != secrets.SEED_LENGTH or b64encode(public_key_of(seed)) != record.public_key_b64:
        raise KeyFileTampered(f"the secret of {where} does not match its public key")
    return seed


def _load_from_file(
    record: KeyRecord, passphrase: PassphraseSource, where: str, note: Note
) -> bytes:
    path = keys_dir() / (record.file or file_name(record))
    if not path.exists():
        raise KeyNotFound(f"the key file of {where} is missing: {path}")
    try:
        doc = parse_json(read_private(path))
    except ValueError:
        raise KeyFileTampered(f"{path} is not valid JSON") from None
    if not isinstance(doc, dict) or doc.get("key_id") != record.key_id:
        raise KeyFileTampered(f"{path} does not belong to {where}")
    if doc.get("public_key_b64") != record.public_key_b64:
        raise KeyFileTampered(f"{path}: public key differs from the key list")
    if record.backend == "plaintext":
        if doc.get("format") != PLAINTEXT_FORMAT:
            raise KeyFileTampered(f"{path} is not a plaintext key file")
        note(f"warning: {where} is stored unencrypted in {path}")
        try:
            return b64decode(str(doc.get("seed_b64")))
        except ValueError:
            raise KeyFileTampered(f"{path}: seed is not base64") from None
    if doc.get("kind") != "key":
        raise KeyFileTampered(f"{path} is not a key file")
    for attempt in range(1, PROMPT_TRIES + 1):
        secret = passphrase.get(f"Passphrase for key {record.name!r}: ")
        try:
            return secrets.open_seed(doc, secret, f"key file {path}")
        except WrongPassphrase:
            # typed at the prompt: a typo, ask again; from a file or PITH_PASSPHRASE: retyping
            # cannot fix it, stop at once
            if not passphrase.prompted or attempt == PROMPT_TRIES:
                raise
            passphrase.forget()
            left = PROMPT_TRIES - attempt
            sys.stderr.write(f"pith: wrong passphrase; try again ({left} more)\n")
    raise AssertionError("unreachable")  # the last try returns or raises


def remove_seed(record: KeyRecord) -> None:
    """Delete the secret of `record` from its backend."""
    if record.backend == "keyring":
        storage.delete(record.key_id)
        return
    path = keys_dir() / (record.file or file_name(record))
    path.unlink(missing_ok=True)
