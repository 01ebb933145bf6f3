"""Trusted time for author events: RFC 3161 tokens from time-stamp authorities over an event's
signature (`rfc3161`), asked for over the one network layer and checked offline against pinned
roots; each check says when the event is proven to have existed, and by what (`ProvenTime`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from pithauthor._face import lazy_face

if TYPE_CHECKING:  # the face, one name a line (pithauthor/_face.py reads this block)
    from pithauthor.timestamps.proven import ProvenTime as ProvenTime
    from pithauthor.timestamps.rfc3161 import Authority as Authority
    from pithauthor.timestamps.rfc3161 import authorities_from_env as authorities_from_env
    from pithauthor.timestamps.rfc3161 import check_token as check_token
    from pithauthor.timestamps.rfc3161 import request_token as request_token

__getattr__, __dir__ = lazy_face(__name__)  # names load on first use
