"""The package's public faces, as tests/test_layout.py enforces them and tests/test_docs_api.py
holds the docs to them (docs/architecture.md lists them).

A face is a package's __init__ (its names: the imports of its `if TYPE_CHECKING:` block,
pithauthor/_face.py) or a top-level module that is its own face (its `__all__`). Everything
else is how a face does its work, and may change without notice."""

from __future__ import annotations

FACES = {
    "pithauthor",
    "pithauthor.errors",
    "pithauthor.protocol",
    "pithauthor.keys",
    "pithauthor.registry",
    "pithauthor.identity",
    "pithauthor.bibliography",
    "pithauthor.latex",
    "pithauthor.doctor",
    "pithauthor.progress",
    "pithauthor.timestamps",
}
