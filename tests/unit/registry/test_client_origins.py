"""`localhost` and `127.0.0.1` are two origins by the URL rules, so two registries for the
outbox. A local registry reached through the spelling it does not call itself would take a
signed event that could never be sent (its action links leave that origin): the signing
command refuses before anything is signed, in one line naming the address to give."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from support.cli import RunPith, use_fast_kdf
from support.registry import start_server

from pithauthor.registry.local.server import RegistryServer


@pytest.fixture
def server(tmp_path: Path) -> Iterator[RegistryServer]:
    srv = start_server(tmp_path / "reg")  # serves on 127.0.0.1 and calls itself that
    try:
        yield srv
    finally:
        srv.stop()


def test_signing_through_another_spelling_of_the_registry_is_refused_before_signing(
    server: RegistryServer, pith: RunPith, monkeypatch: pytest.MonkeyPatch
) -> None:
    from pithauthor.keys.author import generate

    use_fast_kdf(monkeypatch)
    monkeypatch.setenv("PITH_PASSPHRASE", "spelling test passphrase")
    generate("ex", backend="file", public_name="Example Author", note=lambda _: None)
    assert server.url.startswith("http://127.0.0.1:")
    other = server.url.replace("127.0.0.1", "localhost")
    claim = ["claim", "2101.99901", "--position", "1", "--trust-local-registry", "--yes"]
    refused = pith(*claim, "--registry", other)
    assert refused.returncode != 0
    assert refused.stdout == ""
    last = refused.stderr.splitlines()[-1]
    assert last.startswith("pith: error: ") and f"give --registry {server.url}" in last
    assert "Traceback" not in refused.stderr
    listed = pith("outbox", "list")
    assert "author_attestation" not in listed.stdout  # nothing was signed, nothing is stuck
    signed = pith(*claim, "--registry", server.url, "--submit")
    assert signed.returncode == 0, signed.stderr
