"""The published OpenTimestamps vectors (tests/vectors/opentimestamps): reproducible, and each
valid or invalid as it says."""

from __future__ import annotations

import base64
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from support.ots_calendar import TEST_FLOOR

from pithauthor.errors import VerificationError
from pithauthor.protocol.utc import utc_stamp
from pithauthor.timestamps.headers import PRODUCTION_FLOOR, Floor, ShippedHeaders
from pithauthor.timestamps.ots import check_proof

VECTORS = Path(__file__).parents[2] / "vectors" / "opentimestamps"
VALID = sorted((VECTORS / "valid").glob("*.json"))
INDEX = json.loads((VECTORS / "invalid" / "index.json").read_text("utf-8"))
FLOORS: dict[str, Floor] = {"test": TEST_FLOOR, "mainnet": PRODUCTION_FLOOR}


def _check(vector: dict[str, Any]) -> Any:
    headers = {int(h): bytes.fromhex(raw) for h, raw in vector["headers"].items()}
    return check_proof(
        base64.b64decode(vector["proof_b64"]),
        bytes.fromhex(vector["digest_hex"]),
        ShippedHeaders(headers),
        FLOORS[vector["floor"]],
    )


def test_regenerating_the_vectors_gives_identical_bytes(tmp_path: Path) -> None:
    subprocess.run(
        [sys.executable, str(VECTORS / "generate.py"), str(tmp_path)], check=True, timeout=120
    )
    made = sorted(p.relative_to(tmp_path) for p in tmp_path.rglob("*.json"))
    committed = sorted(p.relative_to(VECTORS) for p in VECTORS.rglob("*.json"))
    assert made == committed
    for rel in made:
        assert (tmp_path / rel).read_bytes() == (VECTORS / rel).read_bytes(), rel


@pytest.mark.parametrize("path", VALID, ids=lambda p: p.stem)
def test_each_valid_vector_proves_what_it_says(path: Path) -> None:
    vector = json.loads(path.read_text("utf-8"))
    assert vector["digest_hex"] == vector["event_id"].removeprefix("sha256:")
    proven = _check(vector)
    if vector["proven"] is None:
        assert proven is None
    else:
        assert proven is not None
        assert {"time": utc_stamp(proven.time), "by": proven.by} == vector["proven"]


@pytest.mark.parametrize("name", sorted(INDEX))
def test_each_invalid_vector_is_refused_for_its_reason(name: str) -> None:
    vector = json.loads((VECTORS / "invalid" / name).read_text("utf-8"))
    with pytest.raises(VerificationError, match=INDEX[name]["error"]):
        _check(vector)


def test_every_invalid_file_is_in_the_index() -> None:
    files = {p.name for p in (VECTORS / "invalid").glob("*.json")} - {"index.json"}
    assert files == set(INDEX)
