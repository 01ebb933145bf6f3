"""`pith withdraw`: take back a claim, citation or replication record you signed."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

import typer

from pithauthor._cli.access import registry_access
from pithauthor._cli.catalog import summary
from pithauthor._cli.options import (
    EVENT_JSON_OPTION,
    KEY_OPTION,
    NO_TIMESTAMP_OPTION,
    OUT_OPTION,
    PASSPHRASE_FILE_OPTION,
    REGISTRY_OPTION,
    SUBMIT_OPTION,
    TRUST_LOCAL_OPTION,
    TRUST_MANIFEST_OPTION,
    YES_OPTION,
)
from pithauthor._cli.output import message
from pithauthor._cli.signing import Output, reused_line
from pithauthor.errors import InputError

if TYPE_CHECKING:
    from pithauthor.keys.author import AuthorKey, DeferredKey
    from pithauthor.protocol.documents import AuthorEvent

# `sha256:` and at least 8 hex digits: the 19 characters `pith outbox list` and the messages show
_EVENT_ID = re.compile(r"sha256:[0-9a-f]{8,64}")


def withdraw(
    event_id: str = typer.Argument(
        ...,
        metavar="EVENT_ID",
        help="The event to withdraw, as `pith outbox list` shows it (sha256:… or its first "
        "characters, at least sha256: and 8 hex digits).",
    ),
    key: str | None = KEY_OPTION,
    passphrase_file: str | None = PASSPHRASE_FILE_OPTION,
    out: str | None = OUT_OPTION,
    as_json: bool = EVENT_JSON_OPTION,
    submit: bool = SUBMIT_OPTION,
    yes: bool = YES_OPTION,
    no_timestamp: bool = NO_TIMESTAMP_OPTION,
    registry: str | None = REGISTRY_OPTION,
    trust_manifest: list[str] = TRUST_MANIFEST_OPTION,
    trust_local: bool = TRUST_LOCAL_OPTION,
    paper: str | None = typer.Option(
        None,
        "--paper",
        metavar="PAPER",
        help="The paper the event is about (Pith Number or arXiv id): its merged state on the "
        "registry is searched for EVENT_ID, for an event signed on another machine.",
    ),
) -> None:
    """Sign the withdrawal of EVENT_ID, one of your events (in the outbox, or with --paper on
    the registry): the registry's merge then shows it no more. Only the key that signed an
    event can withdraw it; the event and its withdrawal both stay public
    (docs/publishing.md)."""
    from pithauthor.keys.author import show as key_record
    from pithauthor.protocol.ids import PithNumber
    from pithauthor.registry.access import subject_for
    from pithauthor.registry.client import registry_binding
    from pithauthor.registry.submit import check_destination
    from pithauthor.sign import withdraw as sign_withdrawal

    wanted = event_id.strip().lower()
    if not _EVENT_ID.fullmatch(wanted):
        raise InputError(
            f"{event_id[:80]!r} is not an event id: give sha256: and at least 8 hex digits "
            "(`pith outbox list` shows them)"
        )
    check_destination(out)
    with registry_access(registry, trust_manifest, trust_local) as access:
        output = Output(
            key, passphrase_file, out, as_json, submit, access, yes=yes, timestamp=not no_timestamp
        )
        held = output.held()
        where = registry_binding(registry)
        if paper is not None:  # the registry's memory of that paper, before the outbox's
            # the key's public record: no passphrase is asked before the checks
            output.recall(subject_for(paper, None, access).pith_number, key_record(key).key_id)
        # what it learnt, and the outbox's rows with that prefix (an index range, not a read)
        matches = {e["event_id"]: e for e in held.starting(wanted)}
        if not matches:
            if paper is not None:
                raise InputError(
                    f"neither the outbox nor the merged state of {paper} at {where} holds an "
                    f"event {wanted} of yours"
                )
            raise InputError(
                f"the outbox holds no event {wanted} for {where}",
                hint="`pith outbox list` shows the events it holds, and for which --registry "
                "(one signed on another machine: add --paper PAPER)",
            )
        if len(matches) > 1:
            raise InputError(f"{wanted} names {len(matches)} events of yours: give more digits")
        (target,) = matches.values()
        if submit:  # what became of it on the registry (withdrawn elsewhere?) counts too
            number = PithNumber.parse(target["subject_pith_number"])
            output.recall(number, key_record(key).key_id)
        standing = held.standing(target["event_id"])
        assert standing is not None
        shown = f"{target['event_type']} {target['event_id'][:19]}…"
        if standing.status == "withdrawn" and standing.by is not None:
            withdrawal = held.event(standing.by)
            assert withdrawal is not None  # the merge found it among what is held
            message(f"{shown} is withdrawn already")
            if withdrawal["event_id"] in held.from_registry:  # by another machine: it counts
                message(reused_line(withdrawal, f"the registry {access.base_url}"))
                return
            message(reused_line(withdrawal))
            if submit:
                output.send([withdrawal["event_id"]])
            return
        if standing.status == "replaced":
            raise InputError(f"{shown} was replaced by {standing.by}: withdraw that one")
        if standing.status != "current":
            why = {
                "withdrawal": "it is a withdrawal, which is final",
                "equivocation": f"the registry keeps {standing.by} instead of it",
                "invalid": "its link to the event it corrects does not hold",
            }[standing.status]
            raise InputError(f"{shown} cannot be withdrawn: {why}")
        signer = output.signer()
        event = sign_withdrawal(signer, target)
        # Signed in memory only: until the author says yes, nothing is stored or sent.
        output.confirm("this withdrawal", _preview(target, signer))
        message(f"withdraws {shown} (the merge shows it no more)")
        output.one(event)


def _preview(target: AuthorEvent, key: AuthorKey | DeferredKey) -> list[str]:
    """What is taken back: the event, its paper, and what it said (its payload, as signed)."""
    from pithauthor._cli.signing import HEADER, shown, signer_line
    from pithauthor.registry.statements import gist

    return [
        HEADER.format(what="A withdrawal"),
        f"  {'withdraws':<10} {target['event_type']} {target['event_id']}",
        f"  {'paper':<10} {target['subject_pith_number']}",
        f"  {'it said':<10} {shown(gist(target))}",
        signer_line(key),
    ]


def register(app: typer.Typer) -> None:
    app.command("withdraw", short_help=summary("withdraw"))(withdraw)
