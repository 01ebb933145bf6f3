"""The key store through its Python API: file and keyring backends, errors, rotation."""

from __future__ import annotations

import json
import os
import pickle
import stat
from collections.abc import Iterator
from pathlib import Path

import keyring
import pytest
from keyring.backends import fail
from nacl.signing import SigningKey, VerifyKey
from pith_test_keyrings import MemoryKeyring
from support.cli import use_fast_kdf
from support.keys import PASSPHRASE, SENTINEL_SEED, assert_no_seed, write_backup

from pithauthor.errors import (
    KeyExists,
    KeyFileTampered,
    KeyNotFound,
    KeyRetired,
    OrcidError,
    PassphraseUnavailable,
    UnsafePermissions,
    WrongPassphrase,
)
from pithauthor.keys import author, storage
from pithauthor.keys.passphrase import PassphraseSource
from pithauthor.protocol.canonical_json import b64decode
from pithauthor.protocol.checks.event import check_envelope
from pithauthor.protocol.events import seal, signer_block, unsigned_event
from pithauthor.protocol.identity import fingerprint_hex, key_id
from pithauthor.protocol.ids import PithNumber

DIGEST = bytes(range(32))


@pytest.fixture(autouse=True)
def fast_kdf_and_no_keyring(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    use_fast_kdf(monkeypatch)
    monkeypatch.setenv("PITH_PASSPHRASE", PASSPHRASE)
    keyring.set_keyring(fail.Keyring())
    yield
    keyring.set_keyring(fail.Keyring())


def _quiet(_: str) -> None:
    pass


def _key_file(record: author.KeyRecord, home: Path) -> Path:
    assert record.file is not None
    return home / "keys" / record.file


def test_file_backend_round_trip_signs_verifiably(isolated_home: Path) -> None:
    record = author.generate("alice", orcid="0000-0002-1825-0097", backend="file", note=_quiet)
    assert record.backend == "file"
    key = author.load_signing_key()
    pk = key.public_key
    assert (key.key_id, key.fingerprint) == (key_id(pk), fingerprint_hex(pk))
    assert key.signer_id == "orcid:0000-0002-1825-0097"
    VerifyKey(pk).verify(DIGEST, key.sign_digest(DIGEST))
    assert stat.S_IMODE(_key_file(record, isolated_home).stat().st_mode) == 0o600
    assert stat.S_IMODE((isolated_home / "keys").stat().st_mode) == 0o700


def test_a_key_signs_as_pynacls_signing_key_does(isolated_home: Path) -> None:
    """`sign_digest` calls PyNaCl's binding itself: the same 64 bytes as `SigningKey.sign`
    (Ed25519 is deterministic), for the key's own public half, and only of 32-byte digests."""
    author.generate("alice", backend="file", note=_quiet)
    key = author.load_signing_key()
    reference = SigningKey(key._signing_key.encode())  # the seed the key was loaded from
    assert key.public_key == bytes(reference.verify_key)
    for digest in (DIGEST, bytes(32), bytes([255]) * 32):
        signature = key.sign_digest(digest)
        assert type(signature) is bytes and signature == reference.sign(digest).signature
    for wrong in (b"", DIGEST[:31], DIGEST + b"x"):
        with pytest.raises(ValueError, match="32 raw bytes"):
            key.sign_digest(wrong)


def test_author_key_is_a_signer_for_the_event_envelope() -> None:
    author.generate("alice", backend="file", note=_quiet)
    key = author.load_signing_key("alice")
    subject = PithNumber.parse("pith:2023:NFG5PAOXQUVIWDX5F7YSYYL7EW")
    event = seal(
        unsigned_event(
            "author_attestation", subject, "2026-01-01T00:00:00Z", signer_block(key), {}
        ),
        key,
    )
    report = check_envelope(event)
    assert report.ok and not report.failed, report.as_dict()


def test_repr_and_pickle_never_expose_the_secret(tmp_path: Path) -> None:
    write_backup(tmp_path / "b.json", SENTINEL_SEED, PASSPHRASE)
    author.import_backup(tmp_path / "b.json", backend="file", orcid_retirement=None, note=_quiet)
    key = author.load_signing_key()
    assert_no_seed(repr(key) + str(key) + repr(key.record))
    with pytest.raises(TypeError):
        pickle.dumps(key)


def test_metadata_file_holds_public_facts_only(isolated_home: Path, tmp_path: Path) -> None:
    write_backup(tmp_path / "b.json", SENTINEL_SEED, PASSPHRASE)
    record = author.import_backup(
        tmp_path / "b.json", backend="file", orcid_retirement=None, note=_quiet
    )
    meta = (isolated_home / "keys" / "keys.json").read_bytes()
    assert_no_seed(meta)
    assert_no_seed(_key_file(record, isolated_home).read_bytes())
    entry = json.loads(meta)["keys"][0]
    assert set(entry) >= {"name", "orcid", "key_id", "public_key_fingerprint", "created_at"}
    assert entry["status"] == "active" and entry["backend"] == "file"


def test_wrong_passphrase_is_told_apart_from_tampering() -> None:
    author.generate("alice", backend="file", note=_quiet)
    with pytest.raises(WrongPassphrase, match="wrong passphrase"):
        author.load_signing_key(
            passphrase=PassphraseSource(
                env_var="NO_SUCH_VAR_X", file=None, fallback=_fixed("not it")
            )
        )


def _fixed(value: str) -> PassphraseSource:
    source = PassphraseSource(env_var="NO_SUCH_VAR_Y")
    source._cached = value
    return source


@pytest.mark.parametrize(
    "damage",
    ["ciphertext", "public_key_in_file", "extra_field", "not_json", "salt_length"],
)
def test_a_changed_key_file_is_reported_as_tampered(isolated_home: Path, damage: str) -> None:
    record = author.generate("alice", backend="file", note=_quiet)
    path = _key_file(record, isolated_home)
    doc = json.loads(path.read_text())
    if damage == "ciphertext":
        raw = bytearray(b64decode(doc["cipher"]["ciphertext_b64"]))
        raw[0] ^= 1
        import base64

        doc["cipher"]["ciphertext_b64"] = base64.b64encode(bytes(raw)).decode()
    elif damage == "public_key_in_file":
        doc["public_key_b64"] = doc["public_key_b64"][::-1]
    elif damage == "extra_field":
        doc["note"] = "added later"
    elif damage == "salt_length":
        doc["kdf"]["salt_b64"] = "AAAA"
    text = "{ broken" if damage == "not_json" else json.dumps(doc)
    path.write_text(text)
    with pytest.raises(KeyFileTampered):
        author.load_signing_key()


def test_missing_key_and_missing_key_file_are_key_not_found(isolated_home: Path) -> None:
    with pytest.raises(KeyNotFound, match="no active key"):
        author.load_signing_key()
    record = author.generate("alice", backend="file", note=_quiet)
    with pytest.raises(KeyNotFound, match="no key named"):
        author.load_signing_key("bob")
    _key_file(record, isolated_home).unlink()
    with pytest.raises(KeyNotFound, match="missing"):
        author.load_signing_key("alice")


def test_group_readable_key_file_and_open_folder_are_refused(isolated_home: Path) -> None:
    record = author.generate("alice", backend="file", note=_quiet)
    path = _key_file(record, isolated_home)
    os.chmod(path, 0o640)
    with pytest.raises(UnsafePermissions, match=f"chmod 600 {path}"):
        author.load_signing_key()
    os.chmod(path, 0o600)
    os.chmod(path.parent, 0o755)
    with pytest.raises(UnsafePermissions, match="chmod 700"):
        author.load_signing_key()


def test_two_active_keys_with_the_same_name_are_refused() -> None:
    author.generate("alice", backend="file", note=_quiet)
    with pytest.raises(KeyExists, match="alice"):
        author.generate("alice", backend="file", note=_quiet)
    assert len(author.list_keys()) == 1


def test_several_active_keys_need_a_name() -> None:
    author.generate("alice", backend="file", note=_quiet)
    author.generate("bob", backend="file", note=_quiet)
    with pytest.raises(KeyNotFound, match="alice, bob"):
        author.load_signing_key()
    assert author.load_signing_key("bob").name == "bob"


def test_creating_a_file_never_overwrites(tmp_path: Path) -> None:
    path = tmp_path / "secret"
    storage.create_private(path, "first")
    with pytest.raises(KeyExists):
        storage.create_private(path, "second")
    assert path.read_text() == "first"
    assert [p.name for p in tmp_path.iterdir()] == ["secret"]


def test_bad_orcid_is_refused_before_anything_is_written(isolated_home: Path) -> None:
    with pytest.raises(OrcidError):
        author.generate("alice", orcid="0000-0002-1825-0098", note=_quiet)
    assert author.list_keys() == []


def test_no_passphrase_source_is_passphrase_unavailable(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("PITH_PASSPHRASE")
    with pytest.raises(PassphraseUnavailable, match="PITH_PASSPHRASE"):
        author.generate("alice", backend="file", note=_quiet)


def test_passphrase_file_gives_the_first_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("PITH_PASSPHRASE")
    secret = tmp_path / "pw"
    secret.write_text("from a file\nignored\n")
    author.generate(
        "alice", backend="file", passphrase=author.passphrase_source(str(secret)), note=_quiet
    )
    monkeypatch.setenv("PITH_PASSPHRASE", "from a file")
    assert author.load_signing_key().name == "alice"


def test_keyring_backend_keeps_the_secret_out_of_files(isolated_home: Path) -> None:
    ring = MemoryKeyring()
    keyring.set_keyring(ring)
    notes: list[str] = []
    record = author.generate("alice", note=notes.append)
    assert record.backend == "keyring" and record.file is None
    assert "OS keyring" in notes[0] and "MemoryKeyring" in notes[0]
    assert list(ring.entries) == [("pithauthor", record.key_id)]
    assert not list((isolated_home / "keys").glob("*.key"))
    key = author.load_signing_key(passphrase=PassphraseSource(env_var="UNSET_VAR"))
    VerifyKey(key.public_key).verify(DIGEST, key.sign_digest(DIGEST))
    author.delete("alice")
    assert ring.entries == {}


def test_refused_keyring_falls_back_to_file_and_says_why() -> None:
    from keyrings.alt.file import PlaintextKeyring

    keyring.set_keyring(PlaintextKeyring())
    notes: list[str] = []
    record = author.generate("alice", note=notes.append)
    assert record.backend == "file"
    assert "no usable OS keyring" in notes[0] and "PlaintextKeyring" in notes[0]


def test_rotation_retires_the_old_key_whose_signatures_still_verify() -> None:
    author.generate("alice", orcid="0000-0002-1825-0097", backend="file", note=_quiet)
    old_key = author.load_signing_key("alice")
    old_signature = old_key.sign_digest(DIGEST)
    retired, new = author.rotate("alice", backend="file", note=_quiet)
    assert (retired.status, new.status) == ("retired", "active")
    assert new.replaces == retired.key_id and retired.replaced_by == new.key_id
    assert new.orcid == retired.orcid
    assert author.load_signing_key().key_id == new.key_id
    with pytest.raises(KeyRetired):
        author.load_signing_key(retired.key_id)
    exported = author.export_public(retired.key_id)
    VerifyKey(b64decode(exported["public_key_b64"])).verify(DIGEST, old_signature)
    with pytest.raises(KeyRetired):
        author.load_key(retired.key_id).sign_digest(DIGEST)


def test_backup_restored_elsewhere_signs_identically(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PITH_HOME", str(tmp_path / "a"))
    author.generate("alice", backend="file", note=_quiet)
    signature_a = author.load_signing_key().sign_digest(DIGEST)
    author.backup("alice", tmp_path / "alice.backup", note=_quiet)
    monkeypatch.setenv("PITH_HOME", str(tmp_path / "b"))
    with pytest.raises(WrongPassphrase):
        author.import_backup(
            tmp_path / "alice.backup",
            backup_passphrase=_fixed("nope"),
            orcid_retirement=None,
            note=_quiet,
        )
    author.import_backup(
        tmp_path / "alice.backup", backend="file", orcid_retirement=None, note=_quiet
    )
    assert author.load_signing_key().sign_digest(DIGEST) == signature_a
