"""Offline verification of what a registry publishes and what authors sign (`verify_document`,
`verify_file`), by default against the key shipped with the package (`pinned_trust`), and
canonical records computed from arXiv metadata files.
"""

from __future__ import annotations

import gc
import pkgutil
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from functools import cache
from pathlib import Path
from typing import Any

from pithauthor.errors import DocumentError, MetadataError
from pithauthor.fs import MAX_JSON_BYTES, MAX_METADATA_BYTES, read_user_file, read_user_text
from pithauthor.protocol.canonical_json import JSONFault, parse_json
from pithauthor.protocol.checks.bundle import check_bundle
from pithauthor.protocol.checks.event import check_author_event
from pithauthor.protocol.checks.fields import EVENT_CHECKED
from pithauthor.protocol.checks.record import check_computed, check_receipt_row, check_record
from pithauthor.protocol.checks.state import check_state
from pithauthor.protocol.record import ArxivMetadata, parse_arxiv_metadata
from pithauthor.protocol.subject import link_verdict
from pithauthor.protocol.verdict import Report, Trust, uncovered

__all__ = [
    "detect_kind",
    "pinned_trust",
    "read_arxiv_metadata",
    "read_documents",
    "verify_document",
    "verify_documents",
    "verify_file",
]


# Build canonical records and Pith Numbers from arXiv metadata files.


def read_arxiv_metadata(path: Path | str) -> ArxivMetadata:
    """Read metadata from a file, or from stdin when `path` is `-`."""
    data = read_user_file(
        path, MetadataError, "arXiv metadata", limit=MAX_METADATA_BYTES, stdin=True
    )
    return parse_arxiv_metadata(data)


# The key a document is checked against when no trust is given: the one shipped with the
# package. It lives here, not with the registry client, because verification needs it and
# the registry builds on verification (docs/architecture.md, "Layers").

PINNED_MANIFEST = "pith-mirrors.json"


@cache
def pinned_trust() -> Trust:
    """The Pith registry key shipped with the package (`pithauthor/data/pith-mirrors.json`)."""
    # shipped, never fetched: a manifest fetched from the registry would be the registry
    # vouching for itself (section 3: a client pins the key)
    # the package loader's own read (`pkgutil.get_data`): `importlib.resources` loads tempfile,
    # shutil, zipfile, bz2 and lzma (about 4 ms) on every command that reads the trust
    data = pkgutil.get_data("pithauthor", f"data/{PINNED_MANIFEST}")
    if data is None:  # a loader that cannot read data: the package is broken
        raise FileNotFoundError(f"pithauthor/data/{PINNED_MANIFEST}")
    text = data.decode("utf-8")
    return Trust.from_manifest(parse_json(text))


# Verify what the registry publishes and what authors sign, offline.
#
# `verify_document` takes a parsed JSON document (record, merged state, bundle, receipt, signed
# event, or the output of `pith number from-arxiv`) and returns a `Report` of named checks.
# `verify_file` reads a JSON or JSONL file first.

COMPUTED_FIELDS = {"canonical_record", "canonical_sha256", "pith_number"}


"""All that `pith number from-arxiv --json` prints; more fields make it another kind."""


def detect_kind(doc: Any) -> str:
    """`record`, `state`, `bundle`, `event`, `receipt` or `computed_record`."""
    if not isinstance(doc, Mapping):
        raise DocumentError("expected a JSON object")
    # the kinds that name themselves first: a bare `receipt` key (a record's mark) says less
    if doc.get("state_type") == "pith_open_graph_state" or "state_sha256" in doc:
        return "state"
    if doc.get("bundle_type") == "pith_open_graph_bundle":
        return "bundle"
    if doc.get("record_type") == "pith_number_record" or "receipt" in doc:
        return "record"
    if "event_type" in doc and "signature" in doc:
        return "event"
    if "pith_body" in doc and "signature_b64" in doc:
        return "receipt"
    if "canonical_record" in doc and "canonical_sha256" in doc and set(doc) <= COMPUTED_FIELDS:
        return "computed_record"
    raise DocumentError(
        "not a Pith document (record, state, bundle, receipt or signed event) that pith knows"
    )


