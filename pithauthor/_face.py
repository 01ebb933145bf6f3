"""How every public face offers its names: each is loaded from its module on first use (PEP 562).

A face (`pithauthor`, `pithauthor.keys`, `pithauthor.registry`, ...) lists its names in `__all__`
and imports them for type checkers only. Loading them on first use instead of at import time
keeps two promises: `pith --help` and each command load only the modules they call (a face that
imported everything would load SQLite, httpx and PyNaCl for `pith --version`;
tests/test_startup_imports.py), and packages that use each other (`keys` and `identity`,
`registry` and `verify`) never meet half-initialised, because importing a module inside a
package runs that package's face first.
"""

from __future__ import annotations

from importlib import import_module

TYPE_CHECKING = False  # not typing's: `pith --version` loads no typing (pithauthor/__init__.py)
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any


def lazy_face(
    package: str, homes: dict[str, str]
) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """`__getattr__` and `__dir__` for the face `package`, whose names live in `homes`."""
    face = import_module(package)

    def getattr_(name: str) -> Any:
        home = homes.get(name)
        if home is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(import_module(home), name)
        setattr(face, name, value)  # the next use is a plain attribute
        return value

    def dir_() -> list[str]:
        return sorted(homes)

    return getattr_, dir_
