"""The record page's rows 1 and 2 judged on this machine: a paper's Bitcoin anchor (its
OpenTimestamps proof against Bitcoin headers, `pithauthor.timestamps.anchor`) and its archive
copy (against the checks this machine made, `pithauthor.archive.checked`).

>>> page = paper_status(client, "2302.12445", judge=judge_proofs)

Its own module, apart from the page (`pithauthor.registry.page`): judging a proof needs the
proof machinery (OpenTimestamps proofs, Bitcoin headers, the archive checks kept here), which a
page whose state lists no anchor and no archive copy never uses. `pith status` loads this
module only for a page that has such events to judge (about 8 ms of a second look at an
unchanged paper, which must stay under 0.2 s of CPU: docs/performance.md).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from pithauthor.archive.checked import local_checks, storage_verdict
from pithauthor.protocol.checklist import Verdict
from pithauthor.timestamps.anchor import anchor_status

__all__ = ["judge_proofs"]


def judge_proofs(item: str, events: Sequence[Any], canonical_sha256: str) -> Verdict:
    """The verdict of checklist row `item` ("timestamp": row 1, "archive_copy": row 2) for the
    paper whose record hashes to `canonical_sha256`, from the state's `events` of that row (its
    timestamp anchors, or its storage attestations): proven only when the proof was checked
    here."""
    if item == "timestamp":
        return anchor_status(events, canonical_sha256)
    if item == "archive_copy":
        return storage_verdict(events, canonical_sha256, local_checks())
    raise ValueError(f"no proof to judge for checklist row {item!r}")