def verify_document(doc: Any, trust: Trust | None = None) -> Report:
    """Check one document of any known kind.

    Whatever the document holds, the answer is a report (its faults as failed checks) or a
    `DocumentError`: never another exception (docs/protocol.md, "What `pith verify` checks")."""
    try:
        return _verify_one(doc, trust)
    except UnicodeEncodeError as exc:
        # a lone UTF-16 surrogate has no UTF-8 bytes, so a document holding one has no
        # canonical bytes to hash. JSON read by `parse_json` never holds one (it is refused
        # there, as this is); only a document built in Python can reach this
        if "surrogate" not in str(exc.reason):
            raise
        raise DocumentError(
            "the document holds a lone UTF-16 surrogate, which JSON cannot carry"
        ) from None


def _verify_one(doc: Any, trust: Trust | None) -> Report:
    if trust is None:
        trust = pinned_trust()
    kind = detect_kind(doc)
    if kind == "state":
        return check_state(doc, trust)
    if kind == "bundle":
        return check_bundle(doc, trust)
    if kind == "record":
        return check_record(doc, trust)
    if kind == "event":
        report = check_author_event(doc)
        report.not_signed("not_signed", uncovered(doc, EVENT_CHECKED))
        return report
    if kind == "receipt":
        return check_receipt_row(doc, trust)
    return check_computed(doc)


@contextmanager
def collector_paused() -> Iterator[None]:
    """Python's cycle collector paused while a large document is read and checked (its
    passes find nothing in a document's objects, and cost a first `pith status` 40-70 ms).

    A state of 10,000 events parses into about 400,000 objects and its checks make as many
    again; each allocation threshold crossed meanwhile set the collector walking them, and
    JSON makes no cycles for it to find: 40-70 ms of the 0.9 s a first `pith status` spent
    checking one. Reference counting frees all of it as before; the collector is enabled
    again after (unless it was off already: another thread's pause, or the caller's)."""
    was_on = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_on:
            gc.enable()


@collector_paused()  # a 10,000-event state: see there
def read_documents(path: Path | str) -> list[Any]:
    """The JSON document(s) of a file: one JSON value, or one per line (JSONL); `-` is stdin."""
    text = read_user_text(path, DocumentError, "JSON", limit=MAX_JSON_BYTES, stdin=True)
    if not text.strip():
        raise DocumentError(f"{path} is empty")
    # the whole text first (a pretty-printed document spans lines), then line by line (JSONL);
    # when the first line fails too, it is no JSONL, and the whole text's fault is the better line
    try:
        return [parse_json(text)]
    except JSONFault as whole_error:
        docs = []
        for number, line in enumerate(text.splitlines(), start=1):
            if not line.strip():
                continue
            try:
                docs.append(parse_json(line))
            except JSONFault as exc:
                if number == 1:
                    raise DocumentError(f"{path} is not valid JSON: {whole_error}") from None
                raise DocumentError(f"{path} line {number} is not valid JSON: {exc}") from None
        return docs


def verify_file(path: Path | str, trust: Trust | None = None) -> Report:
    """Verify every document in a file; several (JSONL) are reported with a line prefix."""
    return verify_documents(read_documents(path), trust)


@collector_paused()  # a 10,000-event state: see there
def verify_documents(docs: list[Any], trust: Trust | None = None) -> Report:
    """Verify documents already read (`read_documents`); several get a `[n].` prefix."""
    if len(docs) == 1:
        report = verify_document(docs[0], trust)
    else:
        kinds = {detect_kind(d) for d in docs}
        report = Report(kind=kinds.pop() + "s" if len(kinds) == 1 else "mixed")
        for number, doc in enumerate(docs, start=1):
            report.extend(verify_document(doc, trust), prefix=f"[{number}].")
    _check_links(report, docs)
    return report


def _check_links(report: Report, docs: list[Any]) -> None:
    """An event that replaces or withdraws another (docs/protocol.md, Corrections) is checked
    against the one it names when the same file holds it; when it does not, the link cannot be
    checked here (unverifiable: the registry's state can tell)."""
    events = [d if detect_kind(d) == "event" else None for d in docs]
    # an event_id that is not text names no event (and a list or object is unhashable)
    known = {
        e["event_id"]: e
        for e in events
        if isinstance(e, dict) and isinstance(e.get("event_id"), str)
    }
    for number, event in enumerate(events, start=1):
        verdict = link_verdict(event, known) if isinstance(event, dict) else None
        if verdict is None:
            continue
        holds, detail = verdict
        name = f"[{number}].link" if len(docs) > 1 else "link"
        if holds is None:
            report.unverifiable(name, detail)
        else:
            report.add(name, holds, detail)
