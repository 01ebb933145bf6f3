"""A registry's state may list, in `timestamp_anchors` and `storage_attestations`, events the
registry signed itself (its own anchors: the record page's "anyone can re-stamp"): those are
judged by their key as its other events are, never failed as author events; the anchor
verdict calls them claimed, not checked. A local state (our merge) holds author events only."""

from __future__ import annotations

import copy
from typing import Any

from support.paths import load_fixture

from pithauthor.protocol.checks.merge import state_hash
from pithauthor.protocol.checks.state import check_state
from pithauthor.timestamps.anchor import anchor_verdict
from pithauthor.timestamps.headers import PRODUCTION_FLOOR
from pithauthor.verify import pinned_trust


def _with_registry_anchor(event_type: str | None) -> dict[str, Any]:
    """The real state vector with its registry-signed graph snapshot also listed as an anchor
    (rehashed: only the place is new)."""
    state = load_fixture("state-2204.10562v1.json")
    anchor = copy.deepcopy(state["current"]["graph_snapshots"][0])
    anchor["event_id"] = "sha256:" + "ab" * 32
    if event_type is not None:
        anchor["event_type"] = event_type
    state["current"]["timestamp_anchors"] = [anchor]
    state["applied_event_ids"].append(anchor["event_id"])
    state["state_sha256"] = state_hash(state)
    return state


def test_a_registry_signed_anchor_in_a_registry_state_is_unverifiable_not_failed() -> None:
    for event_type in (None, "timestamp_anchor"):
        state = _with_registry_anchor(event_type)
        report = check_state(state, pinned_trust())
        assert report.ok, report.failed
        registry = next(c for c in report.checks if c.name == "registry_events")
        assert "current.timestamp_anchors[0]" in registry.paths
        digest = state["current"]["record_created"]["payload"]["canonical_sha256"]
        verdict = anchor_verdict(state, digest, None, PRODUCTION_FLOOR)
        assert not verdict.proven
        assert "claimed by the registry, not checked" in verdict.detail


def test_an_event_signed_by_no_trusted_key_there_fails() -> None:
    state = _with_registry_anchor(None)
    state["current"]["timestamp_anchors"][0]["signer"]["key_id"] = "someone-else"
    state["state_sha256"] = state_hash(state)
    report = check_state(state, pinned_trust())
    assert [c.name for c in report.failed] == ["current.timestamp_anchors[0].signer"]
