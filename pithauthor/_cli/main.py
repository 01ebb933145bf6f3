"""The `pith` application and the one place where errors become exit codes."""

from __future__ import annotations

import os
import sys

import typer

from pithauthor._version import __version__

app = typer.Typer(
    name="pith",
    help="The author's side of the Pith open graph: keys, claims, citations, replications, "
    "submission, verification and the LaTeX badge.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_show_locals=False,
    context_settings={"help_option_names": ["-h", "--help"]},
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
    from pithauthor._cli import number_cmd, registry_cmd, submit_cmd, verify_cmd

    number_cmd.register(app)
    verify_cmd.register(app)
    submit_cmd.register(app)
    registry_cmd.register(app)


_register()


def main(argv: list[str] | None = None) -> None:
    """Console entry point: run the app; turn every expected error into one line and a code."""
    from pithauthor._cli.output import error_line

    try:
        app(args=argv, prog_name="pith")
    except SystemExit:
        raise
    except KeyboardInterrupt:
        error_line("interrupted")
        sys.exit(130)
    except Exception as exc:
        from pithauthor.errors import EXIT_FAILED, EXIT_INPUT, PithError

        if os.environ.get("PITH_DEBUG") == "1":
            raise
        if isinstance(exc, PithError):
            error_line(str(exc))
            sys.exit(exc.exit_code)
        if isinstance(exc, OSError):
            where = f": {exc.filename}" if exc.filename else ""
            error_line(f"{exc.strerror or exc}{where}")
            sys.exit(EXIT_INPUT)
        error_line(f"internal error ({type(exc).__name__}); run with PITH_DEBUG=1 for details")
        sys.exit(EXIT_FAILED)
