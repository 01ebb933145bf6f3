"""`pith doctor`: is the key store safe?"""

from __future__ import annotations

import typer

from pithauthor._cli.keyopts import JSON_OPTION
from pithauthor._cli.output import data, emit_json


def doctor_cmd(as_json: bool = JSON_OPTION) -> None:
    """Check where keys are stored and whether that is safe (exit 1 if something is unsafe)."""
    from pithauthor.keys import diagnose

    findings = diagnose()
    if as_json:
        emit_json([f.as_dict() for f in findings])
    else:
        for f in findings:
            data(f"{f.level:<7}{f.check}: {f.detail}")
    if any(f.level == "unsafe" for f in findings):
        raise typer.Exit(1)


def register(app: typer.Typer) -> None:
    app.command("doctor")(doctor_cmd)
