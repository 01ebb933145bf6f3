"""A plain `pith status` runs with Python's cycle collector paused to the end of its process
(its imports and the kept summary's objects set it walking everything made so far, for no cycle
worth finding, and Python collects once more at exit unless it is off); a form left to Typer
gets it back as it found it. `support.cli.run_in_process` restores it after a command."""

from __future__ import annotations

import gc
from typing import Any

import pytest

from pithauthor._cli import entry, status_page

PLAIN = ["pith:2023:NFG5PAOXQUVIWDX5F7YSYYL7EW", "--registry", "http://127.0.0.1:9", "--json"]


def test_a_plain_status_runs_with_the_collector_paused_and_gives_it_back(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    seen: list[bool] = []

    def show(**parameters: Any) -> None:
        seen.append(gc.isenabled())

    monkeypatch.setattr(status_page, "show_status", show)
    assert gc.isenabled()
    try:
        with pytest.raises(SystemExit) as ended:
            entry.plain_status(PLAIN)
        assert ended.value.code == 0 and seen == [False]
        assert not gc.isenabled()  # to the end of the process: no collection at exit either
    finally:
        gc.enable()


def test_run_in_process_gives_the_collector_back(monkeypatch: pytest.MonkeyPatch) -> None:
    from support.cli import run_in_process

    monkeypatch.setattr(status_page, "show_status", lambda **parameters: None)
    done = run_in_process(["status", *PLAIN], through=lambda args: entry.plain_status(args[1:]))
    assert done.returncode == 0
    assert gc.isenabled()


def test_a_form_left_to_typer_keeps_the_collector_on_and_one_paused_before_stays_so() -> None:
    entry.plain_status([*PLAIN, "--help"])  # not plain: returns, having done nothing
    assert gc.isenabled()
    gc.disable()
    try:
        entry.plain_status([*PLAIN, "--help"])
        assert not gc.isenabled()  # the caller's pause is the caller's
    finally:
        gc.enable()
