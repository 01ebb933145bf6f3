"""Hand-edited documents the field-by-field tamper suites do not make: verify refuses them."""

from __future__ import annotations

import copy
from typing import Any

import pytest
from conftest import load_fixture

from pithauthor._core.canonical import canonical_sha256
from pithauthor.verify import verify_document


def _rehashed(state: dict[str, Any]) -> dict[str, Any]:
    """The state with `state_sha256` recomputed, as anyone editing it can."""
    body = {k: v for k, v in state.items() if k != "state_sha256"}
    return {**body, "state_sha256": canonical_sha256(body)}


@pytest.mark.parametrize("event_type", ["author_attestation", "record_created"])
@pytest.mark.parametrize("where", ["graph_snapshots", "mirror_hints"])
def test_a_state_registry_list_holding_an_author_or_record_event_fails(
    event_type: str, where: str
) -> None:
    state = load_fixture("state-2204.10562v1.json")
    forged = copy.deepcopy(state["current"]["graph_snapshots"][0])
    forged.update(event_type=event_type, event_id="sha256:" + "0" * 64, payload={"x": 1})
    state["current"][where].append(forged)
    report = verify_document(_rehashed(state))
    assert not report.ok
    index = len(state["current"][where]) - 1
    failed = [c.name for c in report.checks if c.status == "failed"]
    assert failed == [f"current.{where}[{index}].event_type"]
