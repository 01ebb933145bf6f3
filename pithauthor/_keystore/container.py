"""The passphrase-encrypted container of a 32-byte seed (key files and backups share it).

    out        = argon2id(passphrase, salt, opslimit, memlimit) -> 64 bytes
    box_key    = out[:32]   XSalsa20-Poly1305 (SecretBox) key for the seed
    check_key  = out[32:]   BLAKE2b key for two tags:
    check      = BLAKE2b(key=check_key, person="pith-pw-check", "pithauthor passphrase check v1")
    mac        = BLAKE2b(key=check_key, person="pith-file-mac", canonical(document minus tags))

Opening: a wrong `check` means a wrong passphrase (or changed KDF fields, which cannot be told
apart); a right `check` with a wrong `mac`, a SecretBox failure, or a seed whose public key is
not the one written in clear means the file was changed: KeyFileTampered.
"""

from __future__ import annotations

import hashlib
import hmac
from dataclasses import dataclass
from typing import Any

from pithauthor._core.canonical import b64decode, b64encode, canonical
from pithauthor._keystore.nodump import forbid_core_dumps
from pithauthor.errors import KeyFileTampered, WrongPassphrase

# PyNaCl is imported where a container is sealed or opened: `pith keys list` skips it.

FORMAT = "pithauthor-secret"
VERSION = 1
KDF_NAME = "argon2id"
CIPHER_NAME = "xsalsa20poly1305"
SEED_LENGTH = 32
TEST_FAST_KDF = False
"""TEST ONLY: the cheapest argon2id for new files, and weak files accepted. No environment
variable or option of the installed `pith` command sets it: only Python code that imports this
module does (pithauthor's test suite, through tests/conftest.py and tests/pith_launcher.py)."""
_CHECK_TEXT = b"pithauthor passphrase check v1"
_TAG_FIELDS = ("check_b64", "mac_b64")


@dataclass(frozen=True)
class KdfLimits:
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
    """A container document holding `seed`, with `header` (public, authenticated) in clear."""
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


@dataclass(frozen=True)
class _Parsed:
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
    body = canonical({k: v for k, v in doc.items() if k not in _TAG_FIELDS})
    return hashlib.blake2b(body, key=check_key, person=b"pith-file-mac", digest_size=32).digest()
