"""The plain forms of `pith cite` (bibliography files, --from and cite_cmd.PLAIN_OPTIONS), which
pith's entry point answers before Typer is loaded (Typer and pydantic were about 0.3 s
of CPU of a warm `pith cite refs.bib`), sign, store, print and exit exactly as the Typer command
does: each form runs both ways in this process, against the local registry on loopback, from
the same copy of the author's home and at the same signing time, and stdout, stderr, the exit
code and what the outbox and --out file then hold must be the same. Every other form is left
to Typer untouched."""

from __future__ import annotations

import shutil
import sqlite3
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from support.cite import CITING, write_bib
from support.cli import run_in_process

from pithauthor._cli import cite_cmd, entry

SIGNED_AT = "2026-12-06T12:00:00Z"


@pytest.fixture
def world(
    tmp_path: Path,
    isolated_home: Path,
    cite_registry: dict[str, Any],
    cite_author: str,
    monkeypatch: pytest.MonkeyPatch,
) -> dict[str, str]:
    """The words a form may name, by name; one signing time for every run."""
    monkeypatch.setattr("pithauthor.bibliography.cite.utc_now", lambda: SIGNED_AT)
    # `--to` signs through `sign_citation`, which reads the clock itself: two runs a second
    # apart signed two different events (the `--to` form failed about one run in two)
    monkeypatch.setattr("pithauthor.sign.utc_now", lambda: SIGNED_AT)
    bib = write_bib(tmp_path)
    good = tmp_path / "good.bib"
    good.write_text(
        "@misc{b, title={B}, eprint={2101.99903}, archivePrefix={arXiv}}\n"
        "@misc{c, title={C}, doi={10.48550/arXiv.2101.99904}}\n",
        "utf-8",
    )
    tex = tmp_path / "main.tex"
    tex.write_text("\\cite{real,byurl}\n", "utf-8")
    return {
        "bib": str(bib),
        "good": str(good),
        "tex": str(tex),
        "missing": str(tmp_path / "absent.bib"),
        "out": str(tmp_path / "signed.jsonl"),
        "url": cite_registry["url"],
        "manifest": cite_registry["manifest"],
        "home": str(isolated_home),
        "run_home": str(tmp_path / "run-home"),
    }


WHERE = ["--from", CITING, "--registry", "{url}", "--trust-manifest", "{manifest}"]

# Each form as `pith cite` reads it: names in braces are the fixture's words.
PLAIN = [
    ["{bib}", *WHERE],
    ["{bib}", *WHERE, "--json"],
    ["{good}", *WHERE, "--yes"],
    ["{good}", *WHERE, "--json", "--yes", "--relationship", "extends", "--map", "b=uses_method"],
    ["{bib}", "--map=real=supports", "--map", "ghost=cites", *WHERE],
    ["{bib}", *WHERE, "--only-cited", "{tex}"],
    ["{good}", *WHERE, "--out", "{out}"],
    ["{good}", "{good}", *WHERE],
    ["{good}", "--from", CITING, "--registry", "{url}", "--trust-local-registry"],
    ["{good}", *WHERE, "--key", "ada", "--relationship=Supports"],
    ["{good}", *WHERE, "--key", "nobody"],
    ["{good}", *WHERE, "--relationship", "likes"],
    ["{good}", *WHERE, "--map", "nokey"],
    ["{missing}", *WHERE],
    ["{good}", "--from", "2101.00000", "--registry", "{url}", "--trust-manifest", "{manifest}"],
    ["{good}", "--from", "not a paper", "--registry", "{url}"],
    ["{good}", "--from", CITING, "--registry", "{url}"],  # its key not trusted
    ["{good}", *WHERE, "--submit"],  # no terminal and no --yes: refused
    ["{good}", *WHERE, "--offline"],
    ["{good}", *WHERE, "--passphrase-file", "{missing}"],
]

# Forms the entry point leaves to Typer: --to, help, --lookup, short names, --parallel, mistakes.
TYPER = [
    ["--to", "2101.99903", *WHERE],
    ["{good}", "--help"],
    ["{good}", *WHERE, "-y"],
    ["{good}", *WHERE, "--parallel", "2"],
    ["{good}", *WHERE, "--lookup", "--offline"],
    ["{good}", *WHERE, "--write-back"],
    ["{good}", "--registry", "{url}"],  # no --from
    ["{good}", *WHERE, "--from", CITING],
    ["{good}", *WHERE, "--json=1"],
    ["{good}", *WHERE, "--"],
    ["{good}", *WHERE, "--relationship"],
    ["{good}", *WHERE, ""],
    [*WHERE],
]


