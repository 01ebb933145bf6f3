"""The package's layout rules (README "Layout"): the command line imports only the public API,
every command joins `pith` one way, and the registry client lives apart from batch submission."""

from __future__ import annotations

import ast
from pathlib import Path

import typer

import pithauthor

PACKAGE = Path(pithauthor.__file__).parent
CLI = PACKAGE / "_cli"
# what `_cli/` may import besides public modules: itself, and the version string
CLI_MAY_IMPORT = ("pithauthor._cli", "pithauthor._version")


def _private_imports(path: Path) -> list[str]:
    """Every import in `path` (at the top, in functions, under TYPE_CHECKING) of a private
    pithauthor module or name, as `line: module`."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:  # relative imports hide what they reach
                found.append(f"{node.lineno}: relative import")
                continue
            module = node.module or ""
            targets = [module]
            if module == "pithauthor":
                targets += [f"pithauthor.{alias.name}" for alias in node.names]
        else:
            continue
        for target in targets:
            parts = target.split(".")
            if parts[0] != "pithauthor" or target.startswith(CLI_MAY_IMPORT):
                continue
            if any(part.startswith("_") for part in parts[1:]):
                found.append(f"{node.lineno}: {target}")
    return sorted(found, key=lambda line: int(line.split(":")[0]))


def test_the_command_line_imports_no_private_pithauthor_module() -> None:
    offences = {
        path.name: found for path in sorted(CLI.glob("*.py")) if (found := _private_imports(path))
    }
    assert offences == {}


def test_the_private_import_check_sees_every_form(tmp_path: Path) -> None:
    """Proves the check above can fail: each way of reaching a private module is caught."""
    source = tmp_path / "bad.py"
    source.write_text(
        "from pithauthor.fs import read_user_text\n"
        "import pithauthor.registry.outbox\n"
        "from pithauthor import fs\n"
        "def f():\n"
        "    from pithauthor.protocol.subject import Subject\n"
        "from . import sibling\n"
        "from pithauthor._cli.output import data\n"
        "from pithauthor.registry.client import RegistryClient\n",
        encoding="utf-8",
    )
    assert _private_imports(source) == [
        "1: pithauthor.fs",
        "2: pithauthor.registry.outbox",
        "3: pithauthor.fs",
        "5: pithauthor.protocol.subject",
        "6: relative import",
    ]


def _names(app: typer.Typer) -> list[str]:
    commands = [c.name or "" for c in app.registered_commands]
    groups = [
        g.name or (g.typer_instance.info.name if g.typer_instance else "")
        for g in app.registered_groups
    ]
    return [str(name) for name in commands + groups]


def test_every_command_module_joins_pith_through_the_one_table() -> None:
    from pithauthor._cli import main

    files = {f"pithauthor._cli.{path.stem}" for path in CLI.glob("*_cmd.py")}
    assert {module.__name__ for module in main.COMMANDS} == files
    rebuilt = typer.Typer()
    for module in main.COMMANDS:
        module.register(rebuilt)
    # nothing joins `pith` any other way (a decorator in main.py, an add_typer elsewhere)
    assert _names(main.app) == _names(rebuilt)
    assert len(set(_names(main.app))) == len(_names(main.app))


def test_the_registry_client_and_batch_submission_live_in_their_own_modules() -> None:
    import pithauthor.registry.client
    import pithauthor.registry.submit

    for name in ("RegistryClient", "RetryPolicy", "registry_url", "fetch_subject", "resolve_arxiv"):
        assert getattr(pithauthor, name) is getattr(pithauthor.registry.client, name)
    assert pithauthor.RegistryClient.__module__ == "pithauthor.registry.client"
    assert pithauthor.fetch_subject.__module__ == "pithauthor.registry.client"
    for name in ("SubmitResult", "submit_pending", "submit_events", "store_in_outbox"):
        assert getattr(pithauthor, name).__module__ == "pithauthor.registry.submit"
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
    "pypdf",
    "filelock",
    "platformdirs",
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

    visit(ast.parse(path.read_text(encoding="utf-8")), False)
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
        ]
        if found:
            offences[str(path.relative_to(PACKAGE))] = found
    assert offences == {}


def _http_clients_made(path: Path) -> list[str]:
    """Every place in `path` that makes an httpx client: `httpx.Client(...)`,
    `httpx.AsyncClient(...)`, or a `Client` imported from httpx and called, as `line: call`."""
    tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
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
    assert list(made) == ["_http.py"]
    assert len(made["_http.py"]) == 1


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
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
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
