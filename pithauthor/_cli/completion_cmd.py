"""`pith completion SHELL`: the shell completion script."""

from __future__ import annotations

import sys
from typing import Literal

import typer
from typer.completion import get_completion_script  # type: ignore[attr-defined]

from pithauthor._cli.catalog import summary


def completion_cmd(
    shell: Literal["bash", "zsh", "fish", "powershell", "pwsh"] = typer.Argument(
        ..., help="The shell to complete in."
    ),
) -> None:
    """Print the shell completion script for SHELL (or: pith --install-completion)."""
    script = get_completion_script(prog_name="pith", complete_var="_PITH_COMPLETE", shell=shell)
    sys.stdout.write(script.rstrip("\n") + "\n")


def register(app: typer.Typer) -> None:
    app.command("completion", short_help=summary("completion"))(completion_cmd)
