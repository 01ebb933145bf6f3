"""The local registry under stalled clients: 300 GETs (one keep-alive connection) while 120
connections sit idle and 3 have sent half their headers, versus the same GETs with none open.

The ratio is the slow-down stalled clients cause; target <= 1.5 (a thread per connection, or a
pool that gives workers to idle connections, would stall or grow here). Server in its own
process, default limits (16 workers); rounds interleaved, medians compared.
"""

from __future__ import annotations

import socket
import subprocess
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

from benchmarks._timing import interleaved_medians, row

GETS = 300
IDLE = 120  # all from 127.0.0.1, as the GETs: within the cap of 128 per address
HALF = 3
TARGET = 1.5


def _start(data: Path) -> tuple[subprocess.Popen[str], str]:
    cmd = [sys.executable, "-m", "pithauthor", "registry", "serve", "--port", "0"]
    proc = subprocess.Popen(
        [*cmd, "--data", str(data)], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True
    )
    assert proc.stdout is not None
    return proc, proc.stdout.readline().strip()


def _gets(url: str, stalled: bool) -> Callable[[], None]:
    import httpx

    host, port = url.removeprefix("http://").split(":")

    def once() -> None:
        held: list[socket.socket] = []
        try:
            if stalled:
                held = [socket.create_connection((host, int(port))) for _ in range(IDLE + HALF)]
                for sock in held[:HALF]:
                    sock.sendall(b"GET /pith-mirrors.json HTTP/1.1\r\nHost: x\r\n")
            with httpx.Client(base_url=url) as client:
                for _ in range(GETS):
                    if client.get("/pith-mirrors.json").status_code != 200:
                        raise RuntimeError("the registry did not answer")
        finally:
            for sock in held:
                sock.close()

    return once


def run() -> list[dict[str, Any]]:
    with tempfile.TemporaryDirectory(prefix="pith-bench-") as tmp:
        proc, url = _start(Path(tmp) / "registry")
        try:
            stalled, clean = interleaved_medians([_gets(url, True), _gets(url, False)], runs=5)
        finally:
            proc.terminate()
            proc.wait(10)
    return [
        row(
            f"registry: {GETS} GETs with {IDLE} idle + {HALF} half-sent connections open vs none",
            stalled,
            clean,
            TARGET,
            note=f"median of 5 interleaved rounds; {clean / GETS * 1e3:.2f} ms per GET without "
            f"stalled clients, {stalled / GETS * 1e3:.2f} ms with them",
        )
    ]


if __name__ == "__main__":
    for r in run():
        print(r)
