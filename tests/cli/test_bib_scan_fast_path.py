"""The plain forms of `pith bib scan`, which pith's entry point answers before Typer is loaded
(start-up), print and exit exactly as the Typer command does: each form runs both
ways in this process, and stdout, stderr and the exit code must be the same. Every other form
is left to Typer untouched."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from support.cli import run_in_process

from pithauthor._cli import bib_cmd, entry

FIXTURES = Path(__file__).parents[1] / "fixtures" / "bib"
GOOD = str(FIXTURES / "arxiv-export.bib")
MESSY = str(FIXTURES / "messy.bib")


@pytest.fixture
def files(tmp_path: Path) -> dict[str, str]:
    """Bibliographies and manuscripts that are good, broken or missing, by name."""
    made = {
        "missing": tmp_path / "missing.bib",
        "binary": tmp_path / "binary.bib",
        "empty": tmp_path / "empty.bib",
        "latin1": tmp_path / "latin1.bib",
        "junk": tmp_path / "junk.bib",
        "unclosed": tmp_path / "unclosed.bib",
        "folder": tmp_path / "folder.bib",
        "tex": tmp_path / "main.tex",
        "macros": tmp_path / "macros.tex",
        "no_tex": tmp_path / "absent.tex",
    }
    made["binary"].write_bytes(b"\x00\x01\x02")
    made["empty"].write_text("", encoding="utf-8")
    made["latin1"].write_bytes(b"@article{a, title={Caf\xe9}, eprint={2302.12445}}\n")
    made["junk"].write_text('{"not": "a bibliography"}\n', encoding="utf-8")
    made["unclosed"].write_text("@article{a, title={T\n@book{b, title={U}}\n", encoding="utf-8")
    made["folder"].mkdir()
    made["tex"].write_text("\\cite{shi2023dear,nothere}\n", encoding="utf-8")
    made["macros"].write_text(
        "\\newcommand{\\mycite}[1]{\\cite{#1}}\\def\\other{\\cite}\\cite{Shouting2020}\n",
        encoding="utf-8",
    )
    return {name: str(path) for name, path in made.items()}


# Each form as `pith bib scan` reads it: names in braces are the files of the fixture above.
PLAIN = [
    [GOOD],
    [MESSY],
    [MESSY, "--json"],
    ["--json", GOOD, MESSY],
    [GOOD, GOOD],
    ["{missing}"],
    [GOOD, "{missing}"],
    ["{binary}"],
    ["{empty}"],
    ["{latin1}", "--json"],
    ["{junk}"],
    ["{unclosed}", "--json"],
    ["{folder}"],
    [GOOD, "--only-cited", "{tex}"],
    [GOOD, "--only-cited={tex}", "--json"],
    [MESSY, "--only-cited", "{macros}"],
    [GOOD, "--only-cited", "{no_tex}"],
    [GOOD, "--only-cited", "{folder}"],
    [GOOD, "--relationship", "extends"],
    [GOOD, "--relationship", "likes"],
    [GOOD, "--relationship=Extends", "--json"],
    [GOOD, "--map", "shi2023dear=extends", "--map", "ghost=cites"],
    [GOOD, "--map", "nokey"],
    [GOOD, "--map=shi2023dear=bogus", "--json"],
    [GOOD, "--map", "shi2023dear=uses", "--relationship", "replicates", "--json", MESSY],
]

# Forms the entry point leaves to Typer: help, the lookup, mistakes, and what Typer might read
# alike but the fast path does not try to (`--`, a repeated option, a value that looks like one).
TYPER = [
    [],
    ["--help"],
    [GOOD, "-h"],
    [GOOD, "--help", "--json"],
    [GOOD, "--lookup", "--offline"],
    [GOOD, "--offline"],
    [GOOD, "--nope"],
    [GOOD, "--js"],
    [GOOD, "--json=1"],
    [GOOD, "--"],
    ["--", GOOD],
    [GOOD, ""],
    ["-"],
    [GOOD, "-x"],
    [GOOD, "--relationship"],
    [GOOD, "--relationship", "--json"],
    [GOOD, "--relationship", "cites", "--relationship", "extends"],
    [GOOD, "--json", "--json"],
    [GOOD, "--map"],
    [GOOD, "--map="],
    [GOOD + "\udcff"],
    ["--json"],
]


def _argv(form: list[str], files: dict[str, str]) -> list[str]:
    return ["bib", "scan", *(word.format(**files) for word in form)]


def _fast_path_only(args: list[str]) -> None:
    """The entry point's fast path alone: it must answer (exit), never fall through."""
    entry.plain_bib_scan(args[2:])
    raise AssertionError(f"the fast path did not answer {args}")


def _through_the_entry_point(monkeypatch: pytest.MonkeyPatch) -> Callable[[list[str]], None]:
    def run(args: list[str]) -> None:
        monkeypatch.setattr(sys, "argv", ["pith", *args])
        entry.main()

    return run


def _same(
    args: list[str], through: Callable[[list[str]], object], cwd: Path | None = None
) -> subprocess.CompletedProcess[str]:
    typer_run = run_in_process(args, cwd=cwd)
    other = run_in_process(args, cwd=cwd, through=through)
    assert (other.returncode, other.stdout, other.stderr) == (
        typer_run.returncode,
        typer_run.stdout,
        typer_run.stderr,
    ), args
    return typer_run


@pytest.mark.parametrize("form", PLAIN, ids=[" ".join(f)[-60:] for f in PLAIN])
def test_a_plain_form_prints_and_exits_as_the_typer_command_does(
    form: list[str], files: dict[str, str]
) -> None:
    args = _argv(form, files)
    assert bib_cmd.plain_form(args[2:]) is not None
    done = _same(args, _fast_path_only)
    assert done.stdout or done.stderr  # it ran: a table, JSON or an error


