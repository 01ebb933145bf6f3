"""A document is read and checked with Python's cycle collector paused (its passes over
the hundreds of thousands of objects of a 10,000-event state found nothing, 40-70 ms of a first
`pith status`), and the collector is as it was afterwards, whatever happened meanwhile.

Each test records `gc.isenabled()` from inside the state's check, so removing a pause fails it."""

from __future__ import annotations

import gc
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from support.paths import load_fixture
from support.registry import SUBJECT, start_server

import pithauthor.registry.client as client_module
import pithauthor.verify as verify_module
from pithauthor.registry.client import RecordCache, RegistryClient
from pithauthor.registry.page import PAGE_SUMMARY, state_page
from pithauthor.verify import collector_paused, verify_documents

STATE = load_fixture("state-2204.10562v1.json")


@pytest.fixture(autouse=True)
def _collector_on() -> Iterator[None]:
    """Each test starts with the collector on, and leaves it as it found it."""
    was_on = gc.isenabled()
    gc.enable()
    yield
    if not was_on:
        gc.disable()


def _recording(real: Any, seen: list[bool]) -> Any:
    def check(*args: Any, **kwargs: Any) -> Any:
        seen.append(gc.isenabled())
        return real(*args, **kwargs)

    return check


def test_pith_verify_checks_a_state_with_the_collector_paused_then_restores_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    seen: list[bool] = []
    monkeypatch.setattr(verify_module, "check_state", _recording(verify_module.check_state, seen))
    report = verify_documents([STATE])
    assert seen == [False]  # checked while paused
    assert gc.isenabled()  # and on again after
    assert report.checks  # the check itself ran in full


def test_a_pause_leaves_a_collector_that_was_off_off_and_restores_after_an_error() -> None:
    gc.disable()
    with collector_paused():
        assert not gc.isenabled()
    assert not gc.isenabled()  # the caller's choice is kept
    gc.enable()
    with pytest.raises(ValueError), collector_paused():
        assert not gc.isenabled()
        raise ValueError("a refused document")
    assert gc.isenabled()


def test_the_registry_client_checks_a_downloaded_state_with_the_collector_paused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`pith status`'s first look: the state downloaded, parsed and checked while paused."""
    monkeypatch.setenv("PITH_HOME", str(tmp_path / "home"))
    seen: list[bool] = []
    real = client_module.checked_state
    monkeypatch.setattr(client_module, "checked_state", _recording(real, seen))
    server = start_server(tmp_path / "registry")
    try:
        with RegistryClient(server.url) as client:
            client.trust_local_registry()
            cache = RecordCache()
            client.keep(cache)
            try:
                page, verdict = client.state_summary(
                    SUBJECT.pith_number, PAGE_SUMMARY, state_page, strict=False
                )
            finally:
                cache.close()
    finally:
        server.stop()
    assert seen == [False]
    assert gc.isenabled()
    assert verdict["ok"] and "citations_received" in page
