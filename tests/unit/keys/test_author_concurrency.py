"""Concurrent `pith author generate` / `rotate` on one key store: nothing lost.

Several generate new author while others rotate the same key, all at once; then the store is
checked: every key reported is listed, each rotation retired exactly the key before it (one
unbroken chain), no key file lacks its record, author.json is valid. Threads in one process
(default run: each opens the lock file itself, so they contend for it as processes do) and, under
`slow`, real processes.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import pytest
from support.cli import LAUNCHER, run_in_process, use_fast_kdf
from support.keys import PASSPHRASE

ROUNDS = 3  # threads: without the key-store lock, most author are lost (15 of 19)
PROCESS_ROUNDS = 2  # processes: without the lock, 1-6 of 13 author lost in each of 5 runs
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
        [sys.executable, LAUNCHER, "keys", *args, "--json"],
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
    """Slow: 14 real `pith` processes (0.5 CPU-s each to start). The threaded test below guards
    the same lock in the default run."""
    env = _env(isolated_home)
    first = _finish(_start(env, "generate", "--name", "r"))
    reported_ids = {str(first["key_id"])}
    rotations = 0
    for round_no in range(PROCESS_ROUNDS):
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
        [sys.executable, LAUNCHER, "keys", "list", "--json"],
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    _assert_store_whole(isolated_home, json.loads(listed.stdout), reported_ids, rotations)
    assert len(reported_ids) == 1 + PROCESS_ROUNDS * (GENERATORS + ROTATORS)


def test_threads_generating_and_rotating_at_once_lose_no_key_and_orphan_no_file(
    isolated_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from pithauthor.keys import author

    use_fast_kdf(monkeypatch)
    monkeypatch.setenv("PITH_PASSPHRASE", PASSPHRASE)
    reported = {author.generate("r", backend="file", note=lambda _: None).key_id}
    for round_no in range(ROUNDS):
        reported.update(_thread_round(round_no))
    listed = run_in_process(["keys", "list", "--json"])
    assert listed.returncode == 0, listed.stderr
    _assert_store_whole(isolated_home, json.loads(listed.stdout), reported, ROUNDS * ROTATORS)
    assert len(reported) == 1 + ROUNDS * (GENERATORS + ROTATORS)


def _thread_round(round_no: int) -> list[str]:
    """GENERATORS generate and ROTATORS rotate "r", released at once; the key ids they report."""
    from pithauthor.keys import author

    start = threading.Barrier(GENERATORS + ROTATORS)
    got: list[str] = []
    failed: list[BaseException] = []

    def work(i: int) -> None:
        start.wait()
        try:
            if i < GENERATORS:
                record = author.generate(f"g{round_no}-{i}", backend="file", note=lambda _: None)
            else:
                record = author.rotate("r", backend="file", note=lambda _: None)[1]
            got.append(record.key_id)
        except BaseException as exc:
            failed.append(exc)

    threads = [threading.Thread(target=work, args=(i,)) for i in range(GENERATORS + ROTATORS)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    assert not failed, failed
    return got


def _assert_store_whole(
    home: Path, records: list[dict[str, Any]], reported_ids: set[str], rotations: int
) -> None:
    """Every reported key listed, one unbroken rotation chain of "r", no orphan file."""
    listed_ids = {r["key_id"] for r in records}
    missing = reported_ids - listed_ids
    assert not missing, f"{len(missing)} of {len(reported_ids)} reported author were lost"
    assert len(records) == len(reported_ids)

    chain = [r for r in records if r["name"] == "r"]
    assert len(chain) == 1 + rotations
    assert [r["key_id"] for r in chain if r["status"] == "active"] == [chain_end(chain)]
    by_id = {r["key_id"]: r for r in chain}
    for rec in chain:  # each rotation retired the key active just before it, and only that one
        if rec["replaces"] is not None:
            assert by_id[rec["replaces"]]["replaced_by"] == rec["key_id"]
    assert sum(1 for r in chain if r["replaces"] is None) == 1

    author = home / "keys"
    doc = json.loads((author / "keys.json").read_text("utf-8"))
    assert doc["version"] == 1 and len(doc["keys"]) == len(records)
    on_disk = {p.name for p in author.glob("*.key")}
    assert on_disk == {r["file"] for r in records}, "orphaned or missing key files"
    assert not list(author.glob(".tmp-*")), "temporary files left behind"


def chain_end(chain: list[dict[str, str | None]]) -> str | None:
    """The key of the rotation chain that nothing replaced."""
    ends = [r["key_id"] for r in chain if r["replaced_by"] is None]
    assert len(ends) == 1, ends
    return ends[0]


def test_a_failed_key_list_write_leaves_no_key_file(
    isolated_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from pithauthor.keys import author, storage

    monkeypatch.setenv("PITH_PASSPHRASE", PASSPHRASE)
    use_fast_kdf(monkeypatch)
    author.generate("first", note=lambda _: None)

    def full_disk(records: object) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(author, "save_records", full_disk)
    with pytest.raises(OSError):
        author.generate("second", note=lambda _: None)
    monkeypatch.setattr(author, "save_records", storage.save_records)
    folder = isolated_home / "keys"
    assert [r.name for r in author.list_keys()] == ["first"]
    assert {p.name for p in folder.glob("*.key")} == {author.show("first").file}
    assert not list(folder.glob(".tmp-*"))


def test_a_name_taken_while_the_secret_was_made_is_refused_without_an_orphan(
    isolated_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from pithauthor.errors import KeyExists
    from pithauthor.keys import author, secrets

    monkeypatch.setenv("PITH_PASSPHRASE", PASSPHRASE)
    use_fast_kdf(monkeypatch)
    real_prepare = secrets.prepare_seed

    def prepare_while_another_command_wins(*args: object, **kwargs: object) -> object:
        prepared = real_prepare(*args, **kwargs)  # type: ignore[arg-type]
        monkeypatch.setattr(author, "prepare_seed", real_prepare)
        author.generate("alice", note=lambda _: None)  # the other command, in between
        return prepared

    monkeypatch.setattr(author, "prepare_seed", prepare_while_another_command_wins)
    with pytest.raises(KeyExists):
        author.generate("alice", note=lambda _: None)
    folder = isolated_home / "keys"
    assert len(author.list_keys()) == 1
    assert {p.name for p in folder.glob("*.key")} == {author.show("alice").file}
    lock = folder / ".keys.lock"
    assert lock.exists() and (lock.stat().st_mode & 0o777) == 0o600
