"""`pith timestamp`: fetch the trusted time the events lack (docs/protocol.md "Trusted time"):
a token from each authority that gave none, a proof from each calendar, pending OpenTimestamps
proofs upgraded. The outbox's events, or a file's (its sidecar `FILE.time.jsonl` updated)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import typer

from pithauthor._cli.catalog import summary
from pithauthor._cli.output import data, emit_json, message

if TYPE_CHECKING:
    from pithauthor.timestamps.flow import Fetch


def timestamp(
    file: str | None = typer.Argument(
        None, help="Signed events (JSONL): their sidecar FILE.time.jsonl is updated."
    ),
    timeout: float = typer.Option(
        10.0, "--timeout", min=0.1, max=120, help="Seconds for each authority or calendar."
    ),
    as_json: bool = typer.Option(False, "--json", help="Print {events, fetched, problems}."),
) -> None:
    """Fetch the trusted time the outbox's events (or FILE's) lack; exit 3 when a source
    could not be asked (what was fetched is kept)."""
    from pithauthor.errors import NetworkError
    from pithauthor.registry.trusted_time import stamp_file, stamp_outbox
    from pithauthor.timestamps.time_sources import sources_from_env

    sources = sources_from_env()
    events: list[Any] = []
    if file is not None:  # bad input (exit 2, one line) before anything else is said
        from pithauthor.verify import read_documents

        docs = read_documents(file)
        events = [d for d in docs if isinstance(d, dict) and "signature" in d]
        if not events or len(events) != len(docs):
            from pithauthor.errors import EventError

            raise EventError(
                f"{file}: not a file of signed events (JSON or JSONL, as `pith claim -o` writes)"
            )
    if sources.empty:
        message(
            "no time-stamp authority or calendar is set (PITH_TSA=none, PITH_OTS_CALENDARS=none)"
        )
    if file is not None:
        got, _ = stamp_file(events, file, sources, timeout=timeout)
        looked = len(events)
    else:
        got, looked = stamp_outbox(sources, timeout=timeout)
    _say(got, looked, as_json)
    line = got.warning()
    if line is not None:
        raise NetworkError(
            line.removeprefix("warning: "),
            hint="run `pith timestamp` again later: what was fetched is kept",
        )


def _say(got: Fetch, looked: int, as_json: bool) -> None:
    tokens = sum(1 for f in got.fetched if f.kind == "rfc3161")
    proofs = sum(1 for f in got.fetched if f.kind == "ots" and not f.complete)
    upgraded = sum(1 for f in got.fetched if f.kind == "ots" and f.complete)
    if as_json:
        emit_json(
            {
                "events": looked,
                "fetched": [
                    {
                        "event_id": f.event_id,
                        "kind": f.kind,
                        "source": f.source,
                        "complete": f.complete,
                    }
                    for f in got.fetched
                ],
                "problems": got.problems,
            }
        )
        return
    data(
        f"{looked} event(s) lacking trusted time: {tokens} token(s), {proofs} pending "
        f"OpenTimestamps proof(s), {upgraded} complete"
    )


def register(app: typer.Typer) -> None:
    app.command("timestamp", short_help=summary("timestamp"))(timestamp)
