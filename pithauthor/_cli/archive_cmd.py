"""`pith archive`: have the Internet Archive capture a paper's arXiv pages, check the capture
against the PDF pith downloads itself, and sign a storage attestation of it."""

from __future__ import annotations

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
    RECORD_OPTION,
    REGISTRY_OPTION,
    REPLACE_OPTION,
    SUBMIT_OPTION,
    TRUST_LOCAL_OPTION,
    TRUST_MANIFEST_OPTION,
    YES_OPTION,
)
from pithauthor._cli.output import at_terminal, message
from pithauthor._cli.signing import HEADER, Output, paper_lines, shown, signer_line
from pithauthor.errors import InputError

if TYPE_CHECKING:
    from pithauthor.archive.capture import Archived
    from pithauthor.keys.author import DeferredKey
    from pithauthor.protocol.subject import Subject
    from pithauthor.registry.access import RegistryAccess

STORAGE_ACTION = "attest_storage"
"""The record's action a storage attestation is submitted through (`agent_actions.actions`)."""


def archive(
    paper: str = typer.Argument(..., help="The paper: a Pith Number, an alias or an arXiv id."),
    record: str | None = RECORD_OPTION,
    code: str | None = typer.Option(
        None,
        "--code",
        metavar="URL",
        help="Also have Software Heritage save this git repository (the paper's code) and "
        "record its snapshot's SWHID.",
    ),
    ia_keys: str | None = typer.Option(
        None,
        "--ia-keys",
        metavar="FILE",
        help="Your archive.org S3 keys, ACCESS:SECRET (or one a line), instead of "
        "PITH_IA_ACCESS_KEY and PITH_IA_SECRET_KEY.",
    ),
    wait: float = typer.Option(
        900.0,
        "--wait",
        min=0,
        max=86400,
        metavar="SECONDS",
        help="How long to wait for each capture (and save) to finish.",
    ),
    poll: float = typer.Option(
        5.0,
        "--poll",
        min=0,
        max=600,
        metavar="SECONDS",
        help="How often to ask whether a capture has finished.",
    ),
    key: str | None = KEY_OPTION,
    passphrase_file: str | None = PASSPHRASE_FILE_OPTION,
    out: str | None = OUT_OPTION,
    as_json: bool = EVENT_JSON_OPTION,
    submit: bool = SUBMIT_OPTION,
    yes: bool = YES_OPTION,
    no_timestamp: bool = NO_TIMESTAMP_OPTION,
    replace: bool = REPLACE_OPTION,
    registry: str | None = REGISTRY_OPTION,
    trust_manifest: list[str] = TRUST_MANIFEST_OPTION,
    trust_local: bool = TRUST_LOCAL_OPTION,
) -> None:
    """Have the Internet Archive capture PAPER's arXiv abstract and PDF (Save Page Now; with
    your archive.org keys from PITH_IA_ACCESS_KEY and PITH_IA_SECRET_KEY, else anonymously),
    check the PDF capture's digest (its CDX row) against the PDF downloaded from arXiv here, and
    sign a storage attestation of the captures. Nothing is signed unless the digests are equal."""
    from pithauthor.archive.capture import archive_paper
    from pithauthor.archive.swh import code_origin, swh_base
    from pithauthor.archive.wayback import (
        Polling,
        SavePageNow,
        ia_keys_from_env,
        ia_keys_from_file,
        wayback_base,
    )
    from pithauthor.net import arxiv_pdf_base
    from pithauthor.registry.access import subject_for
    from pithauthor.registry.submit import check_destination
    from pithauthor.sign import attest_storage

    check_destination(out)
    # every setting is read (and refused when bad) before anything is asked of anybody
    keys = ia_keys_from_file(ia_keys) if ia_keys is not None else ia_keys_from_env()
    wayback = wayback_base()
    pdf_base = arxiv_pdf_base()
    origin = code_origin(code) if code is not None else None
    heritage = swh_base() if code is not None else None
    polling = Polling(interval=poll, timeout=wait)
    with registry_access(registry, trust_manifest, trust_local) as access:
        output = Output(
            key, passphrase_file, out, as_json, submit, access, yes=yes, timestamp=not no_timestamp
        )
        subject = subject_for(paper, record, access)
        signer = output.signer()
        output.open_unasked()  # a bad key or passphrase is found before anything is captured
        output.recall(subject.pith_number, signer.key_id, ask=record is None or submit)
        if submit:
            _check_action(access, subject)
        done = archive_paper(
            subject,
            SavePageNow(wayback, keys, polling),
            pdf_base=pdf_base,
            code=origin,
            swh_base=heritage,
            # what it waits on, on a terminal (a capture takes a minute or more); a pipe or a
            # log gets the preview and the result, and a failure stays its one line
            note=message if at_terminal() else lambda _: None,
        )
        event = attest_storage(
            signer,
            subject,
            captures=done.captures,
            code={"origin": done.code.origin, "swhid": done.code.swhid} if done.code else None,
            settle=output.settle("replace" if replace else "refuse"),
        )
        # signed in memory only: until the author says yes, nothing is stored or sent
        if not output.reused(event):
            output.confirm("this storage attestation", storage_preview(subject, signer, done))
        output.one(event)


def _check_action(access: RegistryAccess, paper: Subject) -> None:
    """With --submit: the record must name the action a storage attestation goes through,
    before the archive is asked anything (else nothing could be submitted)."""
    record = access.client.record(paper.pith_number)
    if STORAGE_ACTION not in record["agent_actions"]["actions"]:
        raise InputError(
            f"the record of {paper.pith_number.full} at {access.base_url} names no "
            f"{STORAGE_ACTION} action: it takes no storage attestation (nothing was captured "
            "or signed; without --submit the attestation stays in the outbox)"
        )


def storage_preview(paper: Subject, key: DeferredKey, done: Archived) -> list[str]:
    """What is signed: the paper, the signer, each capture (its time, type and digest, and
    where it is replayed), the PDF's check, and the code's snapshot."""
    lines = [
        HEADER.format(what="A storage attestation"),
        *paper_lines(paper),
        signer_line(key),
    ]
    for capture in done.captures:
        check = ", equal to the PDF downloaded here" if "sha256" in capture else ""
        lines.append(
            f"  {'capture':<10} {shown(capture['url'])} at {capture['timestamp']} "
            f"({capture['mimetype']}, {capture['digest']}{check})"
        )
        lines.append(f"  {'':<10} {shown(capture['capture_url'])}")
    if done.code is not None:
        lines.append(f"  {'code':<10} {shown(done.code.origin)} → {done.code.swhid}")
    return lines


def register(app: typer.Typer) -> None:
    app.command("archive", short_help=summary("archive"))(archive)
