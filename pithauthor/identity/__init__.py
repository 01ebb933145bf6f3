"""Identity proofs for author keys: what to publish (`proofs`), and checking what was
published, fetched over the one network layer (`fetch`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from pithauthor._face import lazy_face

if TYPE_CHECKING:  # the face, one name a line (pithauthor/_face.py reads this block)
    from pithauthor.identity.proofs import check_identity as check_identity
    from pithauthor.identity.proofs import orcid_proof as orcid_proof
    from pithauthor.identity.proofs import verify_identity as verify_identity

__getattr__, __dir__ = lazy_face(__name__)  # names load on first use
