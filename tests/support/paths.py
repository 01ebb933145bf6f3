"""Where the tests' files are: the repository, tests/fixtures, and reading a JSON fixture."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]
FIXTURES = REPO / "tests" / "fixtures"


def load_fixture(name: str) -> Any:
    """A JSON fixture from tests/fixtures (a .jsonl file gives a list)."""
    path = FIXTURES / name
    if name.endswith(".jsonl"):
        return [json.loads(line) for line in path.read_text("utf-8").splitlines() if line]
    return json.loads(path.read_text("utf-8"))
