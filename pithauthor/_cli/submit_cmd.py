"""`pith submit`: send the outbox (and a file's events) to the registries they are for."""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import typer

from pithauthor._cli.access import registry_options
from pithauthor._cli.catalog import summary
from pithauthor._cli.options import TRUST_HELP, TRUST_LOCAL_OPTION
from pithauthor._cli.output import data, emit_json, message, warn
from pithauthor.errors import PithError
from pithauthor.protocol.text import escaped

if TYPE_CHECKING:
    from pithauthor.registry.client import RegistryClient
    from pithauthor.registry.submit import SubmitResult
    from pithauthor.timestamps.time_sources import Sources


def submit(
    file: str | None = typer.Argument(None, help="Signed events (JSON or JSONL) to add first."),
    registry: str | None = typer.Option(
        None,
        "--registry",
        help="Send only the events bound to this registry (FILE's events are bound to it); "
        "default: every pending event to its own registry ($PITH_REGISTRY or "
        "https://pith.science for FILE's).",
    ),
    parallel: int = typer.Option(8, "--parallel", min=1, max=64, help="Requests in flight."),
    trust_manifest: list[str] = typer.Option(
        [], "--trust-manifest", metavar="FILE", help=TRUST_HELP
    ),
    trust_local: bool = TRUST_LOCAL_OPTION,
    retries: int = typer.Option(6, "--retries", min=1, max=20, help="Attempts per request."),
    timeout: float = typer.Option(20.0, "--timeout", min=0.1, help="Seconds per attempt."),
    as_json: bool = typer.Option(False, "--json", help="Print the result as JSON."),
) -> None:
    """Send every pending event of the outbox to the registry it was signed for (after
    storing FILE's events for --registry or the default, if given)."""
    from pithauthor.registry.client import registry_binding
    from pithauthor.registry.outbox import Outbox
    from pithauthor.registry.submit import (
        combined,
        pending_by_registry,
        submit_everywhere,
        submit_pending,
    )
    from pithauthor.verify import read_documents

    options = registry_options(
        registry, trust_manifest, trust_local, parallel=parallel, retries=retries, timeout=timeout
    )
    # bad options are said before anything is stored; the manifests are read once, here,
    # whatever the registries the outbox holds rows for
    trust = options.read_trust()
    from pithauthor.timestamps.time_sources import sources_from_env

    sources = sources_from_env()  # a bad PITH_TSA / PITH_OTS_CALENDARS: bad input, first

    bound = registry_binding(registry) if registry is not None else None
    kept_ids: set[str] = set()
    if file is not None:
        docs = read_documents(file)
        with Outbox(note=message) as outbox:
            new, old = outbox.store(docs, registry)
        where = bound or registry_binding(None)
        message(f"stored {new} new event(s) in the outbox for {where} ({old} already there)")
        from pithauthor.registry.trusted_time import keep_sidecar_file

        kept = keep_sidecar_file(file)  # the proofs that travel beside the file's events
        kept_ids = {str(d.get("event_id")) for d in docs if isinstance(d, dict)}
        if kept:
            message(f"kept the trusted time of {kept} event(s) from {file}.time.jsonl")
    pending = pending_by_registry(note=message)

    def connect(where: str) -> RegistryClient:
        # a local registry's key is trusted for the local registries only (for_registry)
        return options.for_registry(where).connect(trust=trust, warn=warn)

    with _progress(not as_json) as progress:
        results: list[SubmitResult]
        if bound is not None:
            _announce({bound: pending.get(bound, 0)})
            others = {r: n for r, n in pending.items() if r != bound}
            if others:
                message(
                    f"not sent now: {_counted(others)} (they go only to their own registry; "
                    "`pith submit` sends them)"
                )
            with connect(bound) as client:
                results = [submit_pending(client=client, parallel=parallel, progress=progress)]
        else:
            _announce(pending)
            results = submit_everywhere(connect, parallel=parallel, progress=lambda _r: progress)
    if as_json:
        emit_json(combined(results))
    else:
        for result in results:
            data(result.summary())
            for eid, reason in result.rejected.items():
                message(f"rejected {eid}: {escaped(reason)}")  # the registry's words
            held = result.held_line()
            if held is not None:
                message(held)
        if not results:
            data("nothing pending in the outbox")
    fetched = _fetch_time(sources)
    # the sidecars that changed in this run travel to the registries that keep them: those of
    # the events accepted now, of the file's, and of the events proofs were fetched for
    changed = {eid for r in results for eid in (*r.accepted, *r.duplicates, *r.confirmed)}
    changed |= fetched | kept_ids
    _send_time(changed, connect)
    for result in results:
        if result.error is not None:
            raise result.error
    if any(r.rejected for r in results):
        raise typer.Exit(1)


def _send_time(event_ids: set[str], connect: Callable[[str], RegistryClient]) -> None:
    """Send the outbox's sidecars of `event_ids` to each registry that accepted them and
    names a trusted-time action (docs/protocol.md "Trusted time"); a registry that cannot
    take them is one warning line, never a failure of the submission."""
    if not event_ids:
        return
    from pithauthor.registry.outbox import Outbox
    from pithauthor.registry.trusted_time import send_sidecars

    with Outbox() as outbox:
        with_time = set(outbox.sidecars(event_ids))
        where = {e.registry for e in outbox.entries(state="accepted") if e.event_id in with_time}
    for registry in sorted(where):
        try:
            with connect(registry) as client:
                sent, problem = send_sidecars(client, with_time)
        except PithError as exc:
            sent, problem = 0, str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        if sent:
            message(f"trusted time: sent the proofs of {sent} event(s) to {registry}")
        if problem is not None:
            message(f"warning: trusted time not sent to {registry}: {problem}")


def _fetch_time(sources: Sources) -> set[str]:
    """After sending: the tokens the outbox's events lack, and their pending OpenTimestamps
    proofs upgraded (docs/protocol.md "Trusted time"); a source that cannot be asked is one
    warning line, never a failure of the submission. Returns the ids of the events a proof
    was fetched for."""
    from pithauthor.registry.trusted_time import stamp_outbox
    from pithauthor.timestamps.flow import SIGNING_TIMEOUT

    got, looked = stamp_outbox(sources, timeout=SIGNING_TIMEOUT, attempts=1)
    if got.fetched:
        message(f"trusted time: {len(got.fetched)} proof(s) fetched for {looked} event(s)")
    line = got.warning()
    if line is not None:
        message(f"{line} (the next `pith submit` or `pith timestamp` asks again)")
    return {f.event_id for f in got.fetched}


def _counted(pending: dict[str, int]) -> str:
    """`3 event(s) to https://pith.science, 1 to http://127.0.0.1:8787`."""
    items = enumerate(pending.items())
    return ", ".join(f"{n} {'event(s) ' if i == 0 else ''}to {r}" for i, (r, n) in items)


def _announce(pending: dict[str, int]) -> None:
    """Say, before any request, how many events go to which registry."""
    if any(pending.values()):
        message(f"sending {_counted(pending)}")


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
    app.command("submit", short_help=summary("submit"))(submit)
