"""Printing for the CLI: data on stdout, messages on stderr."""

from __future__ import annotations

import sys
from typing import Any


def data(text: str) -> None:
    """A line of data on stdout."""
    sys.stdout.write(text + "\n")


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
