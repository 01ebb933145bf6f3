"""`pith registry`: run a local registry (same protocol as pith.science) and add papers to it."""

from __future__ import annotations

import signal
import sys
from pathlib import Path

import typer

from pithauthor._cli.app import new_app
from pithauthor._cli.catalog import summary
from pithauthor._cli.output import data as out
from pithauthor._cli.output import emit_json, message, warn

registry_app = new_app(summary("registry"))

DATA_HELP = "Data folder (key, SQLite). Default: <PITH_HOME>/registry."


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
    base_url: str | None = typer.Option(
        None,
        "--base-url",
        help="Where clients reach it (a host name, a proxy): links start with this. "
        "Default: the address it listens on.",
    ),
    moderate: bool = typer.Option(
        False,
        "--moderate",
        help="Hold what no signed-in author sends (no bearer token) for moderation, as "
        "pith.science does: answered 202, in no state until `pith registry approve`.",
    ),
) -> None:
    """Serve the local registry until interrupted. Prints its URL on stdout."""
    from pithauthor.registry.local.run import (
        check_base_url,
        check_host,
        data_folder,
        read_token_file,
        start_server,
    )

    if not check_host(host):
        warn(
            f"--host {host} is not loopback: anyone who can reach this machine can use the "
            "registry (reads, and POSTs unless --require-token)"
        )
    token = read_token_file(require_token) if require_token else None
    links = check_base_url(base_url) if base_url is not None else None
    folder = data_folder(data)
    server = start_server(
        folder, host, port, token=token, examples=examples, base_url=links, moderate=moderate
    )
    # SIGTERM (a test harness, systemd) ends it as Ctrl-C does: `finally` closes the store
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    out(server.url)
    sys.stdout.flush()  # at once: a script that started it reads the URL before any request
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


@registry_app.command("add")
def add(
    files: list[str] = typer.Argument(
        None, help="arXivRaw XML, JSON metadata, or a registry record JSON."
    ),
    data: str | None = typer.Option(None, "--data", help=DATA_HELP),
    examples: bool = typer.Option(False, "--examples", help="Add the shipped example papers."),
    trust_manifest: list[str] = typer.Option(
        [],
        "--trust-manifest",
        metavar="FILE",
        help="Also trust this manifest's keys for record files.",
    ),
    as_json: bool = typer.Option(False, "--json", help="Print what was added as JSON."),
) -> None:
    """Add papers; each is signed with the local registry's key."""
    from pithauthor.registry.local.run import add_papers, data_folder, example_papers

    paths = [Path(f) for f in files or []] + (example_papers() if examples else [])
    added = add_papers(data_folder(data), paths, trust_manifest)
    if as_json:
        emit_json(added)
    else:
        for row in added:
            out(
                f"{row['pith_number']}  {'added' if row['new'] else 'already there'}  {row['file']}"
            )


@registry_app.command("approve")
def approve(
    event_ids: list[str] = typer.Argument(
        None, help="Held events to approve (sha256:… or its first characters); default: all."
    ),
    data: str | None = typer.Option(None, "--data", help=DATA_HELP),
) -> None:
    """Approve events a registry served with --moderate holds, as their author signing in
    would confirm them: they are stored and in the paper's state at once (also while the
    registry runs)."""
    from pithauthor.registry.local.run import approve_held, data_folder

    done, left = approve_held(data_folder(data), event_ids or [])
    message(f"approved {done} held event(s); {left} still held")


def register(app: typer.Typer) -> None:
    app.add_typer(registry_app, name="registry", short_help=summary("registry"))
