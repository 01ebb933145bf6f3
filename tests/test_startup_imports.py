"""`pith --version` and `pith --help` import none of the heavy libraries (python -X importtime)."""

from __future__ import annotations

import copy
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from support.cli import RunPith

HEAVY = ("httpx", "keyring", "nacl", "bibtexparser", "pylatexenc", "sqlite3", "jsonschema", "rich")


def _imported_modules(*args: str) -> set[str]:
    env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1"}
    result = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "pithauthor", *args],
        capture_output=True,
        text=True,
        env=env,
        check=True,
    )
    modules = set()
    for line in result.stderr.splitlines():
        if line.startswith("import time:") and "|" in line:
            modules.add(line.rsplit("|", 1)[1].strip())
    assert modules, "importtime printed nothing"
    return modules


@pytest.mark.parametrize("args", [("--version",), ("--help",)], ids=["version", "help"])
def test_version_and_help_import_no_heavy_library(args: tuple[str, ...]) -> None:
    modules = _imported_modules(*args)
    assert "pithauthor._version" in modules  # the measurement itself works
    heavy = sorted(m for m in modules if m.split(".")[0] in HEAVY or m == "_sqlite3")
    assert heavy == []


def test_version_answers_before_the_command_tree_is_built() -> None:
    modules = _imported_modules("--version")
    assert "typer" not in modules and "pithauthor._cli.main" not in modules
    assert "typer" in _imported_modules("--help")


def test_a_command_does_import_what_it_needs() -> None:
    """Proves the check can fail: verifying a record does load PyNaCl."""
    from support.paths import FIXTURES

    modules = _imported_modules("verify", str(FIXTURES / "record-2302.12445v2.json"))
    assert "nacl" in modules


def _command_modules(modules: set[str]) -> list[str]:
    return sorted(m for m in modules if m.startswith("pithauthor._cli.") and m.endswith("_cmd"))


@pytest.mark.parametrize("args", [(), ("--help",), ("-h",)], ids=["bare", "help", "h"])
def test_root_help_imports_no_command_module(args: tuple[str, ...]) -> None:
    """`pith --help` lists the entries from the catalog alone: importing the 18
    command modules was most of what it cost beyond `import typer`."""
    modules = _loaded_modules(*args)  # importtime does not list an import_module
    assert "pithauthor._cli.catalog" in modules  # the measurement itself works
    assert _command_modules(modules) == []


@pytest.mark.parametrize(
    ("args", "module"),
    [
        (("number", "parse", "2302.12445v2"), "number_cmd"),
        (("papers", "--help"), "status_cmd"),  # a module with two entries
        (("bib", "--help"), "bib_cmd"),
    ],
)
def test_a_command_imports_only_its_own_command_module(args: tuple[str, ...], module: str) -> None:
    """`pith NAME ...` imports NAME's command module and no other; an unknown name builds the
    whole tree (its error may suggest any name), so the check can fail."""
    assert _command_modules(_loaded_modules(*args)) == [f"pithauthor._cli.{module}"]
    assert len(_command_modules(_loaded_modules("nosuchcommand", ok=(2,)))) > 10


def _registered(modules: list[str]) -> list[tuple[str, str, str, str | None]]:
    """(name, kind, module, short help) of each entry that registering `modules` into a fresh
    Typer adds, in the order Typer lists them (its commands, then its groups)."""
    import importlib

    import typer

    commands, groups = [], []
    app = typer.Typer()
    for module in modules:
        known = (len(app.registered_commands), len(app.registered_groups))
        importlib.import_module(f"pithauthor._cli.{module}").register(app)
        for command in app.registered_commands[known[0] :]:
            commands.append((str(command.name), "command", module, command.short_help))
        for group in app.registered_groups[known[1] :]:
            assert group.typer_instance is not None
            assert group.typer_instance.info.help == group.short_help  # the group's own help
            groups.append((str(group.name), "group", module, group.short_help))
    return commands + groups


