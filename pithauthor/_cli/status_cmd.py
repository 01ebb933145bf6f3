"""`pith status PAPER` (a paper's page, verified) and `pith papers` (the author's papers). What
`pith status` does and prints is `status_page`'s, which the entry point runs without Typer."""

from __future__ import annotations

import typer

from pithauthor._cli.catalog import summary
from pithauthor._cli.options import (
    REGISTRY_OPTION,
    TRUST_LOCAL_OPTION,
    TRUST_MANIFEST_OPTION,
    make_client,
)
from pithauthor._cli.output import data, emit_json, message
from pithauthor._cli.status_page import show_status
from pithauthor.errors import InputError
from pithauthor.protocol.text import escaped


def status(
    ref: str = typer.Argument(..., metavar="PAPER", help="A Pith Number, alias, or arXiv id."),
    registry: str | None = REGISTRY_OPTION,
    trust_manifest: list[str] = TRUST_MANIFEST_OPTION,
    trust_local: bool = TRUST_LOCAL_OPTION,
    as_json: bool = typer.Option(False, "--json", help="Print the page as JSON (every row)."),
    all_rows: bool = typer.Option(
        False,
        "--all",
        help="List every claim, citation and replication, not the first 10 of each.",
    ),
) -> None:
    """A paper's page: number, title, authors, what is verified, the record's completeness,
    claims, citations, replications, and what this machine's outbox holds for it per registry.
    The record and merged state are fetched and verified first. The text lists the first 10
    of each list with its counts (--all: every one); --json gives every one."""
    # the same as the entry point's plain form, which answers before Typer loads (status_page)
    show_status(ref, registry, trust_manifest, trust_local, as_json, all_rows)


def papers(
    refs: list[str] = typer.Argument(
        None,
        metavar="[PAPER]...",
        help="With --registry: papers to ask it about too (Pith Numbers or arXiv ids), "
        "besides those the outbox holds.",
    ),
    registry: list[str] = typer.Option(
        [],
        "--registry",
        help="Also ask this registry (repeatable) what it holds of your keys: the merged state "
        "of each paper the outbox holds rows for there, and of each PAPER.",
    ),
    trust_manifest: list[str] = TRUST_MANIFEST_OPTION,
    trust_local: bool = TRUST_LOCAL_OPTION,
    as_json: bool = typer.Option(False, "--json", help="Print the papers as JSON."),
) -> None:
    """The papers this machine's keys claimed, cited or replicated (from the outbox, and with
    --registry from what that registry holds of them, signed here or on another machine), with
    where their events stand per registry; newest first. Without --registry no registry is
    asked."""
    from pithauthor.protocol.ids import classify_reference
    from pithauthor.registry.access import check_registry_options
    from pithauthor.registry.statements import my_papers, papers_on_registry

    for ref in refs or []:
        classify_reference(ref)  # a malformed one is said before any registry is asked
    urls: list[str | None] = [*registry] or [None]
    for url in urls:
        check_registry_options(url, trust_manifest)
    if refs and not registry:
        raise InputError("PAPER is asked of a registry: give --registry URL")
    rows = my_papers()
    for url in registry:
        with make_client(url, trust_manifest, trust_local, 4) as client:
            rows = papers_on_registry(client, refs or [], rows)
    if as_json:
        emit_json(rows)
        return
    for p in rows:
        title = escaped(p["title"]) if p["title"] else "(title not cached)"
        data(f"{p['pith_number']}  {', '.join(p['roles'])}  {title}")
        for url, counts in p["registries"].items():
            said = ", ".join(f"{n} {s}" for s, n in counts.items() if n)
            data(f"    {url}: {said}")
    if not rows:
        message(
            "no papers yet: sign a claim, a citation or a replication first (pith claim); "
            "signed on another machine: pith papers --registry URL PAPER"
        )
    else:
        message(f"{len(rows)} paper(s); the page of one: pith status PITH_NUMBER")


def register(app: typer.Typer) -> None:
    app.command("status", short_help=summary("status"))(status)
    app.command("papers", short_help=summary("papers"))(papers)
