"""The console entry point. `pith --version` and the plain forms of `pith bib scan`, `pith cite`
and `pith status` answer before the command tree (and Typer) is loaded; everything else goes to
the Typer application in `pithauthor._cli.main`.

Why `bib scan`: importing Typer and pydantic takes longer than the whole scan of a 300-entry
bibliography. The plain forms (`bib_cmd.plain_form`: files, --json, --only-cited,
--relationship, --map) run the same code as the Typer command and end the same way on an
error (`output.exit_on_error`); anything else, --help or a mistake included, is Typer's
(tests/cli/test_bib_scan_fast_path.py runs many forms both ways).

Why `cite`: Typer and pydantic were about 0.3 s of CPU of a warm 0.7 s `pith cite refs.bib` of
300 entries; its plain forms (`cite_cmd.plain_cite_form`: files, --from and the
options of `cite_cmd.PLAIN_OPTIONS`) run `cite_cmd.run` as the Typer command does
(tests/cli/test_cite_fast_path.py).

Why `status`: a Typer command with a text argument loads pydantic, and Typer, click
and pydantic cost more CPU than a second look at a 10,000-event paper (`status_page`).
"""

from __future__ import annotations

import gc
import os
import sys

COMPLETE_ENV = "_PITH_COMPLETE"
"""Set by the script of `pith completion SHELL` (completion_cmd) when the shell asks."""


def main() -> None:
    # httpx (0.28 and later) imports its own command-line client, `httpx._main`, on `import
    # httpx` whenever click, rich and pygments are installed (Typer brings them): about 0.1 s
    # of CPU, a sixth of a warm `pith cite`, for a client pith never runs. Marked
    # absent before httpx first loads, httpx defines its stand-in `httpx.main` instead. Done
    # here, in the program that owns the process, never in the library: a script importing
    # pithauthor keeps the httpx it expects.
    if "httpx" not in sys.modules:
        sys.modules.setdefault("httpx._main", None)  # type: ignore[arg-type]
    args = sys.argv[1:]
    if args == ["--version"]:
        from pithauthor._version import __version__

        sys.stdout.write(f"pith {__version__}\n")
        return
    if args[:2] == ["bib", "scan"] and COMPLETE_ENV not in os.environ:
        plain_bib_scan(args[2:])  # returns only when the form is not plain
    if args[:1] == ["cite"] and COMPLETE_ENV not in os.environ:
        plain_cite(args[1:])  # returns only when the form is not plain
    if args[:1] == ["status"] and COMPLETE_ENV not in os.environ:
        plain_status(args[1:])  # the same
    from pithauthor._cli.main import main as run

    run()


def plain_bib_scan(args: list[str]) -> None:
    """`pith bib scan ARGS` without Typer when ARGS is a plain form: it exits (SystemExit with
    the command's exit code); else it returns, having done nothing."""
    from pithauthor.collector import pause_for_the_process, resume_collector

    # A scan asks no network and leaves a bounded few cycles (about 40 objects at exit,
    # whether the file holds 300 entries or 5,000): the collector's passes over what the
    # imports made, and the final collections over the whole heap, were about 11 ms of CPU
    # of a 300-entry scan's 95 (`leave_heap_to_the_system` below). Typer's forms get it back.
    pause_for_the_process()
    from pithauthor._cli import bib_cmd
    from pithauthor._cli.output import exit_on_error, interrupted

    parameters = bib_cmd.plain_form(args)
    if parameters is None:
        resume_collector()
        return
    try:
        code = bib_cmd.run_plain(**parameters)
    except KeyboardInterrupt:  # as main.main ends it
        interrupted(["bib", "scan", *args])
    except Exception as exc:
        exit_on_error(exc)
    leave_heap_to_the_system()
    sys.exit(code)


def plain_cite(args: list[str]) -> None:
    """`pith cite ARGS` without Typer when ARGS is a plain form (`cite_cmd.plain_cite_form`):
    it exits (SystemExit with the command's exit code), as `main.main` ends the Typer command
    (the home's warnings first, the progress reporter, Ctrl-C and errors alike); else it
    returns, having done nothing."""
    from pithauthor.collector import pause_until_network, resume_collector

    pause_until_network()  # the command's imports and work (until a request): see there
    from pithauthor._cli import cite_cmd
    from pithauthor._cli.output import Reports, exit_on_error, interrupted, warn
    from pithauthor.fs import report_home_warnings
    from pithauthor.progress import reporting

    parameters = cite_cmd.plain_cite_form(args)
    if parameters is None:
        resume_collector()  # Typer's, as any command
        return
    report_home_warnings(warn)
    reports = Reports()
    try:
        with reporting(reports):
            ok = cite_cmd.run(**parameters)
    except KeyboardInterrupt:  # as main.main ends it
        reports.close()  # a progress bar erased before the line
        interrupted(["cite", *args])
    except Exception as exc:
        reports.close()
        exit_on_error(exc)
    finally:
        reports.close()
    leave_heap_to_the_system()
    sys.exit(0 if ok else 1)


def leave_heap_to_the_system() -> None:
    """Before a command that has finished exits: the objects alive now are left for the
    operating system to reclaim, not freed one by one by the interpreter's last collections.

    After a warm `pith cite refs.bib` of 300 entries the interpreter spent about 36 ms of CPU
    between the last line and the exit (`pith bib scan`: 20 ms), most of it the final
    collections walking and freeing the whole heap, which the process's exit returns anyway.
    `gc.freeze` moves every tracked object out of the collector's reach, so those
    collections skip them (about 17 ms left). Only a finalizer of an object in a reference
    cycle is skipped by this (Python never promised one at exit); all else ends as before:
    atexit functions, the standard streams flushed, objects freed by reference counting as
    the modules are cleared. So it runs only once the command has closed what it opened: the
    outbox, the record cache (closed by the command, not left to the collector), the files it
    wrote (tests/cli/test_cite_fast_path.py: no database of the home is left open)."""
    gc.freeze()


def plain_status(args: list[str]) -> None:
    """`pith status ARGS` without Typer when ARGS is a plain form (`status_page.plain_form`):
    it exits as `main.main` ends a command (the PITH_HOME warning, retries reported on stderr,
    every error one line and its code); else it returns, having done nothing."""
    from pithauthor.collector import pause_for_the_process, resume_collector

    pause_for_the_process()  # to the end of the process: see there; Typer's forms get it back
    from pithauthor._cli import status_page

    parameters = status_page.plain_form(args, dict(os.environ))
    if parameters is None:
        resume_collector()
        return
    from pithauthor._cli.output import Reports, exit_on_error, interrupted, warn
    from pithauthor.fs import report_home_warnings
    from pithauthor.progress import reporting

    report_home_warnings(warn)
    reports = Reports()
    try:
        with reporting(reports):
            status_page.show_status(**parameters)
    except KeyboardInterrupt:  # as main.main ends it
        reports.close()
        interrupted(["status", *args])
    except Exception as exc:
        reports.close()  # a progress line erased before the error's
        exit_on_error(exc)
    reports.close()
    sys.exit(0)
