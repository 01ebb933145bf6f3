"""The package's layout rules (docs/architecture.md): no module imports another module's private
names; the packages depend one way, as the architecture page draws them; nothing is formatted by
hand (the formatter is never switched off); the command line imports any public name from the
module that defines it, never a `_name`, and every command joins `pith` one way; the protocol is
pure; one module speaks HTTP; the registry client lives apart from batch submission; no module
re-exports what another defines. How long modules are is reported (`-s`), not gated."""

from __future__ import annotations

import ast
import functools
import re
from collections.abc import Iterator
from pathlib import Path

import pytest
import typer
from support.faces import FACES

import pithauthor

PACKAGE = Path(pithauthor.__file__).parent
CLI = PACKAGE / "_cli"
ARCHITECTURE = PACKAGE.parent / "docs" / "architecture.md"


@functools.cache
def _tree(path: Path) -> ast.Module:
    """`path` parsed once per test process. Most rules below walk every module of the package,
    and parsing all of it costs 0.2-0.4 s of CPU: seven rules parsing it afresh were about 2 s
    of `make check`. The rules only read the trees; the tests that prove a rule can fail write
    their own file in their own tmp_path, so no cached path is ever written again."""
    return ast.parse(path.read_text(encoding="utf-8"), str(path))


@pytest.fixture(scope="module", autouse=True)
def _free_the_trees() -> Iterator[None]:
    """The parsed trees are shared by this module's rules, then freed: kept for the rest of the
    worker's run, every full garbage collection walks their nodes again (with both modules'
    trees, 0.1-0.2 s each, about 1 CPU-s of `make check`)."""
    yield
    _tree.cache_clear()


def _modules() -> list[Path]:
    return sorted(p for p in PACKAGE.rglob("*.py") if "__pycache__" not in p.parts)


