"""Verifying what comes over the network: `pith fetch` saves only documents that verify, from a
hostile registry (a real HTTP server on loopback serving documents the test chose) or the
project's local registry; `pith verify --orcid` gives up on an ORCID API that trickles.
"""

from __future__ import annotations

import contextlib
import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from support.cli import RunPith, StartRegistry
from support.paths import load_fixture

# ================================================================================================
# A hostile registry is a real HTTP server on loopback serving documents the test chose.

RECORD = load_fixture("record-2302.12445v2.json")
STATE = load_fixture("state-2204.10562v1.json")
BODY = RECORD["pith_number"].rsplit(":", 1)[1]


def test_fetch_does_not_save_a_bundle_without_a_receipt(
    pith: RunPith, tmp_path: Path, hostile_registry: tuple[str, dict[str, Any]]
) -> None:
    url, docs = hostile_registry
    docs[f"/pith/{BODY}"] = RECORD
    fake = {k: RECORD[k] for k in ("pith_number", "canonical_record", "canonical_sha256", "source")}
    docs[f"/pith/{BODY}/bundle.json"] = {
        **fake,
        "bundle_type": "pith_open_graph_bundle",
        "events": [],
    }
    out = tmp_path / "bundle.json"
    result = pith("fetch", BODY, "--what", "bundle", "--registry", url, "-o", str(out))
    assert result.returncode == 1, result.stderr
    assert "record_created" in result.stderr
    assert not out.exists()


def test_fetch_refuses_unverifiable_parts_unless_asked(
    pith: RunPith, tmp_path: Path, hostile_registry: tuple[str, dict[str, Any]]
) -> None:
    url, docs = hostile_registry
    body = STATE["pith_number"].rsplit(":", 1)[1]
    record = {
        "pith_number": STATE["pith_number"],
        "canonical_record": STATE["current"]["canonical_record"],
        "canonical_sha256": STATE["current"]["record_created"]["payload"]["canonical_sha256"],
        "receipt": STATE["current"]["record_created"]["payload"]["receipt"],
    }
    page = f"https://pith.science/pith/{body}"
    docs[f"/pith/{body}"] = {
        "record_type": "pith_number_record",
        **record,
        "short_pith_number": "pith:" + body[:8],
        "source": record["canonical_record"]["source"],
        "aliases": STATE["current"]["source_aliases"],
        "agent_actions": {"actions": {"sign_citation": page + "/action/citation_signature"}},
    }
    docs[f"/pith/{body}/state.json"] = STATE
    out = tmp_path / "state.json"
    args = ("fetch", body, "--what", "state", "--registry", url, "-o", str(out))
    result = pith(*args)
    assert result.returncode == 1 and not out.exists()
    assert "--allow-unverifiable" in result.stderr and "merge" in result.stderr
    result = pith(*args, "--allow-unverifiable")
    assert result.returncode == 0, result.stderr
    assert json.loads(out.read_text()) == STATE
    assert "unverifiable" in result.stderr and "verified" not in result.stderr


def test_local_registry_bundles_and_states_fetch_and_verify_strictly(
    pith: RunPith, tmp_path: Path, local_registry: StartRegistry
) -> None:
    from support.registry import TestSigner, citation, manifest_file

    srv = local_registry(tmp_path / "reg")
    import httpx

    event = citation(TestSigner(), 1)
    httpx.post(
        f"{srv.url}/pith/{BODY}/action/citation_signature",
        json=event,
        headers={"Idempotency-Key": event["event_id"]},
    ).raise_for_status()
    manifest = manifest_file(srv.url, tmp_path / "reg", tmp_path / "m.json")
    for what in ("bundle", "state"):
        out = tmp_path / f"{what}.json"
        result = pith(
            "fetch", BODY, "--what", what, "--registry", srv.url,
            "--trust-local-registry", "-o", str(out),
        )  # fmt: skip
        assert result.returncode == 0, result.stderr
        assert f"verified {what} of {RECORD['pith_number']}" in result.stderr
        result = pith("verify", str(out), "--strict", "--trust-manifest", str(manifest))
        assert result.returncode == 0, result.stdout + result.stderr
        assert "unverifiable" not in result.stdout
        assert f"(--trust-manifest {manifest})" in result.stdout


# ================================================================================================
# Hand-edited documents the field-by-field tamper suites do not make: verify refuses them.

EVENTS = Path(__file__).parents[2] / "vectors" / "events" / "valid"


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
    threading.Thread(target=httpd.serve_forever, args=(0.05,), daemon=True).start()
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
