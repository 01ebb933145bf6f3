"""The package's public faces, as tests/test_layout.py enforces them and tests/test_docs_api.py
holds the docs to them (docs/architecture.md lists them).

A face is a package's __init__ (its names in `__all__`) or a top-level module that is its own
face. Everything else is how a face does its work, and may change without notice."""

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
    "pithauthor.fs",
    "pithauthor.doctor",
    "pithauthor.progress",
}
