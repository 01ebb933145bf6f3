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


def error_line(text: str) -> None:
    """The one line a failing command prints."""
    first = " ".join(str(text).split()) or "unknown error"
    sys.stderr.write(f"pith: error: {first}\n")


def next_step_line(text: str) -> None:
    """The one line after an error that says what to do next (errors.PithError.hint)."""
    step = " ".join(str(text).split())
    if step:
        sys.stderr.write(f"pith: next: {step}\n")
