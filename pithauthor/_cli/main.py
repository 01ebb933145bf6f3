"""The `pith` application and the one place where errors become exit codes."""

from __future__ import annotations

import os
import sys
from typing import NoReturn

import typer

from pithauthor._cli.app import new_app
from pithauthor._version import __version__

app = new_app(
    "The author's side of the Pith open graph: keys, claims, citations, replications, "
    "submission, verification and the LaTeX badge.",
    name="pith",
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


def main(argv: list[str] | None = None) -> None:
    """Console entry point: run the app; turn every expected error into one line and a code.

    Click runs in non-standalone mode so that usage errors (a bad option value such as
    `--port -1`) are one line too. The last branch (an unexpected exception) is a bug.
    """
    from typer import _click as click

    from pithauthor._cli.output import error_line

    try:
        code = app(args=argv, prog_name="pith", standalone_mode=False)
    except SystemExit:
        raise
    except KeyboardInterrupt:
        error_line("interrupted")
        sys.exit(130)
    except click.exceptions.NoArgsIsHelpError as exc:
        exc.show()
        sys.exit(exc.exit_code)
    except click.exceptions.UsageError as exc:
        where = exc.ctx.command_path if exc.ctx is not None else "pith"
        error_line(f"{exc.format_message()} (see: {where} --help)")
        sys.exit(exc.exit_code)
    except click.exceptions.ClickException as exc:
        error_line(exc.format_message())
        sys.exit(exc.exit_code)
    except typer.Abort:
        error_line("aborted")
        sys.exit(1)
    except Exception as exc:
        _fail(exc)
    sys.exit(code if isinstance(code, int) else 0)


def _fail(exc: Exception) -> NoReturn:
    from pithauthor._cli.output import error_line
    from pithauthor.errors import EXIT_FAILED, EXIT_INPUT, PithError

    if os.environ.get("PITH_DEBUG") == "1":
        raise exc
    if isinstance(exc, PithError):
        error_line(str(exc))
        sys.exit(exc.exit_code)
    if isinstance(exc, OSError):
        where = f": {exc.filename}" if exc.filename else ""
        error_line(f"{exc.strerror or exc}{where}")
        sys.exit(EXIT_INPUT)
    if isinstance(exc, RecursionError | UnicodeError | ValueError):
        # Last resort only: every reader maps these at the source. Reaching here is a bug.
        error_line(
            f"the input could not be handled ({type(exc).__name__}); this is a bug in pith, "
            "please report it (PITH_DEBUG=1 shows details)"
        )
        sys.exit(EXIT_INPUT)
    error_line(f"internal error ({type(exc).__name__}); run with PITH_DEBUG=1 for details")
    sys.exit(EXIT_FAILED)
