"""`pith verify`: check records, states, bundles, receipts and signed events offline."""

from __future__ import annotations

import typer


def verify(
    file: str = typer.Argument(..., help="A JSON or JSONL file; '-' for stdin."),
    as_json: bool = typer.Option(False, "--json", help="Print {ok, kind, checks} as JSON."),
    trust_manifest: list[str] = typer.Option(
        [],
        "--trust-manifest",
        help="Also trust the keys of this mirror manifest (e.g. a local registry's); "
        "also read from $PITH_TRUST. A manifest naming a trusted key id with another key is "
        "refused (exit 2).",
    ),
    strict: bool = typer.Option(
        False,
        "--strict",
        help="Also fail (exit 1) when a part is unverifiable (registry event ids, its merge).",
    ),
) -> None:
    """Verify a document; exit 1 when any check fails. Unverifiable checks never pass; fields
    no signature covers are listed as not signed."""
    from pithauthor._cli.output import data, emit_json, message
    from pithauthor.trust import default_trust
    from pithauthor.verify import verify_file

    trust = default_trust(trust_manifest)  # pinned key, $PITH_TRUST, --trust-manifest
    report = verify_file(file, trust)
    if as_json:
        emit_json(report.as_dict())
    else:
        width = max((len(c.name) for c in report.checks), default=0)
        for c in report.checks:
            detail = c.detail
            if c.status == "unverifiable" and c.paths:
                more = f" and {len(c.paths) - 6} more" if len(c.paths) > 6 else ""
                detail += " [" + ", ".join(c.paths[:6]) + more + "]"
            data(f"{c.status.replace('_', ' '):<12} {c.name:<{width}}  {detail}")
    summary = ", ".join(f"{n} {s.replace('_', ' ')}" for s, n in report.counts().items() if n)
    if not report.ok:
        names = ", ".join(c.name for c in report.failed)
        message(f"FAILED: {report.kind}: {names}")
        raise typer.Exit(1)
    if strict and not report.strict_ok:
        names = ", ".join(c.name for c in report.with_status("unverifiable"))
        message(f"FAILED (--strict): {report.kind}: unverifiable: {names}")
        raise typer.Exit(1)
    message(f"OK: {report.kind} verified ({summary})")


def register(app: typer.Typer) -> None:
    app.command("verify")(verify)
