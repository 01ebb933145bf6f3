"""Build canonical records and Pith Numbers from arXiv metadata files."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pithauthor._core.arxiv_raw import parse_arxiv_raw
from pithauthor._core.record import (
    ArxivMetadata,
    build_canonical_record,
    next_version_metadata,
    pith_number_of,
    summarise,
)
from pithauthor._core.strict_json import JSONFault, parse_json
from pithauthor._files import MAX_METADATA_BYTES, read_user_file
from pithauthor.errors import MetadataError

__all__ = [
    "ArxivMetadata",
    "build_canonical_record",
    "next_version_metadata",
    "parse_arxiv_metadata",
    "pith_number_of",
    "read_arxiv_metadata",
    "summarise",
]


def parse_arxiv_metadata(data: bytes) -> ArxivMetadata:
    """arXivRaw XML (OAI-PMH) or the JSON metadata form, told apart by their first byte."""
    if b"\x00" in data:
        raise MetadataError("this is a binary file, not arXiv metadata")
    stripped = data.lstrip(b"\xef\xbb\xbf \t\r\n")
    if not stripped:
        raise MetadataError("the arXiv metadata is empty")
    if stripped[:1] == b"{":
        try:
            doc: Any = parse_json(stripped)
        except JSONFault as exc:
            raise MetadataError(f"the JSON metadata is not valid JSON: {exc}") from None
        return ArxivMetadata.from_json(doc)
    if stripped[:1] == b"<":
        return parse_arxiv_raw(data)
    raise MetadataError("expected arXivRaw XML or JSON metadata")


def read_arxiv_metadata(path: Path | str) -> ArxivMetadata:
    """Read metadata from a file, or from stdin when `path` is `-`."""
    data = read_user_file(
        path, MetadataError, "arXiv metadata", limit=MAX_METADATA_BYTES, stdin=True
    )
    return parse_arxiv_metadata(data)
