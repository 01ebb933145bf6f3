"""The test suite's own layout: what tests share lives in tests/support/ (helpers,
data, servers) or in conftest.py fixtures; no test module imports another test module or a
conftest; and no test patches a third-party library (typer, httpx, keyring, ...): the suite
drives them through their public API, as `pith` does."""

from __future__ import annotations

import ast
import functools
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

TESTS = Path(__file__).resolve().parent
SUPPORT = TESTS / "support"
NOT_TESTS = (SUPPORT, TESTS / "vectors")  # helpers; the vectors' generator script
OURS = {"pithauthor", "support", "pytest", "_pytest", "hypothesis"}
"""Not a dependency's internals: the package under test, the suite's own helpers, and the test
tools whose public patching API the tests use (monkeypatch)."""


def _test_files() -> list[Path]:
    return sorted(p for p in TESTS.rglob("*.py") if not any(p.is_relative_to(d) for d in NOT_TESTS))


@functools.cache  # both checks read every file: each is parsed once per worker
def _tree(path: Path) -> ast.Module:
    return ast.parse(path.read_text("utf-8"), str(path))


@pytest.fixture(scope="module", autouse=True)
def _free_the_trees() -> Iterator[None]:
    """The parsed trees are shared by this module's rules, then freed: kept for the rest of the
    worker's run, every full garbage collection walks their nodes again (with both modules'
    trees, 0.1-0.2 s each, about 1 CPU-s of `make check`)."""
    yield
    _tree.cache_clear()


def _imported_test_modules(path: Path) -> list[str]:
    """Every import in `path` of a test module or a conftest, as `line: module`."""
    found = []
    for node in ast.walk(_tree(path)):
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            names = [node.module or ""]
        else:
            continue
        for name in names:
            leaf = name.split(".")[-1]
            if leaf == "conftest" or leaf.startswith("test_"):
                found.append(f"{node.lineno}: {name}")
    return found


def _third_party_patches(path: Path) -> list[str]:
    """Every assignment to an attribute of an imported third-party module, and every
    `monkeypatch.setattr` of one (by module object or by dotted path), as `line: target`."""
    tree = _tree(path)
    modules: dict[str, str] = {}  # local name -> module it is bound to
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                modules[alias.asname or alias.name.split(".")[0]] = alias.name
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            for alias in node.names:  # `from typer import main` binds a module too
                modules[alias.asname or alias.name] = f"{node.module}.{alias.name}"

    def third_party(dotted: str) -> bool:
        top = dotted.split(".")[0]
        return top not in OURS and top not in sys.stdlib_module_names

    def root(node: ast.expr) -> str | None:
        while isinstance(node, ast.Attribute):
            node = node.value
        return modules.get(node.id) if isinstance(node, ast.Name) else None

    found = []
    for node in ast.walk(tree):
        targets: list[ast.expr] = []
        if isinstance(node, ast.Assign | ast.AugAssign | ast.AnnAssign):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for target in targets:
                module = root(target) if isinstance(target, ast.Attribute) else None
                if module and third_party(module):
                    found.append(f"{node.lineno}: {module}")
        elif (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr in ("setattr", "delattr")
            and node.args
        ):
            first = node.args[0]
            if isinstance(first, ast.Constant) and isinstance(first.value, str):
                module = first.value if "." in first.value else None
            else:
                module = root(first)
            if module and third_party(module):
                found.append(f"{node.lineno}: {module}")
    return found


def test_no_test_module_imports_another_test_module_or_a_conftest() -> None:
    offences = {
        str(p.relative_to(TESTS)): found
        for p in _test_files() + sorted(SUPPORT.rglob("*.py"))
        if (found := _imported_test_modules(p))
    }
    assert offences == {}


def test_every_python_file_outside_support_is_a_test_module_or_a_conftest() -> None:
    """Helpers live in tests/support/ (imported as `support.<module>`), not beside the tests."""
    stray = [
        str(p.relative_to(TESTS))
        for p in _test_files()
        if p.name != "conftest.py" and not p.name.startswith("test_")
    ]
    assert stray == []


