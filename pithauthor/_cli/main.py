"""The `pith` application and the one place where errors become exit codes."""

from __future__ import annotations

import functools
import importlib
import os
import sys
from typing import Any, NoReturn

import typer
import typer.main
from typer.completion import completion_init  # type: ignore[attr-defined]
from typer.core import TyperCommand, TyperGroup

from pithauthor._cli import catalog
from pithauthor._cli.app import name_values, new_app
from pithauthor._cli.catalog import add_examples
from pithauthor._cli.entry import COMPLETE_ENV
from pithauthor._version import __version__

ROOT_HELP = (
    "The author's side of the Pith open graph: keys, claims, citations, replications, "
    "submission, verification and the LaTeX badge."
)


def _show_version(value: bool) -> None:
    if value:
        sys.stdout.write(f"pith {__version__}\n")
        raise typer.Exit()


def _install_completion(ctx: Any, param: Any, value: bool) -> None:
    if not value:  # click calls it on every run: the module loads only when asked
        return
    from pithauthor._cli.completion_cmd import install_completion

    install_completion(ctx, param, value)


def _show_completion(ctx: Any, param: Any, value: bool) -> None:
    if not value:  # click calls it on every run: the module loads only when asked
        return
    from pithauthor._cli.completion_cmd import show_completion

    show_completion(ctx, param, value)


def _root(
    version: bool = typer.Option(
        False, "--version", callback=_show_version, is_eager=True, help="Print the version."
    ),
    # Typer's own pair (add_completion) asks only the process's ancestors which shell this is
    install_completion: bool = typer.Option(
        False,
        "--install-completion",
        callback=_install_completion,
        expose_value=False,
        is_eager=True,
        help="Install completion for the current shell.",
    ),
    show_completion: bool = typer.Option(
        False,
        "--show-completion",
        callback=_show_completion,
        expose_value=False,
        is_eager=True,
        help="Show completion for the current shell, to copy it or customize the installation.",
    ),
) -> None:
    """pith: sign, submit and verify Pith events, and badge your manuscript."""


def _new_app(modules: list[str]) -> typer.Typer:
    """The `pith` Typer app with the entries of `modules` (command modules of `_cli`, in
    `catalog.modules()` order) registered: each adds itself with `register(app)`, the one way
    a command joins `pith` (tests/test_layout.py). Help lists commands, then groups, each in
    the catalog's order."""
    app = new_app(ROOT_HELP, name="pith")
    # Typer's answers to a shell asking for completions (what `add_completion` would set up)
    completion_init()
    app.callback()(_root)
    for module in modules:
        importlib.import_module(f"pithauthor._cli.{module}").register(app)
    name_values(app)
    add_examples(app)
    return app


@functools.cache  # built once per process: a test process reads it many times
def whole_app() -> typer.Typer:
    """The `pith` app with every command module registered (each module imported)."""
    return _new_app(catalog.modules())


def __getattr__(name: str) -> Any:
    """`main.app`: the whole app, built (and every command module imported) when first asked
    for; `pith --help` and `pith NAME ...` never ask (start-up)."""
    if name == "app":
        return whole_app()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def main(argv: list[str] | None = None) -> None:
    """Console entry point: run the app; turn every expected error into one line and a code.

    A usage error is one line naming the fault and where help is; `PITH_DEBUG=1` adds the
    traceback on stderr but never changes the exit code.
    """
    args = sys.argv[1:] if argv is None else argv
    from pithauthor._cli.output import warn
    from pithauthor.fs import report_home_warnings

    # a PITH_HOME others may write in is said once, as a warning line, by any command opening it
    report_home_warnings(warn)

    # the reporter of retries and progress (`pithauthor.progress`), for a command: the root's
    # help reports nothing, and loads no more than it needs
    reports = None if args in ([], ["--help"], ["-h"]) else _reports()
    try:
        with _reporting(reports):
            code = _run(args, reports)
            if code == INTERRUPTED:
                # Typer turns Ctrl-C into a bare exit 130 (typer.core's `_main`), which pith
                # ended silently: the author is told what became of the work, as below
                _interrupted(args, reports)
    finally:
        if reports is not None:
            reports.close()
    sys.exit(code if isinstance(code, int) else 0)


