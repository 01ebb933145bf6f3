"""`pith outbox list|retry|drop|recover`: the events waiting for, accepted by, or rejected by
the registry each is bound to."""

from __future__ import annotations

import typer

from pithauthor._cli.app import new_app
from pithauthor._cli.catalog import summary
from pithauthor._cli.output import ask, at_terminal, data, emit_json, message
from pithauthor.errors import ConfirmationNeeded, Declined, InputError
from pithauthor.protocol.text import escaped

outbox_app = new_app(summary("outbox"))
REGISTRY_ONLY = typer.Option(
    None, "--registry", help="Only the events bound to this registry (default: all)."
)


@outbox_app.command("list")
def outbox_list(
    state: str | None = typer.Option(
        None, "--state", help="pending, accepted, rejected or held (for moderation)."
    ),
    registry: str | None = REGISTRY_ONLY,
    everything: bool = typer.Option(
        False, "--all", help="The accepted events too (default: those still to deal with)."
    ),
    as_json: bool = typer.Option(False, "--json", help="Print entries as JSON."),
) -> None:
    """List the outbox (oldest first): state, date stored, registry, event, paper. By default
    the events still to deal with (pending, rejected); the accepted ones are counted, and
    listed with --state accepted or --all."""
    from pithauthor.registry.outbox import STATES, Outbox
    from pithauthor.registry.submit import paper_titles

    if state is not None and state not in STATES:
        raise InputError(f"--state must be one of {', '.join(STATES)}")
    with Outbox(note=message) as outbox:
        if state is None and not everything:
            entries = outbox.working(registry)
        else:
            entries = outbox.entries(state, registry)
        counts = outbox.counts(registry)
    titles = paper_titles(entries)
    if as_json:
        emit_json([{**e.summary(), "title": titles.get(e.subject)} for e in entries])
        return
    width = max((len(e.registry) for e in entries), default=0)  # one column per field
    for e in entries:
        extra = f"  {escaped(e.reason)}" if e.reason else ""  # the registry's words
        paper = escaped(titles.get(e.subject) or e.subject)  # the record's title
        data(
            f"{e.state:<9} {e.stored_at[:10]}  {e.registry:<{width}}  {e.event_id[:19]}…  "
            f"{e.event_type:<19} {paper}{extra}"
        )
    message(", ".join(f"{n} {s}" for s, n in counts.items()))


@outbox_app.command("retry")
def outbox_retry(
    event_ids: list[str] = typer.Argument(None, help="Events to retry (default: all rejected)."),
    registry: str | None = REGISTRY_ONLY,
) -> None:
    """Put rejected events back to pending (then run `pith submit`)."""
    import shlex

    from pithauthor.registry.client import registry_binding
    from pithauthor.registry.outbox import Outbox

    with Outbox(note=message) as outbox:
        n = outbox.retry(event_ids or None, registry)
        # each pending event goes only to the registry it was made for: one command for each
        only = None if registry is None else registry_binding(registry)
        bound = [r for r in outbox.registries("pending") if only in (None, r)]
    message(f"{n} event(s) pending again")
    for url in bound if n else []:
        message(f"next: `{shlex.join(['pith', 'submit', '--registry', url])}` sends them to {url}")


@outbox_app.command("drop")
def outbox_drop(
    event_ids: list[str] = typer.Argument(None, help="Events to delete from the outbox."),
    rejected: bool = typer.Option(False, "--rejected", help="Drop every rejected event."),
    accepted: bool = typer.Option(
        False,
        "--accepted",
        help="Drop the bodies of every accepted event; their ids stay (the ledger that "
        "`pith papers`, `pith withdraw` and `--replace` read).",
    ),
    pending: bool = typer.Option(
        False,
        "--pending",
        help="Drop every pending event (with --registry: of a registry you gave up, e.g. a "
        "local one for dry runs); they will never be sent.",
    ),
    registry: str | None = REGISTRY_ONLY,
    yes: bool = typer.Option(False, "--yes", "-y", help="Do not ask for confirmation."),
) -> None:
    """Delete events from the outbox (they are not withdrawn from any registry). Says what
    will be lost and asks first on a terminal; elsewhere it needs --yes."""
    from pithauthor.registry.outbox import Outbox

    if not (event_ids or rejected or accepted or pending):
        raise InputError("name event ids, or pass --rejected / --accepted / --pending")
    states = [
        s for s, on in (("pending", pending), ("rejected", rejected), ("accepted", accepted)) if on
    ]
    with Outbox(note=message) as outbox:
        found = outbox.dropping(event_ids or [], states, registry)
        lost = _what_is_lost(found)
        if not lost:
            message("nothing to drop")
            return
        if not yes and not at_terminal():  # one line: what it would lose, and how to go on
            what = "; ".join(lost)
            raise ConfirmationNeeded(
                f"not dropped ({what}): no terminal to confirm on; pass --yes to drop"
            )
        for line in lost:
            message(line)
        if not yes and not ask(f"Drop {sum(found.values())} event(s) from the outbox?"):
            raise Declined("nothing was dropped (answered no)")
        n = outbox.drop(event_ids or [], registry)
        n += outbox.drop_state("rejected", registry) if rejected else 0
        n += outbox.drop_state("accepted", registry) if accepted else 0
        n += outbox.drop_state("pending", registry) if pending else 0
    message(f"dropped {n} event(s)")


def _what_is_lost(found: dict[str, int]) -> list[str]:
    """One line per state of what a drop deletes, and what that loses."""
    lines = []
    if found.get("pending"):
        lines.append(
            f"{found['pending']} pending event(s) will never be sent: they are signed, and "
            "this outbox holds their only copy unless you wrote them to a file"
        )
    if found.get("rejected"):
        lines.append(
            f"{found['rejected']} rejected event(s) and the registry's reasons will be gone "
            "(`pith outbox retry` can no longer send them again)"
        )
    if found.get("held"):
        lines.append(
            f"{found['held']} event(s) held for moderation will be forgotten here (their "
            "registry still holds them; `pith submit` will no longer look for their outcome)"
        )
    if found.get("accepted"):
        lines.append(
            f"the bodies of {found['accepted']} accepted event(s) will be gone; their ids stay "
            "(`pith papers` still counts them), the registry keeps the events themselves"
        )
    return lines


@outbox_app.command("recover")
def outbox_recover() -> None:
    """Rebuild a damaged outbox from its journal (outbox.journal.jsonl beside it): the damaged
    file is kept aside, every event not dropped is pending again for its own registry."""
    from pithauthor.registry.recovery import recover

    done = recover()
    if done.moved_to is not None:
        message(f"the damaged outbox is kept as {done.moved_to}")
    for where, n in done.registries.items():
        message(f"recovered {n} event(s) for {where}")
    if done.skipped:
        message(f"skipped {done.skipped} journal line(s) that could not be read or verified")
    message(
        f"{done.accepted} event(s) accepted as before, {done.held} held for moderation, "
        f"{done.events - done.accepted - done.held} pending; "
        "`pith submit` sends them (a registry that has one already answers 'already there')"
    )


def register(app: typer.Typer) -> None:
    app.add_typer(outbox_app, name="outbox", short_help=summary("outbox"))
