"""Counts kept by the tamper suites, printed at the end of the run (see conftest.py)."""

from __future__ import annotations

COUNTS: dict[str, dict[str, int]] = {}


def count(suite: str, **numbers: int) -> None:
    """Add `numbers` (tried=..., refused=..., ...) to the row of `suite`."""
    row = COUNTS.setdefault(suite, {})
    for name, n in numbers.items():
        row[name] = row.get(name, 0) + n


def lines() -> list[str]:
    """One line per suite: `record: tried 812, refused 640, accepted as not signed 172`."""
    return [
        f"{suite}: " + ", ".join(f"{name.replace('_', ' ')} {n}" for name, n in row.items())
        for suite, row in sorted(COUNTS.items())
    ]
