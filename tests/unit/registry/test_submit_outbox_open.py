"""`pith cite` stores what it signed in the outbox it opened (and checked) to read what is held
there, not in a second connection opened and checked again (start-up: each open runs SQLite's
quick_check and the outbox's schema and count checks); a store given no open outbox opens
one, as before."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from support.cite import run_cite

from pithauthor.registry import journal, outbox
from pithauthor.registry.outbox import Outbox


def _opens(monkeypatch: pytest.MonkeyPatch) -> list[Path]:
    """The outbox files opened (and checked) from now on (a spy calling the real opener)."""
    opened: list[Path] = []

    def spy(path: Path, journal_file: Path) -> Any:
        opened.append(path)
        return journal.open_checked(path, journal_file)

    monkeypatch.setattr(outbox, "open_checked", spy)
    return opened


def test_a_cite_opens_the_outbox_once_and_stores_in_it(
    tmp_path: Path,
    isolated_home: Path,
    cite_registry: dict[str, Any],
    cite_author: str,
    pith: Any,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    bib = tmp_path / "refs.bib"
    bib.write_text(
        "@misc{a, title={A}, eprint={2101.99903}, archivePrefix={arXiv}}\n"
        "@misc{b, title={B}, eprint={2302.12445}, archivePrefix={arXiv}}\n",
        "utf-8",
    )
    Outbox().close()  # an outbox in use, as an author's is
    opened = _opens(monkeypatch)
    done = run_cite(pith, cite_registry, str(bib), "--yes")
    assert done.returncode == 0, done.stderr
    assert len(opened) == 1, opened
    with Outbox() as box:
        assert len(box.entries("pending")) == 2  # stored, and committed


def test_a_cite_without_an_outbox_yet_makes_one_and_stores_in_it(
    tmp_path: Path,
    isolated_home: Path,
    cite_registry: dict[str, Any],
    cite_author: str,
    pith: Any,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    bib = tmp_path / "refs.bib"
    bib.write_text("@misc{a, title={A}, eprint={2101.99903}, archivePrefix={arXiv}}\n", "utf-8")
    opened = _opens(monkeypatch)
    done = run_cite(pith, cite_registry, str(bib), "--yes")
    assert done.returncode == 0, done.stderr
    assert len(opened) == 1  # nothing to read it from before: opened (made) to store
    with Outbox() as box:
        assert len(box.entries("pending")) == 1
