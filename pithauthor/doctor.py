"""`pith doctor`: is this machine ready to sign, submit and badge, and is it safe?

Each check is one finding, `ok`, `info`, `warn`, `fail` or `unsafe`, with the next step when
there is one: the key store (folder and file modes, encrypted key files, the keyring, the
passphrase sources), each registry (reachable, and serving the key this machine trusts
for it), TeX and latexmk, the outbox (pending and rejected events per registry, events with
no time-stamp token), a backup of each active key, and each key's ORCID proof. Read-only: it
creates nothing (no key store, no outbox).

The network checks (registry, ORCID) are time-bound (one try, `timeout` seconds each) and are
skipped with `offline`.
"""

from __future__ import annotations

import math
import os
import shutil
import stat
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from pithauthor.errors import InputError, KeyFileTampered, PithError
from pithauthor.fs import (
    HOME_ENV,
    MAX_KEY_FILE_BYTES,
    POSIX_MODES,
    home_fault,
    home_path,
    pith_home,
    read_user_file,
)
from pithauthor.identity.proofs import check_key_on_orcid
from pithauthor.keys import secrets, storage
from pithauthor.keys.author import BACKED_UP_AT, BACKUP_FILE, known_keys
from pithauthor.keys.passphrase import BACKUP_PASSPHRASE_ENV, PASSPHRASE_ENV
from pithauthor.keys.storage import METADATA_FILE, KeyRecord
from pithauthor.net import RegistryHttp, RetryPolicy
from pithauthor.protocol.canonical_json import parse_json
from pithauthor.protocol.verdict import Trust
from pithauthor.registry.client import is_local_registry, registry_binding, registry_url
from pithauthor.registry.credentials import TRUST_LOCAL_ENV, default_trust
from pithauthor.registry.journal import DB_NAME
from pithauthor.registry.outbox import Outbox
from pithauthor.timestamps.time_sources import TSA_ENV

__all__ = ["FAILING", "Finding", "diagnose"]

FAILING = ("fail", "unsafe")
"""The levels that make `pith doctor` exit 1."""


@dataclass(frozen=True)
class Finding:
    """One line of the report: what was checked, how it stands, and what to do next."""

    check: str
    level: str
    detail: str
    next: str | None = None

    def as_dict(self) -> dict[str, str | None]:
        return {"check": self.check, "level": self.level, "detail": self.detail, "next": self.next}


# --- the key store: modes, encryption, keyring, passphrase sources (read-only) ---------------


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
    home = home_path()
    source = f"${HOME_ENV}" if os.environ.get(HOME_ENV) else "platform user data folder"
    if not home.exists():
        return [Finding("home", "info", f"{home} ({source}); not created yet")]
    fault = home_fault(home)  # the rule every command that opens the home follows
    if fault is not None:
        fix = f"use a folder of your own (set {HOME_ENV})" if fault[0] == "unsafe" else None
        return [Finding("home", fault[0], f"{fault[1]} ({source})", fix)]
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


def _key_store() -> list[Finding]:
    """The key store's findings, in report order: the backend, PITH_HOME, the keys folder
    and each key file, the passphrase sources."""
    return [*_keyring(), *_home(), *_keys(), *_passphrase()]


# --- registries ----------------------------------------------------------------------------


def _registries(registry: str | None, held: Iterable[str]) -> list[str]:
    """The registry asked for (or the default) first, then each one the outbox holds events
    for: those are the ones this machine will talk to."""

    first = registry_binding(registry)
    return [first, *sorted(set(held) - {first})]


