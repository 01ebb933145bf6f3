"""Run a local registry (the same protocol as pith.science) and add papers to it, from arXiv
metadata or from a registry record: for tests, dry runs and your own mirror.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from importlib import resources
from pathlib import Path
from typing import Any, TypedDict
from urllib.parse import urlsplit

from pithauthor.errors import DocumentError, InputError, VerificationError
from pithauthor.fs import (
    MAX_METADATA_BYTES,
    MAX_SECRET_BYTES,
    pith_home,
    read_user_file,
    read_user_text,
)
from pithauthor.protocol.canonical_json import JSONFault, canonical_sha256, parse_json
from pithauthor.protocol.checks.record import checked_record
from pithauthor.protocol.documents import CanonicalRecord, PaperSummary, Receipt, RecordDocument
from pithauthor.protocol.record import (
    arxiv_raw_authors,
    build_canonical_record,
    metadata_start,
    parse_arxiv_metadata,
    pith_number_of,
)
from pithauthor.protocol.urls import is_loopback
from pithauthor.protocol.utc import utc_now
from pithauthor.protocol.verdict import Trust
from pithauthor.registry.credentials import default_trust
from pithauthor.registry.local.answers import LocalKey, load_or_create_key
from pithauthor.registry.local.server import RegistryServer
from pithauthor.registry.local.store import DB_FILE, RegistryStore, StoredRecord
from pithauthor.verify import pinned_trust

__all__ = [
    "AddedPaper",
    "add_papers",
    "check_base_url",
    "check_host",
    "data_folder",
    "example_papers",
    "read_token_file",
    "start_server",
]


# Adding papers to a local registry: from arXiv metadata, or from a registry record.
#
# - arXivRaw XML or JSON metadata: the canonical record is computed here (`pithauthor.verify`).
# - A record JSON (e.g. from pith.science): verified first against the pinned key (plus any key
#   the caller trusts); its canonical record is stored, its own receipt kept as
#   `upstream_receipt`, and the local registry serves it with a receipt under its own key.


def record_from_file(
    path: Path, trust: Trust | None = None
) -> tuple[CanonicalRecord, Receipt | None, PaperSummary | None]:
    """(canonical record, upstream receipt or None, displayed paper) from a metadata or record
    file. The displayed paper (title, authors, categories...) is what pith.science shows with a
    record: taken from the metadata, or from the upstream record (verified with it)."""
    data = read_user_file(
        path, DocumentError, "a metadata or record file", limit=MAX_METADATA_BYTES
    )
    stripped = metadata_start(data)
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


# Run a local registry (the same protocol as pith.science) and add papers to it: for tests,
# dry runs and your own mirror. The server, store and key live in `pithauthor.registry.local`.


class AddedPaper(TypedDict):
    """One paper `add_papers` stored: the file it came from, its number, whether it is new."""

    file: str
    pith_number: str
    new: bool


def data_folder(data: str | None = None) -> Path:
    """`data` (user-expanded), else `<PITH_HOME>/registry`: the key and the SQLite store."""
    return Path(data).expanduser() if data else pith_home() / "registry"


def check_host(host: str) -> bool:
    """Whether `host` is loopback (anything else is served too, but others can reach it);
    InputError when no address is named."""
    if not host.strip():
        raise InputError("--host needs an address (127.0.0.1 for this machine only)")
    return is_loopback(host.strip("[]"))


def check_base_url(url: str) -> str:
    """`url` as links in the registry's documents start with it (`--base-url`): http(s), a
    host, no query or fragment; InputError otherwise."""
    text = url.strip().rstrip("/")
    # plain http to any host passes here: this only writes links (a mirror behind a proxy);
    # every client still refuses plain http off this machine (`protocol.urls.checked_url`)
    try:
        parts = urlsplit(text)
        port_ok = parts.port is None or parts.port > 0
    except ValueError:  # a broken [IPv6] address, a port beyond 65535
        parts, port_ok = urlsplit(""), False
    if (
        not port_ok
        or parts.scheme not in ("http", "https")
        or not parts.hostname
        or parts.username is not None
        or parts.query
        or parts.fragment
        or any(c.isspace() or not c.isprintable() for c in text)
    ):
        raise InputError(f"--base-url {url!r}: give http(s)://HOST[:PORT][/PATH]")
    return text


def read_token_file(path: str) -> str:
    """The bearer token POSTs must carry, from `path`: one word (no spaces or line breaks)."""
    token = read_user_text(path, InputError, "a token file", limit=MAX_SECRET_BYTES).strip()
    if not token:
        raise InputError(f"{path} is empty")
    if any(c.isspace() or not c.isprintable() for c in token):
        raise InputError(f"{path}: a token is one word (no spaces or line breaks)")
    return token


def start_server(
    folder: Path,
    host: str,
    port: int,
    *,
    token: str | None = None,
    examples: bool = False,
    base_url: str | None = None,
    moderate: bool = False,
) -> RegistryServer:
    """A registry listening on host:port (0: a free port) with its data in `folder`, the
    shipped example papers added if asked, links starting with `base_url` (default: the
    address it listens on), holding what no signed-in author sent when `moderate`; serve it
    with `serve_forever()`."""
    try:
        server = RegistryServer(
            folder, host, port, token=token, base_url=base_url, moderate=moderate
        )
    except OSError as exc:
        raise InputError(f"cannot listen on {host}:{port}: {exc.strerror}") from None
    if examples:
        for path in example_papers():
            add_paper(server.store, server.key, path)
    return server


def approve_held(folder: Path, event_ids: Iterable[str] = ()) -> tuple[int, int]:
    """Approve the events the registry in `folder` holds for moderation (all, or those named
    by id or by a prefix of at least `sha256:` and 8 hex digits), as the author signing in
    would; a running server shows them at once. Returns (approved, still held)."""
    if not (folder / DB_FILE).is_file():  # never a new, empty registry made just to look
        raise InputError(f"there is no local registry in {folder} (give its --data folder)")
    store = RegistryStore(folder)
    try:
        held = [eid for eid, _ in store.held()]
        wanted = list(event_ids)
        if wanted:
            for prefix in wanted:
                if len(prefix) < len("sha256:") + 8 or not any(e.startswith(prefix) for e in held):
                    raise InputError(f"the registry in {folder} holds no event {prefix[:80]}")
            chosen = [e for e in held if any(e.startswith(p) for p in wanted)]
        else:
            chosen = held
        done = store.approve(chosen)
        return done, len(held) - done
    finally:
        store.close()


def add_papers(
    folder: Path, files: Iterable[Path], trust_manifests: Iterable[str] = ()
) -> list[AddedPaper]:
    """Add each paper (arXivRaw XML, JSON metadata, or a registry record, whose receipt is
    checked against the trusted keys), signed with the registry's key, to the registry in
    `folder`."""
    paths = list(files)
    if not paths:
        raise InputError("name at least one file, or pass --examples")
    key = load_or_create_key(folder)
    store = RegistryStore(folder)
    trust = default_trust(trust_manifests)
    added: list[AddedPaper] = []
    for path in paths:
        rec, new = add_paper(store, key, path, trust)
        added.append({"file": str(path), "pith_number": rec.pith_number, "new": new})
    return added
