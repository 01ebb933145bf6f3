"""Bibliographies: read .bib files and the keys a manuscript cites (`reading`), find
missing arXiv identifiers and write them back (`lookup`), and sign one citation per cited
paper (`cite`); and, from the same arXiv API client and cache, a paper version's authors in
arXiv's order (`arxiv_order`: what a claim's `--position` is checked with).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from pithauthor._face import lazy_face

if TYPE_CHECKING:  # the face, one name a line (pithauthor/_face.py reads this block)
    from pithauthor.bibliography.arxiv_api import ArxivApi as ArxivApi
    from pithauthor.bibliography.cite import CitePlan as CitePlan
    from pithauthor.bibliography.cite import RegistryResolver as RegistryResolver
    from pithauthor.bibliography.cite import Resolver as Resolver
    from pithauthor.bibliography.cite import plan_citations as plan_citations
    from pithauthor.bibliography.cite import resolve_identifiers as resolve_identifiers
    from pithauthor.bibliography.cite import sign_bibliography as sign_bibliography
    from pithauthor.bibliography.cite import sign_plan as sign_plan
    from pithauthor.bibliography.cited import cited_keys as cited_keys
    from pithauthor.bibliography.lookup import LookupResult as LookupResult
    from pithauthor.bibliography.lookup import lookup_identifiers as lookup_identifiers
    from pithauthor.bibliography.lookup import settle as settle
    from pithauthor.bibliography.lookup import write_back as write_back
    from pithauthor.bibliography.reading import BibEntry as BibEntry
    from pithauthor.bibliography.reading import BibReading as BibReading
    from pithauthor.bibliography.reading import read_bibliographies as read_bibliographies
    from pithauthor.bibliography.reading import render_table as render_table

__getattr__, __dir__ = lazy_face(__name__)  # names load on first use
