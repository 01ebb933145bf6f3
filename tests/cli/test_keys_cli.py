"""`pith keys ...` and `pith doctor` as real processes: storage, errors, keyring, no leaks."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest
from support.cli import LAUNCHER, RunPith, assert_one_line_error, use_fast_kdf
from support.keys import PASSPHRASE, SENTINEL_SEED, assert_no_seed, subprocess_env, write_backup

FAST = {"PITH_TEST_FAST_KDF": "1", "PITH_PASSPHRASE": PASSPHRASE}
DIGEST = bytes(range(32))


def _ok(result: subprocess.CompletedProcess[str]) -> subprocess.CompletedProcess[str]:
    assert result.returncode == 0, (result.returncode, result.stdout, result.stderr)
    return result


def _generate_json(pith: RunPith, *args: str, env: dict[str, str] | None = None) -> dict[str, str]:
    result = _ok(pith("keys", "generate", "--name", "alice", "--json", *args, env=env or FAST))
    doc: dict[str, str] = json.loads(result.stdout)
    return doc


def _seed_of(home: Path, name: str | None, passphrase: str = PASSPHRASE) -> bytes:
    """The seed of a stored key, read in-process (test-only peek at the private signing key)."""
    from pithauthor.keys.author import load_key
    from pithauthor.keys.passphrase import passphrase_source

    os.environ["PITH_PASSPHRASE"] = passphrase
    try:
        key = load_key(name, note=lambda _: None, passphrase=passphrase_source())
    finally:
        del os.environ["PITH_PASSPHRASE"]
    return bytes(key._signing_key.encode())


@pytest.mark.slow
def test_headless_generate_then_show_with_real_moderate_kdf(
    pith: RunPith, isolated_home: Path
) -> None:
    """Slow: PyNaCl's moderate argon2id (256 MiB, about a second each) is what is tested."""
    env = {"PITH_PASSPHRASE": PASSPHRASE}  # no test switch: PyNaCl's moderate argon2id limits
    doc = _generate_json(pith, env=env)
    assert doc["key_id"].startswith("ed25519:") and len(doc["public_key_fingerprint"]) == 32
    shown = _ok(pith("keys", "show", "--check", "--json", env=env))
    assert json.loads(shown.stdout)["unlocks"] == "yes"
    folder = isolated_home / "keys"
    key_file = folder / doc["file"]
    assert stat.S_IMODE(folder.stat().st_mode) == 0o700
    assert stat.S_IMODE(key_file.stat().st_mode) == 0o600
    stored = json.loads(key_file.read_text())
    assert stored["kdf"]["opslimit"] >= 3 and stored["kdf"]["memlimit"] >= 256 * 1024 * 1024
    os.environ.pop("PITH_TEST_FAST_KDF", None)
    assert_no_seed(key_file.read_bytes(), _seed_of(isolated_home, "alice"))


def test_low_cost_kdf_file_is_refused_without_the_test_switch(
    pith: RunPith, isolated_home: Path
) -> None:
    _generate_json(pith)
    result = pith("keys", "show", "--check", env={"PITH_PASSPHRASE": PASSPHRASE})
    assert_one_line_error(result, 4)
    assert "below the moderate minimum" in result.stderr


def test_wrong_passphrase_tampered_and_missing_have_distinct_messages(
    pith: RunPith, isolated_home: Path
) -> None:
    doc = _generate_json(pith)
    wrong = pith("keys", "show", "--check", env={**FAST, "PITH_PASSPHRASE": "not it"})
    assert_one_line_error(wrong, 4)
    path = isolated_home / "keys" / doc["file"]
    stored = json.loads(path.read_text())
    stored["cipher"]["nonce_b64"] = stored["cipher"]["nonce_b64"][::-1]
    path.write_text(json.dumps(stored))
    tampered = pith("keys", "show", "--check", env=FAST)
    assert_one_line_error(tampered, 4)
    path.unlink()
    missing = pith("keys", "show", "--check", env=FAST)
    assert_one_line_error(missing, 4)
    assert "wrong passphrase" in wrong.stderr
    assert "changed after it was written" in tampered.stderr
    assert "missing" in missing.stderr
    assert len({wrong.stderr, tampered.stderr, missing.stderr}) == 3


def test_group_readable_key_file_is_refused_with_the_fix(
    pith: RunPith, isolated_home: Path
) -> None:
    doc = _generate_json(pith)
    path = isolated_home / "keys" / doc["file"]
    path.chmod(0o640)
    result = pith("keys", "show", "--check", env=FAST)
    assert_one_line_error(result, 4)
    assert f"chmod 600 {path}" in result.stderr
    doctor = pith("doctor", "--offline")
    assert doctor.returncode == 1 and f"chmod 600 {path}" in doctor.stdout


