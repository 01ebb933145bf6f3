"""Putting a seed into a backend (keyring, encrypted file, plaintext file) and getting it back."""

from __future__ import annotations

import contextlib
import json
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pithauthor._core.canonical import b64decode, b64encode
from pithauthor._core.strict_json import parse_json
from pithauthor._keystore import container, keyring_store
from pithauthor._keystore.files import create_private, read_private
from pithauthor._keystore.metadata import KeyRecord, keys_dir
from pithauthor._keystore.nodump import forbid_core_dumps
from pithauthor._keystore.passphrase import PROMPT_TRIES, PassphraseSource
from pithauthor.errors import (
    InputError,
    KeyFileTampered,
    KeyNotFound,
    KeyringUnavailable,
    WrongPassphrase,
)

# PyNaCl is imported where a key is derived: listing keys skips it.

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
    return bytes(nacl.utils.random(container.SEED_LENGTH))


def file_name(record: KeyRecord) -> str:
    return record.key_id.split(":", 1)[1] + ".key"


@dataclass
class PreparedSecret:
    """A new key's secret, ready to go where it belongs (see `pithauthor.keys._commit`).

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
                keyring_store.delete(self.record.key_id)


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
        status = keyring_store.probe()
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
    if container.fast_kdf_enabled():
        weak = "a WEAK key derivation (TEST ONLY)"
        prepared.notice = f"{fallback or 'the '}secret key is in {where} under {weak}"
        return prepared
    cipher = "argon2id + XSalsa20-Poly1305"
    prepared.notice = f"{fallback or 'the '}secret key is stored encrypted ({cipher}) in {where}"
    return prepared


def _store_keyring(seed: bytes, record: KeyRecord) -> None:
    keyring_store.store(record.key_id, b64encode(seed))
    back = keyring_store.load(record.key_id)
    if back is None or back != b64encode(seed):
        with contextlib.suppress(KeyringUnavailable):
            keyring_store.delete(record.key_id)
        raise KeyringUnavailable("the keyring did not return what was saved")
    record.backend, record.file = "keyring", None


def _header(record: KeyRecord) -> dict[str, Any]:
    return {"kind": "key", "key_id": record.key_id, "public_key_b64": record.public_key_b64}


def _encrypted(seed: bytes, record: KeyRecord, passphrase: PassphraseSource) -> PreparedSecret:
    secret = passphrase.get("New key passphrase: ", confirm=True)
    doc = container.seal(seed, secret, _header(record))
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
        text = keyring_store.load(record.key_id)
        if text is None:
            raise KeyNotFound(f"the secret of {where} is not in the OS keyring")
        try:
            seed = b64decode(text)
        except ValueError:
            raise KeyFileTampered(f"the keyring entry of {where} is damaged") from None
    else:
        seed = _load_from_file(record, passphrase, where, note)
    if (
        len(seed) != container.SEED_LENGTH
        or b64encode(public_key_of(seed)) != record.public_key_b64
    ):
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
            return container.open_seed(doc, secret, f"key file {path}")
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
        keyring_store.delete(record.key_id)
        return
    path = keys_dir() / (record.file or file_name(record))
    path.unlink(missing_ok=True)
