"""arXiv's answers to `--lookup`, cached on disk so that a second run asks nothing.

One JSON file per query under `<PITH_HOME>/cache/arxiv-lookup/` (0700), named by the SHA-256
of the normalised query and of the API's URL; it holds the papers that concern the query.
Answers are used for `MAX_AGE` (new papers appear on arXiv); `--offline` uses them whatever
their age. A file that cannot be read is a miss, and is replaced; so files are written
atomically but not fsynced (two fsyncs per answer were most of a fresh lookup's time).
"""

from __future__ import annotations

import hashlib
import json
import time
from dataclasses import asdict
from pathlib import Path
from typing import Any, Final

from pithauthor._atomic import replace_file
from pithauthor._bib.matching import Candidate
from pithauthor._core.strict_json import parse_json
from pithauthor._paths import private_dir

MAX_AGE: Final = 30 * 24 * 3600.0
_VERSION = 1


class LookupCache:
    """Papers per (API URL, normalised query)."""

    def __init__(self, folder: Path | None = None) -> None:
        if folder is None:
            folder = private_dir("cache", "arxiv-lookup")
        self.folder = folder

    def _path(self, api: str, key: str) -> Path:
        digest = hashlib.sha256(f"{api}\n{key}".encode()).hexdigest()
        return self.folder / f"{digest[:40]}.json"

    def get(
        self, api: str, key: str, *, any_age: bool = False
    ) -> tuple[tuple[Candidate, ...], bool] | None:
        """(papers, complete) for the query, or None when not cached (or too old)."""
        try:
            doc = parse_json(self._path(api, key).read_bytes())
            if doc.get("version") != _VERSION or doc.get("query") != key:
                return None
            if not any_age and time.time() - float(doc["fetched_at"]) > MAX_AGE:
                return None
            papers = tuple(_candidate(c) for c in doc["candidates"])
            return papers, bool(doc["complete"])
        except (OSError, ValueError, KeyError, TypeError, AttributeError):
            return None

    def put(self, api: str, key: str, papers: tuple[Candidate, ...], complete: bool) -> None:
        doc = {
            "version": _VERSION,
            "query": key,
            "api": api,
            "fetched_at": int(time.time()),
            "complete": complete,
            "candidates": [asdict(c) for c in papers],
        }
        data = json.dumps(doc, ensure_ascii=False, sort_keys=True).encode("utf-8")
        path = self._path(api, key)
        replace_file(path, data, mode=0o600, durable=False)  # a lost answer is asked again


def _candidate(doc: Any) -> Candidate:
    authors = doc["authors"]
    if not isinstance(authors, list) or not all(isinstance(a, str) for a in authors):
        raise TypeError("authors")
    fields = (doc["arxiv_id"], doc["title"])
    if not all(isinstance(f, str) for f in fields) or not isinstance(doc["year"], int):
        raise TypeError("fields")
    doi = doc.get("doi")
    if doi is not None and not isinstance(doi, str):
        raise TypeError("doi")
    return Candidate(doc["arxiv_id"], doc["title"], tuple(authors), doc["year"], doi)
