"""The `pith` application and the one place where errors become exit codes."""

from __future__ import annotations

import copy
import functools
import os
import sys
from typing import Any, NoReturn

import typer
import typer.main

from pithauthor._cli import (
    auth_cmd,
    badge_cmd,
    bib_cmd,
    cite_cmd,
    claim_cmd,
    completion_cmd,
    doctor_cmd,
    fetch_cmd,
    keys_cmd,
    latex_cmd,
    number_cmd,
    outbox_cmd,
    registry_cmd,
    replicate_cmd,
    status_cmd,
    submit_cmd,
    verify_cmd,
    withdraw_cmd,
)
from pithauthor._cli.app import name_values, new_app
from pithauthor._cli.entry import COMPLETE_ENV
from pithauthor._cli.examples import add_examples
from pithauthor._cli.output import exit_on_error, fail
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


COMMANDS = (
    completion_cmd,
    keys_cmd,
    doctor_cmd,
    number_cmd,
    verify_cmd,
    bib_cmd,
    latex_cmd,
    badge_cmd,
    claim_cmd,
    cite_cmd,
    replicate_cmd,
    withdraw_cmd,
    submit_cmd,
    fetch_cmd,
    status_cmd,
    outbox_cmd,
    auth_cmd,
    registry_cmd,
)
"""Every command module (`_cli/*_cmd.py`, one per command or group): each adds itself with
`register(app)`, the one way a command joins `pith`. Help lists commands, then groups, each in
this order."""

for command in COMMANDS:
    command.register(app)
name_values(app)
add_examples(app)


def main(argv: list[str] | None = None) -> None:
    """Console entry point: run the app; turn every expected error into one line and a code.

    A usage error is one line naming the fault and where help is; `PITH_DEBUG=1` adds the
    traceback on stderr but never changes the exit code.
    """
    args = sys.argv[1:] if argv is None else argv
    try:
        # a shell asking for completions runs a bare `pith` too (the words are in the
        # environment): it needs the whole tree, every option's completer
        if args in ([], ["--help"], ["-h"]) and COMPLETE_ENV not in os.environ:
            # the root's help (and a bare `pith`) from a tree without the commands' options
            code = _root_only()(args=args, prog_name="pith", standalone_mode=False)
        elif args and args[0] in _entry_names() and COMPLETE_ENV not in os.environ:
            # `pith bib scan ...`: only the `bib` group is built in full (shell completion,
            # which walks the whole tree, and anything else take the whole app)
            code = _root_only(args[0])(args=args, prog_name="pith", standalone_mode=False)
        else:
            code = _whole_tree()(args=args, prog_name="pith", standalone_mode=False)
    except typer.Abort:
        fail("interrupted", 130)
    except KeyboardInterrupt:
        fail("interrupted", 130)
    except typer.TyperException as exc:  # click's usage errors and the like
        _usage_error(exc)
    except Exception as exc:
        exit_on_error(exc)
    sys.exit(code if isinstance(code, int) else 0)


def _entry_name(entry: Any) -> str | None:
    """The name a registered command or group has on the command line (as Typer names it)."""
    name = getattr(entry, "name", None)
    if isinstance(name, str) and name:
        return name
    instance = getattr(entry, "typer_instance", None)
    if instance is not None:  # a group: named where it was added, else by its own Typer
        own = instance.info.name
        return own if isinstance(own, str) and own else None
    callback = getattr(entry, "callback", None)
    return callback.__name__.replace("_", "-") if callable(callback) else None


@functools.cache
def _entry_names() -> frozenset[str]:
    entries = [*app.registered_commands, *app.registered_groups]
    return frozenset(name for name in map(_entry_name, entries) if name)


@functools.cache  # the app never changes once built; a test process runs `pith` many times
def _whole_tree() -> Any:
    """The click command of the whole app. `app()` would do the same, but Typer rebuilds the
    tree on every call (50-130 ms, about 90% of an in-process `pith` run, and the test suite
    runs `pith` in-process hundreds of times); a process runs one command, so building it once
    changes nothing there. Typer's `app()` also installs its pretty-traceback hook, which never
    fires here: `main` turns every exception into one line."""
    return typer.main.get_command(app)


@functools.cache  # the app never changes once built; a test process runs `pith` many times
def _root_only(keep: str | None = None) -> Any:
    """The click group of `pith` with every command and group present by its name and help
    only, but `keep` (a top-level name), which is built whole: what `pith --help` lists, and
    what `pith KEEP ...` runs. Typer builds every option of every command before it can print
    any help or run one (230 of them, half of what `pith --help` cost beyond `import typer`,
    issue 27); the root's own options and each entry's short help are built as in the full
    tree, so the text is the same (tests/test_startup_imports.py compares them)."""

    def stub(callback: Any) -> Any:
        """A callback without options that has `callback`'s name and help; it never runs."""

        def named() -> None:
            raise AssertionError("the root-help tree runs no command")

        named.__name__, named.__doc__ = callback.__name__, callback.__doc__
        return named

    root = copy.copy(app)
    root.registered_commands = []
    for command in app.registered_commands:
        if keep is not None and _entry_name(command) == keep:
            root.registered_commands.append(command)
            continue
        entry = copy.copy(command)
        entry.callback = stub(command.callback) if command.callback else None
        root.registered_commands.append(entry)
    root.registered_groups = []
    for group in app.registered_groups:
        if keep is not None and _entry_name(group) == keep:
            root.registered_groups.append(group)
            continue
        shallow = copy.copy(group)  # a group keeps its help and callback, and no commands
        if group.typer_instance is not None:
            shallow.typer_instance = copy.copy(group.typer_instance)
            shallow.typer_instance.registered_commands = []
            shallow.typer_instance.registered_groups = []
        root.registered_groups.append(shallow)
    return typer.main.get_command(root)


def _usage_error(exc: typer.TyperException) -> NoReturn:
    """One line for a usage error (exit 2), or the help a bare command group asks for."""
    ctx = getattr(exc, "ctx", None)
    if type(exc).__name__ == "NoArgsIsHelpError" and ctx is not None:
        sys.stdout.write(ctx.get_help() + "\n")
        sys.exit(0)
    format_message = getattr(exc, "format_message", None)
    text = format_message() if callable(format_message) else str(exc)
    hint = f" (see '{ctx.command_path} --help')" if ctx is not None else ""
    fail(f"{text.rstrip('.')}{hint}", int(getattr(exc, "exit_code", 2)))
