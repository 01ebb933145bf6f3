"""`Outbox.existing`: a command that only reads the outbox (`pith status`) opens it when its
folder was ever made, with every check `Outbox()` makes (a damaged file, a missing file whose
journal holds events, a folder others can reach: each refused as `Outbox()` refuses it), and
makes nothing when there is none (no folder, no file, no journal: `Outbox()` would only have
created an empty outbox to read nothing from)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from support.registry import citations

from pithauthor.errors import OutboxDamaged, UnsafePermissions
from pithauthor.registry.outbox import Outbox
from pithauthor.registry.submit import store_in_outbox


def test_a_new_home_has_no_outbox_and_none_is_made(isolated_home: Path) -> None:
    assert Outbox.existing() is None
    assert not (isolated_home / "outbox").exists()


def test_an_outbox_made_before_is_opened_and_read(isolated_home: Path) -> None:
    events = citations(2)
    store_in_outbox(events)
    outbox = Outbox.existing()
    assert outbox is not None
    with outbox:
        assert outbox.counts()["pending"] == 2
        assert outbox.get(events[0]["event_id"]).event == events[0]  # type: ignore[union-attr]


def test_an_empty_outbox_folder_opens_as_outbox_does(isolated_home: Path) -> None:
    (isolated_home / "outbox").mkdir(mode=0o700, parents=True)
    outbox = Outbox.existing()
    assert outbox is not None
    with outbox:
        assert outbox.counts() == {"pending": 0, "accepted": 0, "rejected": 0}


def test_a_missing_file_whose_journal_holds_events_is_refused_as_outbox_refuses_it(
    isolated_home: Path,
) -> None:
    store_in_outbox(citations(1))
    (isolated_home / "outbox" / "outbox.sqlite3").unlink()
    with pytest.raises(OutboxDamaged, match="journal holds events") as seen:
        Outbox.existing()
    with pytest.raises(OutboxDamaged) as again:
        Outbox()
    assert str(seen.value) == str(again.value)


@pytest.mark.skipif(os.name != "posix", reason="POSIX modes")
def test_an_outbox_folder_others_can_reach_is_refused(isolated_home: Path) -> None:
    store_in_outbox(citations(1))
    (isolated_home / "outbox").chmod(0o755)
    with pytest.raises(UnsafePermissions):
        Outbox.existing()
