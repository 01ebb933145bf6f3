"""pithauthor: the author's side of the Pith open graph.

The names here are the everyday calls of an author's script; the rest is in each
package's public face (`pithauthor.keys`, `pithauthor.registry`, ...), listed in
docs/architecture.md. Every public error is in `pithauthor.errors`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from pithauthor._face import lazy_face
from pithauthor._version import __version__

if TYPE_CHECKING:
    from pithauthor.bibliography import lookup_identifiers, read_bibliographies, sign_bibliography
    from pithauthor.errors import (
        InputError,
        KeyStoreError,
        NetworkError,
        PithError,
        VerificationError,
    )
    from pithauthor.identity import check_identity, orcid_proof
    from pithauthor.keys import AuthorKey, load_signing_key
    from pithauthor.latex import build_arxiv_archive, inject
    from pithauthor.protocol import (
        ArxivId,
        Check,
        PithNumber,
        Report,
        Subject,
        build_canonical_record,
        canonical_sha256,
        parse_reference,
    )
    from pithauthor.registry import RegistryClient, Statements, store_in_outbox, submit_pending
    from pithauthor.sign import (
        Settle,
        artifact_sha256,
        attest_authorship,
        record_replication,
        sign_citation,
        withdraw,
    )
    from pithauthor.verify import (
        read_arxiv_metadata,
        read_documents,
        verify_document,
        verify_documents,
        verify_file,
    )

__all__ = [
    "ArxivId",
    "AuthorKey",
    "Check",
    "InputError",
    "KeyStoreError",
    "NetworkError",
    "PithError",
    "PithNumber",
    "RegistryClient",
    "Report",
    "Settle",
    "Statements",
    "Subject",
    "VerificationError",
    "__version__",
    "artifact_sha256",
    "attest_authorship",
    "build_arxiv_archive",
    "build_canonical_record",
    "canonical_sha256",
    "check_identity",
    "inject",
    "load_signing_key",
    "lookup_identifiers",
    "orcid_proof",
    "parse_reference",
    "read_arxiv_metadata",
    "read_bibliographies",
    "read_documents",
    "record_replication",
    "sign_bibliography",
    "sign_citation",
    "store_in_outbox",
    "submit_pending",
    "verify_document",
    "verify_documents",
    "verify_file",
    "withdraw",
]

# where each name lives (pithauthor/_face.py: why they load on first use)
__getattr__, __dir__ = lazy_face(
    __name__,
    {
        "verify_documents": "pithauthor.verify",
        "read_documents": "pithauthor.verify",
        "Settle": "pithauthor.sign",
        "artifact_sha256": "pithauthor.sign",
        "ArxivId": "pithauthor.protocol",
        "AuthorKey": "pithauthor.keys",
        "Check": "pithauthor.protocol",
        "InputError": "pithauthor.errors",
        "KeyStoreError": "pithauthor.errors",
        "NetworkError": "pithauthor.errors",
        "PithError": "pithauthor.errors",
        "PithNumber": "pithauthor.protocol",
        "RegistryClient": "pithauthor.registry",
        "Report": "pithauthor.protocol",
        "Statements": "pithauthor.registry",
        "Subject": "pithauthor.protocol",
        "VerificationError": "pithauthor.errors",
        "attest_authorship": "pithauthor.sign",
        "build_arxiv_archive": "pithauthor.latex",
        "build_canonical_record": "pithauthor.protocol",
        "canonical_sha256": "pithauthor.protocol",
        "check_identity": "pithauthor.identity",
        "inject": "pithauthor.latex",
        "load_signing_key": "pithauthor.keys",
        "lookup_identifiers": "pithauthor.bibliography",
        "orcid_proof": "pithauthor.identity",
        "parse_reference": "pithauthor.protocol",
        "read_arxiv_metadata": "pithauthor.verify",
        "read_bibliographies": "pithauthor.bibliography",
        "record_replication": "pithauthor.sign",
        "sign_bibliography": "pithauthor.bibliography",
        "sign_citation": "pithauthor.sign",
        "store_in_outbox": "pithauthor.registry",
        "submit_pending": "pithauthor.registry",
        "verify_document": "pithauthor.verify",
        "verify_file": "pithauthor.verify",
        "withdraw": "pithauthor.sign",
    },
)
