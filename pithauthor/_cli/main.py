"""The `pith` application and the one place where errors become exit codes."""

from __future__ import annotations

import os
import sys
import traceback
from typing import Literal, NoReturn

import typer

from pithauthor._cli.app import name_values, new_app
from pithauthor._cli.examples import add_examples
from pithauthor._version import __version__

app = new_app(
    "The author's side of the Pith open graph: keys, claims, citations, replications, "
    "submission, verification and the LaTeX badge.",
    name="pith",
    add_completion=True,
)


def _show_version(value: bool) -> None:
    if value:
        sys.stdout.write(f"pith {__version__}\n")
        raise typer.Exit()


@app.callback()
def _root(
    version: bool = typer.Option(
        False, "--version", callback=_show_version, is_eager=True, help="Print the version."
    ),
) -> None:
    """pith: sign, submit and verify Pith events, and badge your manuscript."""


@app.command("completion")
def completion_cmd(
    shell: Literal["bash", "zsh", "fish", "powershell", "pwsh"] = typer.Argument(
        ..., help="The shell to complete in."
    ),
) -> None:
    """Print the shell completion script for SHELL (or: pith --install-completion)."""
    from typer.completion import get_completion_script  # type: ignore[attr-defined]

    script = get_completion_script(prog_name="pith", complete_var="_PITH_COMPLETE", shell=shell)
    sys.stdout.write(script.rstrip("\n") + "\n")


def _register() -> None:
    from pithauthor._cli import (
        bib_cmd,
        cite_cmd,
        claim_cmd,
        keys_cmd,
        latex_cmd,
        number_cmd,
        registry_cmd,
        replicate_cmd,
        submit_cmd,
        verify_cmd,
    )

    keys_cmd.register(app)
    number_cmd.register(app)
    verify_cmd.register(app)
    bib_cmd.register(app)
    latex_cmd.register(app)
    claim_cmd.register(app)
    cite_cmd.register(app)
    replicate_cmd.register(app)
    submit_cmd.register(app)
    registry_cmd.register(app)


_register()
name_values(app)
add_examples(app)


def main(argv: list[str] | None = None) -> None:
    """Console entry point: run the app; turn every expected error into one line and a code.

    A usage error is one line naming the fault and where help is; `PITH_DEBUG=1` adds the
    traceback on stderr but never changes the exit code.
    """
    try:
        code = app(args=argv, prog_name="pith", standalone_mode=False)
    except typer.Abort:
        _fail("interrupted", 130)
    except KeyboardInterrupt:
        _fail("interrupted", 130)
    except typer.TyperException as exc:  # click's usage errors and the like
        _usage_error(exc)
    except Exception as exc:
        from pithauthor.errors import EXIT_FAILED, EXIT_INPUT, PithError

        if isinstance(exc, PithError):
            _fail(str(exc), exc.exit_code)
        if isinstance(exc, OSError):
            where = f": {exc.filename}" if exc.filename else ""
            _fail(f"{exc.strerror or exc}{where}", EXIT_INPUT)
        if isinstance(exc, RecursionError | UnicodeError | ValueError):
            # Last resort only: every reader maps these at the source; reaching here is a bug.
            _fail(
                f"the input could not be handled ({type(exc).__name__}); this is a bug in pith, "
                "please report it (PITH_DEBUG=1 shows details)",
                EXIT_INPUT,
            )
        _fail(
            f"internal error ({type(exc).__name__}); run with PITH_DEBUG=1 for details", EXIT_FAILED
        )
    sys.exit(code if isinstance(code, int) else 0)


def _usage_error(exc: typer.TyperException) -> NoReturn:
    """One line for a usage error (exit 2), or the help a bare command group asks for."""
    ctx = getattr(exc, "ctx", None)
    if type(exc).__name__ == "NoArgsIsHelpError" and ctx is not None:
        sys.stdout.write(ctx.get_help() + "\n")
        sys.exit(0)
    format_message = getattr(exc, "format_message", None)
    text = format_message() if callable(format_message) else str(exc)
    hint = f" (see '{ctx.command_path} --help')" if ctx is not None else ""
    _fail(f"{text.rstrip('.')}{hint}", int(getattr(exc, "exit_code", 2)))


def _fail(text: str, code: int) -> NoReturn:
    """Print the one error line (and, with PITH_DEBUG=1, the traceback first), then exit."""
    from pithauthor._cli.output import error_line

    if os.environ.get("PITH_DEBUG") == "1" and sys.exc_info()[0] is not None:
        traceback.print_exc(file=sys.stderr)
    error_line(text)
    sys.exit(code)