def test_the_catalog_lists_exactly_what_the_command_modules_register() -> None:
    """The catalog is what `pith --help` lists without importing the command modules: each
    entry must be one a module registers, in the order the whole tree lists them, with the
    catalog's summary as its short help (a group's help too), and nothing else registered."""
    from pithauthor._cli import catalog

    expected = [(e.name, e.kind, e.module, e.summary) for e in catalog.ENTRIES]
    assert _registered(catalog.modules()) == expected
    assert len(catalog.NAMES) == len(catalog.ENTRIES)
    # the entry after the commands added since (pith timestamp, pith archive)
    bib = [e.name for e in catalog.ENTRIES].index("bib")
    assert bib > [e.name for e in catalog.ENTRIES].index("archive")
    assert catalog.summary("bib") == catalog.ENTRIES[bib].summary
    with pytest.raises(KeyError):
        catalog.summary("nosuchcommand")


def test_every_summary_fits_one_line_of_root_help_at_80_columns(pith: RunPith) -> None:
    """A summary is shown whole (Typer would cut a long help with "..."): each must fit the
    line beside the names at 80 columns, so `pith --help` stays one line per entry."""
    from pithauthor._cli import catalog

    done = pith("--help", env={"COLUMNS": "80"})
    listing = done.stdout.split("Commands:\n", 1)[1].splitlines()
    assert [line.split()[0] for line in listing] == [e.name for e in catalog.ENTRIES]
    for line, entry in zip(listing, catalog.ENTRIES, strict=True):
        assert line.endswith(entry.summary) and len(line) <= 80, line
        assert "..." not in line


def test_every_public_name_of_the_package_resolves() -> None:
    import pithauthor

    missing = [name for name in pithauthor.__all__ if getattr(pithauthor, name, None) is None]
    assert missing == []
    assert "PithNumber" in dir(pithauthor)


def _full_tree_help(columns: int, monkeypatch: pytest.MonkeyPatch) -> str:
    """The root help of the whole command tree, every option built, at `columns`."""
    import click
    import typer.main

    from pithauthor._cli import main

    monkeypatch.setenv("COLUMNS", str(columns))  # click reads the width through shutil
    command = typer.main.get_command(main.app)
    assert command.get_command(click.Context(command), "verify").params  # type: ignore[attr-defined]
    ctx = click.Context(command, info_name="pith", **command.context_settings)  # -h, --help
    return command.get_help(ctx) + "\n"


