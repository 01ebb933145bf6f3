"""`pith doctor` against a real local registry and a local ORCID (both over loopback): each check
is one line with its level and next step, the network checks are time-bound and skippable, and
the exit code says whether something failed."""

from __future__ import annotations

import json
import shutil
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from support.cli import RunPith, use_fast_kdf
from support.identity_server import IdentityServer, Site
from support.registry import TestSigner, citation, manifest_file, start_server

from pithauthor.registry.local.server import RegistryServer

PASSPHRASE = {"PITH_PASSPHRASE": "doctor passphrase"}
ORCID = "0000-0002-1825-0097"
DEAD = "http://127.0.0.1:9"  # nothing listens


@pytest.fixture
def registry(tmp_path: Path) -> Iterator[RegistryServer]:
    server = start_server(tmp_path / "registry-data")
    yield server
    server.stop()


def _findings(result: Any) -> dict[str, dict[str, Any]]:
    return {f["check"]: f for f in json.loads(result.stdout)}


def _failing(found: dict[str, dict[str, Any]]) -> set[str]:
    """The failing checks but the key store's own: the tests' keys use the test-only weak KDF,
    which the key store's checks rightly call unsafe (tests/cli/test_keys_cli.py tests those)."""
    bad = {c for c, f in found.items() if f["level"] in ("fail", "unsafe")}
    return {c for c in bad if not c.startswith("key ") and c != "kdf"}


@pytest.fixture
def keys(pith: RunPith, monkeypatch: pytest.MonkeyPatch) -> dict[str, str]:
    """Key "ada" with an ORCID iD, key "bob" without; returns ada's ORCID link (name and URL)."""
    use_fast_kdf(monkeypatch)
    made = pith(
        "keys", "generate", "--name", "ada", "--public-name", "Ada L", "--orcid", ORCID,
        env=PASSPHRASE,
    )  # fmt: skip
    assert made.returncode == 0, made.stderr
    made = pith("keys", "generate", "--name", "bob", "--public-name", "Bob B", env=PASSPHRASE)
    assert made.returncode == 0, made.stderr
    proof = pith("keys", "prove", "orcid", "--key", "ada", "--json")
    return dict(json.loads(proof.stdout))


def test_doctor_reports_registry_key_tex_outbox_backup_and_identity(
    pith: RunPith, keys: dict[str, str], registry: RegistryServer, tmp_path: Path
) -> None:
    from pithauthor.registry.outbox import Outbox

    manifest = manifest_file(registry.url, tmp_path / "registry-data", tmp_path / "manifest.json")
    signer = TestSigner()
    pending, rejected = citation(signer, 1), citation(signer, 2)
    with Outbox() as box:
        box.store([pending, rejected], registry.url)
        box.mark_rejected(rejected["event_id"], registry.url, "refused", {"error": "no"})
    site = Site(records={ORCID: [(keys["url_name"], keys["url"])]})
    with IdentityServer(site) as orcid:
        env = {**PASSPHRASE, "PITH_ORCID_API": orcid.orcid_api}
        argv = ["doctor", "--json", "--registry", registry.url, "--trust-manifest", str(manifest)]
        result = pith(*argv, env=env)
        found = _findings(result)
        assert _failing(found) == set(), result.stdout + result.stderr
        assert found[f"registry {registry.url}"]["level"] == "ok"
        assert "pithauthor-local-" in found[f"registry {registry.url}"]["detail"]
        for program in ("pdflatex", "latexmk"):
            want = "ok" if shutil.which(program) else "warn"
            assert found[f"tex {program}"]["level"] == want
        box_line = found[f"outbox {registry.url}"]
        assert box_line["level"] == "warn" and "1 pending, 1 rejected" in box_line["detail"]
        assert "--state rejected" in box_line["next"]
        assert found["backup ada"]["level"] == "warn"
        assert found["backup ada"]["next"].startswith("pith keys backup ada --out")
        assert found["identity ada"]["level"] == "ok" and "bound" in found["identity ada"]["detail"]
        assert found["identity bob"]["level"] == "info"

        backed = pith("keys", "backup", "ada", "--out", str(tmp_path / "ada.backup"), env=env)
        assert backed.returncode == 0, backed.stderr
        site.records[ORCID] = []  # the author removed the link: the key is no longer bound
        result = pith(*argv, env=env)
        found = _findings(result)
        assert found["backup ada"]["level"] == "ok"
        assert "ada.backup" in found["backup ada"]["detail"]
        assert found["backup bob"]["level"] == "warn"
        assert found["identity ada"]["level"] == "warn"
        assert "not bound" in found["identity ada"]["detail"]
        assert found["identity ada"]["next"] == "pith keys prove orcid --key ada"
        assert _failing(found) == set()
        # the active key's link renamed as retired (a rotation half done): stale, a failure
        site.records[ORCID] = [(keys["url_name"] + " (retired 2026-11-30)", keys["url"])]
        result = pith(*argv, env=env)
    found = _findings(result)
    assert found["identity ada"]["level"] == "fail" and "stale" in found["identity ada"]["detail"]
    assert _failing(found) == {"identity ada"} and result.returncode == 1