def _module_name(path: Path) -> str:
    parts = ("pithauthor", *path.relative_to(PACKAGE).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _is_module(name: str) -> bool:
    """Whether the dotted `name` (`pithauthor.identity.fetch`) is a module or package of ours."""
    where = PACKAGE.joinpath(*name.split(".")[1:])
    return where.with_suffix(".py").is_file() or (where / "__init__.py").is_file()


# --- no module takes another module's private names -----------------------------------------------


def _private_names_taken(path: Path, module: str) -> list[str]:
    """Each private name of another pithauthor module that `path` (the module `module`) takes,
    as `X._name`: imported (`from pithauthor.X import _name`, at the top, in a function or for
    typing), or read off a module it imported by name (`from pithauthor.identity import fetch`,
    or `import pithauthor.identity.fetch as fetch`, then `fetch._Fetcher`)."""
    found = []
    named: dict[str, str] = {}  # a local name -> the module of ours it is bound to
    for node in ast.walk(_tree(path)):
        if isinstance(node, ast.ImportFrom) and not node.level and node.module:
            if node.module.split(".")[0] != "pithauthor":
                continue
            for alias in node.names:
                if alias.name.startswith("_") and not alias.name.startswith("__"):
                    if node.module != module:
                        found.append(f"{node.module}.{alias.name}")
                elif _is_module(f"{node.module}.{alias.name}"):
                    named[alias.asname or alias.name] = f"{node.module}.{alias.name}"
        elif isinstance(node, ast.Import):
            named |= {
                alias.asname: alias.name
                for alias in node.names
                if alias.asname and alias.name.startswith("pithauthor.")
            }
    found += [
        f"{named[node.value.id]}.{node.attr}"
        for node in ast.walk(_tree(path))
        if isinstance(node, ast.Attribute)
        and node.attr.startswith("_")
        and not node.attr.startswith("__")
        and isinstance(node.value, ast.Name)
        and named.get(node.value.id, module) != module
    ]
    return found


def test_no_module_takes_another_modules_private_names() -> None:
    """Halves of one concept live in one module, or the seam is a named, documented API: no
    module imports another module's `_name`."""
    reaches = [
        f"{_module_name(path)} <- {name}"
        for path in _modules()
        for name in _private_names_taken(path, _module_name(path))
    ]
    assert reaches == []


def test_the_private_reach_check_sees_one(tmp_path: Path) -> None:
    """Proves the check above can fail: a private name imported (at the top, in a function),
    or read off a module imported by name; its own names and public ones are not faults."""
    source = tmp_path / "bad.py"
    source.write_text(
        "from pithauthor.net import _retry_after\n"
        "from pithauthor.fs import pith_home\n"
        "from pithauthor.bad import _own\n"
        "from pithauthor.identity import fetch\n"
        "import pithauthor.keys.storage as storage\n"
        "def f():\n"
        "    from pithauthor.latex.injection import _step\n"
        "    return fetch._Fetcher, storage._lock, fetch.Fetcher, pith_home._x\n",
        encoding="utf-8",
    )
    assert _private_names_taken(source, "pithauthor.bad") == [
        "pithauthor.net._retry_after",
        "pithauthor.latex.injection._step",
        "pithauthor.identity.fetch._Fetcher",
        "pithauthor.keys.storage._lock",
    ]


# --- the packages depend one way, as docs/architecture.md draws them ------------------------------


def _drawn_layers(text: str) -> list[set[str]]:
    """The package layers docs/architecture.md draws under "## Layers": the first fenced block
    after that heading, one layer a line, the highest first; returned lowest first."""
    block = text.split("\n## Layers\n", 1)[1].split("```", 2)[1]
    lines = [line.split("#")[0].split() for line in block.splitlines()[1:]]
    return [set(words) for words in reversed(lines) if words]


def _package(module: str) -> str:
    """`pithauthor.registry.local.store` -> `registry`; `pithauthor.net` -> `net`; the top
    face `pithauthor` -> `pithauthor`."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else "pithauthor"


def _imports_against(path: Path, module: str, level: dict[str, int]) -> list[str]:
    """Every import in `path` (the module `module`; typing and function-level ones too) of a
    pithauthor package that is not on a lower layer than its own, as `line: a -> b`."""
    found = []
    mine = _package(module)
    for node in ast.walk(_tree(path)):
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and not node.level and node.module:
            targets = [node.module]
            if node.module == "pithauthor":  # `from pithauthor import net`: a module
                targets = [
                    f"pithauthor.{a.name}"
                    if (PACKAGE / a.name).is_dir() or (PACKAGE / f"{a.name}.py").exists()
                    else "pithauthor"
                    for a in node.names
                ]
        else:
            continue
        for target in targets:
            if target.split(".")[0] != "pithauthor":
                continue
            theirs = _package(target)
            if theirs == mine:
                continue
            if theirs not in level or mine not in level:
                found.append(f"{node.lineno}: {mine} -> {theirs} (not drawn)")
            elif level[theirs] >= level[mine]:
                found.append(f"{node.lineno}: {mine} -> {theirs}")
    return sorted(found, key=lambda line: int(line.split(":")[0]))  # ast.walk is breadth-first


def test_packages_depend_one_way_as_the_architecture_page_draws() -> None:
    """docs/architecture.md's drawing is the order the code has: every package is drawn once,
    and a package imports only packages drawn below it (never one beside or above it)."""
    layers = _drawn_layers(ARCHITECTURE.read_text(encoding="utf-8"))
    level = {name: i for i, layer in enumerate(layers) for name in layer}
    assert sum(len(layer) for layer in layers) == len(level), "a package drawn twice"
    packages = {_package(_module_name(path)) for path in _modules()}
    assert packages == set(level)
    offences = {
        str(path.relative_to(PACKAGE)): found
        for path in _modules()
        if (found := _imports_against(path, _module_name(path), level))
    }
    assert offences == {}


def test_the_layer_check_sees_an_import_upward_or_sideways(tmp_path: Path) -> None:
    """Proves the check above can fail: up, sideways, for typing, inside a function, and a
    package the drawing does not have."""
    layers = _drawn_layers("x\n## Layers\n\n```text\nregistry  identity\nlatex\nprotocol\n```\n")
    assert layers == [{"protocol"}, {"latex"}, {"registry", "identity"}]
    level = {name: i for i, layer in enumerate(layers) for name in layer}
    source = tmp_path / "bad.py"
    source.write_text(
        "from pithauthor.protocol.ids import PithNumber\n"
        "from pithauthor.registry.access import check_number\n"
        "if TYPE_CHECKING:\n"
        "    from pithauthor.registry import RegistryAccess\n"
        "def f():\n"
        "    import pithauthor.identity.fetch\n"
        "from pithauthor.nowhere import x\n",
        encoding="utf-8",
    )
    assert _imports_against(source, "pithauthor.latex.bad", level) == [
        "2: latex -> registry",
        "4: latex -> registry",
        "6: latex -> identity",
        "7: latex -> nowhere (not drawn)",
    ]
    assert _imports_against(source, "pithauthor.registry.bad", level) == [
        "6: registry -> identity",
        "7: registry -> nowhere (not drawn)",
    ]


# --- nothing is formatted by hand -----------------------------------------------------------------


def _formatter_off(path: Path) -> list[int]:
    """Lines of `path` that switch the formatter off (`fmt: off`, `fmt: skip`)."""
    return [
        number
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        if re.search(r"#\s*fmt:\s*(off|skip)\b", line)
    ]


def test_no_module_switches_the_formatter_off() -> None:
    """With no cap on a module's length, nothing is squeezed to fit one: the formatter decides
    every line of the package."""
    offences = {
        str(path.relative_to(PACKAGE)): found
        for path in _modules()
        if (found := _formatter_off(path))
    }
    assert offences == {}


def test_the_formatter_check_sees_it_switched_off(tmp_path: Path) -> None:
    """Proves the check above can fail."""
    source = tmp_path / "bad.py"
    source.write_text("a = (1,\n  2)  # fmt: skip\n# fmt: off\nb = 1\n# fmt: on\n", "utf-8")
    assert _formatter_off(source) == [2, 3]


# --- the command line -----------------------------------------------------------------------------


def _cli_faults(path: Path, module: str) -> list[str]:
    """What `path` (the command line's module `module`) takes that it may not: another module's
    private name, or anything through a relative import (which hides what it reaches)."""
    found = [f"private: {n}" for n in _private_names_taken(path, module)]
    found += [
        f"{node.lineno}: relative import"
        for node in ast.walk(_tree(path))
        if isinstance(node, ast.ImportFrom) and node.level
    ]
    return found


def test_the_command_line_takes_no_private_name() -> None:
    """The CLI imports whatever public name it needs from the module that defines it (as
    httpx's `_main.py` does), never a `_name` of another module and never relatively; the
    faces are for scripts."""
    offences = {
        path.name: found
        for path in sorted(CLI.glob("*.py"))
        if (found := _cli_faults(path, _module_name(path)))
    }
    assert offences == {}


def test_the_command_line_check_sees_a_private_name_and_a_relative_import(tmp_path: Path) -> None:
    """Proves the check above can fail (a public name from its home module is no fault)."""
    source = tmp_path / "bad_cmd.py"
    source.write_text(
        "from pithauthor.registry.access import badge_number\n"
        "from pithauthor.keys.storage import _lock\n"
        "from . import output\n",
        encoding="utf-8",
    )
    assert _cli_faults(source, "pithauthor._cli.bad_cmd") == [
        "private: pithauthor.keys.storage._lock",
        "3: relative import",
    ]


# --- sizes: a report, not a gate ------------------------------------------------------------------


def _sizes() -> list[tuple[int, str]]:
    """Every module of the package with its length in lines, the longest first."""
    rows = [
        (len(path.read_text(encoding="utf-8").splitlines()), str(path.relative_to(PACKAGE)))
        for path in _modules()
    ]
    return sorted(rows, key=lambda row: (-row[0], row[1]))


def test_module_sizes_are_reported_not_gated() -> None:
    """A module is as long as its concept, so no length fails a test. The report is for a reader
    looking for a concept that has grown two: `pytest -s tests/test_layout.py -k sizes` prints
    the ten longest modules and how many pass 500 lines."""
    sizes = _sizes()
    print(f"\n{len(sizes)} modules, {sum(n for n, _ in sizes):,} lines; the ten longest:")
    for lines, name in sizes[:10]:
        print(f"{lines:6,}  {name}")
    print(f"over 500 lines: {sum(n > 500 for n, _ in sizes)}")
    assert len(sizes) == len(_modules())


# --- the other rules ------------------------------------------------------------------------------


def test_every_face_offers_exactly_what_it_lists() -> None:
    """Each name a face lists resolves; a package's face lists its names, and no name it offers
    is also one of its modules (importing that module would replace the name on the package)."""
    import importlib
    import pkgutil

    for face in sorted(FACES):
        module = importlib.import_module(face)
        listed = getattr(module, "__all__", None)
        if not hasattr(module, "__path__"):
            if listed is None:
                continue  # a top-level module is its own face: its public names
        else:
            assert listed, f"{face} lists no names"
            submodules = {info.name for info in pkgutil.iter_modules(module.__path__)}
            assert set(listed).isdisjoint(submodules), face
        assert len(set(listed)) == len(listed), face
        missing = [name for name in listed if getattr(module, name, None) is None]
        assert missing == [], face


def test_the_top_level_is_a_short_list() -> None:
    """About 30 names at the top (what a script calls first, its typed results, the root
    error); a name one domain or the command line alone uses stays in its face."""
    import inspect

    assert 25 <= len(pithauthor.__all__) <= 30
    # the root error only: its subclasses are caught through pithauthor.errors
    errors = [name for name in pithauthor.__all__ if name.endswith("Error")]
    assert errors == ["PithError"]
    assert "__version__" in pithauthor.__all__
    for name in pithauthor.__all__:
        value = getattr(pithauthor, name)
        if inspect.isclass(value) or inspect.isfunction(value):
            assert value.__module__.startswith("pithauthor."), name


def _names(app: typer.Typer) -> list[str]:
    commands = [c.name or "" for c in app.registered_commands]
    groups = [
        g.name or (g.typer_instance.info.name if g.typer_instance else "")
        for g in app.registered_groups
    ]
    return [str(name) for name in commands + groups]


def test_every_command_module_joins_pith_through_the_one_table() -> None:
    import importlib

    from pithauthor._cli import catalog, main

    files = {path.stem for path in CLI.glob("*_cmd.py")}
    assert set(catalog.modules()) == files
    rebuilt = typer.Typer()
    for module in catalog.modules():
        importlib.import_module(f"pithauthor._cli.{module}").register(rebuilt)
    # nothing joins `pith` any other way (a decorator in main.py, an add_typer elsewhere)
    assert _names(main.app) == _names(rebuilt)
    assert len(set(_names(main.app))) == len(_names(main.app))


def test_the_registry_client_and_batch_submission_live_in_their_own_modules() -> None:
    import pithauthor.registry.client
    import pithauthor.registry.submit

    assert pithauthor.RegistryClient is pithauthor.registry.RegistryClient
    assert pithauthor.RegistryClient.__module__ == "pithauthor.registry.client"
    assert pithauthor.registry.client.fetch_subject.__module__ == "pithauthor.registry.client"
    for name in ("SubmitResult", "submit_pending", "store_in_outbox"):
        assert getattr(pithauthor.registry, name).__module__ == "pithauthor.registry.submit"
    assert pithauthor.registry.submit.submit_events.__module__ == "pithauthor.registry.submit"
    submit_defs = {
        node.name
        for node in ast.parse(
            Path(pithauthor.registry.submit.__file__).read_text(encoding="utf-8")
        ).body
        if isinstance(node, ast.FunctionDef | ast.ClassDef)
    }
    assert submit_defs.isdisjoint({"RegistryClient", "registry_url", "fetch_subject"})


# Third-party libraries that load slower than Typer (or that only some calls need): library
# modules import them inside the functions that use them, with a note saying why.
DEFERRED = {
    "httpx",
    "nacl",
    "keyring",
    "bibtexparser",
    "pylatexenc",
    "fastjsonschema",  # 50 ms, for `pith bib scan` which validates no event
    "pypdf",
    "filelock",
    "platformdirs",
    "rfc3161_client",  # and cryptography under it: only stamping or checking a token
    "opentimestamps",  # pycryptodome's Keccak and cffi (40 ms): only reading or writing a proof
    "cryptography",
}
# Standard modules a library module may import where they are used, because most calls never
# need them and they cost `pith bib scan` (start-up) a share worth having back.
DEFERRED_STANDARD = {
    "importlib.resources",  # 5 ms (tempfile, zipfile): only event validation reads a schema
    "importlib",  # with pkgutil: the schemas' package imported, as `import` does it
    "pkgutil",  # how the schemas are read (`payloads.load_schema`): `pith bib scan` reads none
    "ssl",  # net.py: loaded with httpx, on the first request; a warm `pith cite` sends none
    "random",  # net.py: only a retried request waits a random while
    "email.utils",  # socket, calendar, random: only an RFC 2822 date (arXiv's, Retry-After)
    "concurrent.futures",  # queue, heapq: only a bibliography the record cache does not answer
    "xml.etree.ElementTree",  # pyexpat: only arXivRaw XML (protocol/record.py) is parsed
    "shutil",  # bz2 and lzma: only a backup that cannot be a hard link copies
    "hashlib",  # OpenSSL: `pith bib scan` hashes nothing
    "datetime",  # the protocol's stamps are made from time.time(); only utc_stamp takes one
    "base64",  # and `struct`: only a Pith Number or key fingerprint is base32 (2M instructions)
    "tarfile",  # shutil, gzip, bz2, lzma: only `pith latex arxiv`'s proof build unpacks (fs.py)
    "zipfile",  # the same, for a project's zip (fs.unpack_archive, an Overleaf download)
    "tempfile",  # shutil and random: only an archive being unpacked needs a temporary folder
    "zlib",  # with zipfile: a damaged member's error class
    "ast",  # _face.py: only a script's first use of a face reads the face's list of names
    "getpass",  # and termios: only a passphrase typed at a prompt (keys/passphrase.py)
}


def _imports_in_functions(path: Path) -> list[str]:
    found: list[str] = []

    def visit(node: ast.AST, in_function: bool) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.Import | ast.ImportFrom) and in_function:
                names = (
                    [a.name for a in child.names]
                    if isinstance(child, ast.Import)
                    else [child.module or "."]
                )
                found.extend(f"{child.lineno}: {name}" for name in names)
            visit(child, in_function or isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef))

    visit(_tree(path), False)
    return found


def test_library_modules_defer_only_slow_third_party_imports() -> None:
    """Everything else a library module needs is imported at its top (no cycles to dodge)."""
    offences = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        if CLI in path.parents:
            continue  # the command line defers library modules for start-up (_cli/__init__.py)
        found = [
            line
            for line in _imports_in_functions(path)
            if line.split(": ")[1].split(".")[0] not in DEFERRED
            and line.split(": ")[1] not in DEFERRED_STANDARD
        ]
        if found:
            offences[str(path.relative_to(PACKAGE))] = found
    assert offences == {}


def _http_clients_made(path: Path) -> list[str]:
    """Every place in `path` that makes an httpx client: `httpx.Client(...)`,
    `httpx.AsyncClient(...)`, or a `Client` imported from httpx and called, as `line: call`."""
    tree = _tree(path)
    imported = {
        alias.asname or alias.name
        for node in ast.walk(tree)
        if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("httpx")
        for alias in node.names
        if alias.name in ("Client", "AsyncClient")
    }
    found = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        func = node.func
        if (
            isinstance(func, ast.Attribute)
            and func.attr in ("Client", "AsyncClient")
            and isinstance(func.value, ast.Name)
            and func.value.id == "httpx"
        ):
            found.append(f"{node.lineno}: httpx.{func.attr}")
        elif isinstance(func, ast.Name) and func.id in imported:
            found.append(f"{node.lineno}: {func.id}")
    return found


def test_an_httpx_client_is_made_in_one_place_the_network_module() -> None:
    """One network layer: every request goes through `pithauthor.net.new_client`'s client
    (URL policy, no redirects, capped and timed reads), never a client made elsewhere."""
    made = {
        str(path.relative_to(PACKAGE)): found
        for path in sorted(PACKAGE.rglob("*.py"))
        if (found := _http_clients_made(path))
    }
    assert list(made) == ["net.py"]
    assert len(made["net.py"]) == 1


def test_the_httpx_client_check_sees_every_form(tmp_path: Path) -> None:
    """Proves the check above can fail: each way of making a client is caught."""
    source = tmp_path / "bad.py"
    source.write_text(
        "import httpx\n"
        "from httpx import Client as C\n"
        "a = httpx.Client(timeout=1)\n"
        "def f():\n"
        "    return C()\n"
        "b = httpx.AsyncClient()\n"
        "c = httpx.Timeout(1)\n",
        encoding="utf-8",
    )
    assert sorted(_http_clients_made(source)) == sorted(
        ["3: httpx.Client", "5: C", "6: httpx.AsyncClient"]
    )


def _error_classes_defined(path: Path, errors: set[str]) -> list[str]:
    """Classes in `path` that derive (directly) from one of the `errors` classes."""
    found = []
    for node in ast.walk(_tree(path)):
        if isinstance(node, ast.ClassDef):
            bases = {
                b.id if isinstance(b, ast.Name) else getattr(b, "attr", "") for b in node.bases
            }
            if bases & errors:
                found.append(node.name)
    return found


def test_every_public_error_is_defined_in_errors_py_and_drawn_in_its_tree() -> None:
    """One error hierarchy, in one module: no PithError subclass lives elsewhere, and each
    one defined there is named in the tree its docstring draws."""
    import inspect

    import pithauthor.errors as errors

    ours = {
        name
        for name, value in vars(errors).items()
        if inspect.isclass(value) and issubclass(value, errors.PithError)
    }
    elsewhere = {
        str(path.relative_to(PACKAGE)): found
        for path in sorted(PACKAGE.rglob("*.py"))
        if path.name != "errors.py" and (found := _error_classes_defined(path, ours))
    }
    assert elsewhere == {}
    tree = errors.__doc__ or ""
    assert sorted(name for name in ours if name not in tree) == []


# a line of the drawing: the tree's lines, one class name or several, the exit code if written
_DRAWN = re.compile(
    r"^(?P<lead>[ │├└─]*)(?P<names>[A-Z]\w*(?:, [A-Z]\w*)*,?)(?:\s+(?P<code>\d+)\b)?"
)


def _drawn_tree(doc: str) -> dict[str, tuple[str | None, int | None]]:
    """The error tree `doc` draws (the indented block under "The tree"): each class with its
    parent and the exit code written beside it (None: none written, it inherits its parent's).
    A class sits 4 columns right of its parent; a line of several names lists siblings (and
    the last of them is the one a deeper line would sit under)."""
    lines = doc.split("The tree", 1)[1].split("\n\n", 2)[1].splitlines()
    drawn: dict[str, tuple[str | None, int | None]] = {}
    stack: list[str] = []  # the current path from the root
    for line in lines:
        m = _DRAWN.match(line.removeprefix("    "))
        assert m, line
        depth = len(m["lead"]) // 4
        names = m["names"].rstrip(",").split(", ")
        del stack[depth:]
        for name in names:
            drawn[name] = (stack[-1] if stack else None, int(m["code"]) if m["code"] else None)
        stack.append(names[-1])
    return drawn


def _tree_faults(drawn: dict[str, tuple[str | None, int | None]], module: object) -> list[str]:
    """Where the drawn tree and the classes of `module` disagree: a parent that is not the
    class's base, an exit code that is not its `exit_code`."""
    faults = []
    for name, (parent, code) in drawn.items():
        cls = getattr(module, name)
        bases = [b.__name__ for b in cls.__bases__ if b.__module__ == cls.__module__]
        if parent is not None and bases != [parent]:
            faults.append(f"{name}: drawn under {parent}, derives from {bases}")
        if code is not None and cls.exit_code != code:
            faults.append(f"{name}: drawn with exit code {code}, has {cls.exit_code}")
    return faults


def test_the_error_tree_drawn_is_the_class_tree() -> None:
    """Each class of the drawing sits under the class it derives from, with its exit code."""
    import inspect

    import pithauthor.errors as errors

    drawn = _drawn_tree(errors.__doc__ or "")
    assert drawn["PithError"] == (None, 1)
    assert drawn["KeyRetired"] == ("KeyStoreError", None)  # on a line of siblings
    assert _tree_faults(drawn, errors) == []
    ours = {
        name
        for name, value in vars(errors).items()
        if inspect.isclass(value) and issubclass(value, errors.PithError)
    }
    assert set(drawn) == ours


def test_the_error_tree_check_sees_a_wrong_drawing() -> None:
    """Proves the check above can fail: a class drawn under the wrong parent, a wrong code."""
    import pithauthor.errors as errors

    doc = (
        "The tree:\n\n"
        "    PithError                     1  (the base)\n"
        "    ├── InputError                3  bad input\n"
        "    │   └── KeyExists                 a key\n"
        "    └── KeyStoreError             4  a key problem\n"
        "        ├── KeyNotFound, WrongPassphrase,\n"
        "        └── KeyringUnavailable        no keyring\n\n"
        "Exit codes\n"
    )
    drawn = _drawn_tree(doc)
    assert drawn["WrongPassphrase"] == ("KeyStoreError", None)
    assert _tree_faults(drawn, errors) == [
        "InputError: drawn with exit code 3, has 2",
        "KeyExists: drawn under InputError, derives from ['KeyStoreError']",
    ]


def test_the_error_class_check_sees_a_subclass_defined_elsewhere(tmp_path: Path) -> None:
    source = tmp_path / "bad.py"
    source.write_text(
        "from pithauthor import errors\n"
        "from pithauthor.errors import InputError\n"
        "class A(InputError): pass\n"
        "class B(errors.NetworkError, ValueError): pass\n"
        "class C(Exception): pass\n",
        encoding="utf-8",
    )
    assert _error_classes_defined(source, {"InputError", "NetworkError"}) == ["A", "B"]


def _imported(path: Path) -> list[tuple[int, str]]:
    """Every module `path` imports (anywhere in it), with its line."""
    found: list[tuple[int, str]] = []
    for node in ast.walk(_tree(path)):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and not node.level and node.module:
            found.append((node.lineno, node.module))
            if node.module == "pithauthor":
                found += [(node.lineno, f"pithauthor.{a.name}") for a in node.names]
    return found


# The protocol part is pure: it computes, it does not reach the world. Besides itself it may use
# `pithauthor.errors` and the standard library's computing modules (and the clock, for `utc_now`);
# these are the ways out.
IMPURE = (
    "os",
    "io",
    "socket",
    "ssl",
    "http",
    "urllib.request",
    "httpx",
    "sqlite3",
    "subprocess",
    "shutil",
    "tempfile",
    "pathlib",
    "keyring",
    "filelock",
    "platformdirs",
    "threading",
)


def _impure(path: Path) -> list[str]:
    found = []
    for line, module in _imported(path):
        top = module.split(".")[0]
        if module.startswith("pithauthor"):
            if not module.startswith(
                ("pithauthor.protocol", "pithauthor.errors", "pithauthor._face")
            ):
                found.append(f"{line}: {module}")
        elif top in IMPURE or module in IMPURE:
            found.append(f"{line}: {module}")
    return found


def test_the_protocol_package_is_pure() -> None:
    offences = {
        str(path.relative_to(PACKAGE)): found
        for path in _modules()
        if PACKAGE / "protocol" in path.parents and (found := _impure(path))
    }
    assert offences == {}


def test_the_purity_check_sees_a_way_out(tmp_path: Path) -> None:
    """Proves the check above can fail."""
    source = tmp_path / "bad.py"
    source.write_text(
        "import hashlib\nimport sqlite3\nfrom pathlib import Path\n"
        "from pithauthor.protocol.ids import PithNumber\nfrom pithauthor.fs import read_user_file\n"
        "def f():\n    import httpx\n",
        encoding="utf-8",
    )
    assert _impure(source) == ["2: sqlite3", "3: pathlib", "5: pithauthor.fs", "7: httpx"]


def test_no_noun_has_two_homes() -> None:
    """A module's name says one thing: no two modules of the package share a name, bar the
    faces' `__init__` and the names the protocol's checks take from the documents they check."""
    allowed = {"__init__", "record"}
    homes: dict[str, list[str]] = {}
    for path in _modules():
        if CLI in path.parents:
            continue
        homes.setdefault(path.stem, []).append(str(path.relative_to(PACKAGE)))
    twice = {stem: where for stem, where in homes.items() if len(where) > 1 and stem not in allowed}
    assert twice == {}
    assert not re.search(r"\b_core\b|\b_registry\b", " ".join(str(p) for p in _modules()))


def test_every_face_is_listed() -> None:
    """A package whose `__init__` offers names is a face in FACES (no hidden faces); the other
    packages' `__init__` only says what the package holds. How many names a face offers, how
    many modules there are and how long each is are not gated: a module is as big as its
    concept."""
    offering = {
        ".".join(("pithauthor", *p.parent.relative_to(PACKAGE).parts)).rstrip(".")
        for p in PACKAGE.rglob("__init__.py")
        if re.search(r"__all__|lazy_face\(", p.read_text(encoding="utf-8"))
    }
    assert offering <= FACES, sorted(offering - FACES)


def test_each_face_writes_its_names_once() -> None:
    """A package's face lists each name once, as a `from M import x as x` line of its
    `if TYPE_CHECKING:` block (what type checkers read), and that block is what it offers at run
    time: its `__all__` and `dir()`, each name the object its home module defines. No `__all__`
    literal or table of homes repeats the list."""
    import importlib

    from pithauthor._face import face_names

    for face in sorted(FACES):
        module = importlib.import_module(face)
        if not hasattr(module, "__path__"):
            continue  # a top-level module is its own face: it defines what it lists
        source = Path(module.__file__ or "").read_text(encoding="utf-8")
        homes = face_names(source)
        assert homes, face
        assert "__all__" not in source, face
        eager = {"__version__"} if face == "pithauthor" else set()
        assert set(module.__all__) == set(homes) | eager, face
        assert set(dir(module)) == set(homes) | eager, face
        for name, home in homes.items():
            assert getattr(module, name) is getattr(importlib.import_module(home), name), name


def test_the_face_list_refuses_what_is_not_a_plain_list() -> None:
    """Proves the one-list reader can fail: a name imported without `as` (which a type checker
    would not take as public) or any statement other than an import is refused, not skipped."""
    from pithauthor._face import face_names

    good = "if TYPE_CHECKING:\n    from pithauthor.keys.author import show as show\n"
    assert face_names(good) == {"show": "pithauthor.keys.author"}
    with pytest.raises(TypeError, match="write `show as show`"):
        face_names("if TYPE_CHECKING:\n    from pithauthor.keys.author import show\n")
    with pytest.raises(TypeError, match="only imports"):
        face_names("if TYPE_CHECKING:\n    import pithauthor.keys\n")
    with pytest.raises(TypeError, match="only imports"):
        face_names("if TYPE_CHECKING:\n    x = 1\n")


def _re_exports(path: Path) -> list[str]:
    """What `path` offers that another module defines: an import marked `x as x`, or a name in
    its `__all__` that it does not define itself."""
    tree = _tree(path)
    defined = set()
    for node in tree.body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            defined.add(node.name)
        elif isinstance(node, ast.Assign):
            defined |= {t.id for t in node.targets if isinstance(t, ast.Name)}
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            defined.add(node.target.id)
    found = [
        f"{node.lineno}: {alias.name} as {alias.asname}"
        for node in ast.walk(tree)
        if isinstance(node, ast.ImportFrom)
        for alias in node.names
        if alias.asname == alias.name
    ]
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(
            isinstance(t, ast.Name) and t.id == "__all__" for t in node.targets
        ):
            found += [f"__all__: {n}" for n in ast.literal_eval(node.value) if n not in defined]
    return found


def test_no_module_re_exports_what_another_defines() -> None:
    """No aliases: outside the faces, a module offers only what it defines."""
    offences = {
        str(path.relative_to(PACKAGE)): found
        for path in _modules()
        if path.name != "__init__.py" and (found := _re_exports(path))
    }
    assert offences == {}


def test_the_re_export_check_sees_both_forms(tmp_path: Path) -> None:
    """Proves the check above can fail."""
    source = tmp_path / "bad.py"
    source.write_text(
        "from pithauthor.net import origin as origin\n"
        "from pithauthor.fs import pith_home\n"
        "from pithauthor.fs import read_user_file as read\n"
        "LIMIT = 3\n"
        "def own() -> None: ...\n"
        '__all__ = ["LIMIT", "own", "pith_home"]\n',
        encoding="utf-8",
    )
    assert _re_exports(source) == ["1: origin as origin", "__all__: pith_home"]
