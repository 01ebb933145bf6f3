"""The checks of every document pith verifies, one module per document (pure):
`receipt`, `record`, `bundle`, `state`, `links`, `event`, `identity`, and the local `merge`.

Each returns a `Report` that speaks for exactly the fields its checks cover (the `*_CHECKED`
patterns of `fields`), and lists every other field by path as unverifiable or not signed: see
`pithauthor.protocol.verdict` for the words, and `pithauthor.protocol` for VERIFIED, OBSERVED
and DESIGN.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from pithauthor._face import lazy_face

if TYPE_CHECKING:
    from pithauthor.protocol.checks.bundle import check_bundle, checked_bundle
    from pithauthor.protocol.checks.event import (
        ProofCheck,
        check_author_event,
        checked_author_event,
    )
    from pithauthor.protocol.checks.merge import remerge
    from pithauthor.protocol.checks.record import (
        check_canonical,
        check_computed,
        check_receipt,
        check_receipt_row,
        check_record,
        checked_record,
    )
    from pithauthor.protocol.checks.state import check_state, checked_state

__all__ = [
    "ProofCheck",
    "check_author_event",
    "check_bundle",
    "check_canonical",
    "check_computed",
    "check_receipt",
    "check_receipt_row",
    "check_record",
    "check_state",
    "checked_author_event",
    "checked_bundle",
    "checked_record",
    "checked_state",
    "remerge",
]

# where each name lives (pithauthor/_face.py: why they load on first use)
__getattr__, __dir__ = lazy_face(
    __name__,
    {
        "ProofCheck": "pithauthor.protocol.checks.event",
        "check_author_event": "pithauthor.protocol.checks.event",
        "check_bundle": "pithauthor.protocol.checks.bundle",
        "check_canonical": "pithauthor.protocol.checks.record",
        "check_computed": "pithauthor.protocol.checks.record",
        "check_receipt": "pithauthor.protocol.checks.record",
        "check_receipt_row": "pithauthor.protocol.checks.record",
        "check_record": "pithauthor.protocol.checks.record",
        "check_state": "pithauthor.protocol.checks.state",
        "checked_author_event": "pithauthor.protocol.checks.event",
        "checked_bundle": "pithauthor.protocol.checks.bundle",
        "checked_record": "pithauthor.protocol.checks.record",
        "checked_state": "pithauthor.protocol.checks.state",
        "remerge": "pithauthor.protocol.checks.merge",
    },
)
