"""`pith status PAPER` (a paper's page, verified) and `pith papers` (the author's papers)."""

from __future__ import annotations

from typing import Any

import typer

from pithauthor._cli.catalog import summary
from pithauthor._cli.options import (
    REGISTRY_OPTION,
    TRUST_LOCAL_OPTION,
    TRUST_MANIFEST_OPTION,
    make_client,
)
from pithauthor._cli.output import data, emit_json, message
from pithauthor.errors import InputError
from pithauthor.protocol import escaped


def status(
    ref: str = typer.Argument(..., metavar="PAPER", help="A Pith Number, alias, or arXiv id."),
    registry: str | None = REGISTRY_OPTION,
    trust_manifest: list[str] = TRUST_MANIFEST_OPTION,
    trust_local: bool = TRUST_LOCAL_OPTION,
    as_json: bool = typer.Option(False, "--json", help="Print the page as JSON."),
) -> None:
    """A paper's page: number, title, authors, what is verified, the record's completeness,
    claims, citations, replications, and what this machine's outbox holds for it per registry.
    The record and merged state are fetched and verified first."""
    from pithauthor.registry import STATES, RecordCache, paper_status

    with make_client(registry, trust_manifest, trust_local, 4) as client:
        cache = RecordCache()  # the state verified before, revalidated (If-None-Match)
        try:
            client.keep(cache)
            page = paper_status(client, ref)
        finally:
            cache.close()
    if as_json:
        emit_json(page)
        return
    for line in page_lines(page, STATES):
        data(line)


def page_lines(page: dict[str, Any], states: tuple[str, ...]) -> list[str]:
    """The page as text (outbox counts in the order of `states`); everything the registry or
    another signer wrote is escaped."""
    e = escaped
    arxiv = f"  arXiv:{page['arxiv']}" if page["arxiv"] else ""
    lines = [
        f"{page['pith_number']}  ({page['short_pith_number']}){arxiv}",
        e(page["title"] or "(no title)"),
        # pith.science sorts the authors by given name: never shown as if in the paper's order
        e(page["authors"]) + " (as the registry lists them, not necessarily the paper's order)"
        if page["authors"]
        else "(no authors)",
        f"version {page['version']}  on {page['registry']}",
    ]
    for what, v in page["verified"].items():
        verdict = "verified" if v["ok"] else "FAILED: " + ", ".join(v["failed"])
        extra = f"; unverifiable here: {', '.join(v['unverifiable'])}" if v["unverifiable"] else ""
        lines.append(f"{what}: {verdict} ({v['passed']} checks passed{extra})")
    lines.append(" · ".join(c["label"] for c in page["completeness"]))
    lines.append(f"claims ({len(page['claims'])})")
    for c in page["claims"]:
        bound = (
            f"identity-bound ({', '.join(c['identity_proofs'])})"
            if c["identity_bound"]
            else "not identity-bound (key only)"
        )
        where = f"#{c['position']}" if c["position"] is not None else "(no position)"
        lines.append(f"  {where} {e(str(c['name']))}  {c['key_id']}  {bound}")
    lines.append(f"citations received ({len(page['citations_received'])})")
    for c in page["citations_received"]:
        lines.append(f"  {e(str(c['citing_pith_number']))} {c['relationship']}  by {c['key_id']}")
    lines.append(f"citations made, signed on this machine ({len(page['citations_made'])})")
    for c in page["citations_made"]:
        lines.append(f"  {c['relationship']} {c['cited_pith_number']}  {c['state']}")
    lines.append(f"replications ({len(page['replications'])})")
    for r in page["replications"]:
        summary = e(str(r["summary"] or ""))
        lines.append(f"  {r['kind']} {r['outcome']}  by {r['key_id']}: {summary}")
    if not page["outbox"]:
        lines.append("outbox: nothing for this paper")
    for group in page["outbox"]:
        held = [ev["state"] for ev in group["events"]]
        said = ", ".join(f"{held.count(s)} {s}" for s in states if s in held)
        lines.append(f"outbox for {group['registry']}: {said}")
    return lines


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
    from pithauthor.protocol import classify_reference
    from pithauthor.registry import check_registry_options, my_papers, papers_on_registry

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
