"""The plain forms of `pith status`, which pith's entry point answers before Typer is loaded
(Typer, click and pydantic cost more CPU than a second look at a 10,000-event paper),
print and exit exactly as the Typer command does: each form runs both ways in this process
against a real local registry on loopback, and stdout, stderr and the exit code must be the
same. Every other form is left to Typer untouched."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from support.cli import run_in_process
from support.registry import SUBJECT, citations, start_server

from pithauthor._cli import entry, status_page
from pithauthor.registry.local.server import RegistryServer

NUMBER = SUBJECT.pith_number.full


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RegistryServer]:
    registry = start_server(tmp_path_factory.mktemp("registry"))
    for event in citations(12):  # more than a text page lists: --all lists two more
        registry.store.insert_event(SUBJECT.pith_number.body, event, event["created_at"])  # type: ignore[arg-type]
    try:
        yield registry
    finally:
        registry.stop()


# Each form as `pith status` reads it: {url} is the local registry's, {missing} a file that
# does not exist.
PLAIN = [
    [NUMBER, "--registry", "{url}", "--trust-local-registry"],
    [NUMBER, "--registry", "{url}", "--trust-local-registry", "--json"],
    [NUMBER, "--registry", "{url}", "--trust-local-registry", "--all"],
    ["--all", "--json", "--trust-local-registry", "--registry={url}", NUMBER],
    ["--json", "--trust-local-registry", "--registry={url}", NUMBER],
    ["2302.12445", "--registry", "{url}", "--trust-local-registry"],  # an arXiv id, resolved
    [SUBJECT.pith_number.body, "--registry", "{url}", "--trust-local-registry"],
    ["pith:2024:AAAAAAAAAAAAAAAAAAAAAAAAAA", "--registry", "{url}", "--trust-local-registry"],
    ["not-a-number", "--registry", "{url}", "--trust-local-registry"],
    [NUMBER, "--registry", "{url}"],  # its key is not trusted: refused
    [NUMBER, "--registry", "{url}", "--trust-manifest", "{missing}"],
    [NUMBER, "--registry", "ftp://example.invalid", "--json"],  # refused before any request
]

# Forms the entry point leaves to Typer: help, mistakes, and what Typer might read alike but
# the fast path does not try to (`--`, a repeated option, a value that looks like an option).
TYPER = [
    [],
    ["--help"],
    [NUMBER, "-h"],
    [NUMBER, "--help", "--json"],
    [NUMBER, NUMBER],
    [NUMBER, "--json", "--json"],
    [NUMBER, "--json=1"],
    [NUMBER, "--all", "--all"],
    [NUMBER, "--all=yes"],
    [NUMBER, "--nope"],
    [NUMBER, "--registry"],
    [NUMBER, "--registry", "--json"],
    [NUMBER, "--registry="],
    [NUMBER, "--registry", "{url}", "--registry", "{url}"],
    ["--", NUMBER],
    [NUMBER, ""],
    [NUMBER + "\udcff"],
    ["--json"],
]


def _argv(form: list[str], server: RegistryServer, tmp_path: Path) -> list[str]:
    where = {"url": server.url, "missing": str(tmp_path / "missing.json")}
    return ["status", *(word.format(**where) for word in form)]


def _fast_path_only(args: list[str]) -> None:
    """The entry point's fast path alone: it must answer (exit), never fall through."""
    entry.plain_status(args[1:])
    raise AssertionError(f"the fast path did not answer {args}")


def _through_the_entry_point(monkeypatch: pytest.MonkeyPatch) -> Callable[[list[str]], None]:
    def run(args: list[str]) -> None:
        monkeypatch.setattr(sys, "argv", ["pith", *args])
        entry.main()

    return run


def _same(
    args: list[str], through: Callable[[list[str]], object]
) -> subprocess.CompletedProcess[str]:
    typer_run = run_in_process(args)
    other = run_in_process(args, through=through)
    assert (other.returncode, other.stdout, other.stderr) == (
        typer_run.returncode,
        typer_run.stdout,
        typer_run.stderr,
    ), args
    return typer_run


