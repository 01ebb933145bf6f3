"""Storing events keeps SQLite's statement journals in memory, and only while it stores.

Each INSERT into the working set fires the tally's trigger, so SQLite journals the pages that
statement changes; on its default setting those journals spilled to a temporary file (SQLite
names them `etilqs_...` and unlinks them at once), and every insert then wrote its pages there.
Seen here through the files the process holds open when the store's COMMIT starts (Linux's
/proc/self/fd): none of them a temporary file of SQLite's. And the setting is the default
again once the store has ended, committed or rolled back.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest
from support.registry import citations

from pithauthor.registry.outbox import Outbox


def _temporary_files() -> list[str]:
    found = []
    for fd in os.listdir("/proc/self/fd"):
        try:
            target = os.readlink(f"/proc/self/fd/{fd}")
        except OSError:  # closed since listed
            continue
        if "etilqs_" in target:
            found.append(target)
    return found


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc/self/fd")
def test_a_store_writes_no_temporary_file(tmp_path: Path) -> None:
    seen: list[list[str]] = []
    with Outbox(tmp_path / "outbox.sqlite3") as outbox:
        outbox.store(citations(40))  # rows already there, as in an author's outbox

        def trace(sql: str) -> None:
            if sql == "COMMIT":  # the statement journals of the inserts are still open
                seen.append(_temporary_files())

        outbox._conn.set_trace_callback(trace)
        assert outbox.store(citations(300)) == (300, 0)
        outbox._conn.set_trace_callback(None)
    assert seen == [[]]


def test_the_setting_is_the_default_again_after_a_store(tmp_path: Path) -> None:
    with Outbox(tmp_path / "outbox.sqlite3") as outbox:
        assert outbox._conn.execute("PRAGMA temp_store").fetchone() == (0,)
        outbox.store(citations(3))
        assert outbox._conn.execute("PRAGMA temp_store").fetchone() == (0,)


def test_a_store_that_fails_rolls_back_and_restores_the_setting(tmp_path: Path) -> None:
    with Outbox(tmp_path / "outbox.sqlite3") as outbox:
        outbox.journal.unlink(missing_ok=True)
        outbox.journal.mkdir()  # the journal cannot be appended to: the store fails inside
        with pytest.raises(OSError):
            outbox.store(citations(3))
        assert outbox._conn.execute("PRAGMA temp_store").fetchone() == (0,)
        assert outbox.counts()["pending"] == 0