def _registry(url: str, trust_manifests: list[str], timeout: float) -> Finding:
    """Reachable, and serving a key this machine trusts under that key id (the pinned one, a
    trust manifest's, or $PITH_TRUST's)."""

    check = f"registry {url}"
    local = is_local_registry(url)
    # one attempt: the doctor says how things stand now, in seconds, not after six backoffs
    http = RegistryHttp(
        url, timeout=timeout, connect_timeout=timeout, retry=RetryPolicy(max_attempts=1)
    )
    try:
        manifest = http.get_json("/pith-mirrors.json")
    except PithError as exc:
        return Finding(
            check,
            "fail",
            f"not reachable: {exc}",
            "check the address (--registry, $PITH_REGISTRY) and the network; "
            "pith doctor --offline skips this check",
        )
    finally:
        http.close()
    try:
        served = Trust.from_manifest(manifest, local=local, source=f"registry {url}").keys
    except PithError as exc:
        return Finding(check, "fail", f"its manifest (/pith-mirrors.json) is broken: {exc}")
    trusted = default_trust(trust_manifests).keys
    same = [k for k in served if k in trusted and trusted[k].public_key == served[k].public_key]
    other = [k for k in served if k in trusted and trusted[k].public_key != served[k].public_key]
    if other:
        return Finding(
            check,
            "fail",
            f"serves another public key under the trusted key id {other[0]}: it is not the "
            "registry this machine trusts",
            "do not submit there; check the address, or the trust manifest you gave",
        )
    if same:
        return Finding(
            check, "ok", f"reachable; its key {same[0]} is trusted ({trusted[same[0]].source})"
        )
    names = ", ".join(sorted(served))
    if local and os.environ.get(TRUST_LOCAL_ENV) == "1":
        return Finding(
            check, "ok", f"reachable (local); its key {names} is trusted (${TRUST_LOCAL_ENV})"
        )
    if local:
        return Finding(
            check,
            "warn",
            f"reachable (local); its key {names} is not trusted here",
            f"for a local registry: export {TRUST_LOCAL_ENV}=1, or pass --trust-local-registry "
            "(or --trust-manifest FILE) to each command",
        )
    return Finding(
        check,
        "fail",
        f"reachable, but its key {names} is not trusted here: its records would not verify",
        "trust it with --trust-manifest FILE or $PITH_TRUST, if you know the key is theirs",
    )


# --- this machine --------------------------------------------------------------------------


def _tex() -> list[Finding]:
    """pdflatex and latexmk: `pith latex inject --check` and `pith latex arxiv` build with them."""
    out = []
    for program in ("pdflatex", "latexmk"):
        where = shutil.which(program)
        if where:
            out.append(Finding(f"tex {program}", "ok", where))
        else:
            out.append(
                Finding(
                    f"tex {program}",
                    "warn",
                    "not on PATH: pith latex arxiv and inject --check cannot build",
                    "install TeX Live (or MacTeX, MiKTeX), which includes it",
                )
            )
    return out


def _stamping() -> bool:
    """Whether time-stamp authorities are set (PITH_TSA is not `none`); a bad setting counts
    as set (`pith timestamp` says what is wrong with it)."""
    return os.environ.get(TSA_ENV, "").strip().lower() != "none"


def _outbox() -> tuple[list[Finding], list[str]]:
    """Pending and rejected events per registry; and the registries the outbox holds."""

    # where _outbox.default_path() is, without creating its folder as that does
    path = pith_home() / "outbox" / DB_NAME
    if not path.exists():
        return [Finding("outbox", "info", "empty (no event stored yet)")], []
    try:
        with Outbox(path) as box:
            held = box.registries()
            counts = {r: box.counts(r) for r in held}
            untimed = box.untimed() if held and _stamping() else None
    except PithError as exc:
        return [Finding("outbox", "fail", str(exc), exc.hint or "pith outbox recover")], []
    if not held:
        return [Finding("outbox", "info", "empty")], []
    out = []
    if untimed:  # a retired key's claim binds only with a proven time (docs/identity.md)
        out.append(
            Finding(
                "trusted time",
                "warn",
                f"{untimed} stored event(s) have no time-stamp token yet",
                "pith timestamp",
            )
        )
    for registry in held:
        n = counts[registry]
        detail = f"{n['pending']} pending, {n['rejected']} rejected, {n['accepted']} accepted"
        if n.get("held"):
            detail += f", {n['held']} held for moderation (sign in there to confirm them)"
        if n["rejected"]:
            out.append(
                Finding(
                    f"outbox {registry}",
                    "warn",
                    detail,
                    f"pith outbox list --state rejected --registry {registry} shows why",
                )
            )
        elif n["pending"]:
            out.append(
                # as the row needs it to go: a local registry's key is trusted only when asked
                Finding(
                    f"outbox {registry}",
                    "warn",
                    detail,
                    f"pith submit --registry {registry}"
                    + (" --trust-local-registry" if is_local_registry(registry) else ""),
                )
            )
        else:
            out.append(Finding(f"outbox {registry}", "ok", detail))
    return out, held


