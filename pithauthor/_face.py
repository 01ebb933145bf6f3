"""How every public face offers its names: each is loaded from its module on first use (PEP 562).

A face (`pithauthor`, `pithauthor.keys`, `pithauthor.registry`, ...) writes its names once, as
the imports of its `if TYPE_CHECKING:` block, each in the explicit re-export form
`from pithauthor.keys.author import show as show`. Type checkers and IDEs read that block as the
face's public names (mypy strict and pyright both take `x as x` as a re-export); `lazy_face`
reads the same block, from the face's source, to learn where each name lives and to answer
`__all__` and `dir()`. So there is no second list (no `__all__` literal, no table of homes, no
`.pyi` stub) to fall out of step with the first.

Loading the names on first use instead of at import time keeps two promises: `pith --help` and
each command load only the modules they call (a face that imported everything would load SQLite,
httpx and PyNaCl for `pith --version`; tests/test_startup_imports.py), and packages that use each
other (`keys` and `identity`, `registry` and `verify`) never meet half-initialised, because
importing a module inside a package runs that package's face first. The block is read on the
first name a script asks a face for, never at import: `pith` imports `pithauthor` and asks
nothing of a face.
"""

from __future__ import annotations

from importlib import import_module

TYPE_CHECKING = False  # not typing's: `pith --version` loads no typing (pithauthor/__init__.py)
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any


def face_names(source: str) -> dict[str, str]:
    """Each name the face whose source is `source` offers, and the module it lives in: the
    `from M import X as X` imports of its top-level `if TYPE_CHECKING:` block. Any other
    statement in that block is refused, so the block stays a plain list."""
    import ast  # here: only a script's first use of a face reads its list

    homes: dict[str, str] = {}
    for node in ast.parse(source).body:
        if isinstance(node, ast.If) and ast.unparse(node.test) == "TYPE_CHECKING":
            for statement in node.body:
                if not (isinstance(statement, ast.ImportFrom) and statement.module):
                    raise TypeError(f"line {statement.lineno}: a face lists only imports")
                for alias in statement.names:
                    if alias.asname != alias.name:
                        raise TypeError(
                            f"line {statement.lineno}: write `{alias.name} as {alias.name}`"
                        )
                    homes[alias.name] = statement.module
    return homes


def lazy_face(package: str, *eager: str) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """`__getattr__` and `__dir__` for the face `package`. Its names are what its
    `if TYPE_CHECKING:` block imports (`face_names`), read the first time one is asked for;
    `__all__` is those names and `eager`, the names the face binds itself (`__version__`)."""
    face = import_module(package)
    homes: dict[str, str] = {}

    def table() -> dict[str, str]:
        if not homes:
            spec = face.__spec__
            # the loader reads the source wherever the package is (a folder or a zip)
            source = spec.loader.get_source(package) if spec and spec.loader else None  # type: ignore[attr-defined]
            if source is None:
                raise ImportError(f"{package}: no source to read the face's names from")
            homes.update(face_names(source))
        return homes

    def getattr_(name: str) -> Any:
        if name == "__all__":
            value: Any = sorted([*table(), *eager])
        elif name.startswith("__"):
            # a probe (`__wrapped__`, `__path__` on a module) is no face name: answer it
            # without reading the list
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        elif (home := table().get(name)) is not None:
            value = getattr(import_module(home), name)
        else:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        setattr(face, name, value)  # the next use is a plain attribute
        return value

    def dir_() -> list[str]:
        return sorted([*table(), *eager])

    return getattr_, dir_
