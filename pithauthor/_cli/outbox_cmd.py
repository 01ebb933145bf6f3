"""`pith outbox list|retry|drop`: the events waiting for, accepted by, or rejected by a registry."""

from __future__ import annotations

import typer

from pithauthor._cli.app import new_app
from pithauthor._cli.output import data, emit_json, message
from pithauthor.errors import InputError

outbox_app = new_app("The events waiting for, accepted by, or rejected by a registry.")


@outbox_app.command("list")
def outbox_list(
    state: str | None = typer.Option(None, "--state", help="pending, accepted or rejected."),
    as_json: bool = typer.Option(False, "--json", help="Print entries as JSON."),
) -> None:
    """List the outbox (newest last)."""
    from pithauthor.submit import STATES, Outbox

    if state is not None and state not in STATES:
        raise InputError(f"--state must be one of {', '.join(STATES)}")
    with Outbox() as outbox:
        entries = outbox.entries(state)
        counts = outbox.counts()
    if as_json:
        emit_json([e.summary() for e in entries])
        return
    for e in entries:
        extra = f"  {e.reason}" if e.reason else ""
        data(f"{e.state:<9} {e.event_id}  {e.event_type:<19} {e.subject}{extra}")
    message(", ".join(f"{n} {s}" for s, n in counts.items()))


@outbox_app.command("retry")
def outbox_retry(
    event_ids: list[str] = typer.Argument(None, help="Events to retry (default: all rejected)."),
) -> None:
    """Put rejected events back to pending (then run `pith submit`)."""
    from pithauthor.submit import Outbox

    with Outbox() as outbox:
        n = outbox.retry(event_ids or None)
    message(f"{n} event(s) pending again; send them with: pith submit")


@outbox_app.command("drop")
def outbox_drop(
    event_ids: list[str] = typer.Argument(None, help="Events to delete from the outbox."),
    rejected: bool = typer.Option(False, "--rejected", help="Drop every rejected event."),
    accepted: bool = typer.Option(False, "--accepted", help="Drop every accepted event."),
) -> None:
    """Delete events from the outbox (they are not withdrawn from any registry)."""
    from pithauthor.submit import Outbox

    if not (event_ids or rejected or accepted):
        raise InputError("name event ids, or pass --rejected / --accepted")
    with Outbox() as outbox:
        n = outbox.drop(event_ids or [])
        n += outbox.drop_state("rejected") if rejected else 0
        n += outbox.drop_state("accepted") if accepted else 0
    message(f"dropped {n} event(s)")


def register(app: typer.Typer) -> None:
    app.add_typer(outbox_app, name="outbox")
