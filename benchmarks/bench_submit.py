"""Submission throughput: 2,000 signed events to the local registry (a real server process on
loopback), one at a time versus in parallel (8 in flight). The ratio is the speed-up; its target
(>= 3) is a minimum, not a maximum.

Two rows: plain loopback (no network latency at all: both sides are CPU- and fsync-bound, so the
speed-up is bounded by the machine's cores), and the same registry with an emulated 5 ms round
trip per POST (a nearby registry; pith.science from most places is further away), which is what
parallel submission exists for.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

EVENTS = 2000
PARALLEL = 8


def _events(n: int, tag: str) -> list[dict[str, Any]]:
    import hashlib

    from nacl.signing import SigningKey

    from pithauthor._core.envelope import seal, signer_block, unsigned_event
    from pithauthor._core.key_identity import key_id
    from pithauthor._core.pith_number import PithNumber

    class Signer:
        def __init__(self) -> None:
            self.key = SigningKey.generate()
            self.public_key = bytes(self.key.verify_key)
            self.signer_id = key_id(self.public_key)

        def sign_digest(self, digest: bytes) -> bytes:
            return bytes(self.key.sign(digest).signature)

    signer = Signer()
    subject = PithNumber.parse("pith:2023:NFG5PAOXQUVIWDX5F7YSYYL7EW")
    sha = "694dd781d7852a8b0efd2ff12c617f25b959612a7c7a23e12497b4715d745ec0"
    out = []
    for i in range(n):
        citing = PithNumber.from_digest(hashlib.sha256(f"{tag}{i}".encode()).hexdigest(), 2024)
        payload = {
            "payload_schema": "pithauthor.citation_signature.v1",
            "canonical_sha256": sha,
            "citing_pith_number": citing.full,
            "relationship": "cites",
        }
        unsigned = unsigned_event(
            "citation_signature", subject, "2026-11-29T12:00:00Z", signer_block(signer), payload
        )
        out.append(seal(unsigned, signer))
    return out


LATENCY = 0.005
_SERVE_WITH_LATENCY = """
import sys
from pathlib import Path
from pithauthor._registry.papers import add_paper, example_papers
from pithauthor._registry.server import FaultPlan, RegistryServer
srv = RegistryServer(Path(sys.argv[1]), faults=FaultPlan(every=0, delay_seconds=float(sys.argv[2])))
for p in example_papers():
    add_paper(srv.store, srv.key, p)
print(srv.url, flush=True)
srv.serve_forever()
"""


def _start(data: Path, latency: float = 0.0) -> tuple[subprocess.Popen[str], str]:
    cmd = [sys.executable, "-m", "pithauthor", "registry", "serve", "--port", "0", "--examples"]
    cmd += ["--data", str(data)]
    if latency:
        cmd = [sys.executable, "-c", _SERVE_WITH_LATENCY, str(data), str(latency)]
    proc = subprocess.Popen(
        cmd,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    assert proc.stdout is not None
    return proc, proc.stdout.readline().strip()


def _submit(url: str, outbox_path: Path, events: list[dict[str, Any]], parallel: int) -> float:
    from pithauthor._outbox import Outbox
    from pithauthor.submit import RegistryClient, submit_pending
    from pithauthor.trust import pinned_trust

    with Outbox(outbox_path) as outbox:
        outbox.store(events)
    with RegistryClient(url, trust=pinned_trust(), max_connections=parallel) as client:
        client.trust_local_registry()
        client.record(events[0]["subject_pith_number"])  # warm: not part of the timing
        start = time.perf_counter()
        result = submit_pending(client=client, parallel=parallel, outbox_path=outbox_path)
        elapsed = time.perf_counter() - start
    if not result.ok or len(result.accepted) != len(events):
        raise RuntimeError(f"benchmark submission failed: {result.as_dict()}")
    return elapsed


def _measure(root: Path, latency: float, label: str) -> dict[str, Any]:
    proc, url = _start(root / f"registry-{label}", latency)
    try:
        seq = _submit(url, root / f"seq-{label}.sqlite3", _events(EVENTS, "seq" + label), 1)
        par = _submit(url, root / f"par-{label}.sqlite3", _events(EVENTS, "par" + label), PARALLEL)
    finally:
        proc.terminate()
        proc.wait(10)
    figure, baseline = EVENTS / par, EVENTS / seq
    return {
        "name": f"submit {EVENTS} events, {PARALLEL} in parallel vs one at a time ({label})",
        "figure": round(figure, 1),
        "baseline": round(baseline, 1),
        "ratio": round(figure / baseline, 2),
        "target": 3.0,
        "unit": "events/s (target is a minimum speed-up)",
    }


def run() -> list[dict[str, Any]]:
    with tempfile.TemporaryDirectory(prefix="pith-bench-") as tmp:
        root = Path(tmp)
        old_home = os.environ.get("PITH_HOME")
        os.environ["PITH_HOME"] = str(root / "home")
        try:
            return [
                _measure(root, 0.0, "loopback, no latency"),
                _measure(root, LATENCY, f"{LATENCY * 1000:.0f} ms emulated round trip"),
            ]
        finally:
            if old_home is None:
                os.environ.pop("PITH_HOME", None)
            else:
                os.environ["PITH_HOME"] = old_home


if __name__ == "__main__":
    for row in run():
        print(row)
