"""One way to make a Typer app, so every command group looks and starts the same.

Plain help (no rich markup) keeps `pith --help` from importing rich; locals are never shown in
tracebacks (they could hold secrets).
"""

from __future__ import annotations

import inspect
from types import CodeType
from typing import Any

import typer
from typer.core import TyperArgument
from typer.models import ArgumentInfo, OptionInfo

# compiled annotation strings, by their text (see _resolve_annotations)
_COMPILED: dict[str, CodeType] = {}
# what an option's value is called in help when its declaration names nothing better
_METAVARS = {"int": "N", "float": "SECONDS"}


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


def name_values(app: typer.Typer) -> None:
    """Give every option and argument of `app` (and its groups) a metavar such as `NAME` or
    `N` where its declaration has none, so help never shows Python types (`<str>`)."""
    # Typer prints `NAME <str>` for arguments even with a metavar: the name says it all.
    TyperArgument.display_type_rich = lambda self, ctx: None  # type: ignore[method-assign]
    for command in app.registered_commands:
        if command.callback is not None:
            _name_parameters(command.callback)
    for group in app.registered_groups:
        if group.typer_instance is not None:
            name_values(group.typer_instance)


def _resolve_annotations(callback: Any) -> None:
    """Replace the callback's string annotations (`from __future__ import annotations`) by the
    objects they name, once, in the callback's module (as `typing.get_type_hints` would).

    Typer evaluates every string annotation twice per command as it builds the command tree
    (`inspect.signature(eval_str=True)`, then `get_type_hints`), compiling each anew: about 1,100
    compile-and-evals for `pith`, a third of `pith --help` beyond `import typer`.
    The same few strings (`bool`, `Path | None`) recur, so each is compiled once here."""
    annotations = getattr(callback, "__annotations__", None) or {}
    for key, value in annotations.items():
        if not isinstance(value, str):
            continue
        code = _COMPILED.get(value)
        if code is None:
            code = _COMPILED[value] = compile(value, "<annotation>", "eval")
        try:
            annotations[key] = eval(code, callback.__globals__)  # our own source, our module
        except Exception:  # left as it was: Typer then reports it always did
            continue


def _name_parameters(callback: Any) -> None:
    _resolve_annotations(callback)
    for name, info, annotation in defaults(callback):
        if not isinstance(info, OptionInfo | ArgumentInfo) or info.metavar is not None:
            continue
        annotation = str(annotation)
        if "bool" in annotation or "Literal" in annotation:
            continue  # a flag, or choices Typer lists itself
        base = next((v for k, v in _METAVARS.items() if k in annotation), name.upper())
        info.metavar = base + ("..." if "list[" in annotation else "")


def defaults(callback: Any) -> list[tuple[str, Any, Any]]:
    """(name, default, annotation) of each parameter of `callback` that has a default, in
    order: what `inspect.signature` says, read from the function itself. `inspect.signature`
    of the 38 command callbacks was most of `name_values`, and `name_values` a third of what
    `pith --help` costs beyond `import typer`; tests/test_startup_imports.py compares
    the two on every callback. A callback that is not a plain function asks `inspect`."""
    code = getattr(callback, "__code__", None)
    if (
        not inspect.isfunction(callback)
        or code is None
        or hasattr(callback, "__wrapped__")
        or hasattr(callback, "__signature__")
    ):
        return [
            (name, p.default, p.annotation)
            for name, p in inspect.signature(callback).parameters.items()
            if p.default is not p.empty
        ]
    annotations = callback.__annotations__
    positional = code.co_varnames[: code.co_argcount]
    given = callback.__defaults__ or ()
    found = [
        (name, value, annotations.get(name, inspect.Parameter.empty))
        for name, value in zip(positional[len(positional) - len(given) :], given, strict=True)
    ]
    keywords = code.co_varnames[code.co_argcount : code.co_argcount + code.co_kwonlyargcount]
    kwdefaults = callback.__kwdefaults__ or {}
    found += [
        (name, kwdefaults[name], annotations.get(name, inspect.Parameter.empty))
        for name in keywords
        if name in kwdefaults
    ]
    return found
