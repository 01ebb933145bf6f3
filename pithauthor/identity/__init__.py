"""Identity proofs for author keys: what to publish (`proofs`), and checking what was
published, fetched over the one network layer (`fetch`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from pithauthor._face import lazy_face

if TYPE_CHECKING:
    from pithauthor.identity.proofs import (
        check_identity,
        check_key_on_orcid,
        identity_network_failure,
        orcid_api_base,
        orcid_proof,
        proofs_from_specs,
        verify_identity,
        web_proof_document,
    )

__all__ = [
    "check_identity",
    "check_key_on_orcid",
    "identity_network_failure",
    "orcid_api_base",
    "orcid_proof",
    "proofs_from_specs",
    "verify_identity",
    "web_proof_document",
]

# where each name lives (pithauthor/_face.py: why they load on first use)
__getattr__, __dir__ = lazy_face(
    __name__,
    {
        "check_identity": "pithauthor.identity.proofs",
        "check_key_on_orcid": "pithauthor.identity.proofs",
        "identity_network_failure": "pithauthor.identity.proofs",
        "orcid_api_base": "pithauthor.identity.proofs",
        "orcid_proof": "pithauthor.identity.proofs",
        "proofs_from_specs": "pithauthor.identity.proofs",
        "verify_identity": "pithauthor.identity.proofs",
        "web_proof_document": "pithauthor.identity.proofs",
    },
)
