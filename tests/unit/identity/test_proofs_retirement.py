"""Retirement is honoured, end to end with real key stores and `pith` commands:
a retired key's later claim binds nothing, a backup of a retired key comes back retired
(from this store's successor key, or from the ORCID link on a local server answering like
ORCID's public API), and `pith keys rotate` asks for a new backup."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from support.cli import error_lines, use_fast_kdf
from support.identity_server import IdentityServer, Site
from support.paths import FIXTURES

from pithauthor._cli.main import main

VICTIM = "0000-0002-1825-0097"
DEAR = "pith:2023:NFG5PAOXQUVIWDX5F7YSYYL7EW"
DEAR_RECORD = str(FIXTURES / "record-2302.12445v2.json")


@pytest.fixture
def server() -> Iterator[IdentityServer]:
    with IdentityServer(Site()) as srv:
        yield srv


@pytest.fixture(autouse=True)
def fast_keys(monkeypatch: pytest.MonkeyPatch) -> None:
    use_fast_kdf(monkeypatch)  # test-only: cheap argon2id
    monkeypatch.setenv("PITH_PASSPHRASE", "retirement tests passphrase")
    monkeypatch.setenv("PITH_BACKUP_PASSPHRASE", "retirement tests backup")


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    with pytest.raises(SystemExit) as exit_info:
        main(list(args))
    out, err = capsys.readouterr()
    return int(exit_info.value.code or 0), out, err


def at_home(monkeypatch: pytest.MonkeyPatch, home: Path) -> None:
    monkeypatch.setenv("PITH_HOME", str(home))


def ok(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[str, str]:
    code, out, err = run(capsys, *args)
    assert code == 0, (args, out, err)
    return out, err


def status_of(capsys: pytest.CaptureFixture[str], key: str) -> dict[str, str]:
    out, _ = ok(capsys, "keys", "show", key, "--json")
    return dict(json.loads(out))


def author_with_backup(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> tuple[str, Path]:
    """On machine A: a key for VICTIM, backed up while active. Returns (key id, backup)."""
    at_home(monkeypatch, tmp_path / "a")
    out, _ = ok(
        capsys, "keys", "generate", "--name", "carberry", "--orcid", VICTIM,
        "--backend", "file", "--json",
        "--public-name", "Chengjian Liu",  # author 2 of DEAR_RECORD's paper
    )  # fmt: skip
    backup = tmp_path / "carberry.pithkey"
    ok(capsys, "keys", "backup", "--out", str(backup))
    return str(json.loads(out)["key_id"]), backup


def rotate_on_a(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, when: str
) -> tuple[str, str]:
    """`pith keys rotate` on machine A, as if run at `when`; returns (new key id, stderr)."""
    monkeypatch.setattr("pithauthor.keys.author._now", lambda: when)
    out, err = ok(capsys, "keys", "rotate", "--backend", "file", "--json")
    monkeypatch.undo()  # undoes the environment too: set it again
    use_fast_kdf(monkeypatch)
    monkeypatch.setenv("PITH_PASSPHRASE", "retirement tests passphrase")
    monkeypatch.setenv("PITH_BACKUP_PASSPHRASE", "retirement tests backup")
    return str(json.loads(out)["active"]["key_id"]), err


def test_rotate_ends_by_asking_for_a_new_backup(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    author_with_backup(capsys, monkeypatch, tmp_path)
    code, _, err = run(capsys, "keys", "rotate", "--backend", "file")
    assert code == 0, err
    last = err.strip().splitlines()[-1]
    assert last.startswith("make a new backup now: pith keys backup carberry --out FILE")
    assert "old backups hold the retired key" in last


def test_a_restored_backup_of_a_key_the_orcid_link_marks_retired_stays_retired(
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
    server: IdentityServer,
) -> None:
    old, backup = author_with_backup(capsys, monkeypatch, tmp_path)
    server.site.records[VICTIM] = [
        ("Pith author key (retired 2026-03-01)", f"https://pith.science/key/{old}")
    ]
    # a new machine, the old backup (it says "active")
    at_home(monkeypatch, tmp_path / "b")
    code, out, err = run(
        capsys, "keys", "import", str(backup), "--backend", "file",
        "--orcid-api", server.orcid_api, "--json",
    )  # fmt: skip
    assert code == 0, err
    restored = json.loads(out)
    assert restored["status"] == "retired" and restored["retired_at"] == "2026-03-01T23:59:59Z"
    assert f"key {old} restored as retired (per its ORCID link ({VICTIM})" in err
    assert server.site.requests == [(f"/v3.0/{VICTIM}/researcher-urls", "application/json")]
    # it cannot sign
    code, _, err = run(capsys, "claim", DEAR, "--record", DEAR_RECORD, "--key", old, "--json")
    assert code == 4 and "retired" in err


def test_a_backup_of_a_key_current_on_orcid_comes_back_active(
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
    server: IdentityServer,
) -> None:
    old, backup = author_with_backup(capsys, monkeypatch, tmp_path)
    server.site.records[VICTIM] = [("Pith author key", f"https://pith.science/key/{old}")]
    at_home(monkeypatch, tmp_path / "b")
    ok(capsys, "keys", "import", str(backup), "--orcid-api", server.orcid_api, "--backend", "file")
    assert status_of(capsys, old)["status"] == "active"


def test_when_orcid_cannot_be_asked_nothing_is_restored_unless_offline_is_given(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    old, backup = author_with_backup(capsys, monkeypatch, tmp_path)
    at_home(monkeypatch, tmp_path / "b")
    dead = "http://127.0.0.1:9/v3.0"
    code, out, err = run(capsys, "keys", "import", str(backup), "--orcid-api", dead)
    assert code == 3 and out == ""
    assert len(error_lines(err)) == 1 and "--offline" in err and "Traceback" not in err
    assert ok(capsys, "keys", "list", "--json")[0].strip() == "[]"  # nothing half-restored
    ok(capsys, "keys", "import", str(backup), "--offline", "--orcid-api", dead, "--backend", "file")
    assert status_of(capsys, old)["status"] == "active"  # as the backup says, on request


def test_a_backup_restored_beside_the_key_that_replaced_it_stays_retired(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    old, old_backup = author_with_backup(capsys, monkeypatch, tmp_path)
    new, _ = rotate_on_a(capsys, monkeypatch, "2026-06-01T12:00:00Z")
    at_home(monkeypatch, tmp_path / "a")
    new_backup = tmp_path / "new.pithkey"
    ok(capsys, "keys", "backup", new, "--out", str(new_backup))
    # machine B: the new key first, then (by mistake) the old backup, without asking ORCID
    at_home(monkeypatch, tmp_path / "b")
    ok(capsys, "keys", "import", str(new_backup), "--offline", "--backend", "file")
    _out, err = ok(capsys, "keys", "import", str(old_backup), "--offline", "--backend", "file")
    assert f"per the key store (replaced by {new})" in err
    shown = status_of(capsys, old)
    assert shown["status"] == "retired" and shown["retired_at"] == "2026-06-01T12:00:00Z"
    assert shown["replaced_by"] == new
    assert status_of(capsys, new)["status"] == "active"  # still the one active key


def test_a_retired_keys_later_claim_fails_and_verify_says_why(
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
    server: IdentityServer,
) -> None:
    old, backup = author_with_backup(capsys, monkeypatch, tmp_path)
    rotate_on_a(capsys, monkeypatch, "2026-01-01T00:00:00Z")
    server.site.records[VICTIM] = [
        ("Pith author key (retired 2026-01-01)", f"https://pith.science/key/{old}")
    ]
    # the old backup, in other hands, restored as it says and used today (after 2026-01-01)
    at_home(monkeypatch, tmp_path / "thief")
    ok(capsys, "keys", "import", str(backup), "--offline", "--backend", "file")
    late = tmp_path / "late.jsonl"
    ok(capsys, "claim", DEAR, "--record", DEAR_RECORD, "--out", str(late))
    # checked against the ORCID link, anywhere
    code, out, _err = run(
        capsys, "verify", str(late), "--orcid", VICTIM, "--orcid-api", server.orcid_api
    )
    assert code == 1
    assert "failed       identity.retired" in out and "per orcid, 2026-01-01" in out
    bound = next(line for line in out.splitlines() if "identity_bound" in line)
    assert bound.startswith("failed") and "no trusted time proves this event was signed" in bound
    assert "passed       signature" in out  # well signed: only the identity fails
    # checked on the author's own machine, whose key store retired the key
    at_home(monkeypatch, tmp_path / "a")
    code, out, _ = run(capsys, "verify", str(late), "--signer", old)
    assert code == 1
    assert "per the local key store, 2026-01-01T00:00:00Z" in out
