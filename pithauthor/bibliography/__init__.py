"""Bibliographies: read .bib files and the keys a manuscript cites (`reading`), find
missing arXiv identifiers (`lookup`), and sign one citation per cited paper (`cite`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from pithauthor._face import lazy_face

if TYPE_CHECKING:
    from pithauthor.bibliography.arxiv_api import ARXIV_INTERVAL, DEFAULT_API, ArxivApi
    from pithauthor.bibliography.cite import (
        FAILED_STATUSES,
        CiteReport,
        RegistryResolver,
        Resolver,
        resolve_identifiers,
        sign_bibliography,
    )
    from pithauthor.bibliography.cited import Citations, cited_keys, read_citations
    from pithauthor.bibliography.lookup import (
        LookupCache,
        LookupResult,
        WriteBack,
        lookup_bibliography,
        lookup_identifiers,
        paste_line,
        settle,
        write_back,
    )
    from pithauthor.bibliography.matching import YEARS_AFTER, YEARS_BEFORE
    from pithauthor.bibliography.reading import (
        STATUSES,
        BibEntry,
        BibReading,
        EntryRow,
        parse_relationship_map,
        read_bibliographies,
        render_table,
        rows_as_json,
        source_counts,
        status_counts,
    )

__all__ = [
    "ARXIV_INTERVAL",
    "DEFAULT_API",
    "FAILED_STATUSES",
    "STATUSES",
    "YEARS_AFTER",
    "YEARS_BEFORE",
    "ArxivApi",
    "BibEntry",
    "BibReading",
    "Citations",
    "CiteReport",
    "EntryRow",
    "LookupCache",
    "LookupResult",
    "RegistryResolver",
    "Resolver",
    "WriteBack",
    "cited_keys",
    "lookup_bibliography",
    "lookup_identifiers",
    "parse_relationship_map",
    "paste_line",
    "read_bibliographies",
    "read_citations",
    "render_table",
    "resolve_identifiers",
    "rows_as_json",
    "settle",
    "sign_bibliography",
    "source_counts",
    "status_counts",
    "write_back",
]

# where each name lives (pithauthor/_face.py: why they load on first use)
__getattr__, __dir__ = lazy_face(
    __name__,
    {
        "ARXIV_INTERVAL": "pithauthor.bibliography.arxiv_api",
        "ArxivApi": "pithauthor.bibliography.arxiv_api",
        "BibEntry": "pithauthor.bibliography.reading",
        "BibReading": "pithauthor.bibliography.reading",
        "Citations": "pithauthor.bibliography.cited",
        "CiteReport": "pithauthor.bibliography.cite",
        "DEFAULT_API": "pithauthor.bibliography.arxiv_api",
        "EntryRow": "pithauthor.bibliography.reading",
        "FAILED_STATUSES": "pithauthor.bibliography.cite",
        "LookupCache": "pithauthor.bibliography.lookup",
        "LookupResult": "pithauthor.bibliography.lookup",
        "RegistryResolver": "pithauthor.bibliography.cite",
        "Resolver": "pithauthor.bibliography.cite",
        "STATUSES": "pithauthor.bibliography.reading",
        "WriteBack": "pithauthor.bibliography.lookup",
        "YEARS_AFTER": "pithauthor.bibliography.matching",
        "YEARS_BEFORE": "pithauthor.bibliography.matching",
        "cited_keys": "pithauthor.bibliography.cited",
        "lookup_bibliography": "pithauthor.bibliography.lookup",
        "lookup_identifiers": "pithauthor.bibliography.lookup",
        "parse_relationship_map": "pithauthor.bibliography.reading",
        "paste_line": "pithauthor.bibliography.lookup",
        "read_bibliographies": "pithauthor.bibliography.reading",
        "read_citations": "pithauthor.bibliography.cited",
        "render_table": "pithauthor.bibliography.reading",
        "resolve_identifiers": "pithauthor.bibliography.cite",
        "rows_as_json": "pithauthor.bibliography.reading",
        "settle": "pithauthor.bibliography.lookup",
        "sign_bibliography": "pithauthor.bibliography.cite",
        "source_counts": "pithauthor.bibliography.reading",
        "status_counts": "pithauthor.bibliography.reading",
        "write_back": "pithauthor.bibliography.lookup",
    },
)
