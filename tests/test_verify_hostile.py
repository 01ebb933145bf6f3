"""Hand-edited documents the field-by-field tamper suites do not make: verify refuses them."""

from __future__ import annotations

import contextlib
import copy
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from conftest import RunPith, load_fixture

from pithauthor._core.canonical import canonical_sha256
from pithauthor.verify import verify_document

EVENTS = Path(__file__).parent / "vectors" / "events" / "valid"


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


class _Trickle(BaseHTTPRequestHandler):
    """An ORCID API answering valid JSON one byte every 0.1 s (about 5 s in all)."""

    def do_GET(self) -> None:
        body = b'{"researcher-url": [], "x": "' + b"a" * 20 + b'"}'
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        with contextlib.suppress(OSError):  # the client hangs up, as it should
            for byte in body:
                self.wfile.write(bytes([byte]))
                self.wfile.flush()
                time.sleep(0.1)

    def log_message(self, *args: Any) -> None:
        pass


def test_an_orcid_api_trickling_its_answer_is_a_time_out_exit_3(pith: RunPith) -> None:
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), _Trickle)
    httpd.daemon_threads = True
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    api = f"http://127.0.0.1:{httpd.server_address[1]}/v3.0"
    try:
        result = pith(
            "verify", str(EVENTS / "author_attestation.json"), "--orcid", "0000-0002-1825-0097",
            "--orcid-api", api, "--proof-timeout", "1",
        )  # fmt: skip
    finally:
        httpd.shutdown()
    assert result.returncode == 3, (result.stdout, result.stderr)
    assert "no whole answer within 1 s" in result.stdout + result.stderr
