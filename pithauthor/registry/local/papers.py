"""Adding papers to a local registry: from arXiv metadata, or from a registry record.

- arXivRaw XML or JSON metadata: the canonical record is computed here (`pithauthor.verify`).
- A record JSON (e.g. from pith.science): verified first against the pinned key (plus any key
  the caller trusts); its canonical record is stored, its own receipt kept as
  `upstream_receipt`, and the local registry serves it with a receipt under its own key.
"""

from __future__ import annotations

from collections.abc import Mapping
from importlib import resources
from pathlib import Path
from typing import Any

from pithauthor.errors import DocumentError, VerificationError
from pithauthor.fs import MAX_METADATA_BYTES, read_user_file
from pithauthor.protocol.canonical_json import JSONFault, canonical_sha256, parse_json
from pithauthor.protocol.checks.record import checked_record
from pithauthor.protocol.documents import CanonicalRecord, PaperSummary, Receipt, RecordDocument
from pithauthor.protocol.record import arxiv_raw_authors, pith_number_of
from pithauthor.protocol.text import utc_now
from pithauthor.protocol.verdict import Trust
from pithauthor.registry.local.signer import LocalKey
from pithauthor.registry.local.store import RegistryStore, StoredRecord
from pithauthor.registry.manifests import pinned_trust
from pithauthor.verify import build_canonical_record, parse_arxiv_metadata


def record_from_file(
    path: Path, trust: Trust | None = None
) -> tuple[CanonicalRecord, Receipt | None, PaperSummary | None]:
    """(canonical record, upstream receipt or None, displayed paper) from a metadata or record
    file. The displayed paper (title, authors, categories...) is what pith.science shows with a
    record: taken from the metadata, or from the upstream record (verified with it)."""
    data = read_user_file(
        path, DocumentError, "a metadata or record file", limit=MAX_METADATA_BYTES
    )
    stripped = data.lstrip(b"\xef\xbb\xbf \t\r\n")
    if stripped[:1] == b"{":
        try:
            doc = parse_json(stripped)
        except JSONFault as exc:
            raise DocumentError(f"{path} is not valid JSON: {exc}") from None
        if isinstance(doc, Mapping) and "canonical_record" in doc and "receipt" in doc:
            record = _from_record(doc, path, trust)
            canon = record["canonical_record"].copy()
            shown = record.get("paper")
            if shown is None:
                return canon, record["receipt"].copy(), None
            authors = shown.get("authors_text", "")
            return canon, record["receipt"].copy(), _paper(canon, shown["title"], authors)
    meta = parse_arxiv_metadata(data)
    canon = build_canonical_record(meta)
    return canon, None, _paper(canon, meta.title, _authors(stripped))


def _authors(metadata: bytes) -> str:
    """The author list of arXivRaw XML or JSON metadata ("" when it gives none)."""
    if metadata[:1] != b"{":
        return arxiv_raw_authors(metadata)
    listed = parse_json(metadata).get("authors", "")
    if isinstance(listed, list):
        listed = ", ".join(a for a in listed if isinstance(a, str))
    return " ".join(listed.split()) if isinstance(listed, str) else ""


def _paper(canon: CanonicalRecord, title: str, authors: str) -> PaperSummary:
    """The `paper` a record displays: what the canonical record hashes or holds, and authors."""
    meta = canon["metadata"]
    paper: PaperSummary = {
        "title": " ".join(title.split()),  # title_canon_sha256 folds white space: same hash
        "primary_cat": meta["primary_cat"],
        "cross_cats": list(meta["cross_cats_sorted"]),
        "license": meta["license"],
        "submitted_at": meta["submitted_at"],
    }
    if authors:
        paper["authors_text"] = authors
    return paper


def _from_record(doc: Mapping[str, Any], path: Path, trust: Trust | None) -> RecordDocument:
    if trust is None:
        trust = pinned_trust()
    report, record = checked_record(doc, trust)
    if record is None:
        names = ", ".join(c.name for c in report.failed)
        raise VerificationError(f"{path}: the record does not verify ({names}); not added")
    return record


def add_paper(
    store: RegistryStore, key: LocalKey, path: Path, trust: Trust | None = None
) -> tuple[StoredRecord, bool]:
    """Store the paper in `path`; returns the record and whether it was new."""
    canon, upstream, paper = record_from_file(path, trust)
    digest = canonical_sha256(canon)
    number = pith_number_of(canon)
    now = utc_now()
    rec = StoredRecord(
        body=number.body,
        pith_number=number.full,
        arxiv_id=str(canon["source"]["id"]),
        canonical_sha256=digest,
        canonical_record=canon,
        receipt=key.receipt(digest, now),
        upstream_receipt=upstream,
        created_at=now,
        paper=paper,
    )
    new = store.add_record(rec)
    # the stored one, not `rec`: a paper added again keeps its first receipt (records never
    # change once served, and clients may hold the first)
    stored = store.find(number.body)
    assert stored is not None
    return stored, new


def example_papers() -> list[Path]:
    """The example arXivRaw documents shipped for the demo (`pithauthor/data/examples`)."""
    folder = resources.files("pithauthor").joinpath("data", "examples")
    return sorted(Path(str(p)) for p in folder.iterdir() if p.name.endswith((".xml", ".json")))
