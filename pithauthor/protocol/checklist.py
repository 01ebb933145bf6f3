"""The record page's checklist rows that need a proof to be done (pure): what `pith status` and
`pith verify` say of a paper's Bitcoin anchor (row 1) and its archive copy (row 2).

A registry's word is not enough for either (docs/protocol.md, "Anchors and archive copies"): a
row is proven only when pith checked the proof itself: the OpenTimestamps proof of an anchor
reaches the record's canonical SHA-256 and a Bitcoin header judged by its proof of work and the
difficulty floor (the anchor verdict); the archive's capture digest
equals the SHA-1 of the paper's PDF as this machine computed it. Otherwise the row is "claimed,
not checked", never done.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["Verdict"]


@dataclass(frozen=True, slots=True)
class Verdict:
    """One checklist row's verdict: `proven` only when pith checked the proof itself; `detail`
    says, in one line, what proves it or why it is not proven."""

    proven: bool
    detail: str
