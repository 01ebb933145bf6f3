"""`pith registry`: run a local registry (same protocol as pith.science) and add papers to it."""

from __future__ import annotations

from typing import TYPE_CHECKING

import typer

from pithauthor._cli.app import new_app

if TYPE_CHECKING:
    from pathlib import Path

registry_app = new_app("Run a local registry for tests, dry runs and your own mirror.")

DATA_HELP = "Data folder (key, SQLite). Default: <PITH_HOME>/registry."


def _data_dir(data: str | None) -> Path:
    from pathlib import Path

    from pithauthor._paths import pith_home

    return Path(data).expanduser() if data else pith_home() / "registry"


@registry_app.command("serve")
def serve(
    host: str = typer.Option(
        "127.0.0.1", "--host", help="Address to listen on (not loopback: others can reach it)."
    ),
    port: int = typer.Option(
        8787, "--port", min=0, max=65535, help="Port (0-65535); 0 picks a free one."
    ),
    data: str | None = typer.Option(None, "--data", help=DATA_HELP),
    require_token: str | None = typer.Option(
        None, "--require-token", help="File holding the bearer token POSTs must carry."
    ),
    examples: bool = typer.Option(False, "--examples", help="Add the shipped example papers."),
) -> None:
    """Serve the local registry until interrupted. Prints its URL on stdout."""
    import signal
    import sys

    from pithauthor._cli.output import data as out
    from pithauthor._cli.output import message
    from pithauthor._files import MAX_SECRET_BYTES, read_user_text
    from pithauthor._registry.server import RegistryServer
    from pithauthor.errors import InputError

    _check_host(host)
    token = None
    if require_token:
        token = read_user_text(
            require_token, InputError, "a token file", limit=MAX_SECRET_BYTES
        ).strip()
        if not token:
            raise InputError(f"{require_token} is empty")
        if any(c.isspace() or not c.isprintable() for c in token):
            raise InputError(f"{require_token}: a token is one word (no spaces or line breaks)")
    folder = _data_dir(data)
    try:
        server = RegistryServer(folder, host, port, token=token)
    except OSError as exc:
        raise InputError(f"cannot listen on {host}:{port}: {exc.strerror}") from None
    if examples:
        from pithauthor._registry.papers import add_paper, example_papers

        for path in example_papers():
            add_paper(server.store, server.key, path)
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    out(server.url)
    sys.stdout.flush()
    message(
        f"pith: local registry at {server.url} (key {server.key.key_id}, data {folder}); "
        "Ctrl-C stops it"
    )
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()


def _check_host(host: str) -> None:
    """An address must be named; one other than loopback is served, with a warning."""
    from pithauthor._cli.output import warn
    from pithauthor._client import is_loopback
    from pithauthor.errors import InputError

    if not host.strip():
        raise InputError("--host needs an address (127.0.0.1 for this machine only)")
    if not is_loopback(host.strip("[]")):
        warn(
            f"--host {host} is not loopback: anyone who can reach this machine can use the "
            "registry (reads, and POSTs unless --require-token)"
        )


@registry_app.command("add")
def add(
    files: list[str] = typer.Argument(
        None, help="arXivRaw XML, JSON metadata, or a registry record JSON."
    ),
    data: str | None = typer.Option(None, "--data", help=DATA_HELP),
    examples: bool = typer.Option(False, "--examples", help="Add the shipped example papers."),
    trust_manifest: list[str] = typer.Option(
        [], "--trust-manifest", help="Also trust this manifest's keys for record files."
    ),
    as_json: bool = typer.Option(False, "--json", help="Print what was added as JSON."),
) -> None:
    """Add papers; each is signed with the local registry's key."""
    from pathlib import Path

    from pithauthor._cli.output import data as out
    from pithauthor._cli.output import emit_json
    from pithauthor._registry.keys import load_or_create_key
    from pithauthor._registry.papers import add_paper, example_papers
    from pithauthor._registry.store import RegistryStore
    from pithauthor.errors import InputError
    from pithauthor.submit import default_trust

    paths = [Path(f) for f in files or []] + (example_papers() if examples else [])
    if not paths:
        raise InputError("name at least one file, or pass --examples")
    folder = _data_dir(data)
    key = load_or_create_key(folder)
    store = RegistryStore(folder)
    trust = default_trust(trust_manifest)
    added = []
    for path in paths:
        rec, new = add_paper(store, key, path, trust)
        added.append({"file": str(path), "pith_number": rec.pith_number, "new": new})
    if as_json:
        emit_json(added)
    else:
        for row in added:
            out(
                f"{row['pith_number']}  {'added' if row['new'] else 'already there'}  {row['file']}"
            )


def register(app: typer.Typer) -> None:
    app.add_typer(registry_app, name="registry")