def _argv(form: list[str], world: dict[str, str]) -> list[str]:
    return ["cite", *(word.format(**world) for word in form)]


def _fast_path_only(args: list[str]) -> None:
    """The entry point's fast path alone: it must answer (exit), never fall through."""
    entry.plain_cite(args[1:])
    raise AssertionError(f"the fast path did not answer {args}")


def _through_the_entry_point(monkeypatch: pytest.MonkeyPatch) -> Callable[[list[str]], None]:
    def run(args: list[str]) -> None:
        monkeypatch.setattr(sys, "argv", ["pith", *args])
        entry.main()

    return run


def _outbox(home: Path) -> list[tuple[Any, ...]]:
    """What the outbox of `home` holds: each event's id, state and text."""
    rows: list[tuple[Any, ...]] = []
    for db in sorted(home.rglob("*.sqlite3")):
        if "cache" in db.parts:
            continue
        with sqlite3.connect(db) as con:
            tables = [
                t for (t,) in con.execute("SELECT name FROM sqlite_master WHERE type='table'")
            ]
            for table in tables:
                rows += [(db.name, table, *r) for r in con.execute(f"SELECT * FROM {table}")]
    return sorted(rows, key=repr)


def _run(args: list[str], world: dict[str, str], through: Any = None) -> tuple[Any, ...]:
    """`pith ARGS` from a fresh copy of the author's home (same path each time): its exit
    code, stdout, stderr, what its outbox then holds and the --out file."""
    run_home, out = Path(world["run_home"]), Path(world["out"])
    shutil.rmtree(run_home, ignore_errors=True)
    out.unlink(missing_ok=True)
    shutil.copytree(world["home"], run_home)
    done = run_in_process(args, env={"PITH_HOME": str(run_home)}, through=through)
    written = out.read_text("utf-8") if out.exists() else None
    return done.returncode, done.stdout, done.stderr, _stable(_outbox(run_home)), written


def _stable(rows: list[tuple[Any, ...]]) -> list[tuple[Any, ...]]:
    """The outbox's rows without the times they were stored (a clock, not the command)."""
    return [tuple(v for v in r if not (isinstance(v, str) and v[:2] == "20" and v.endswith("Z")))
            for r in rows]  # fmt: skip


def _same(args: list[str], world: dict[str, str], through: Any) -> tuple[Any, ...]:
    typer_run = _run(args, world)
    other = _run(args, world, through)
    assert other == typer_run, args
    return typer_run


@pytest.mark.parametrize("form", PLAIN, ids=[" ".join(f)[:70] for f in PLAIN])
def test_a_plain_form_signs_prints_and_exits_as_the_typer_command_does(
    form: list[str], world: dict[str, str]
) -> None:
    args = _argv(form, world)
    assert cite_cmd.plain_cite_form(args[1:]) is not None
    _, out, err, _, _ = _same(args, world, _fast_path_only)
    assert out or err  # it ran: a table, JSON or an error


def test_the_plain_forms_cover_every_exit_code_option_and_what_is_stored(
    world: dict[str, str],
) -> None:
    """The forms above are worth comparing: they end in 0, 1 and 2 (and others), store events
    and write --out, and use every option of PLAIN_OPTIONS."""
    runs = [_run(_argv(form, world), world) for form in PLAIN]
    assert {0, 1, 2} <= {r[0] for r in runs}
    assert any(r[3] for r in runs) and any(r[4] for r in runs)
    words = {word.split("=")[0] for form in PLAIN for word in form}
    assert set(cite_cmd.PLAIN_OPTIONS) <= words


