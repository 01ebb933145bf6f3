"""Trusted time for author events: RFC 3161 tokens from time-stamp authorities over an event's
signature (`rfc3161`), asked for over the one network layer and checked offline against pinned
roots; OpenTimestamps proofs over an event's id (`ots`), stamped at calendars, upgraded to a
Bitcoin block, and checked against block headers judged by their proof of work and a pinned
difficulty floor (`headers`); each check says when the event is proven to have existed, and by
what (`ProvenTime`). A paper's record is anchored the same way (`anchor`: its canonical SHA-256
stamped, the pending proofs kept, the anchor verdict).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from pithauthor._face import lazy_face

if TYPE_CHECKING:  # the face, one name a line (pithauthor/_face.py reads this block)
    from pithauthor.timestamps.anchor import anchor_status as anchor_status
    from pithauthor.timestamps.anchor import anchor_verdict as anchor_verdict
    from pithauthor.timestamps.headers import PRODUCTION_FLOOR as PRODUCTION_FLOOR
    from pithauthor.timestamps.headers import ExplorerHeaders as ExplorerHeaders
    from pithauthor.timestamps.headers import Floor as Floor
    from pithauthor.timestamps.headers import HeaderSource as HeaderSource
    from pithauthor.timestamps.headers import ShippedHeaders as ShippedHeaders
    from pithauthor.timestamps.headers import headers_from_env as headers_from_env
    from pithauthor.timestamps.ots import check_proof as check_proof
    from pithauthor.timestamps.ots import stamp as stamp
    from pithauthor.timestamps.ots import upgrade as upgrade
    from pithauthor.timestamps.proven import ProvenTime as ProvenTime
    from pithauthor.timestamps.rfc3161 import check_token as check_token
    from pithauthor.timestamps.rfc3161 import request_token as request_token
    from pithauthor.timestamps.time_sources import Authority as Authority
    from pithauthor.timestamps.time_sources import authorities_from_env as authorities_from_env
    from pithauthor.timestamps.time_sources import calendars_from_env as calendars_from_env

__getattr__, __dir__ = lazy_face(__name__)  # names load on first use
