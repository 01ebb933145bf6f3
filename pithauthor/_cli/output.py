"""Printing for the CLI: data on stdout, messages on stderr."""

from __future__ import annotations

import os
import sys
import traceback
from collections.abc import Iterable
from typing import Any, NoReturn

from pithauthor.errors import EXIT_BUG, EXIT_INPUT, EXIT_OUTPUT, REPORT_BUGS, PithError
from pithauthor.fs import OUTPUT_ERRNOS, why_not_written


def data(text: str) -> None:
    """A line of data on stdout."""
    sys.stdout.write(text + "\n")


def data_lines(lines: Iterable[str]) -> None:
    """Lines of data on stdout, in one write (a page of 10,000 citations was 10,000 writes)."""
    taken = list(lines)
    if taken:
        sys.stdout.write("\n".join(taken) + "\n")  # one string made, not one more per line


def emit_json(obj: Any) -> None:
    """A JSON document on stdout (stable key order, UTF-8 kept)."""
    import json  # not at start-up: `pith --help` prints no JSON

    sys.stdout.write(json.dumps(obj, indent=2, ensure_ascii=False, sort_keys=False) + "\n")


def message(text: str) -> None:
    """A human message on stderr."""
    sys.stderr.write(text + "\n")


def warn(text: str) -> None:
    sys.stderr.write(f"pith: warning: {text}\n")


def at_terminal() -> bool:
    """Whether someone is there to answer a question: stdin and stderr are both terminals."""
    return all(getattr(s, "isatty", lambda: False)() for s in (sys.stdin, sys.stderr))


def ask(question: str) -> bool:
    """Ask a yes/no question on stderr (default no); end of input or Ctrl-C answers no."""
    import typer  # not at start-up: most commands never ask

    try:
        return bool(typer.confirm(question, default=False, err=True))
    except typer.Abort:
        return False


def error_line(text: str, hint: str | None = None) -> None:
    """The one line a failing command prints; the next step, when the error names one
    (errors.PithError.hint), ends that same line after `; next: ` -- bad input gets one line."""
    first = " ".join(str(text).split()) or "unknown error"
    step = " ".join(str(hint or "").split())
    tail = f"; next: {step}" if step else ""
    sys.stderr.write(f"pith: error: {first}{tail}\n")


def exit_on_error(exc: Exception) -> NoReturn:
    """End the process for an expected error raised by a command: its one line and its exit
    code. Typer's own errors are main.py's; this is the rest, shared with the entry point's
    fast path (`pith bib scan` answered before Typer is loaded), so both end alike."""
    if isinstance(exc, PithError):
        fail(str(exc), exc.exit_code, exc.hint)
    if isinstance(exc, OSError) and exc.errno in OUTPUT_ERRNOS:
        # a write outside pithauthor.fs (which raises OutputError itself): disk full, read-only
        fail(f"cannot write {exc.filename or 'a file'}: {why_not_written(exc)}", EXIT_OUTPUT)
    if _sqlite_cannot_write(exc):  # the outbox's database on a full disk or read-only folder
        fail(f"cannot write the outbox: {exc}", EXIT_OUTPUT)
    if isinstance(exc, OSError):
        where = f": {exc.filename}" if exc.filename else ""
        fail(f"{exc.strerror or exc}{where}", EXIT_INPUT)
    # Anything else is a bug: every expected failure is a PithError raised where it happens
    # (a reader maps its RecursionError, UnicodeError, ValueError at the source). Exit 70, not
    # 2: a script must not take pith's own fault for its bad input.
    fail(
        f"internal error ({type(exc).__name__}): this is a bug in pith, not in your input; "
        f"please report it, {REPORT_BUGS}, with this line and what PITH_DEBUG=1 adds",
        EXIT_BUG,
    )


# SQLite's primary result codes for a database that cannot be written: SQLITE_READONLY,
# SQLITE_IOERR, SQLITE_FULL, SQLITE_CANTOPEN
_SQLITE_CANNOT_WRITE = {8, 10, 13, 14}


def _sqlite_cannot_write(exc: Exception) -> bool:
    """Whether `exc` is SQLite refusing to write (sqlite3 is not imported here for this:
    `pith --help` does not load it)."""
    code = getattr(exc, "sqlite_errorcode", None)
    return (
        type(exc).__module__ == "sqlite3"
        and isinstance(code, int)
        and (code & 0xFF in _SQLITE_CANNOT_WRITE)
    )


def fail(text: str, code: int, hint: str | None = None) -> NoReturn:
    """Print the one error line (and, with PITH_DEBUG=1, the traceback first), ending with the
    next step when the error names one; then exit."""
    if os.environ.get("PITH_DEBUG") == "1" and sys.exc_info()[0] is not None:
        traceback.print_exc(file=sys.stderr)
    error_line(text, hint)
    sys.exit(code)


