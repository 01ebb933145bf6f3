"""`pith doctor`: is this machine ready, and is the key store safe?"""

from __future__ import annotations

import typer

from pithauthor._cli.catalog import summary
from pithauthor._cli.options import JSON_OPTION, REGISTRY_OPTION, TRUST_MANIFEST_OPTION
from pithauthor._cli.output import data, emit_json


def doctor_cmd(
    registry: str | None = REGISTRY_OPTION,
    trust_manifest: list[str] = TRUST_MANIFEST_OPTION,
    offline: bool = typer.Option(
        False, "--offline", help="Ask no registry and no ORCID: check this machine only."
    ),
    timeout: float = typer.Option(
        5.0, "--timeout", help="Seconds for each network check (one try each; at most 60)."
    ),
    as_json: bool = JSON_OPTION,
) -> None:
    """Check keys and their storage, backups, TeX, the outbox, each registry and its key, and
    the ORCID proofs: one line each, ok/info/warn/fail/unsafe and the next step (exit 1 if
    something fails or is unsafe)."""
    from pithauthor.doctor import FAILING, diagnose

    findings = diagnose(
        registry=registry, trust_manifests=trust_manifest, offline=offline, timeout=timeout
    )
    if as_json:
        emit_json([f.as_dict() for f in findings])
    else:
        for f in findings:
            step = f"; next: {f.next}" if f.next else ""
            data(f"{f.level:<7}{f.check}: {f.detail}{step}")
    if any(f.level in FAILING for f in findings):
        raise typer.Exit(1)


def register(app: typer.Typer) -> None:
    app.command("doctor", short_help=summary("doctor"))(doctor_cmd)