def test_no_test_patches_a_third_party_library() -> None:
    offences = {
        str(p.relative_to(TESTS)): found
        for p in _test_files() + sorted(SUPPORT.rglob("*.py"))
        if (found := _third_party_patches(p))
    }
    assert offences == {}


def test_the_checks_see_every_form(tmp_path: Path) -> None:
    """Proves the checks above can fail: each way of importing a test module or patching a
    library is caught, and patching the package or the standard library is not."""
    source = tmp_path / "test_bad.py"
    source.write_text(
        "import typer.main\n"
        "import httpx\n"
        "from keyring import core\n"
        "import os\n"
        "from pithauthor.keys import secrets\n"
        "from conftest import FIXTURES\n"
        "from test_checks_merge import make_state\n"
        "import test_sty_layout\n"
        "def test(monkeypatch):\n"
        "    typer.main.get_command = len\n"
        "    core._keyring_backend = None\n"
        "    monkeypatch.setattr(httpx, 'Client', object)\n"
        "    monkeypatch.setattr('httpx._client.Client', object)\n"
        "    monkeypatch.setattr(os, 'fsync', len)\n"
        "    monkeypatch.setattr(secrets, 'TEST_FAST_KDF', True)\n",
        encoding="utf-8",
    )
    assert _imported_test_modules(source) == [
        "6: conftest",
        "7: test_checks_merge",
        "8: test_sty_layout",
    ]
    assert _third_party_patches(source) == [
        "10: typer.main",
        "11: keyring.core",
        "12: httpx",
        "13: httpx._client.Client",
    ]


UNIT = TESTS / "unit"
PACKAGE = TESTS.parent / "pithauthor"


def _unmirrored(tests: list[Path], package: Path) -> list[str]:
    """Each unit test file of `tests` whose name says no library module of `package`: a file
    `unit/<package>/test_<module>[_<aspect>].py` tests `<package>/<module>.py`, one of
    `<package>/<sub>/<module>.py` is `test_<sub>_<module>[...]`, and a top-level module `<m>.py`
    has `unit/<m>/test_<m>[...]`."""
    found = []
    for path in tests:
        folder = path.parent.name
        inside = package / folder
        modules = (
            ["_".join(m.relative_to(inside).with_suffix("").parts) for m in inside.rglob("*.py")]
            if inside.is_dir()
            else [folder]
            if (package / f"{folder}.py").is_file()
            else []
        )
        stem = path.stem.removeprefix("test_")
        if not any(stem == m or stem.startswith(f"{m}_") for m in modules if m != "__init__"):
            found.append(f"{folder}/{path.name}")
    return sorted(found)


def test_each_unit_test_file_is_named_for_the_module_it_tests() -> None:
    """tests/unit mirrors the package, so the tests of a module are found from its path, and a
    module's new test goes beside them (tests/cli, tests/security and tests/latex are organised
    by what a user does, and are not held to this)."""
    assert _unmirrored(sorted(UNIT.rglob("test_*.py")), PACKAGE) == []


def test_the_mirror_check_sees_a_stray_name(tmp_path: Path) -> None:
    """Proves the check above can fail: a name that is no module (`test_core_records`), a
    prefix that is only part of a module's name, a folder that is no module, and a nested
    module named without its sub-package are caught; the three good forms pass."""
    for module in (
        "registry/outbox.py",
        "registry/local/server.py",
        "fs.py",
        "registry/__init__.py",
    ):
        (tmp_path / module).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / module).write_text("", encoding="utf-8")
    tests = [
        Path(f"unit/{name}")
        for name in (
            "registry/test_outbox.py",
            "registry/test_outbox_damage.py",
            "registry/test_local_server.py",
            "fs/test_fs_unpack.py",
            "registry/test_core_records.py",
            "registry/test_out.py",
            "protocol/test_ids.py",
            "registry/test_server.py",
        )
    ]
    assert _unmirrored(tests, tmp_path) == [
        "protocol/test_ids.py",
        "registry/test_core_records.py",
        "registry/test_out.py",
        "registry/test_server.py",
    ]
