"""Run a local registry (the same protocol as pith.science) and add papers to it: for tests,
dry runs and your own mirror. The server, store and key live in `pithauthor.registry.local`."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import TypedDict
from urllib.parse import urlsplit

from pithauthor.errors import InputError
from pithauthor.fs import MAX_SECRET_BYTES, pith_home, read_user_text
from pithauthor.protocol.text import is_loopback
from pithauthor.registry.local.papers import add_paper, example_papers
from pithauthor.registry.local.server import RegistryServer
from pithauthor.registry.local.signer import load_or_create_key
from pithauthor.registry.local.store import RegistryStore
from pithauthor.registry.manifests import default_trust

__all__ = [
    "AddedPaper",
    "RegistryServer",
    "add_papers",
    "check_base_url",
    "check_host",
    "data_folder",
    "example_papers",
    "read_token_file",
    "start_server",
]


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
    # every client still refuses plain http off this machine (`protocol.text.checked_url`)
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
) -> RegistryServer:
    """A registry listening on host:port (0: a free port) with its data in `folder`, the
    shipped example papers added if asked, links starting with `base_url` (default: the
    address it listens on); serve it with `serve_forever()`."""
    try:
        server = RegistryServer(folder, host, port, token=token, base_url=base_url)
    except OSError as exc:
        raise InputError(f"cannot listen on {host}:{port}: {exc.strerror}") from None
    if examples:
        for path in example_papers():
            add_paper(server.store, server.key, path)
    return server


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