@pytest.mark.parametrize("args", [(), ("--help",), ("-h",)], ids=["bare", "help", "h"])
@pytest.mark.parametrize("columns", [50, 80, 200])
def test_root_help_from_the_names_only_tree_is_the_full_trees_help(
    args: tuple[str, ...], columns: int, pith: RunPith, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`pith --help` builds the root with each command by name and help only; what
    it prints must be what the whole tree prints, at any terminal width. (In this process: the
    real process's `--help` is run by the import test above.)"""
    done = pith(*args, env={"COLUMNS": str(columns)})
    assert done.returncode == 0 and done.stderr == ""
    assert "verify" in done.stdout and "Verify a document" in done.stdout
    assert done.stdout == _full_tree_help(columns, monkeypatch)


def test_root_help_builds_no_commands_options() -> None:
    """The names-only tree has the root's options and every command, and no command option."""
    import click

    from pithauthor._cli import main

    root = main._root_only()
    ctx = click.Context(root, info_name="pith")
    names = root.list_commands(ctx)
    assert {"verify", "claim", "keys", "bib"} <= set(names)
    assert "--version" in {opt for p in root.params for opt in p.opts}
    verify = root.get_command(ctx, "verify")
    assert verify is not None and verify.params == []
    assert root.get_command(ctx, "bib").list_commands(ctx) == []  # type: ignore[union-attr]


def test_a_command_runs_from_a_tree_where_only_its_own_entry_is_whole() -> None:
    """`pith NAME ...` builds only NAME's entry whole: every command under it must
    have the same options and help as in the full tree, and the other entries none."""
    import click
    import typer.main

    from pithauthor._cli import catalog, main

    # both built here, fresh: a tree built by an earlier test of this worker holds the
    # defaults of that test's environment
    full = typer.main.get_command(copy.copy(main.app))  # fresh: not main's cached tree

    def helps(command: Any, name: str, parent: Any = None) -> dict[str, str]:
        ctx = click.Context(command, info_name=name, parent=parent)
        found = {ctx.command_path: command.get_help(ctx)}
        for sub in getattr(command, "list_commands", lambda _: [])(ctx):
            found.update(helps(command.get_command(ctx, sub), sub, ctx))
        return found

    root_ctx = click.Context(full, info_name="pith")
    names = full.list_commands(root_ctx)  # type: ignore[attr-defined]
    assert names and set(names) == catalog.NAMES
    for name in names:
        partial = main._root_only.__wrapped__(name)
        ctx = click.Context(partial, info_name="pith")
        expected = helps(full.get_command(root_ctx, name), name, root_ctx)  # type: ignore[attr-defined]
        assert helps(partial.get_command(ctx, name), name, ctx) == expected, name
        others = [n for n in names if n != name and n in ("verify", "claim")]
        for other in others:
            assert partial.get_command(ctx, other).params == []


def test_bib_scan_imports_neither_the_lookup_nor_the_network(tmp_path: Path) -> None:
    """`pith bib scan REFS.bib` reads the .bib only: the lookup's matching and arXiv client, the
    network and the signing libraries load with --lookup or the commands that need them (issue
    27: start-up). pylatexenc is not in the list: bibtexparser itself imports it."""
    bib = tmp_path / "refs.bib"
    bib.write_text("@article{a, title={T}, eprint={2302.12445}}\n", encoding="utf-8")
    modules = _imported_modules("bib", "scan", str(bib))
    # the measurement itself works (a face's import_module is not itself listed by importtime)
    assert "pithauthor.bibliography.bibtex" in modules
    unwanted = {
        "pithauthor.bibliography.matching",
        "pithauthor.bibliography.arxiv_api",
        "pithauthor.bibliography.lookup",
        "httpx",
        "nacl",
    }
    assert sorted(unwanted & modules) == []


def _loaded_modules(
    *args: str, ok: tuple[int, ...] = (0,), env: dict[str, str] | None = None
) -> set[str]:
    """Every module loaded by the end of a `pith ARGS` process (sys.modules, printed at exit: a
    face's import_module, which importtime does not list, included); its exit code in `ok`."""
    script = (
        "import atexit, runpy, sys\n"
        "atexit.register(lambda: sys.stderr.write('\\n'.join(['MODULES', *sys.modules])))\n"
        f"sys.argv = ['pith', *{list(args)!r}]\n"
        "runpy.run_module('pithauthor', run_name='__main__')\n"
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=env)
    assert done.returncode in ok, done.stderr
    return set(done.stderr.split("MODULES\n", 1)[1].splitlines())


def test_bib_scan_loads_no_manuscript_reader_schema_validator_or_event_documents(
    tmp_path: Path,
) -> None:
    """`pith bib scan` loads the manuscript reader only with --only-cited, and neither the
    schema validator nor the event documents' types (start-up); with --only-cited the
    reader is loaded, so the check can fail."""
    bib = tmp_path / "refs.bib"
    bib.write_text("@article{a, title={T}, eprint={2302.12445}}\n", encoding="utf-8")
    tex = tmp_path / "main.tex"
    tex.write_text("\\documentclass{article}\\begin{document}\\cite{a}\\end{document}\n")
    modules = _loaded_modules("bib", "scan", str(bib))
    assert "pithauthor.protocol.payloads" in modules  # where the relationships are read
    unwanted = {
        "pithauthor.bibliography.cited",
        "pithauthor.protocol.documents",
        "pithauthor.protocol.identity",
        "fastjsonschema",
        "base64",  # only a Pith Number or a key fingerprint is base32
    }
    assert sorted(unwanted & modules) == []
    cited = _loaded_modules("bib", "scan", str(bib), "--only-cited", str(tex))
    assert "pithauthor.bibliography.cited" in cited


def test_a_plain_bib_scan_loads_neither_typer_nor_pydantic(tmp_path: Path) -> None:
    """The plain forms of `pith bib scan` are answered before Typer is loaded
    (importing Typer and pydantic takes longer than the scan); a form the entry point leaves to
    Typer (--help here) does load it, so the check can fail."""
    bib = tmp_path / "refs.bib"
    bib.write_text("@article{a, title={T}, eprint={2302.12445}}\n", encoding="utf-8")
    tex = tmp_path / "main.tex"
    tex.write_text("\\cite{a}\n", encoding="utf-8")
    frameworks = {"typer", "pydantic", "pydantic_core", "click", "rich", "shellingham"}
    for args in (
        (str(bib),),
        (str(bib), "--json", "--only-cited", str(tex), "--map", "a=extends"),
        ("--relationship=uses_method", str(bib), str(bib)),  # a repeated key: exit 1
    ):
        modules = _loaded_modules("bib", "scan", *args, ok=(0, 1))
        assert "pithauthor.bibliography.bibtex" in modules  # the scan did run
        assert sorted(m for m in modules if m.split(".")[0] in frameworks) == [], args
        assert "pithauthor._cli.main" not in modules
    assert {"typer", "pydantic"} <= _loaded_modules("bib", "scan", str(bib), "--help")


def _signature_defaults(callback: Any) -> list[tuple[str, Any, Any]]:
    import inspect

    parameters = inspect.signature(callback).parameters.items()
    return [(name, p.default, p.annotation) for name, p in parameters if p.default is not p.empty]


def test_name_values_reads_each_callbacks_defaults_as_inspect_does() -> None:
    """`app.defaults` reads a callback's parameters from the function itself
    (`inspect.signature` was most of naming every option at start-up): for every command of
    `pith`, and functions of every shape, it says what `inspect.signature` says."""
    import functools

    from pithauthor._cli import app, main

    def walk(typer_app: Any) -> list[Any]:
        found = [c.callback for c in typer_app.registered_commands if c.callback]
        for group in typer_app.registered_groups:
            if group.typer_instance is not None:
                found += walk(group.typer_instance)
        return found

    callbacks = walk(main.app)
    assert len(callbacks) > 30

    def plain(a: int, b: str = "x", *rest: int, c: bool, d: float = 1.0, **more: str) -> None: ...
    def positional(a: int = 1, /, b: int = 2) -> None: ...
    def bare(a, b=3):  # type: ignore[no-untyped-def]
        ...

    @functools.wraps(plain)
    def wrapped(*args: Any, **kwargs: Any) -> None: ...

    for callback in [*callbacks, plain, positional, bare, wrapped, functools.partial(plain, 1)]:
        assert app.defaults(callback) == _signature_defaults(callback), callback


def test_a_plain_status_loads_neither_typer_pydantic_nor_httpx_cli(tmp_path: Path) -> None:
    """The plain forms of `pith status` are answered before Typer is loaded (Typer,
    click and pydantic cost more than a second look at a 10,000-event paper), and `import
    httpx` does not load its command-line client (click, rich, pygments) in a `pith` process;
    a form left to Typer (--help here) does load them, so the check can fail."""
    from support.registry import SUBJECT, start_server

    server = start_server(tmp_path / "registry")
    try:
        env = {**os.environ, "PITH_HOME": str(tmp_path / "home")}
        args = ("status", SUBJECT.pith_number.full, "--registry", server.url)
        modules = _loaded_modules(*args, "--trust-local-registry", "--json", env=env)
    finally:
        server.stop()
    assert "pithauthor.registry.page" in modules and "httpx" in modules  # it ran
    frameworks = {"typer", "pydantic", "pydantic_core", "click", "rich", "pygments"}
    assert sorted(m for m in modules if m.split(".")[0] in frameworks) == []
    assert "pithauthor._cli.main" not in modules  # (httpx._main is listed: as None, blocked)
    assert {"typer", "pydantic"} <= _loaded_modules("status", "--help")


def test_a_second_status_look_loads_neither_the_key_store_nor_the_submitter(
    tmp_path: Path,
) -> None:
    """A second look at an unchanged paper (`pith status`, the state's summary kept) signs
    and submits nothing: it loads neither the author key store (`keys.author`, with ctypes and
    getpass) nor the submitter (`registry.submit`, with its thread pool), about 10 ms of the
    0.2 s of CPU it may take (docs/performance.md). `pith papers`, which lists this machine's
    keys, does load the key store, so the check can fail."""
    from support.registry import SUBJECT, start_server

    server = start_server(tmp_path / "registry")
    try:
        env = {**os.environ, "PITH_HOME": str(tmp_path / "home")}
        args = ("status", SUBJECT.pith_number.full, "--registry", server.url)
        _loaded_modules(*args, "--trust-local-registry", env=env)  # the first look
        modules = _loaded_modules(*args, "--trust-local-registry", env=env)
    finally:
        server.stop()
    assert "pithauthor.registry.page" in modules  # it ran
    unneeded = {"pithauthor.keys.author", "pithauthor.keys.secrets", "pithauthor.registry.submit"}
    assert sorted(unneeded & modules) == []
    assert "pithauthor.keys.author" in _loaded_modules("papers", env=env)


def test_a_second_status_look_loads_no_ed25519_and_no_proof_machinery(tmp_path: Path) -> None:
    """A second look at an unchanged paper whose state lists no anchor and no archive copy
    checks no signature (the record's bytes are the ones that passed before, under the same
    trust: their verdict is kept) and judges no proof: it loads neither PyNaCl nor the
    machinery of rows 1 and 2 (OpenTimestamps proofs, Bitcoin headers, the archive checks kept
    here), about 15 ms of the 0.2 s of CPU it may take (docs/performance.md). The first look,
    which checks every signature, does load PyNaCl, so the check can fail."""
    from support.registry import SUBJECT, start_server

    server = start_server(tmp_path / "registry")
    try:
        env = {**os.environ, "PITH_HOME": str(tmp_path / "home")}
        args = ("status", SUBJECT.pith_number.full, "--registry", server.url)
        first = _loaded_modules(*args, "--trust-local-registry", env=env)
        modules = _loaded_modules(*args, "--trust-local-registry", env=env)
    finally:
        server.stop()
    assert "pithauthor.registry.page" in modules  # it ran
    assert "nacl.signing" in first
    unneeded = {
        "nacl",
        "nacl.signing",
        "pithauthor.registry.judge",
        "pithauthor.protocol.checklist",
        "pithauthor.timestamps.anchor",
        "pithauthor.timestamps.ots",
        "pithauthor.timestamps.headers",
        "pithauthor.archive.checked",
    }
    assert sorted(unneeded & modules) == []


def test_pith_loads_httpx_without_its_command_line_client_and_a_script_keeps_it() -> None:
    """httpx imports its command-line client (click, rich, pygments: about 0.1 s of CPU) with
    `import httpx` when those are installed; the `pith` program keeps it out and
    httpx still works. A script that imports the library gets httpx as it comes: only the
    program that owns the process decides. Without pith's entry point the same import does
    load it, so the check can fail."""
    probe = "import sys, httpx; print(sorted({m.split('.')[0] for m in sys.modules}))"

    def loaded(code: str) -> set[str]:
        run = subprocess.run(
            [sys.executable, "-c", code], capture_output=True, text=True, check=True
        )
        return set(run.stdout.strip("[]\n").split(", "))

    program = (
        "import sys; from pithauthor._cli import entry; sys.argv = ['pith', '--version'];"
        f" entry.main(); {probe}; httpx.Client().close()"
    )
    ours = loaded(program)
    assert "'httpx'" in ours
    assert not {"'rich'", "'pygments'", "'click'"} & ours
    script = loaded(f"import pithauthor.net; {probe}")
    assert {"'rich'", "'pygments'"} <= script
    assert {"'rich'", "'pygments'"} <= loaded(probe)


def test_a_plain_cite_loads_neither_typer_nor_pydantic(
    tmp_path: Path, isolated_home: Path, cite_registry: dict[str, Any]
) -> None:
    """The plain forms of `pith cite` are answered before Typer is loaded (Typer and
    pydantic were about 0.3 s of CPU of a warm 300-entry run); a form the entry point leaves
    to Typer (--parallel here) does load it, so the check can fail."""
    from pithauthor.keys.author import generate

    # a key without a passphrase: the process unlocks it without the tests' cheap KDF
    generate("k", public_name="A", backend="file", insecure_plaintext=True, note=lambda _: None)
    bib = tmp_path / "refs.bib"
    bib.write_text("@misc{b, title={B}, eprint={2101.99903}, archivePrefix={arXiv}}\n", "utf-8")
    where = ["--registry", cite_registry["url"], "--trust-manifest", cite_registry["manifest"]]
    args = ["cite", str(bib), "--from", "2101.99901", *where, "--out", str(tmp_path / "o.jsonl")]
    modules = _loaded_modules(*args)
    frameworks = {"typer", "pydantic", "pydantic_core", "click", "rich", "shellingham"}
    assert "pithauthor.bibliography.cite" in modules  # the command did run
    assert sorted(m for m in modules if m.split(".")[0] in frameworks) == []
    assert "pithauthor._cli.main" not in modules and "pithauthor._cli.options" not in modules
    assert {"typer", "pydantic"} <= _loaded_modules(*args, "--parallel", "2")


def test_a_warm_plain_cite_loads_no_network_stack_schema_compiler_or_pool(
    tmp_path: Path, isolated_home: Path, cite_registry: dict[str, Any]
) -> None:
    """A plain `pith cite` whose every record is cached and whose registry key comes from a
    manifest file asks the registry nothing, so it loads neither httpx (nor ssl), nor the
    schema compiler (the signer's field rules need none), nor `importlib.resources`,
    `email.utils`, `xml.etree` or a thread pool (each was CPU of every warm run).
    The first run, which fetches the records, does load httpx and the pool, so the check can
    fail."""
    from support.cite import number_of

    from pithauthor.keys.author import generate

    generate("k", public_name="A", backend="file", insecure_plaintext=True, note=lambda _: None)
    bib = tmp_path / "refs.bib"
    bib.write_text("@misc{b, title={B}, eprint={2101.99903}, archivePrefix={arXiv}}\n", "utf-8")
    where = ["--registry", cite_registry["url"], "--trust-manifest", cite_registry["manifest"]]
    citing = number_of("2101.99904")  # a full number: checked with its cached record
    args = ["cite", str(bib), "--from", citing, *where, "--out", str(tmp_path / "o.jsonl")]
    unwanted = (
        "httpx",
        "httpcore",
        "ssl",
        "fastjsonschema",
        "importlib.resources",
        "email.utils",
        "xml.etree.ElementTree",
        "concurrent.futures",
        # trusted time asks nothing here (no source set): its libraries stay unloaded
        "opentimestamps",
        "Cryptodome",
        "rfc3161_client",
        "cryptography",
        # nor pith's own: whom to ask is read from `timestamps.time_sources` alone
        "pithauthor.timestamps.flow",
        "pithauthor.timestamps.rfc3161",
        "pithauthor.timestamps.ots",
        "pithauthor.timestamps.headers",
        # the outbox's lease names this host by os.uname, not by loading `socket` for it
        "socket",
        # a key stored without a passphrase is opened without a prompt's modules
        "getpass",
        "termios",
    )
    cold = _loaded_modules(*args)
    assert {"httpx", "concurrent.futures"} <= cold
    warm = _loaded_modules(*args)
    assert "pithauthor.bibliography.cite" in warm and "nacl.signing" in warm  # it did sign
    assert sorted(m for m in unwanted if m in warm) == []
