"""Submission throughput: 2,000 signed events to the local registry (a real server process on
loopback), one at a time versus in parallel (8 in flight). The ratio is the speed-up; its target
(>= 3) is a minimum, not a maximum.

Each row runs ROUNDS rounds; a round submits 2,000 fresh events sequentially, then 2,000 others
in parallel (so load from elsewhere falls on both), and the medians of the rounds are compared.

Two rows: the same registry with an emulated 5 ms round trip per POST (the server sleeps 5 ms
before answering each POST: a nearby registry; pith.science from most places is further away),
which is what parallel submission exists for; and plain loopback, with no latency at all. On
loopback both processes are CPU-bound (the note gives the CPU each used per event), so on a
2-core machine the speed-up cannot reach 3: it is informational (see docs/performance.md).
"""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from benchmarks._timing import row

EVENTS = 2000
PARALLEL = 8
ROUNDS = 5
TARGET = 3.0


def _events(n: int, tag: str) -> list[dict[str, Any]]:
    import hashlib

    from nacl.signing import SigningKey

    from pithauthor.protocol.events import seal, signer_block, unsigned_event
    from pithauthor.protocol.identity import key_id
    from pithauthor.protocol.ids import PithNumber

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
from pithauthor.registry.local.run import add_paper, example_papers
from pithauthor.registry.local.server import FaultPlan, RegistryServer
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


def _process_cpu(pid: int) -> float:
    """CPU seconds (user + system) used so far by process `pid` (Linux; else 0)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _submit(
    url: str, outbox_path: Path, events: list[dict[str, Any]], parallel: int, server_pid: int
) -> tuple[float, float, float]:
    """(seconds, client CPU seconds, server CPU seconds) of sending `events` from an outbox."""
    from pithauthor.registry.client import RegistryClient
    from pithauthor.registry.outbox import Outbox
    from pithauthor.registry.submit import submit_pending
    from pithauthor.verify import pinned_trust

    with Outbox(outbox_path) as outbox:
        outbox.store(events, url)
    with RegistryClient(url, trust=pinned_trust(), max_connections=parallel) as client:
        client.trust_local_registry()
        client.record(events[0]["subject_pith_number"])  # warm: not part of the timing
        cpu0, server0 = time.process_time(), _process_cpu(server_pid)
        start = time.perf_counter()
        result = submit_pending(client=client, parallel=parallel, outbox_path=outbox_path)
        elapsed = time.perf_counter() - start
        cpu, server = time.process_time() - cpu0, _process_cpu(server_pid) - server0
    if not result.ok or len(result.accepted) != len(events):
        raise RuntimeError(f"benchmark submission failed: {result.as_dict()}")
    return elapsed, cpu, server


def _measure(root: Path, latency: float, label: str) -> dict[str, Any]:
    proc, url = _start(root / f"registry-{label}", latency)
    seq: list[tuple[float, float, float]] = []
    par: list[tuple[float, float, float]] = []
    try:
        for n in range(ROUNDS):
            tag = f"{label}{n}"
            for out, parallel in ((seq, 1), (par, PARALLEL)):
                events = _events(EVENTS, f"{parallel}{tag}")
                out.append(_submit(url, root / f"{parallel}{tag}.db", events, parallel, proc.pid))
    finally:
        proc.terminate()
        proc.wait(10)

    def ms(runs: list[tuple[float, float, float]], i: int) -> float:
        """Median per-event milliseconds of item i (0 wall, 1 client CPU, 2 registry CPU)."""
        return statistics.median(r[i] for r in runs) / EVENTS * 1e3

    seq_wall, par_wall = ms(seq, 0), ms(par, 0)
    client, server = ms(par, 1), ms(par, 2)
    # Each process runs its Python on one core at a time (the GIL), so however the work
    # overlaps, parallel sending takes at least max(client, registry) CPU per event.
    bound = seq_wall / max(client, server, (client + server) / (os.cpu_count() or 1))
    note = (
        f"median of {ROUNDS} interleaved rounds; per event: one at a time {seq_wall:.2f} ms "
        f"wall, in parallel {par_wall:.2f} ms wall with client {client:.2f} ms + registry "
        f"{server:.2f} ms CPU: about {bound:.1f}x at best on this machine"
    )
    return row(
        f"submit {EVENTS} events, {PARALLEL} in parallel vs one at a time ({label})",
        1e3 / par_wall,
        1e3 / seq_wall,
        TARGET,
        "events/s",
        higher_is_better=True,
        note=note,
        informational=not latency,
    )


def run() -> list[dict[str, Any]]:
    with tempfile.TemporaryDirectory(prefix="pith-bench-") as tmp:
        root = Path(tmp)
        old_home = os.environ.get("PITH_HOME")
        os.environ["PITH_HOME"] = str(root / "home")
        try:
            return [
                _measure(root, LATENCY, f"{LATENCY * 1000:.0f} ms emulated round trip"),
                _measure(root, 0.0, "loopback, no latency"),
            ]
        finally:
            if old_home is None:
                os.environ.pop("PITH_HOME", None)
            else:
                os.environ["PITH_HOME"] = old_home


if __name__ == "__main__":
    for r in run():
        print(r)
