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
    "PithNumber": "pithauthor.protocol.ids",
    "PithAlias": "pithauthor.protocol.ids",
    "parse_reference": "pithauthor.protocol.ids",
    "ArxivId": "pithauthor.protocol.ids",
    "Reference": "pithauthor.protocol.ids",
    "classify_reference": "pithauthor.protocol.ids",
    "normalize_orcid": "pithauthor.protocol.identity",
    "canonical": "pithauthor.protocol.canonical_json",
    "canonical_sha256": "pithauthor.protocol.canonical_json",
    "Check": "pithauthor.protocol.verdict",
    "Report": "pithauthor.protocol.verdict",
    # author keys
    "AuthorKey": "pithauthor.keys.author",
    "PassphraseSource": "pithauthor.keys.author",
    "load_signing_key": "pithauthor.keys.author",
    # bibliographies (the reading half of `pith cite`)
    "read_bibliographies": "pithauthor.bibliography.reading",
    "cited_keys": "pithauthor.bibliography.reading",
    "BibEntry": "pithauthor.bibliography.reading",
    "BibReading": "pithauthor.bibliography.reading",
    "EntryRow": "pithauthor.bibliography.reading",
    "RELATIONSHIPS": "pithauthor.protocol.payloads",
    "lookup_identifiers": "pithauthor.bibliography.lookup",
    "write_back": "pithauthor.bibliography.lookup",
    "ArxivApi": "pithauthor.bibliography.lookup",
    # LaTeX
    "inject": "pithauthor.latex.injection",
    "build_arxiv_archive": "pithauthor.latex.injection",
    # author events
    "Subject": "pithauthor.protocol.subject",
    "attest_authorship": "pithauthor.sign",
    "check_claimant": "pithauthor.sign",
    "sign_citation": "pithauthor.sign",
    "record_replication": "pithauthor.sign",
    "withdraw": "pithauthor.sign",
    "Artifact": "pithauthor.sign",
    "Statements": "pithauthor.registry.statements",
    # a registry: fetch and verify (pithauthor.registry.client)
    "RegistryClient": "pithauthor.registry.client",
    "RetryPolicy": "pithauthor.registry.client",
    "registry_url": "pithauthor.registry.client",
    "fetch_subject": "pithauthor.registry.client",
    "resolve_arxiv": "pithauthor.registry.client",
    # submission: the outbox and batches (pithauthor.registry.submit)
    "SubmitResult": "pithauthor.registry.submit",
    "submit_events": "pithauthor.registry.submit",
    "submit_pending": "pithauthor.registry.submit",
    "store_in_outbox": "pithauthor.registry.submit",
    # verification and trust
    "verify_document": "pithauthor.verify",
    "verify_file": "pithauthor.verify",
    "pinned_trust": "pithauthor.registry.manifests",
    # protocol documents, as TypedDicts (docs/protocol.md, "Typed documents")
    "AuthorEvent": "pithauthor.protocol.documents",
    "CanonicalRecord": "pithauthor.protocol.documents",
    "ComputedRecord": "pithauthor.protocol.documents",
    "Receipt": "pithauthor.protocol.documents",
    "RecordDocument": "pithauthor.protocol.documents",
    "RecordBundle": "pithauthor.protocol.documents",
    "MergedState": "pithauthor.protocol.documents",
    "MirrorManifest": "pithauthor.protocol.documents",
    # identity proofs (docs/identity.md)
    "check_identity": "pithauthor.identity.proofs",
    "orcid_proof": "pithauthor.identity.proofs",
    "web_proof_document": "pithauthor.identity.proofs",
    "IdentityProof": "pithauthor.identity.proofs",
    "Trust": "pithauthor.registry.manifests",
    # records
    "ArxivMetadata": "pithauthor.verify",
    "build_canonical_record": "pithauthor.verify",
    "read_arxiv_metadata": "pithauthor.verify",
    # bibliography signing
    "sign_bibliography": "pithauthor.bibliography.cite",
    "RegistryResolver": "pithauthor.bibliography.cite",
    "CiteReport": "pithauthor.bibliography.cite",
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
