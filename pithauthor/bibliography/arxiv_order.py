"""A paper version's authors in arXiv's order, from arXiv's API (its answer cached on disk).

A registry's record lists a paper's authors, but not in the paper's order: pith.science sorts
them by given name (docs/protocol.md, PROTOCOL.md section 4). A claim's `--position` is a place
in the paper's own list, so it is checked against arXiv's: the `<author>` entries of the arXiv
API's Atom entry for that version (`id_list=2302.12445v2`), in order. The record's list only
says who the authors are.

    order = author_order("2302.12445", 2)
    order.names     # ("Lin Zhang", "Shaohuai Shi", ...), or None when arXiv could not be asked
    order.why_not   # when None: why, in words ("arXiv's API at ... did not answer ...")

The answer is kept in the `--lookup` cache (`LookupCache`, keyed by the API's URL and
`id_list=ID vN`) and used whatever its age: a version's author list never changes once arXiv
has it. A bare id (no version) asks for the latest version and is not cached.
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass

from pithauthor.bibliography.arxiv_api import DEFAULT_API, ArxivApi
from pithauthor.bibliography.lookup import LookupCache
from pithauthor.errors import ArxivApiError
from pithauthor.protocol.urls import origin

__all__ = ["AuthorOrder", "author_order"]


#: A claim asks once, briefly: an author offline should not wait out arXiv's long retries.
_ATTEMPTS = 2


_TIMEOUT = 10.0


@dataclass(frozen=True, slots=True)
class AuthorOrder:
    """arXiv's author list of one paper version, or why it could not be had."""

    names: tuple[str, ...] | None
    """The authors in arXiv's order; None when arXiv's API could not tell."""
    paper: str
    """`arXiv 2302.12445v2`: the version the names are of (or were asked for)."""
    why_not: str = ""
    """When `names` is None: why, one clause (no trailing period)."""


def author_order(
    arxiv_id: str | None,
    version: int | None,
    *,
    api_url: str | None = None,
    cache: LookupCache | None = None,
) -> AuthorOrder:
    """arXiv's author order of `arxiv_id` (version `version`, else the latest) from its API at
    `api_url` (default: arXiv's own), cached. Never raises for arXiv being away or not knowing
    the paper: that is an AuthorOrder without names, saying why. A bad `api_url` is an
    InputError."""
    if not arxiv_id:
        return AuthorOrder(None, "the paper", "its record names no arXiv id")
    asked = f"{arxiv_id}v{version}" if version is not None else arxiv_id
    paper = f"arXiv {asked}"
    with ArxivApi(api_url or DEFAULT_API, timeout=_TIMEOUT, attempts=_ATTEMPTS) as api:
        key = f"id_list={asked}"
        cache = cache or LookupCache()
        if version is not None:
            hit = cache.get(api.url, key, any_age=True)
            if hit is not None and hit[0] and hit[0][0].authors:
                return AuthorOrder(hit[0][0].authors, paper)
        try:
            entry = api.entry(asked)
        except ArxivApiError as exc:
            return AuthorOrder(None, paper, str(exc).split("; ")[0])
        if entry is None or not entry.authors:
            return AuthorOrder(
                None, paper, f"arXiv's API at {origin(api.url)} has no entry with authors for it"
            )
        if version is not None:
            # a disk that refuses is no error: the answer is asked again next time
            with contextlib.suppress(OSError):
                cache.put(api.url, key, (entry,), True)
        return AuthorOrder(entry.authors, paper)