def test_the_plain_forms_cover_every_exit_code_and_option(files: dict[str, str]) -> None:
    """The forms above are worth comparing: they end in 0, 1 and 2, and use every option."""
    codes = {run_in_process(_argv(form, files)).returncode for form in PLAIN}
    assert codes == {0, 1, 2}
    words = {word.split("=")[0] for form in PLAIN for word in form}
    assert set(bib_cmd.PLAIN_OPTIONS) <= words


def test_a_relative_path_and_a_warning_are_the_same_both_ways(tmp_path: Path) -> None:
    (tmp_path / "refs.bib").write_bytes(b"@article{a, title={Caf\xe9}, eprint={2302.12445}}\n")
    done = _same(["bib", "scan", "refs.bib", "--json"], _fast_path_only, cwd=tmp_path)
    assert '"refs.bib"' in done.stdout and "warning" in done.stderr


@pytest.mark.parametrize("form", TYPER, ids=[" ".join(f)[-60:] or "none" for f in TYPER])
def test_every_other_form_is_left_to_typer(
    form: list[str], files: dict[str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    args = _argv(form, files)
    assert bib_cmd.plain_form(args[2:]) is None
    _same(args, _through_the_entry_point(monkeypatch))


def test_the_entry_point_answers_a_plain_form_itself(
    files: dict[str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Through `pith`'s real entry point (sys.argv), a plain form is the fast path's: the same
    output, and the Typer application is never asked."""
    from pithauthor._cli import main

    def no_typer(argv: list[str] | None = None) -> None:
        raise AssertionError("Typer was asked")

    args = _argv([MESSY, "--json", "--only-cited", "{macros}"], files)
    expected = run_in_process(args)
    monkeypatch.setattr(main, "main", no_typer)
    done = run_in_process(args, through=_through_the_entry_point(monkeypatch))
    assert (done.returncode, done.stdout, done.stderr) == (
        expected.returncode,
        expected.stdout,
        expected.stderr,
    )


def test_the_plain_options_are_the_typer_commands_own() -> None:
    """PLAIN_OPTIONS says what the Typer command declares: each option's name (its only one),
    its parameter, flag or value, repeatable or not, its default; no environment variable or
    callback changes it; and the files are the command's one argument."""
    import click
    import typer.main

    from pithauthor._cli import main

    root = typer.main.get_command(main.app)
    ctx = click.Context(root, info_name="pith")
    bib = root.get_command(ctx, "bib")  # type: ignore[attr-defined]
    scan = bib.get_command(click.Context(bib, info_name="bib", parent=ctx), "scan")
    by_opt = {opt: p for p in scan.params for opt in (*p.opts, *p.secondary_opts)}
    for name, option in bib_cmd.PLAIN_OPTIONS.items():
        param = by_opt[name]
        assert param.opts == [name] and param.secondary_opts == [], name
        assert param.name == option.parameter, name
        assert param.is_flag == (option.kind == bib_cmd.FLAG), name
        assert param.multiple == (option.kind == bib_cmd.MANY), name
        default = list(param.default or []) if param.multiple else param.default
        assert default == (list(option.default) if param.multiple else option.default), name
        assert param.envvar is None and param.callback is None and not param.required, name
        assert param.nargs == 1 and not param.is_eager and not param.prompt, name
    arguments = [p for p in scan.params if p.param_type_name == "argument"]
    assert [(a.name, a.nargs, a.required) for a in arguments] == [("files", -1, True)]


def _collector_at_exit(args: list[str]) -> tuple[bool, int, int]:
    """(collector on, objects frozen, objects in cycles) at the end of a real `pith ARGS`
    process: read at exit, after the command has run."""
    script = (
        "import atexit, gc, runpy, sys\n"
        "def seen():\n"
        "    on, frozen = gc.isenabled(), gc.get_freeze_count()\n"
        "    gc.unfreeze()\n"
        "    sys.stderr.write(f'\\nGC {on} {frozen} {gc.collect()}')\n"
        "atexit.register(seen)\n"
        f"sys.argv = ['pith', *{args!r}]\n"
        "runpy.run_module('pithauthor', run_name='__main__')\n"
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True)
    assert done.returncode in (0, 1), done.stderr
    on, frozen, cycles = done.stderr.rsplit("\nGC ", 1)[1].split()
    return on == "True", int(frozen), int(cycles)


def test_a_plain_scan_runs_without_the_collector_and_leaves_its_heap(tmp_path: Path) -> None:
    """A plain scan pauses the cycle collector for its process and leaves the heap to the
    system at exit (gc.freeze: the last collections skip it; start-up), and what it leaves in
    cycles does not grow with the file: 10 entries or 400, about the same few. A form left to
    Typer (--help) runs with the collector on, so the check can fail."""
    small, large = tmp_path / "small.bib", tmp_path / "large.bib"
    entry_text = "@article{{k{0}, title={{T {0}}}, author={{A, B}}, eprint={{2302.{0:05d}}}}}\n"
    small.write_text("".join(entry_text.format(i) for i in range(10)), encoding="utf-8")
    large.write_text("".join(entry_text.format(i) for i in range(400)), encoding="utf-8")
    on, frozen, few = _collector_at_exit(["bib", "scan", str(small)])
    assert not on and frozen > 10_000
    on, frozen, many = _collector_at_exit(["bib", "scan", "--json", str(large)])
    assert not on and frozen > 10_000
    assert many < few + 50
    assert _collector_at_exit(["bib", "scan", "--help"])[0]
