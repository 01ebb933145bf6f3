"""A stopped local registry lets go of what it opened: its writer thread and every thread's
SQLite connection (a process that starts many registries, as the test suite does, once ran out
of file descriptors: `select()` refuses a descriptor past 1,024)."""

from __future__ import annotations

import os
import threading
from pathlib import Path

import httpx
from support.registry import REAL_NUMBER, TestSigner, citation, start_server

BODY = REAL_NUMBER.rsplit(":", 1)[1]


def _open_descriptors() -> int:
    return len(os.listdir("/proc/self/fd"))


def _writers() -> int:
    return sum(t.name == "pith-registry-writer" for t in threading.enumerate())


def test_a_stopped_registry_closes_its_connections_and_ends_its_writer(tmp_path: Path) -> None:
    signer = TestSigner()
    before, writers = _open_descriptors(), _writers()
    for i in range(5):
        server = start_server(tmp_path / f"registry-{i}")
        event = citation(signer, i)
        posted = httpx.post(
            f"{server.url}/pith/{BODY}/action/{event['event_type']}",
            json=event,
            headers={"Idempotency-Key": event["event_id"]},
        )
        assert posted.status_code in (200, 201), posted.text
        assert httpx.get(f"{server.url}/pith/{BODY}/state.json").status_code == 200
        server.stop()
    assert _writers() == writers
    # five registries, each with a writer, worker threads and a state connection: without
    # closing, about 6 descriptors each stayed open (30); a few may be the client's pools
    assert _open_descriptors() - before < 5


def test_a_store_used_after_close_opens_a_new_connection(tmp_path: Path) -> None:
    server = start_server(tmp_path / "registry")
    server.stop()
    assert server.store.event_count() == 0  # closed connections are not reused
    server.store.close()
