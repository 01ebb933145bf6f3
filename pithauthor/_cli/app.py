"""One way to make a Typer app, so every command group looks and starts the same.

Plain help (no rich markup) keeps `pith --help` from importing rich; locals are never shown in
tracebacks (they could hold secrets).
"""

from __future__ import annotations

from typing import Any

import typer


def new_app(help: str, **kwargs: Any) -> typer.Typer:
    """A Typer app with pithauthor's settings."""
    settings: dict[str, Any] = {
        "no_args_is_help": True,
        "add_completion": False,
        "rich_markup_mode": None,
        "pretty_exceptions_show_locals": False,
        "context_settings": {"help_option_names": ["-h", "--help"]},
    }
    settings.update(kwargs)
    return typer.Typer(help=help, **settings)
