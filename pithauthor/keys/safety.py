"""`pith doctor`: where keys go and why, folder and file permissions, passphrase sources.

Read-only: it creates nothing. A finding is "ok", "info", "warn" or "unsafe"; any "unsafe"
makes the command fail.
"""

from __future__ import annotations

import os
import stat
from dataclasses import asdict, dataclass
from pathlib import Path

from pithauthor.errors import KeyFileTampered
from pithauthor.fs import HOME_ENV, MAX_KEY_FILE_BYTES, POSIX_MODES, pith_home, read_user_file
from pithauthor.keys import secrets, storage
from pithauthor.keys.passphrase import BACKUP_PASSPHRASE_ENV, PASSPHRASE_ENV
from pithauthor.keys.storage import METADATA_FILE
from pithauthor.protocol.canonical_json import parse_json


@dataclass(frozen=True)
class Finding:
    """One line of the doctor's report."""

    check: str
    level: str
    detail: str

    def as_dict(self) -> dict[str, str]:
        return asdict(self)


def _mode(path: Path) -> str:
    return oct(stat.S_IMODE(path.stat().st_mode))[2:]


def _private(path: Path, check: str, *, is_dir: bool) -> Finding:
    if not POSIX_MODES:
        return Finding(check, "info", f"{path} (no POSIX modes on this system)")
    want = "700" if is_dir else "600"
    st = path.stat()
    # another user's folder or file is unsafe whatever its mode: its owner can chmod it, or
    # swap the key file under it
    if st.st_uid != os.getuid():
        return Finding(check, "unsafe", f"{path} is owned by uid {st.st_uid}, not by you")
    if stat.S_IMODE(st.st_mode) & 0o077:
        return Finding(check, "unsafe", f"{path} has mode {_mode(path)}; fix: chmod {want} {path}")
    return Finding(check, "ok", f"{path} mode {_mode(path)}")


def _home() -> list[Finding]:
    home = pith_home()
    source = f"${HOME_ENV}" if os.environ.get(HOME_ENV) else "platform user data folder"
    if not home.exists():
        return [Finding("home", "info", f"{home} ({source}); not created yet")]
    detail = f"{home} ({source}) mode {_mode(home)}" if POSIX_MODES else str(home)
    # only a warning: the secrets inside are guarded by the keys folder's own 0700 (checked
    # below, "unsafe" when loose); a readable home shows file names, not keys
    level = "warn" if POSIX_MODES and stat.S_IMODE(home.stat().st_mode) & 0o077 else "ok"
    if level == "warn":
        detail += f"; others can list it (chmod 700 {home} recommended)"
    return [Finding("home", level, detail)]


def _key_files(keys: Path) -> list[Finding]:
    findings: list[Finding] = []
    for path in sorted(keys.iterdir()):
        if not path.is_file():
            continue
        findings.append(_private(path, f"file {path.name}", is_dir=False))
        if path.suffix != ".key":
            continue
        findings.extend(_key_file_content(path))
    return findings


def _key_file_content(path: Path) -> list[Finding]:
    try:
        doc = parse_json(
            read_user_file(path, KeyFileTampered, "a key file", limit=MAX_KEY_FILE_BYTES)
        )
    except (KeyFileTampered, ValueError):
        return [Finding(f"key {path.name}", "warn", "cannot be read as JSON")]
    if not isinstance(doc, dict):
        return [Finding(f"key {path.name}", "warn", "not a key file")]
    if doc.get("format") != secrets.FORMAT:
        return [Finding(f"key {path.name}", "unsafe", "the secret key is stored unencrypted")]
    kdf = doc.get("kdf")
    if not isinstance(kdf, dict):
        kdf = {}
    floor = secrets.moderate_limits()
    ops, mem = kdf.get("opslimit", 0), kdf.get("memlimit", 0)
    if not isinstance(ops, int) or not isinstance(mem, int):
        return [Finding(f"key {path.name}", "warn", "KDF parameters unreadable")]
    if ops < floor.opslimit or mem < floor.memlimit:
        return [Finding(f"key {path.name}", "unsafe", f"argon2id below moderate ({ops}, {mem})")]
    return [Finding(f"key {path.name}", "ok", f"argon2id opslimit {ops} memlimit {mem}")]


def _keys() -> list[Finding]:
    keys = pith_home() / "keys"
    if not keys.exists():
        return [Finding("keys folder", "info", f"{keys}; not created yet")]
    findings = [_private(keys, "keys folder", is_dir=True)]
    if not (keys / METADATA_FILE).exists():
        findings.append(Finding("key list", "info", "no keys yet"))
    return findings + _key_files(keys)


def _keyring() -> list[Finding]:
    status = storage.probe()
    if status.usable:
        return [
            Finding(
                "backend", "ok", f"OS keyring {status.backend}: {status.reason}; new keys go there"
            )
        ]
    return [
        Finding(
            "backend",
            "info",
            f"no usable OS keyring ({status.backend}: {status.reason}); "
            "new keys go to encrypted key files",
        )
    ]


def _passphrase() -> list[Finding]:
    findings = []
    for var in (PASSPHRASE_ENV, BACKUP_PASSPHRASE_ENV):
        if os.environ.get(var):
            findings.append(Finding("passphrase", "info", f"{var} is set"))
    if not findings:
        findings.append(
            Finding(
                "passphrase",
                "info",
                f"{PASSPHRASE_ENV} is not set; key files need a prompt or --passphrase-file",
            )
        )
    if secrets.fast_kdf_enabled():
        findings.append(
            Finding(
                "kdf",
                "unsafe",
                "the test-only weak KDF is switched on in this process: new key files are weak",
            )
        )
    return findings


def diagnose() -> list[Finding]:
    """Every finding, in report order."""
    return [*_keyring(), *_home(), *_keys(), *_passphrase()]
