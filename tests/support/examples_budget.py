"""How many examples a Hypothesis test draws: all it asks for under `make test-all` and CI
(PITH_SLOW=1), a third of them (at least 50) in `make check` and `make test`, the edit loop."""

from __future__ import annotations

import os


def examples(thorough: int) -> int:
    """`thorough` when the slow tests run, else a third of it (at least 50)."""
    if os.environ.get("PITH_SLOW") == "1":
        return thorough
    return max(50, thorough // 3)