@pytest.mark.parametrize("form", PLAIN, ids=[" ".join(f)[-60:] for f in PLAIN])
def test_a_plain_form_prints_and_exits_as_the_typer_command_does(
    form: list[str], server: RegistryServer, tmp_path: Path
) -> None:
    args = _argv(form, server, tmp_path)
    assert status_page.plain_form(args[1:], {}) is not None
    done = _same(args, _fast_path_only)
    assert done.stdout or done.stderr  # it ran: a page, JSON or an error


def test_the_plain_forms_cover_success_failure_and_every_option(
    server: RegistryServer, tmp_path: Path
) -> None:
    """The forms above are worth comparing: some succeed, some fail, with every option."""
    codes = {run_in_process(_argv(form, server, tmp_path)).returncode for form in PLAIN}
    assert 0 in codes and len(codes) >= 3
    words = {word.split("=")[0] for form in PLAIN for word in form}
    assert set(status_page.PLAIN_OPTIONS) <= words


@pytest.mark.parametrize("form", TYPER, ids=[" ".join(f)[-60:] or "none" for f in TYPER])
def test_every_other_form_is_left_to_typer(
    form: list[str], server: RegistryServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    args = _argv(form, server, tmp_path)
    assert status_page.plain_form(args[1:], {}) is None
    _same(args, _through_the_entry_point(monkeypatch))


def test_the_trust_local_variable_leaves_the_form_to_typer(
    server: RegistryServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """PITH_TRUST_LOCAL_REGISTRY is read by Typer (as click reads a flag's variable): with it
    set, the entry point does not answer, and the page is Typer's."""
    args = _argv([NUMBER, "--registry", "{url}"], server, tmp_path)
    assert status_page.plain_form(args[1:], {"PITH_TRUST_LOCAL_REGISTRY": "1"}) is None
    monkeypatch.setenv("PITH_TRUST_LOCAL_REGISTRY", "1")
    done = _same(args, _through_the_entry_point(monkeypatch))
    assert done.returncode == 0 and NUMBER in done.stdout


def test_the_entry_point_answers_a_plain_form_itself(
    server: RegistryServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Through `pith`'s real entry point (sys.argv), a plain form is the fast path's: the same
    output, and the Typer application is never asked."""
    from pithauthor._cli import main

    def no_typer(argv: list[str] | None = None) -> None:
        raise AssertionError("Typer was asked")

    args = _argv(PLAIN[1], server, tmp_path)
    expected = run_in_process(args)
    assert expected.returncode == 0, expected.stderr
    monkeypatch.setattr(main, "main", no_typer)
    done = run_in_process(args, through=_through_the_entry_point(monkeypatch))
    assert (done.returncode, done.stdout, done.stderr) == (
        expected.returncode,
        expected.stdout,
        expected.stderr,
    )


def test_the_plain_options_are_the_typer_commands_own() -> None:
    """PLAIN_OPTIONS says what the Typer command declares: each option's name (its only one),
    its parameter, flag or value, repeatable or not; no callback changes it; the one variable
    (PITH_TRUST_LOCAL_REGISTRY's) is the fast path's; and PAPER is the one argument."""
    import click
    import typer.main

    from pithauthor._cli import main, options

    assert status_page.TRUST_LOCAL_ENV == options.TRUST_LOCAL_ENV
    root = typer.main.get_command(main.app)
    status = root.get_command(click.Context(root, info_name="pith"), "status")  # type: ignore[attr-defined]
    options_ = [p for p in status.params if p.param_type_name == "option"]
    by_opt = {opt: p for p in options_ for opt in (*p.opts, *p.secondary_opts)}
    assert set(by_opt) == set(status_page.PLAIN_OPTIONS)  # --help is Typer's own
    for name, (parameter, kind) in status_page.PLAIN_OPTIONS.items():
        param = by_opt[name]
        assert param.opts == [name] and param.secondary_opts == [], name
        assert param.name == parameter, name
        assert param.is_flag == (kind == status_page.FLAG), name
        assert param.multiple == (kind == status_page.MANY), name
        assert not param.default, name  # None, False or []: what plain_form starts from
        envvar = status_page.TRUST_LOCAL_ENV if name == "--trust-local-registry" else None
        assert param.envvar == envvar and param.callback is None and not param.required, name
        assert param.nargs == 1 and not param.is_eager and not param.prompt, name
    arguments = [p for p in status.params if p.param_type_name == "argument"]
    assert [(a.name, a.nargs, a.required) for a in arguments] == [("ref", 1, True)]