def test_same_name_twice_and_bad_orcid_are_one_line_errors(pith: RunPith) -> None:
    _generate_json(pith)
    assert_one_line_error(pith("keys", "generate", "--name", "alice", env=FAST), 4)
    bad = pith("keys", "generate", "--name", "bob", "--orcid", "0000-0002-1825-0098", env=FAST)
    assert_one_line_error(bad, 2)
    listed = json.loads(_ok(pith("keys", "list", "--json")).stdout)
    assert [k["name"] for k in listed] == ["alice"]


def test_no_passphrase_source_without_a_terminal_is_exit_4(pith: RunPith) -> None:
    result = pith("keys", "generate", "--name", "alice", env={"PITH_TEST_FAST_KDF": "1"})
    assert_one_line_error(result, 4)
    assert "PITH_PASSPHRASE" in result.stderr


def test_passphrase_from_stdin_for_ci(pith: RunPith) -> None:
    env = {"PITH_TEST_FAST_KDF": "1"}
    _ok(
        pith(
            "keys", "generate", "--name", "ci", "--passphrase-file", "-", input="s3cret\n", env=env
        )
    )
    ok = pith("keys", "show", "--check", "--passphrase-file", "-", input="s3cret\n", env=env)
    assert "unlocks:" in _ok(ok).stdout


def test_plaintext_needs_the_flag_warns_and_doctor_flags_it(pith: RunPith) -> None:
    result = _ok(pith("keys", "generate", "--name", "throwaway", "--insecure-plaintext"))
    assert "UNENCRYPTED" in result.stderr
    doctor = pith("doctor", "--offline", "--json")
    assert doctor.returncode == 1
    assert any(
        f["level"] == "unsafe" and "unencrypted" in f["detail"] for f in json.loads(doctor.stdout)
    )


def test_doctor_reports_backend_folders_and_passphrase(pith: RunPith, isolated_home: Path) -> None:
    _generate_json(pith, env={"PITH_PASSPHRASE": PASSPHRASE})
    result = _ok(pith("doctor", "--offline", "--json", env={"PITH_PASSPHRASE": PASSPHRASE}))
    findings = {f["check"]: f for f in json.loads(result.stdout)}
    assert "fail.Keyring" in findings["backend"]["detail"]
    assert findings["keys folder"]["level"] == "ok" and "700" in findings["keys folder"]["detail"]
    assert "PITH_PASSPHRASE is set" in findings["passphrase"]["detail"]
    fast = pith("doctor", "--offline", env={"PITH_TEST_FAST_KDF": "1"})
    assert fast.returncode == 1 and "test-only weak KDF" in fast.stdout


def test_keyring_backend_through_the_cli(pith: RunPith, tmp_path: Path) -> None:
    ring = tmp_path / "ring.json"
    env = subprocess_env(
        PYTHON_KEYRING_BACKEND="pith_test_keyrings.FileKeyring", PITH_TEST_KEYRING_FILE=str(ring)
    )
    made = _ok(pith("keys", "generate", "--name", "alice", "--json", env=env))
    doc = json.loads(made.stdout)
    assert doc["backend"] == "keyring" and "FileKeyring" in made.stderr
    assert list(json.loads(ring.read_text())) == [f"pithauthor/{doc['key_id']}"]
    assert "unlocks:" in _ok(pith("keys", "show", "--check", env=env)).stdout
    _ok(pith("keys", "delete", "alice", "--yes", env=env))
    assert json.loads(ring.read_text()) == {}


@pytest.mark.slow
def test_hanging_keyring_times_out_to_an_encrypted_file_and_says_so(
    pith_process: RunPith,
) -> None:
    """A real process: it must exit although the keyring's thread never returns."""
    pith = pith_process
    env = subprocess_env(
        PYTHON_KEYRING_BACKEND="pith_test_keyrings.HangingKeyring",
        PITH_KEYRING_TIMEOUT="0.5",
        **FAST,
    )
    made = _ok(pith("keys", "generate", "--name", "alice", "--json", env=env, timeout=30))
    assert json.loads(made.stdout)["backend"] == "file"
    assert "did not answer" in made.stderr and "secret key is in" in made.stderr
    forced = pith("keys", "generate", "--name", "bob", "--backend", "keyring", env=env, timeout=30)
    assert_one_line_error(forced, 4)
    assert "did not answer" in forced.stderr


