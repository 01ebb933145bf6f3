"""The local registry merges a paper's stored events without verifying each again
(they were checked in full when stored), and the state is the one a full check gives."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import httpx
import pytest
from support.registry import SUBJECT, TestSigner, attestation, citation, start_server

from pithauthor.protocol.checks import merge
from pithauthor.registry.local.answers import state_document


def test_a_state_from_the_store_is_merged_without_a_second_check_and_is_the_same(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    server = start_server(tmp_path / "registry")
    try:
        signer = TestSigner()
        events = [citation(signer, i) for i in range(5)] + [attestation(signer)]
        for event in events:
            server.store.insert_event(SUBJECT.pith_number.body, event, event["created_at"])  # type: ignore[arg-type]
        rec = server.store.find(SUBJECT.pith_number.body)
        assert rec is not None
        stored = server.store.events(rec.body)
        full = state_document(rec, server.key, stored)  # every event checked again

        def no_check(event: Any) -> Any:
            raise AssertionError("checked again")

        with monkeypatch.context() as patched:
            patched.setattr(merge, "checked_author_event", no_check)
            answer = httpx.get(f"{server.url}/pith/{rec.body}/state.json", timeout=30)
            with pytest.raises(AssertionError, match="checked again"):
                state_document(rec, server.key, stored)  # events not from the store: checked
    finally:
        server.stop()
    assert answer.status_code == 200
    served = json.loads(answer.content)
    assert served == json.loads(json.dumps(full))
    assert served["valid_event_count"] == 7 and served["invalid_event_count"] == 0
