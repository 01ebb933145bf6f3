"""Bibliographies: read .bib files and the keys a manuscript cites (`reading`), find
missing arXiv identifiers and write them back (`lookup`), and sign one citation per cited
paper (`cite`); and, from the same arXiv API client and cache, a paper version's authors in
arXiv's order (`arxiv_order`: what a claim's `--position` is checked with).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from pithauthor._face import lazy_face

if TYPE_CHECKING:
    from pithauthor.bibliography.arxiv_api import ArxivApi
    from pithauthor.bibliography.arxiv_order import AuthorOrder, author_order
    from pithauthor.bibliography.cite import (
        CitePlan,
        RegistryResolver,
        Resolver,
        plan_citations,
        resolve_identifiers,
        sign_bibliography,
        sign_plan,
    )
    from pithauthor.bibliography.cited import cited_keys, read_citations
    from pithauthor.bibliography.lookup import (
        LookupResult,
        lookup_bibliography,
        lookup_identifiers,
        paste_line,
        settle,
        write_back,
    )
    from pithauthor.bibliography.reading import (
        BibEntry,
        BibReading,
        parse_relationship_map,
        read_bibliographies,
        render_table,
        rows_as_json,
        source_counts,
        status_counts,
    )

__all__ = [
    "ArxivApi",
    "AuthorOrder",
    "BibEntry",
    "BibReading",
    "CitePlan",
    "LookupResult",
    "RegistryResolver",
    "Resolver",
    "author_order",
    "cited_keys",
    "lookup_bibliography",
    "lookup_identifiers",
    "parse_relationship_map",
    "paste_line",
    "plan_citations",
    "read_bibliographies",
    "read_citations",
    "render_table",
    "resolve_identifiers",
    "rows_as_json",
    "settle",
    "sign_bibliography",
    "sign_plan",
    "source_counts",
    "status_counts",
    "write_back",
]

# where each name lives (pithauthor/_face.py: why they load on first use)
__getattr__, __dir__ = lazy_face(
    __name__,
    {
        "ArxivApi": "pithauthor.bibliography.arxiv_api",
        "AuthorOrder": "pithauthor.bibliography.arxiv_order",
        "author_order": "pithauthor.bibliography.arxiv_order",
        "BibEntry": "pithauthor.bibliography.reading",
        "BibReading": "pithauthor.bibliography.reading",
        "CitePlan": "pithauthor.bibliography.cite",
        "LookupResult": "pithauthor.bibliography.lookup",
        "RegistryResolver": "pithauthor.bibliography.cite",
        "Resolver": "pithauthor.bibliography.cite",
        "cited_keys": "pithauthor.bibliography.cited",
        "lookup_bibliography": "pithauthor.bibliography.lookup",
        "lookup_identifiers": "pithauthor.bibliography.lookup",
        "parse_relationship_map": "pithauthor.bibliography.reading",
        "paste_line": "pithauthor.bibliography.lookup",
        "plan_citations": "pithauthor.bibliography.cite",
        "read_bibliographies": "pithauthor.bibliography.reading",
        "read_citations": "pithauthor.bibliography.cited",
        "render_table": "pithauthor.bibliography.reading",
        "resolve_identifiers": "pithauthor.bibliography.cite",
        "rows_as_json": "pithauthor.bibliography.reading",
        "settle": "pithauthor.bibliography.lookup",
        "sign_bibliography": "pithauthor.bibliography.cite",
        "sign_plan": "pithauthor.bibliography.cite",
        "source_counts": "pithauthor.bibliography.reading",
        "status_counts": "pithauthor.bibliography.reading",
        "write_back": "pithauthor.bibliography.lookup",
    },
)
