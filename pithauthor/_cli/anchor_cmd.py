"""`pith anchor`: the paper's record anchored in Bitcoin (the record page's checklist, row 1):
its canonical SHA-256 stamped on the OpenTimestamps calendars, the pending proofs kept and
upgraded on later runs, and once a proof is complete and judged, the anchor event signed and
sent through the record's `anchor_timestamp` action (docs/protocol.md "Anchors and archive
copies")."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import typer

from pithauthor._cli.access import registry_access
from pithauthor._cli.catalog import summary
from pithauthor._cli.options import (
    KEY_OPTION,
    NO_TIMESTAMP_OPTION,
    OUT_OPTION,
    PASSPHRASE_FILE_OPTION,
    RECORD_OPTION,
    REGISTRY_OPTION,
    SUBMIT_OPTION,
    TRUST_LOCAL_OPTION,
    TRUST_MANIFEST_OPTION,
    YES_OPTION,
)
from pithauthor._cli.output import emit_json, message
from pithauthor._cli.signing import Output

if TYPE_CHECKING:
    from pithauthor.keys.author import DeferredKey
    from pithauthor.protocol.documents import AuthorEvent
    from pithauthor.protocol.subject import Subject
    from pithauthor.registry.access import RegistryAccess
    from pithauthor.timestamps.anchor import Anchored, Progress

ACTION = "anchor_timestamp"


def anchor(
    paper: str = typer.Argument(..., help="The paper: a Pith Number, an alias or an arXiv id."),
    record: str | None = RECORD_OPTION,
    upgrade: bool = typer.Option(
        False, "--upgrade", help="Only upgrade the proofs kept here: stamp nothing new."
    ),
    timeout: float = typer.Option(
        10.0, "--timeout", min=0.1, max=120, help="Seconds for each calendar or explorer."
    ),
    key: str | None = KEY_OPTION,
    passphrase_file: str | None = PASSPHRASE_FILE_OPTION,
    out: str | None = OUT_OPTION,
    as_json: bool = typer.Option(
        False, "--json", help="Print {status, pith_number, canonical_sha256, calendars, ...}."
    ),
    submit: bool = SUBMIT_OPTION,
    yes: bool = YES_OPTION,
    no_timestamp: bool = NO_TIMESTAMP_OPTION,
    registry: str | None = REGISTRY_OPTION,
    trust_manifest: list[str] = TRUST_MANIFEST_OPTION,
    trust_local: bool = TRUST_LOCAL_OPTION,
) -> None:
    """Stamp PAPER's canonical SHA-256 on the OpenTimestamps calendars (PITH_OTS_CALENDARS),
    keep the pending proofs, and upgrade them on a later run; once a proof reaches a Bitcoin
    block, show the anchor, sign it and keep it in the outbox (--submit: send it through the
    record's anchor_timestamp action). Exit 75 while the proofs are pending."""
    from pithauthor.errors import EXIT_PENDING, InputError
    from pithauthor.registry.access import subject_for
    from pithauthor.registry.submit import check_destination
    from pithauthor.timestamps import anchor as anchoring
    from pithauthor.timestamps.headers import headers_from_env
    from pithauthor.timestamps.time_sources import CALENDARS_ENV, calendars_from_env

    check_destination(out)
    calendars = calendars_from_env()
    if not calendars:
        raise InputError(
            f"{CALENDARS_ENV}=none: no OpenTimestamps calendar to stamp the record at",
            hint=f"set {CALENDARS_ENV} to one or more calendar URLs (unset: the public ones)",
        )
    with registry_access(registry, trust_manifest, trust_local) as access:
        output = Output(
            key, passphrase_file, out, False, submit, access, yes=yes, timestamp=not no_timestamp
        )
        subject = subject_for(paper, record, access)
        number = subject.pith_number.full
        signer = output.signer()
        output.recall(subject.pith_number, signer.key_id, ask=record is None or submit)
        held = _held_anchor(output, signer, number)
        if held is not None:  # anchored before by this key: nothing to stamp or sign again
            _deliver(output, access, held, subject, as_json, None)
            return
        floor = anchoring.FLOOR  # read now: tests set their own
        progress = anchoring.advance(
            number,
            subject.canonical_sha256,
            calendars,
            stamp_new=not upgrade,
            headers=headers_from_env(floor=floor),
            floor=floor,
            timeout=timeout,
        )
        for url, why in sorted(progress.failed.items()):
            message(f"warning: the calendar {url} could not be asked: {why}")
        if progress.anchored is None:
            waiting = len(progress.pending.waiting)
            calendars_said = f"{waiting} calendar" + ("" if waiting == 1 else "s")
            line = f"pending at {calendars_said}; run `pith anchor {paper}` again later"
            if as_json:
                emit_json(_data("pending", subject, progress, None))
            message(line)
            raise typer.Exit(EXIT_PENDING)
        anchored = progress.anchored
        event = _sign(output, signer, subject, anchored)
        if not output.reused(event):
            output.confirm("this anchor", _preview(subject, signer, anchored))
        _deliver(output, access, event, subject, as_json, progress)


def _held_anchor(output: Output, signer: DeferredKey, number: str) -> AuthorEvent | None:
    """The anchor of the paper this key signed before (the outbox's, or the registry's state
    when it was read), if any: one per key and paper is enough (the same claim)."""
    from pithauthor.protocol.identity import fingerprint_hex

    merged = output.held().merged(fingerprint_hex(signer.public_key), "timestamp_anchor", number)
    return merged.current[0] if merged.current else None


def _sign(output: Output, signer: DeferredKey, subject: Subject, anchored: Anchored) -> AuthorEvent:
    from pithauthor.sign import anchor_record

    return anchor_record(
        signer,
        subject,
        proofs=anchored.proofs,
        headers=anchored.headers,
        settle=output.settle("keep"),
    )


def _preview(subject: Subject, signer: DeferredKey, anchored: Anchored) -> list[str]:
    """What is signed: the paper, its hash, the block and its time, the calendars."""
    from pithauthor._cli.signing import HEADER, paper_lines, signer_line
    from pithauthor.protocol.utc import utc_stamp

    calendars = ", ".join(url for url, _ in anchored.proofs)
    return [
        HEADER.format(what="A timestamp anchor"),
        *paper_lines(subject),
        f"  {'sha256':<10} {subject.canonical_sha256} (the canonical record's)",
        f"  {'block':<10} Bitcoin block {anchored.height}, "
        f"{utc_stamp(anchored.proven.time)} (proof of work and difficulty floor checked)",
        f"  {'calendars':<10} {calendars}",
        signer_line(signer),
    ]


def _takes_anchors(access: RegistryAccess, subject: Subject) -> bool:
    """Whether the registry's record of the paper names the `anchor_timestamp` action."""
    record = access.client.record(subject.pith_number)
    return isinstance(record["agent_actions"]["actions"].get(ACTION), str)


def _deliver(
    output: Output,
    access: RegistryAccess,
    event: AuthorEvent,
    subject: Subject,
    as_json: bool,
    progress: Progress | None,
) -> None:
    """Keep the event (outbox, --out), and send it with --submit when the record names the
    action; a registry that takes no anchors is sent nothing, in one line."""
    from pithauthor._cli.signing import reused_line
    from pithauthor._cli.signing import summary as signed_line

    takes = not output.submit or _takes_anchors(access, subject)
    submitted = output.submit and takes
    if takes:
        output.one(event)
    else:
        output.submit = False  # kept in the outbox, bound to this registry, and sent nowhere
        if output.reused(event):
            message(reused_line(event))
        else:
            message(signed_line(event, output.deliver([event])))
        message(
            f"the registry {access.base_url} takes no anchors (its record names no "
            f"{ACTION} action): the anchor stays in the outbox, sent nowhere"
        )
    if as_json:
        status = "reused" if output.reused(event) else "signed"
        emit_json(
            _data(status, subject, progress, event) | {"submitted": submitted, "takes": takes}
        )


def _data(
    status: str, subject: Subject, progress: Progress | None, event: AuthorEvent | None
) -> dict[str, Any]:
    """`--json`: what became of the anchor."""
    from pithauthor.protocol.utc import utc_stamp

    found: dict[str, Any] = {
        "status": status,
        "pith_number": subject.pith_number.full,
        "canonical_sha256": subject.canonical_sha256,
    }
    if progress is not None:
        pending = progress.pending
        found["calendars"] = {
            url: "complete" if complete else "pending"
            for url, (_, complete) in sorted(pending.proofs.items())
        }
        found["failed"] = dict(sorted(progress.failed.items()))
        if progress.anchored is not None:
            found["block"] = {
                "height": progress.anchored.height,
                "time": utc_stamp(progress.anchored.proven.time),
            }
    if event is not None:
        found["event_id"] = event["event_id"]
    return found


def register(app: typer.Typer) -> None:
    app.command("anchor", short_help=summary("anchor"))(anchor)