@pytest.mark.slow
def test_delete_asks_first_on_a_terminal_and_never_reads_an_answer_from_a_pipe(
    pith: RunPith,
) -> None:
    """Slow: real processes on a pseudo-terminal."""
    _generate_json(pith)
    env = {**os.environ, **FAST}
    code, out = _run_in_terminal(["keys", "delete", "alice"], ["n"], env)
    assert code == 2 and "Delete key 'alice'" in out
    assert len(json.loads(_ok(pith("keys", "list", "--json")).stdout)) == 1
    assert_one_line_error(pith("keys", "delete", "alice", input="y\n"), 2)  # no terminal
    assert len(json.loads(_ok(pith("keys", "list", "--json")).stdout)) == 1
    code, out = _run_in_terminal(["keys", "delete", "alice"], ["y"], env)
    assert code == 0, out
    assert json.loads(_ok(pith("keys", "list", "--json")).stdout) == []


def test_backup_on_one_home_import_on_another_signs_identically(
    pith: RunPith, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    home_a, home_b, backup = tmp_path / "a", tmp_path / "b", tmp_path / "alice.backup"
    env_a = {**FAST, "PITH_HOME": str(home_a), "PITH_BACKUP_PASSPHRASE": "backup pw"}
    env_b = {**FAST, "PITH_HOME": str(home_b), "PITH_PASSPHRASE": "other machine pw"}
    _generate_json(pith, env=env_a)
    _ok(pith("keys", "backup", "alice", "--out", str(backup), env=env_a))
    assert stat.S_IMODE(backup.stat().st_mode) == 0o600
    wrong = pith("keys", "import", str(backup), env={**env_b, "PITH_BACKUP_PASSPHRASE": "x"})
    assert_one_line_error(wrong, 4)
    _ok(pith("keys", "import", str(backup), env={**env_b, "PITH_BACKUP_PASSPHRASE": "backup pw"}))
    exports = [json.loads(_ok(pith("keys", "export", env=e)).stdout) for e in (env_a, env_b)]
    assert exports[0] == exports[1]
    from nacl.signing import VerifyKey

    from pithauthor.keys.author import load_signing_key
    from pithauthor.keys.passphrase import passphrase_source

    use_fast_kdf(monkeypatch)
    signatures = []
    for home, pw in ((home_a, PASSPHRASE), (home_b, "other machine pw")):
        monkeypatch.setenv("PITH_HOME", str(home))
        monkeypatch.setenv("PITH_PASSPHRASE", pw)
        key = load_signing_key(passphrase=passphrase_source())
        signatures.append(key.sign_digest(DIGEST))
        VerifyKey(key.public_key).verify(DIGEST, signatures[-1])
    assert signatures[0] == signatures[1]


def test_sentinel_seed_never_appears_in_any_output(
    pith: RunPith, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    ring = tmp_path / "ring.json"
    backup = tmp_path / "sentinel.backup"
    use_fast_kdf(monkeypatch)  # the backup too: six moderate argon2id runs are not the point
    write_backup(backup, SENTINEL_SEED, PASSPHRASE)
    env = subprocess_env(
        PYTHON_KEYRING_BACKEND="pith_test_keyrings.FileKeyring",
        PITH_TEST_KEYRING_FILE=str(ring),
        **FAST,
    )
    file_env = {**FAST}
    runs = [
        pith("keys", "import", str(backup), "--backend", "file", env=file_env),
        pith("keys", "list", env=file_env),
        pith("keys", "list", "--json", env=file_env),
        pith("keys", "show", "--check", "--json", env=file_env),
        pith("keys", "export", env=file_env),
        pith("keys", "export", "--format", "raw", env=file_env),
        pith("keys", "backup", "--out", str(tmp_path / "again.backup"), env=file_env),
        pith("keys", "show", "--check", env={**file_env, "PITH_PASSPHRASE": "wrong"}),
        pith("doctor", "--offline", env=file_env),
        pith("keys", "rotate", "--backend", "file", env=file_env),
        pith("keys", "delete", "sentinel", "--yes", env=file_env),
        pith("keys", "delete", "sentinel", "--yes", env=file_env),
        pith("keys", "import", str(backup), "--backend", "keyring", env=env),
    ]
    # wrong passphrase: 4; doctor: 1 because the test-only cheap KDF is on; the rest succeed
    expected = [0, 0, 0, 0, 0, 0, 0, 4, 1, 0, 0, 0, 0]
    assert [r.returncode for r in runs] == expected, [r.stderr for r in runs]
    # A crash with the seed in a local variable: the keyring holds the sentinel seed, the key
    # list names another public key, and PITH_DEBUG=1 lets the traceback through.
    meta_path = Path(os.environ["PITH_HOME"]) / "keys" / "keys.json"
    meta = json.loads(meta_path.read_text())
    for entry in meta["keys"]:
        if entry["backend"] == "keyring":
            entry["public_key_b64"] = "A" * 43 + "="
    meta_path.write_text(json.dumps(meta))
    crash = pith("keys", "show", "--check", "sentinel", env={**env, "PITH_DEBUG": "1"})
    assert crash.returncode != 0 and "KeyFileTampered" in crash.stderr
    runs.append(crash)
    for result in runs:
        assert_no_seed(result.stdout)
        assert_no_seed(result.stderr)
    assert_no_seed(meta_path.read_bytes())
    assert_no_seed((tmp_path / "again.backup").read_bytes())


def _run_in_terminal(args: list[str], answers: list[str], env: dict[str, str]) -> tuple[int, str]:
    """Run `pith` on a pseudo-terminal, typing each answer after the next ': ' prompt."""
    import pty
    import select
    import sys

    pid, fd = pty.fork()
    if pid == 0:  # child
        os.execve(sys.executable, [sys.executable, LAUNCHER, *args], env)
    output = b""

    def read_some(deadline: float = 30) -> bytes:
        ready, _, _ = select.select([fd], [], [], deadline)
        if not ready:
            raise TimeoutError(output.decode(errors="replace"))
        try:
            return os.read(fd, 1024)
        except OSError:
            return b""

    for answer in answers:
        seen = len(output)
        while not output[seen:].rstrip().endswith(b":"):
            chunk = read_some()
            if not chunk:
                break
            output += chunk
        os.write(fd, answer.encode() + b"\n")
    while chunk := read_some():
        output += chunk
    os.close(fd)
    _, status = os.waitpid(pid, 0)
    return os.waitstatus_to_exitcode(status), output.decode(errors="replace")


@pytest.mark.slow
def test_terminal_prompt_asks_twice_on_creation(isolated_home: Path) -> None:
    """Slow: real processes on a pseudo-terminal."""
    env = {k: v for k, v in os.environ.items() if k != "PITH_PASSPHRASE"}
    env["PITH_TEST_FAST_KDF"] = "1"
    code, out = _run_in_terminal(
        ["keys", "generate", "--name", "bob", "--public-name", "Bob Builder"],
        ["typed pw", "other"] * 3,  # three tries, each pair differing
        env,
    )
    assert code == 4 and out.count("differ") == 3
    code, out = _run_in_terminal(
        ["keys", "generate", "--name", "bob", "--public-name", "Bob Builder"],
        ["typed pw", "typed pw"],
        env,
    )
    assert code == 0 and "Repeat passphrase" in out
    assert "typed pw" not in out  # getpass does not echo
    code, out = _run_in_terminal(["keys", "show", "--check"], ["typed pw"], env)
    assert code == 0 and "unlocks:" in out
    backup = isolated_home.parent / "bob.backup"
    code, out = _run_in_terminal(
        ["keys", "backup", "--out", str(backup)], ["typed pw", "backup pw", "backup pw"], env
    )
    assert code == 0 and "Backup passphrase" in out and backup.exists()
    env["PITH_HOME"] = str(isolated_home.parent / "elsewhere")
    code, out = _run_in_terminal(
        ["keys", "import", str(backup)], ["backup pw", "new pw", "new pw"], env
    )
    assert code == 0, out


def test_key_id_and_fingerprint_are_recomputable_from_the_exported_key(pith: RunPith) -> None:
    import base64
    import hashlib

    _generate_json(pith)
    exported = json.loads(_ok(pith("keys", "export")).stdout)
    raw = _ok(pith("keys", "export", "--format", "raw")).stdout.strip()
    assert raw == exported["public_key_b64"]
    digest = hashlib.sha256(base64.b64decode(raw)).digest()
    assert exported["public_key_fingerprint"] == digest[:16].hex()
    assert exported["key_id"] == "ed25519:" + base64.b32encode(digest).decode()[:26]
    assert exported["signer_id"] == exported["key_id"]  # no ORCID given


def test_the_installed_command_ignores_the_test_kdf_variable(isolated_home: Path) -> None:
    """`python -m pithauthor` (what the `pith` script runs), not the test launcher: the
    variable changes nothing, the file gets the moderate KDF and is said to be encrypted."""
    env = {**os.environ, "PITH_TEST_FAST_KDF": "1", "PITH_PASSPHRASE": PASSPHRASE}
    result = subprocess.run(
        [sys.executable, "-m", "pithauthor", "keys", "generate", "--name", "real", "--json"],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )
    assert result.returncode == 0, result.stderr
    key_file = isolated_home / "keys" / json.loads(result.stdout)["file"]
    stored = json.loads(key_file.read_text())
    assert stored["kdf"]["opslimit"] >= 3 and stored["kdf"]["memlimit"] >= 256 * 1024 * 1024
    assert "stored encrypted" in result.stderr and "WEAK" not in result.stderr


def test_a_weak_test_key_file_is_never_called_stored_encrypted(pith: RunPith) -> None:
    result = _ok(pith("keys", "generate", "--name", "weak", env=FAST))
    assert "stored encrypted" not in result.stderr
    assert "WEAK key derivation (TEST ONLY)" in result.stderr
