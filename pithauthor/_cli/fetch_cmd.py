"""`pith fetch`: a record, bundle or merged state from a registry, verified before it is shown."""

from __future__ import annotations

from pathlib import Path
from typing import Literal

import typer

from pithauthor._cli.catalog import summary
from pithauthor._cli.options import REGISTRY_HELP, TRUST_HELP, TRUST_LOCAL_OPTION, make_client
from pithauthor._cli.output import data, emit_json, message
from pithauthor.errors import InputError


def fetch(
    ref: str = typer.Argument(..., help="A Pith Number, alias, or arXiv id."),
    what: Literal["record", "bundle", "state", "number"] = typer.Option(
        "record", "--what", help="What to fetch."
    ),
    registry: str | None = typer.Option(None, "--registry", help=REGISTRY_HELP),
    trust_manifest: list[str] = typer.Option(
        [], "--trust-manifest", metavar="FILE", help=TRUST_HELP
    ),
    trust_local: bool = TRUST_LOCAL_OPTION,
    retries: int = typer.Option(6, "--retries", min=1, max=20, help="Attempts per request."),
    timeout: float = typer.Option(20.0, "--timeout", min=0.1, help="Seconds per attempt."),
    output: str | None = typer.Option(None, "-o", "--out", metavar="FILE", help="Write to FILE."),
    allow_unverifiable: bool = typer.Option(
        False,
        "--allow-unverifiable",
        help="Take a bundle or state whose registry parts cannot be verified (they are named).",
    ),
) -> None:
    """Fetch a record, bundle or merged state, verified before it is shown. A bundle or state
    with parts nobody can verify (registry event ids, the registry's merge) is refused (exit 1)
    unless --allow-unverifiable is given."""
    if what not in ("record", "bundle", "state", "number"):
        raise InputError("--what must be record, bundle, state or number")
    if output:
        from pithauthor.fs import check_output_file

        check_output_file(output, InputError, "a file to write")
    with make_client(registry, trust_manifest, trust_local, 4, retries, timeout) as client:
        if what == "number":
            data(client.record(ref)["pith_number"])
            return
        if what == "record":
            doc = client.record(ref)
        else:
            from pithauthor.registry.client import RecordCache

            cache = RecordCache()  # what was verified before, revalidated (If-None-Match)
            try:
                client.keep(cache)
                doc = getattr(client, what)(ref, strict=not allow_unverifiable)
            finally:
                cache.close()
    verdict = "verified" if not allow_unverifiable or what == "record" else "checked"
    if output:
        import json

        from pithauthor.fs import replace_file

        text = json.dumps(doc, indent=2, ensure_ascii=False) + "\n"
        replace_file(Path(output), text, mode=0o644)
        message(f"{verdict} {what} of {doc.get('pith_number')} written to {output}")
    else:
        emit_json(doc)
        message(f"OK: {what} of {doc.get('pith_number')} {verdict}")
    if verdict == "checked":
        message("parts of it are unverifiable; `pith verify FILE` lists them")


def register(app: typer.Typer) -> None:
    app.command("fetch", short_help=summary("fetch"))(fetch)
