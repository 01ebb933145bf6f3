"""The eight relationships a citation signature may state (OBSERVED on the registry's forms)."""

from __future__ import annotations

RELATIONSHIPS = (
    "supports",
    "refutes",
    "extends",
    "uses_method",
    "depends_on",
    "replaces",
    "compares",
    "cites",
)