def test_a_registry_key_not_trusted_or_not_the_trusted_one_is_said(
    pith: RunPith, registry: RegistryServer, tmp_path: Path
) -> None:
    check = f"registry {registry.url}"
    untrusted = pith("doctor", "--json", "--registry", registry.url)
    line = _findings(untrusted)[check]
    assert line["level"] == "warn" and "not trusted" in line["detail"]
    assert "--trust-local-registry" in line["next"]
    assert "export PITH_TRUST_LOCAL_REGISTRY=1" in line["next"]
    assert untrusted.returncode == 0
    # the session-wide trust the docs' pages export: trusted, as every command is
    session = pith(
        "doctor", "--json", "--registry", registry.url, env={"PITH_TRUST_LOCAL_REGISTRY": "1"}
    )
    line = _findings(session)[check]
    assert line["level"] == "ok", line
    assert "PITH_TRUST_LOCAL_REGISTRY" in line["detail"]

    # a manifest naming this registry's key id with another key: an impostor, or a wrong file
    other = start_server(tmp_path / "other-data")
    try:
        real = json.loads(
            manifest_file(registry.url, tmp_path / "registry-data", tmp_path / "r.json").read_text()
        )
        forged = json.loads(
            manifest_file(other.url, tmp_path / "other-data", tmp_path / "o.json").read_text()
        )
    finally:
        other.stop()
    real_id = real["mirrors"][0]["public_key"]["key_id"]
    forged["mirrors"][0]["public_key"]["key_id"] = real_id
    (tmp_path / "forged.json").write_text(json.dumps(forged), "utf-8")
    result = pith(
        "doctor",
        "--json",
        "--registry",
        registry.url,
        "--trust-manifest",
        str(tmp_path / "forged.json"),
    )
    line = _findings(result)[check]
    assert line["level"] == "fail" and "another public key" in line["detail"], line
    assert result.returncode == 1


def test_a_dead_registry_fails_within_the_timeout_and_offline_skips_it(
    pith: RunPith, tmp_path: Path
) -> None:
    started = time.monotonic()
    result = pith("doctor", "--registry", DEAD, "--timeout", "2")
    assert time.monotonic() - started < 15
    assert result.returncode == 1
    line = next(x for x in result.stdout.splitlines() if f"registry {DEAD}" in x)
    assert line.startswith("fail") and "not reachable" in line and "; next: " in line

    offline = pith("doctor", "--registry", DEAD, "--offline", "--json")
    found = _findings(offline)
    assert offline.returncode == 0, offline.stdout
    assert f"registry {DEAD}" not in found and found["network"]["level"] == "info"


def test_doctor_creates_nothing_in_a_fresh_home(pith: RunPith, isolated_home: Path) -> None:
    result = pith("doctor", "--offline", "--json")
    assert result.returncode == 0, result.stdout + result.stderr
    assert not isolated_home.exists() or not any(isolated_home.iterdir())
    assert _findings(result)["outbox"]["detail"].startswith("empty")


@pytest.mark.parametrize("bad", ["0", "-1", "nan", "61"])
def test_a_bad_timeout_is_one_line_and_exit_2(pith: RunPith, bad: str) -> None:
    from support.cli import assert_one_line_error

    assert_one_line_error(pith("doctor", "--timeout", bad), 2)