class StepLines:
    """Shows the steps of a long command (`pithauthor.latex.injection.Step`: `text`, and `seconds`
    once done) on stderr: one plain line per finished step, `building (pdflatex, latexmk) … 4.1 s`;
    on a terminal also a spinner with the time so far while a step runs (rich, transient: the
    spinner's line is erased, the finished line stays). Nothing goes to stdout. A step that
    fails prints nothing: the command's error is then the one line after the finished steps."""

    def __init__(self) -> None:
        # a spinner only where someone watches: a log or a pipe gets the plain lines alone
        self.live = bool(getattr(sys.stderr, "isatty", lambda: False)())
        self._spinner: Any = None

    def __enter__(self) -> StepLines:
        return self

    def __call__(self, step: Any) -> None:
        self._stop()
        if step.seconds is None:
            if self.live:
                self._start(step.text)
            return
        message(f"{step.text} … {step.seconds:.1f} s")

    def _start(self, text: str) -> None:
        # rich only when a spinner is shown: `pith --help` must not load it
        from rich.console import Console
        from rich.progress import Progress, SpinnerColumn, TextColumn, TimeElapsedColumn

        self._spinner = Progress(
            # the time before the text: a long step's text may be cut at the terminal's width
            SpinnerColumn(),
            TimeElapsedColumn(),
            TextColumn("{task.description} …"),
            console=Console(stderr=True),
            transient=True,
            refresh_per_second=5,  # enough to see it move; less output in a terminal's log
            # what the command prints stays where it goes (stdout is data, for scripts)
            redirect_stdout=False,
            redirect_stderr=False,
        )
        self._spinner.add_task(text, total=None)
        self._spinner.start()

    def _stop(self) -> None:
        if self._spinner is not None:
            self._spinner.stop()
            self._spinner = None

    def __exit__(self, *exc: object) -> None:
        self._stop()  # also on an error or Ctrl-C: the terminal is left clean for the message


class Reports:
    """The `pith` command's reporter (`pithauthor.progress`), installed for every command by
    `main.main`. A request being retried, when its retries may wait a second or more in all,
    is one line on stderr, once per server and stretch of retries (`pith: the registry at …
    did not answer (HTTP 503): trying again, attempt 2 of 6, for at most 15 s (Ctrl-C to
    stop)`), on a terminal or not: a log shows why a command waited. A counted task
    (`Advance`: references looked up, events submitted) is a progress bar on stderr when it
    is a terminal, and nothing otherwise. Called from worker threads: one lock."""

    # a second retry line for the same server only after this long: eight parallel requests
    # meeting one 503 are one line, not eight
    QUIET_SECONDS = 30.0
    # retries that may wait this long in all are announced; shorter ones pass unremarked (a
    # check of two quick tries, or tests that skip the back-off)
    NOTICED_SECONDS = 1.0

    def __init__(self) -> None:
        import threading

        self.live = bool(getattr(sys.stderr, "isatty", lambda: False)())
        self._lock = threading.Lock()
        self._told: dict[str, float] = {}
        self._bar: Any = None
        self._task: Any = None
        self._what = ""

    def __call__(self, event: Any) -> None:
        with self._lock:
            if hasattr(event, "reason"):
                self._retrying(event)
            elif self.live:
                self._advance(event)

    def _retrying(self, event: Any) -> None:
        import time

        if event.left < self.NOTICED_SECONDS:  # retries that cannot hold the command a second
            return
        now = time.monotonic()
        if now - self._told.get(event.what, -self.QUIET_SECONDS) < self.QUIET_SECONDS:
            return
        self._told[event.what] = now
        message(
            f"pith: {event.what} did not answer ({event.reason}): trying again, attempt "
            f"{event.attempt} of {event.attempts}, for at most {_seconds(event.left)} "
            "(Ctrl-C to stop)"
        )

    def _advance(self, event: Any) -> None:
        if self._bar is not None and self._what != event.what:
            self._stop()  # another task: a bar of its own
        if self._bar is None:
            self._what = event.what
            from rich.console import Console
            from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn

            self._bar = Progress(
                TextColumn("{task.description}"),
                BarColumn(),
                MofNCompleteColumn(),
                console=Console(stderr=True),
                transient=True,
                redirect_stdout=False,
                redirect_stderr=False,
            )
            self._task = self._bar.add_task(event.what, total=event.total)
            self._bar.start()
        self._bar.update(self._task, completed=event.done, total=event.total)
        if event.total is not None and event.done >= event.total:
            self._stop()

    def _stop(self) -> None:
        if self._bar is not None:
            self._bar.stop()
            self._bar = None

    def close(self) -> None:
        """Erase a bar still shown (an error or Ctrl-C ended the task)."""
        with self._lock:
            self._stop()


def _seconds(value: float) -> str:
    return f"{value:.1f} s" if value < 10 else f"{value:.0f} s"


def interrupted(args: list[str]) -> NoReturn:
    """The line for Ctrl-C (exit 130): what pith writes is atomic and the outbox durable, so
    nothing was lost, and the same command goes on from where this one stopped."""
    import shlex

    command = shlex.join(["pith", *args])
    if len(command) > 100:  # the command's names (`latex arxiv`), not a screenful of arguments
        words = []
        for arg in args[:3]:
            if not arg.replace("-", "").isalpha() or not arg.islower() or arg.startswith("-"):
                break
            words.append(arg)
        command = " ".join(["pith", *words, "…"])
    sys.stderr.write(f"\npith: interrupted: nothing was lost; run `{command}` again to go on\n")
    sys.exit(130)
