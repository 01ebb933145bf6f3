"""`pith submit`: send the outbox (and a file's events) to a registry."""

from __future__ import annotations

import sys
from typing import Any

import typer

from pithauthor._cli.output import data, emit_json, message
from pithauthor._cli.registryopts import LOCAL_HELP, REGISTRY_HELP, TRUST_HELP, make_client


def submit(
    file: str | None = typer.Argument(None, help="Signed events (JSON or JSONL) to add first."),
    registry: str | None = typer.Option(None, "--registry", help=REGISTRY_HELP),
    parallel: int = typer.Option(8, "--parallel", min=1, max=64, help="Requests in flight."),
    trust_manifest: list[str] = typer.Option(
        [], "--trust-manifest", metavar="FILE", help=TRUST_HELP
    ),
    trust_local: bool = typer.Option(False, "--trust-local-registry", help=LOCAL_HELP),
    retries: int = typer.Option(6, "--retries", min=1, max=20, help="Attempts per request."),
    timeout: float = typer.Option(20.0, "--timeout", min=0.1, help="Seconds per attempt."),
    as_json: bool = typer.Option(False, "--json", help="Print the result as JSON."),
) -> None:
    """Send every pending event of the outbox (after storing FILE's events, if given)."""
    from pithauthor.submit import Outbox, submit_pending
    from pithauthor.verify import read_documents

    if file is not None:
        docs = read_documents(file)
        with Outbox() as outbox:
            new, old = outbox.store(docs)
        message(f"stored {new} new event(s) in the outbox ({old} already there)")
    client = make_client(registry, trust_manifest, trust_local, parallel, retries, timeout)
    with client, _progress(not as_json) as progress:
        result = submit_pending(client=client, parallel=parallel, progress=progress)
    if as_json:
        emit_json(result.as_dict())
    else:
        data(result.summary())
        for eid, reason in result.rejected.items():
            message(f"rejected {eid}: {reason}")
    if result.error is not None:
        raise result.error
    if result.rejected:
        raise typer.Exit(1)


class _progress:
    """A progress bar on stderr, only when stderr is a terminal and output is not JSON."""

    def __init__(self, wanted: bool) -> None:
        self.enabled = wanted and sys.stderr.isatty()
        self._bar: Any = None
        self._task: Any = None

    def __enter__(self) -> Any:
        if not self.enabled:
            return None
        # rich only when a bar is shown: `pith --help` must not load it
        from rich.console import Console
        from rich.progress import Progress

        self._bar = Progress(console=Console(stderr=True), transient=True)
        self._bar.__enter__()
        self._task = self._bar.add_task("submitting", total=None)
        return self.update

    def update(self, done: int, total: int) -> None:
        self._bar.update(self._task, completed=done, total=total)

    def __exit__(self, *exc: object) -> None:
        if self._bar is not None:
            self._bar.__exit__(None, None, None)


def register(app: typer.Typer) -> None:
    app.command("submit")(submit)
