"""The checks of every document pith verifies, one module per document (pure):
`receipt`, `record`, `bundle`, `state`, `links`, `event`, `identity`, and the local `merge`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from pithauthor._face import lazy_face

if TYPE_CHECKING:
    from pithauthor.protocol.checks.identity import ProofCheck

__all__ = [
    "ProofCheck",
]

# where each name lives (pithauthor/_face.py: why they load on first use)
__getattr__, __dir__ = lazy_face(
    __name__,
    {
        "ProofCheck": "pithauthor.protocol.checks.identity",
    },
)
