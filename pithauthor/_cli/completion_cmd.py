"""`pith completion SHELL`: the shell completion script; and `pith --install-completion` /
`--show-completion`, which pick the shell themselves."""

from __future__ import annotations

import os
import sys
from pathlib import PurePath
from typing import Any, Literal

import typer
from typer.completion import get_completion_script  # type: ignore[attr-defined]

from pithauthor._cli.catalog import summary

COMPLETE_VAR = "_PITH_COMPLETE"
SHELLS = ("bash", "zsh", "fish", "powershell", "pwsh")


def completion_cmd(
    shell: Literal["bash", "zsh", "fish", "powershell", "pwsh"] = typer.Argument(
        ..., help="The shell to complete in."
    ),
) -> None:
    """Print the shell completion script for SHELL (or: pith --install-completion)."""
    script = get_completion_script(prog_name="pith", complete_var=COMPLETE_VAR, shell=shell)
    sys.stdout.write(script.rstrip("\n") + "\n")


def ancestor_shell() -> str | None:
    """The nearest shell among the process's ancestors (shellingham, as Typer asks), or None."""
    import shellingham  # type: ignore[import-untyped]

    try:
        return str(shellingham.detect_shell()[0])
    except shellingham.ShellDetectionFailure:
        return None


def current_shell() -> str:
    """The shell `pith` was run from, as Typer finds it (the nearest shell among the process's
    ancestors); where that is none Typer completes (`sh`, or nothing found: a shell that runs
    its last command with exec, a CI job, a container), the user's login shell (`$SHELL`).

    Typer alone printed "Shell sh is not supported." on stdout and exited 1: nothing said
    what to do instead."""
    found = ancestor_shell()
    if found in SHELLS:
        return str(found)
    login = PurePath(os.environ.get("SHELL", "")).name
    if login in SHELLS:
        return login
    seen = f"found {found}" if found else "found none"
    from pithauthor.errors import InputError

    raise InputError(
        f"cannot tell which shell to complete in ({seen}; $SHELL is {login or 'not set'}): "
        "print its script with `pith completion bash|zsh|fish|powershell`"
    )


def install_completion(ctx: Any, param: Any, value: bool) -> None:
    """`pith --install-completion`: Typer's installer, for the shell `current_shell` names."""
    if not value or ctx.resilient_parsing:
        return
    from typer.completion import install  # type: ignore[attr-defined]

    shell, path = install(shell=current_shell(), prog_name="pith", complete_var=COMPLETE_VAR)
    sys.stderr.write(f"{shell} completion installed in {path}; restart the shell to use it\n")
    raise typer.Exit()


def show_completion(ctx: Any, param: Any, value: bool) -> None:
    """`pith --show-completion`: the script `pith completion SHELL` prints, for that shell."""
    if not value or ctx.resilient_parsing:
        return
    completion_cmd(current_shell())  # type: ignore[arg-type]
    raise typer.Exit()


def register(app: typer.Typer) -> None:
    app.command("completion", short_help=summary("completion"))(completion_cmd)
