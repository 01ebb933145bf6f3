"""`pith status` on a home where nothing was ever signed: the page's outbox part is empty, as
before, and the command makes no outbox (it only reads one: `Outbox.existing`); a home with
an outbox folder whose file is missing but whose journal holds events is still refused (exit
2, the one line of a damaged outbox), as it was when the page opened the outbox itself."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from support.cli import RunPith
from support.registry import citations, start_server

from pithauthor.registry.local.server import RegistryServer
from pithauthor.registry.submit import store_in_outbox

DEAR = "2302.12445"


@pytest.fixture
def server(tmp_path: Path) -> Iterator[RegistryServer]:
    served = start_server(tmp_path / "registry")
    try:
        yield served
    finally:
        served.stop()


def test_a_first_look_from_a_new_home_makes_no_outbox(
    server: RegistryServer, pith: RunPith, isolated_home: Path
) -> None:
    done = pith("status", DEAR, "--registry", server.url, "--trust-local-registry", "--json")
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["outbox"] == []
    assert not (isolated_home / "outbox").exists()


def test_an_outbox_missing_its_file_but_journalled_is_refused_as_before(
    server: RegistryServer, pith: RunPith, isolated_home: Path
) -> None:
    store_in_outbox(citations(1))
    (isolated_home / "outbox" / "outbox.sqlite3").unlink()
    done = pith("status", DEAR, "--registry", server.url, "--trust-local-registry")
    assert done.returncode == 2, done.stderr
    assert "journal holds events" in done.stderr
