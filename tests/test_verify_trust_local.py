"""`pith verify --trust-local-registry`: a local registry's documents verify against the key it
publishes (asked of the registry over loopback), and never without being asked."""

from __future__ import annotations

from pathlib import Path

from conftest import RunPith, assert_one_line_error
from registry_helpers import start_server

DEAR = "2302.12445"


def test_a_local_registry_state_verifies_only_with_trust_local_registry(
    pith: RunPith, tmp_path: Path
) -> None:
    server = start_server(tmp_path / "registry")
    try:
        state = tmp_path / "state.json"
        fetched = pith(
            "fetch", DEAR, "--what", "state", "-o", str(state),
            "--registry", server.url, "--trust-local-registry",
        )  # fmt: skip
        assert fetched.returncode == 0, fetched.stderr
        plain = pith("verify", str(state))
        assert plain.returncode == 1  # the local key is not pith.science's
        assert "FAILED: state: record.receipt_key" in plain.stderr
        trusted = pith("verify", str(state), "--trust-local-registry", "--registry", server.url)
        assert trusted.returncode == 0, trusted.stdout + trusted.stderr
        assert "OK: state verified" in trusted.stderr
        assert "its key is not pith.science's" in trusted.stderr  # said, every time
    finally:
        server.stop()


def test_trust_local_registry_refuses_a_registry_off_loopback(
    pith: RunPith, tmp_path: Path
) -> None:
    doc = tmp_path / "doc.json"
    doc.write_text("{}")
    result = pith(
        "verify", str(doc), "--trust-local-registry", "--registry", "https://pith.science"
    )
    assert_one_line_error(result, 2)
    assert "only for a registry on loopback" in result.stderr
