"""pithauthor: the author's side of the Pith open graph.

Public names are imported lazily (PEP 562), so that `import pithauthor` stays instant and the
command line pays only for what a command uses.
"""

from __future__ import annotations

from importlib import import_module
from typing import Any

from pithauthor._version import __version__

# public name -> module that defines it
_EXPORTS: dict[str, str] = {
    # identifiers and records
    "PithNumber": "pithauthor._core.pith_number",
    "PithAlias": "pithauthor._core.pith_number",
    "parse_reference": "pithauthor._core.pith_number",
    "ArxivId": "pithauthor._core.arxiv_id",
    "Reference": "pithauthor._core.reference",
    "classify_reference": "pithauthor._core.reference",
    "normalize_orcid": "pithauthor._core.orcid",
    "canonical": "pithauthor._core.canonical",
    "canonical_sha256": "pithauthor._core.canonical",
    "Check": "pithauthor._core.checks",
    "Report": "pithauthor._core.checks",
    # author keys
    "AuthorKey": "pithauthor.keys",
    "PassphraseSource": "pithauthor.keys",
    "load_signing_key": "pithauthor.keys",
    # bibliographies (the reading half of `pith cite`)
    "read_bibliographies": "pithauthor.bibliography",
    "cited_keys": "pithauthor.bibliography",
    "BibEntry": "pithauthor.bibliography",
    "BibReading": "pithauthor.bibliography",
    "EntryRow": "pithauthor.bibliography",
    "RELATIONSHIPS": "pithauthor._core.relationships",
    "lookup_identifiers": "pithauthor.lookup",
    "write_back": "pithauthor.lookup",
    "ArxivApi": "pithauthor.lookup",
    # LaTeX
    "inject": "pithauthor.latex",
    "build_arxiv_archive": "pithauthor.latex",
    # author events
    "Subject": "pithauthor._core.subject",
    "attest_authorship": "pithauthor.sign",
    "check_claimant": "pithauthor.sign",
    "sign_citation": "pithauthor.sign",
    "record_replication": "pithauthor.sign",
    "withdraw": "pithauthor.sign",
    "Artifact": "pithauthor.sign",
    "Statements": "pithauthor.statements",
    # a registry: fetch and verify (pithauthor.client)
    "RegistryClient": "pithauthor.client",
    "RetryPolicy": "pithauthor.client",
    "registry_url": "pithauthor.client",
    "fetch_subject": "pithauthor.client",
    "resolve_arxiv": "pithauthor.client",
    # submission: the outbox and batches (pithauthor.submit)
    "SubmitResult": "pithauthor.submit",
    "submit_events": "pithauthor.submit",
    "submit_pending": "pithauthor.submit",
    "store_in_outbox": "pithauthor.submit",
    # verification and trust
    "verify_document": "pithauthor.verify",
    "verify_file": "pithauthor.verify",
    "pinned_trust": "pithauthor.trust",
    # protocol documents, as TypedDicts (docs/protocol.md, "Typed documents")
    "AuthorEvent": "pithauthor._core.documents",
    "CanonicalRecord": "pithauthor._core.documents",
    "ComputedRecord": "pithauthor._core.documents",
    "Receipt": "pithauthor._core.documents",
    "RecordDocument": "pithauthor._core.documents",
    "RecordBundle": "pithauthor._core.documents",
    "MergedState": "pithauthor._core.documents",
    "MirrorManifest": "pithauthor._core.documents",
    # identity proofs (docs/identity.md)
    "check_identity": "pithauthor.identity",
    "orcid_proof": "pithauthor.identity",
    "web_proof_document": "pithauthor.identity",
    "IdentityProof": "pithauthor.identity",
    "Trust": "pithauthor.trust",
    # records
    "ArxivMetadata": "pithauthor.records",
    "build_canonical_record": "pithauthor.records",
    "read_arxiv_metadata": "pithauthor.records",
    # bibliography signing
    "sign_bibliography": "pithauthor.cite",
    "RegistryResolver": "pithauthor.cite",
    "CiteReport": "pithauthor.cite",
    # errors
    "PithError": "pithauthor.errors",
    "InputError": "pithauthor.errors",
    "VerificationError": "pithauthor.errors",
    "NetworkError": "pithauthor.errors",
    "KeyStoreError": "pithauthor.errors",
}

__all__ = ["__version__", *_EXPORTS]


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'pithauthor' has no attribute {name!r}")
    value = getattr(import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(__all__)