INTERRUPTED = 130  # the shell's code for a command ended by SIGINT (128 + 2)


def _interrupted(args: list[str], reports: Any) -> NoReturn:
    from pithauthor._cli.output import interrupted

    if reports is not None:
        reports.close()  # a progress bar erased before the line
    interrupted(args)


def _run(args: list[str], reports: Any) -> Any:
    """Run `pith ARGS`; every expected error ends the process with its line and code."""
    try:
        # a shell asking for completions runs a bare `pith` too (the words are in the
        # environment): it needs the whole tree, every option's completer
        if args in ([], ["--help"], ["-h"]) and COMPLETE_ENV not in os.environ:
            # the root's help (and a bare `pith`) from the catalog: no command module loads
            return _root_only()(args=args, prog_name="pith", standalone_mode=False)
        if args and args[0] in catalog.NAMES and COMPLETE_ENV not in os.environ:
            # `pith bib scan ...`: only the `bib` module is loaded and its group built (shell
            # completion, which walks the whole tree, and anything else take the whole app)
            return _root_only(args[0])(args=args, prog_name="pith", standalone_mode=False)
        return _whole_tree()(args=args, prog_name="pith", standalone_mode=False)
    except (typer.Abort, KeyboardInterrupt):
        _interrupted(args, reports)
    except typer.TyperException as exc:  # click's usage errors and the like
        _usage_error(exc)
    except Exception as exc:
        from pithauthor._cli.output import exit_on_error

        if reports is not None:
            reports.close()
        exit_on_error(exc)


def _reports() -> Any:
    from pithauthor._cli.output import Reports

    return Reports()


def _reporting(reports: Any) -> Any:
    """`pithauthor.progress.reporting(reports)`, or nothing to install."""
    if reports is None:
        from contextlib import nullcontext

        return nullcontext()
    from pithauthor.progress import reporting

    return reporting(reports)


@functools.cache  # the app never changes once built; a test process runs `pith` many times
def _whole_tree() -> Any:
    """The click command of the whole app. `app()` would do the same, but Typer rebuilds the
    tree on every call (50-130 ms, about 90% of an in-process `pith` run, and the test suite
    runs `pith` in-process hundreds of times); a process runs one command, so building it once
    changes nothing there. Typer's `app()` also installs its pretty-traceback hook, which never
    fires here: `main` turns every exception into one line."""
    return typer.main.get_command(whole_app())


@functools.cache  # the app never changes once built; a test process runs `pith` many times
def _root_only(keep: str | None = None) -> Any:
    """The click group of `pith` with every entry of the catalog present by its name and
    summary only, but `keep` (a top-level name), whose module is imported and registered
    whole: what `pith --help` lists, and what `pith KEEP ...` runs.

    Typer builds every option of every command before it can print any help or run one (230
    of them), and importing every command module was most of the rest. The root's
    own options are built by Typer as in the whole tree, and the listing shows each entry's
    `short_help`, which the whole tree takes from the same catalog, so the text is the same
    (tests/test_startup_imports.py compares them). The stubs are click commands made with
    Typer's own classes and put in place with click's `add_command`."""
    modules = [] if keep is None else [e.module for e in catalog.ENTRIES if e.name == keep]
    group = typer.main.get_command(_new_app(modules))
    built = dict(group.commands)  # type: ignore[attr-defined]
    group.commands.clear()  # type: ignore[attr-defined]
    for entry in catalog.ENTRIES:  # in the catalog's order, as the whole tree lists them
        group.add_command(built.get(entry.name) or _stub(entry))  # type: ignore[attr-defined]
    return group


def _stub(entry: catalog.Entry) -> Any:
    """A command or group with `entry`'s name and summary, no options and no subcommands: it
    is listed, never run (only `keep` is run from a names-only tree)."""
    cls = TyperGroup if entry.kind == "group" else TyperCommand
    return cls(name=entry.name, short_help=entry.summary, help=entry.summary)


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
    """`output.fail`, imported only on the way out: `pith --help` needs neither it nor
    `pithauthor.errors` (about 1 ms)."""
    from pithauthor._cli.output import fail

    fail(text, code)