def _backups(records: list[KeyRecord]) -> list[Finding]:
    """Each active key: backed up (when, where), or a loss waiting to happen."""

    out = []
    for record in records:
        if record.status != "active":
            continue
        check = f"backup {record.name}"
        at = record.extra.get(BACKED_UP_AT)
        if not at:
            out.append(
                Finding(
                    check,
                    "warn",
                    "no backup made on this machine: losing this computer loses the key",
                    f"pith keys backup {record.name} --out FILE (and keep FILE elsewhere)",
                )
            )
        else:
            out.append(Finding(check, "ok", f"backed up {at} to {record.extra.get(BACKUP_FILE)}"))
    return out


def _identity(records: list[KeyRecord], timeout: float) -> list[Finding]:
    """Each key with an ORCID iD, as its public ORCID record shows it: bound (the key listed as
    current; ok), not bound (not listed, as a new key before `pith keys prove orcid`; warn),
    stale (an active key listed as retired: fail; a retired key still listed as current:
    warn), or not readable (warn)."""

    out = []
    for record in records:
        if record.orcid is None:
            if record.status == "active":
                out.append(
                    Finding(
                        f"identity {record.name}",
                        "info",
                        "no ORCID iD: claims are not bound to a person",
                        "a key bound to an iD: pith keys generate --name NAME --orcid ID",
                    )
                )
            continue
        check = f"identity {record.name}"
        prove = f"pith keys prove orcid --key {record.name}"
        proof = check_key_on_orcid(record, None, timeout)
        if proof.finding is None:
            out.append(
                Finding(check, "warn", f"ORCID {record.orcid}: {proof.problem}", prove + " --check")
            )
            continue
        standing = proof.finding.standing
        active = record.status == "active"
        if standing == "current" and active:
            out.append(
                Finding(check, "ok", f"bound: ORCID {record.orcid} lists key {record.key_id}")
            )
        elif standing == "retired" and not active:
            out.append(Finding(check, "ok", f"retired key, and ORCID {record.orcid} says so"))
        elif standing == "current":
            out.append(
                Finding(
                    check,
                    "warn",
                    f"stale: retired key {record.key_id} is still current on ORCID {record.orcid}",
                    "rename its ORCID link as pith keys rotate said (docs/identity.md)",
                )
            )
        elif standing == "retired":
            out.append(
                Finding(
                    check,
                    "fail",
                    f"stale: ORCID {record.orcid} lists active key {record.key_id} as retired",
                    prove,
                )
            )
        elif active:  # a key not proven yet (the state of every new key), or a link removed
            out.append(
                Finding(
                    check,
                    "warn",
                    f"not bound: ORCID {record.orcid} does not list key {record.key_id}; "
                    "claims will say the identity is not established",
                    prove,
                )
            )
    return out


def diagnose(
    *,
    registry: str | None = None,
    trust_manifests: list[str] | None = None,
    offline: bool = False,
    timeout: float = 5.0,
) -> list[Finding]:
    """Every finding, in report order: the key store, backups, TeX, the outbox, then (unless
    `offline`) each registry and each ORCID proof, each asked once within `timeout` seconds.
    Bad options (`registry`, a trust manifest, `timeout`) raise InputError before any check."""

    manifests = list(trust_manifests or [])
    if not math.isfinite(timeout) or not 0 < timeout <= 60:
        raise InputError("--timeout must be a number of seconds in (0, 60]")
    registry_url(registry)
    default_trust(manifests)
    home = _home()
    if home[0].level == "unsafe":  # every other check would open it: none is run
        return [*_keyring(), *home]
    findings = _key_store()
    try:
        records = known_keys()
    except PithError:
        records = []  # the key store's own findings above already say it is damaged
    findings += _backups(records)
    findings += _tex()
    box, held = _outbox()
    findings += box
    if offline:
        findings.append(Finding("network", "info", "registry and ORCID checks skipped (--offline)"))
        return findings
    findings += [_registry(url, manifests, timeout) for url in _registries(registry, held)]
    findings += _identity(records, timeout)
    return findings
