"""The cycle collector paused by the program until the first network client
(`pithauthor.collector`): a warm `pith cite` runs without its passes, a request turns it on."""

from __future__ import annotations

import gc
from collections.abc import Iterator

import pytest

from pithauthor import collector, net


@pytest.fixture(autouse=True)
def _collector_on() -> Iterator[None]:
    collector.resume_collector()
    gc.enable()
    yield
    collector.resume_collector()
    gc.enable()


def test_paused_until_the_first_network_client() -> None:
    collector.pause_until_network()
    assert not gc.isenabled()
    client = net.new_client(headers={}, timeout=1.0, plain_http=True)  # sends nothing
    try:
        assert gc.isenabled()
    finally:
        client.close()


def test_resume_turns_on_only_what_the_pause_turned_off() -> None:
    collector.pause_until_network()
    collector.resume_collector()
    assert gc.isenabled()
    gc.disable()  # the caller's own choice: neither a pause nor a client changes it
    collector.pause_until_network()
    collector.resume_collector()
    assert not gc.isenabled()
    net.new_client(headers={}, timeout=1.0, plain_http=True).close()
    assert not gc.isenabled()


def test_paused_for_the_process_a_network_client_leaves_it_paused() -> None:
    collector.pause_for_the_process()
    assert not gc.isenabled()
    net.new_client(headers={}, timeout=1.0, plain_http=True).close()
    assert not gc.isenabled()  # a second look's requests: to the end of the process
    collector.resume_collector()
    assert gc.isenabled()
