"""Benchmark: `pith verify --orcid` on 2,000 claims by one author, against plain verification.

The ORCID record is served by a loopback HTTP server (ORCID's v3.0 `researcher-urls` shape).
Baseline, measured in the same run: verifying the same 2,000 claims without an identity.
Target: <= 1.3x (the record is fetched once per run, not once per claim; the identity checks
themselves are pure).
"""

from __future__ import annotations

import hashlib
import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from benchmarks._timing import interleaved_medians, row

N = 2_000
RUNS = 5
TARGET = 1.3
ORCID = "0000-0002-1825-0097"


class _Signer:
    """A throw-away key for the benchmark (never a way to make real keys)."""

    def __init__(self) -> None:
        from nacl.signing import SigningKey

        from pithauthor.protocol.identity import key_id

        self._key = SigningKey.generate()
        self.public_key = bytes(self._key.verify_key)
        self.key_id = key_id(self.public_key)
        self.signer_id = f"orcid:{ORCID}"

    def sign_digest(self, digest: bytes) -> bytes:
        return bytes(self._key.sign(digest).signature)


def _server(key_id: str) -> ThreadingHTTPServer:
    body = json.dumps(
        {
            "researcher-url": [
                {
                    "url-name": "Pith author key",
                    "url": {"value": f"https://pith.science/key/{key_id}"},
                    "path": f"/{ORCID}/researcher-urls/1",  # each link must be the iD's own
                }
            ],
            "path": f"/{ORCID}/researcher-urls",
        }
    ).encode()

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args: Any) -> None:
            pass

        def do_GET(self) -> None:
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


def run() -> list[dict[str, Any]]:
    from pithauthor.identity.proofs import verify_identity
    from pithauthor.protocol.ids import PithNumber
    from pithauthor.protocol.subject import Subject
    from pithauthor.sign import attest_authorship
    from pithauthor.verify import verify_documents

    signer = _Signer()
    claims = []
    for i in range(N):
        digest = hashlib.sha256(f"paper {i}".encode()).hexdigest()
        subject = Subject(PithNumber.from_digest(digest, 2000 + i % 26), digest)
        claims.append(
            attest_authorship(
                signer,
                subject,
                name="Josiah Carberry",
                orcid=ORCID,
                identity_proofs=[{"kind": "orcid", "locator": ORCID}],
            )
        )
    server = _server(signer.key_id)
    api = f"http://127.0.0.1:{server.server_address[1]}/v3.0"

    def plain() -> None:
        if not verify_documents(claims).ok:
            raise AssertionError("a fresh claim failed to verify")

    def with_identity() -> None:
        report = verify_documents(claims)
        verify_identity(claims, report, orcid=ORCID, orcid_api=api)
        if not report.ok:
            raise AssertionError("the identity failed to verify")

    try:
        base, figure = interleaved_medians([plain, with_identity], runs=RUNS)
    finally:
        server.shutdown()
        server.server_close()
    return [
        row(
            "identity: verify --orcid 2k claims (loopback ORCID) vs verify them plainly",
            figure,
            base,
            TARGET,
            note=f"median of {RUNS} interleaved runs; ORCID asked once per run",
        )
    ]


if __name__ == "__main__":
    for r in run():
        print(
            f"{r['name']}: {r['figure']:.3f}{r['unit']} vs {r['baseline']:.3f}"
            f"{r['unit']} = {r['ratio']:.2f}x (target {r['target']}x)"
        )
