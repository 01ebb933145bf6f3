"""Odd subjects for `pith claim`: never signed for a paper version the user did not name."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from support.cli import RunPith, assert_one_line_error
from support.paths import FIXTURES
from support.registry import manifest_file, start_server

from pithauthor.registry.local.server import RegistryServer

DEAR_RECORD = str(FIXTURES / "record-2302.12445v2.json")  # arXiv 2302.12445v2


@pytest.mark.parametrize("subject", ["2302.12445v1", "arXiv:2302.12445v3"])
def test_claim_of_another_version_than_the_record_is_refused(pith: RunPith, subject: str) -> None:
    result = pith("claim", subject, "--record", DEAR_RECORD, "--json")
    assert_one_line_error(result, 2)
    assert "is the record of arXiv 2302.12445v2 (pith:2023:" in result.stderr
    assert result.stderr.rstrip().endswith(f"not of {subject}")
    assert result.stdout == ""


@pytest.fixture
def server(tmp_path: Path) -> Iterator[RegistryServer]:
    srv = start_server(tmp_path / "reg")
    yield srv
    srv.stop()


@pytest.mark.parametrize("command", ["fetch", "claim"])
def test_an_arxiv_version_the_registry_does_not_resolve_to_is_refused(
    server: RegistryServer, pith: RunPith, command: str, tmp_path: Path
) -> None:
    manifest = manifest_file(server.url, tmp_path / "reg", tmp_path / "m.json")
    result = pith(
        command, "2302.12445v1", "--registry", server.url, "--trust-manifest", str(manifest)
    )
    assert_one_line_error(result, 1)
    assert "resolves 2302.12445 to v2 (pith:2023:NFG5PAOXQUVIWDX5F7YSYYL7EW), not to v1" in (
        result.stderr
    )
    assert result.stdout == ""
