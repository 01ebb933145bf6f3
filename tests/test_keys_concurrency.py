"""Concurrent `pith keys generate` / `rotate` as real processes on one key store: nothing lost.

Each round starts several processes at once (half generate new keys, half rotate the same key)
and then checks the store: every key a process reported is listed, each rotation retired exactly
the key before it (one unbroken chain), no key file lacks its record, keys.json is valid.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from keys_helpers import PASSPHRASE

ROUNDS = 8
GENERATORS = 3
ROTATORS = 3


def _env(home: Path) -> dict[str, str]:
    return {
        **os.environ,
        "PITH_HOME": str(home),
        "PITH_PASSPHRASE": PASSPHRASE,
        "PITH_TEST_FAST_KDF": "1",
    }


def _start(env: dict[str, str], *args: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "pithauthor", "keys", *args, "--json"],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def _finish(proc: subprocess.Popen[str]) -> dict[str, object]:
    out, err = proc.communicate(timeout=180)
    assert proc.returncode == 0, (proc.args, proc.returncode, err)
    doc: dict[str, object] = json.loads(out)
    return doc


@pytest.mark.slow
def test_parallel_generate_and_rotate_lose_no_key_and_orphan_no_file(
    isolated_home: Path,
) -> None:
    env = _env(isolated_home)
    first = _finish(_start(env, "generate", "--name", "r"))
    reported_ids = {str(first["key_id"])}
    rotations = 0
    for round_no in range(ROUNDS):
        procs = [_start(env, "generate", "--name", f"g{round_no}-{i}") for i in range(GENERATORS)]
        procs += [_start(env, "rotate", "r") for _ in range(ROTATORS)]
        for proc, doc in [(p, _finish(p)) for p in procs]:
            if "rotate" in proc.args:
                active = doc["active"]
                assert isinstance(active, dict)
                reported_ids.add(str(active["key_id"]))
                rotations += 1
            else:
                reported_ids.add(str(doc["key_id"]))

    listed = subprocess.run(
        [sys.executable, "-m", "pithauthor", "keys", "list", "--json"],
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    records = json.loads(listed.stdout)
    listed_ids = {r["key_id"] for r in records}
    missing = reported_ids - listed_ids
    assert not missing, f"{len(missing)} of {len(reported_ids)} reported keys were lost"
    assert len(records) == len(reported_ids) == 1 + ROUNDS * (GENERATORS + ROTATORS)

    chain = [r for r in records if r["name"] == "r"]
    assert len(chain) == 1 + rotations
    assert [r["key_id"] for r in chain if r["status"] == "active"] == [chain_end(chain)]
    by_id = {r["key_id"]: r for r in chain}
    for rec in chain:  # each rotation retired the key active just before it, and only that one
        if rec["replaces"] is not None:
            assert by_id[rec["replaces"]]["replaced_by"] == rec["key_id"]
    assert sum(1 for r in chain if r["replaces"] is None) == 1

    keys = isolated_home / "keys"
    doc = json.loads((keys / "keys.json").read_text("utf-8"))
    assert doc["version"] == 1 and len(doc["keys"]) == len(records)
    on_disk = {p.name for p in keys.glob("*.key")}
    assert on_disk == {r["file"] for r in records}, "orphaned or missing key files"
    assert not list(keys.glob(".tmp-*")), "temporary files left behind"


def chain_end(chain: list[dict[str, str | None]]) -> str | None:
    """The key of the rotation chain that nothing replaced."""
    ends = [r["key_id"] for r in chain if r["replaced_by"] is None]
    assert len(ends) == 1, ends
    return ends[0]


def test_a_failed_key_list_write_leaves_no_key_file(
    isolated_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from pithauthor import keys
    from pithauthor._keystore import metadata

    monkeypatch.setenv("PITH_PASSPHRASE", PASSPHRASE)
    monkeypatch.setenv("PITH_TEST_FAST_KDF", "1")
    keys.generate("first", note=lambda _: None)

    def full_disk(records: object) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(keys, "save_records", full_disk)
    with pytest.raises(OSError):
        keys.generate("second", note=lambda _: None)
    monkeypatch.setattr(keys, "save_records", metadata.save_records)
    folder = isolated_home / "keys"
    assert [r.name for r in keys.list_keys()] == ["first"]
    assert {p.name for p in folder.glob("*.key")} == {keys.show("first").file}
    assert not list(folder.glob(".tmp-*"))


def test_a_name_taken_while_the_secret_was_made_is_refused_without_an_orphan(
    isolated_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from pithauthor import keys
    from pithauthor._keystore import secrets_io
    from pithauthor.errors import KeyExists

    monkeypatch.setenv("PITH_PASSPHRASE", PASSPHRASE)
    monkeypatch.setenv("PITH_TEST_FAST_KDF", "1")
    real_prepare = secrets_io.prepare_seed

    def prepare_while_another_command_wins(*args: object, **kwargs: object) -> object:
        prepared = real_prepare(*args, **kwargs)  # type: ignore[arg-type]
        monkeypatch.setattr(keys, "prepare_seed", real_prepare)
        keys.generate("alice", note=lambda _: None)  # the other command, in between
        return prepared

    monkeypatch.setattr(keys, "prepare_seed", prepare_while_another_command_wins)
    with pytest.raises(KeyExists):
        keys.generate("alice", note=lambda _: None)
    folder = isolated_home / "keys"
    assert len(keys.list_keys()) == 1
    assert {p.name for p in folder.glob("*.key")} == {keys.show("alice").file}
    lock = folder / ".keys.lock"
    assert lock.exists() and (lock.stat().st_mode & 0o777) == 0o600