@pytest.mark.parametrize("form", TYPER, ids=[" ".join(f)[:70] or "none" for f in TYPER])
def test_every_other_form_is_left_to_typer(
    form: list[str], world: dict[str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    args = _argv(form, world)
    assert cite_cmd.plain_cite_form(args[1:]) is None
    _same(args, world, _through_the_entry_point(monkeypatch))


def test_a_plain_form_is_typers_while_its_options_environment_variable_is_set(
    world: dict[str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    args = _argv(["{good}", "--from", CITING, "--registry", "{url}"], world)
    assert cite_cmd.plain_cite_form(args[1:]) is not None
    monkeypatch.setenv("PITH_TRUST_LOCAL_REGISTRY", "1")
    assert cite_cmd.plain_cite_form(args[1:]) is None
    done = _same(args, world, _through_the_entry_point(monkeypatch))
    assert done[0] == 0, done  # the variable trusted the local registry's key


def test_the_entry_point_answers_a_plain_form_itself(
    world: dict[str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Through `pith`'s real entry point (sys.argv), a plain form is the fast path's: the same
    outcome, and the Typer application is never asked."""
    from pithauthor._cli import main

    args = _argv(["{good}", *WHERE, "--json"], world)
    expected = _run(args, world)

    def no_typer(argv: list[str] | None = None) -> None:
        raise AssertionError("Typer was asked")

    monkeypatch.setattr(main, "main", no_typer)
    assert _run(args, world, _through_the_entry_point(monkeypatch)) == expected
    assert expected[0] == 0 and expected[3]


def test_the_plain_options_are_the_typer_commands_own() -> None:
    """PLAIN_OPTIONS says what the Typer command declares: each option's parameter, flag or
    value, repeatable or not, its default; no callback changes it; an environment variable
    only where TYPER_ENVIRONMENT names it; `run` takes exactly the command's parameters."""
    import inspect

    import click
    import typer.main

    from pithauthor._cli import main

    root = typer.main.get_command(main.app)
    command = root.get_command(click.Context(root, info_name="pith"), "cite")  # type: ignore[attr-defined]
    by_opt = {opt: p for p in command.params for opt in (*p.opts, *p.secondary_opts)}
    for name, option in cite_cmd.PLAIN_OPTIONS.items():
        param = by_opt[name]
        assert param.secondary_opts == [], name
        assert param.name == option.parameter, name
        assert param.is_flag == (option.kind == "flag"), name
        assert param.multiple == (option.kind == "many"), name
        default = list(param.default or []) if param.multiple else param.default
        assert default == (list(option.default) if param.multiple else option.default), name
        assert param.callback is None and param.nargs == 1 and not param.is_eager, name
        assert param.envvar is None or param.envvar in cite_cmd.TYPER_ENVIRONMENT, name
    envvars = {p.envvar for p in command.params if getattr(p, "envvar", None)}
    declared = {by_opt[n].envvar for n in cite_cmd.PLAIN_OPTIONS if by_opt[n].envvar}
    assert declared == set(cite_cmd.TYPER_ENVIRONMENT) and declared <= envvars
    assert sorted(inspect.signature(cite_cmd.run).parameters) == sorted(
        p.name for p in command.params if p.name
    )
    required = [p.name for p in command.params if p.required]
    assert required == ["citing"]  # --from: a plain form has it, else it is Typer's


def _process_end(args: list[str]) -> dict[str, Any]:
    """A real `pith ARGS` process (the heap is frozen only as a process ends): its exit code,
    and at exit whether the collector was on and how many objects were frozen."""
    import json
    import subprocess

    script = (
        "import atexit, gc, json, runpy, sys\n"
        "atexit.register(lambda: sys.stderr.write('END' + json.dumps("
        "[gc.isenabled(), gc.get_freeze_count()])))\n"
        f"sys.argv = ['pith', *{args!r}]\n"
        "runpy.run_module('pithauthor', run_name='__main__')\n"
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True)
    collecting, frozen = json.loads(done.stderr.rsplit("END", 1)[1])
    return {"code": done.returncode, "collecting": collecting, "frozen": frozen}


def test_a_plain_cite_closes_its_databases_before_it_leaves_the_heap(
    tmp_path: Path, isolated_home: Path, cite_registry: dict[str, Any]
) -> None:
    """The entry point freezes the heap before a plain cite exits, so nothing left for the
    collector is finalized: the command must close what it opened first. No SQLite database
    of the home is left with a write-ahead log (SQLite removes it when the last connection
    closes; the record cache was once left to the collector). The collector stays paused
    through a warm run, which asks nothing, and is on again after a cold one's requests."""
    from support.cite import number_of

    from pithauthor.keys.author import generate

    generate("k", public_name="A", backend="file", insecure_plaintext=True, note=lambda _: None)
    bib = tmp_path / "refs.bib"
    bib.write_text("@misc{b, title={B}, eprint={2101.99903}, archivePrefix={arXiv}}\n", "utf-8")
    where = ["--registry", cite_registry["url"], "--trust-manifest", cite_registry["manifest"]]
    args = ["cite", str(bib), "--from", number_of("2101.99904"), *where]
    cold = _process_end([*args, "--out", str(tmp_path / "o.jsonl")])
    assert cold == {"code": 0, "collecting": True, "frozen": cold["frozen"]}
    assert cold["frozen"] > 10_000  # the heap was left to the system
    assert sorted(isolated_home.rglob("*-wal")) == []
    assert len((tmp_path / "o.jsonl").read_text("utf-8").splitlines()) == 1  # written whole
    warm = _process_end(args)
    assert warm == {"code": 0, "collecting": False, "frozen": warm["frozen"]}
    assert sorted(isolated_home.rglob("*-wal")) == []
    assert (isolated_home / "cache" / "records.sqlite3").is_file()  # the check can fail
