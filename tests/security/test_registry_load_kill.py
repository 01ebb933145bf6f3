"""Slow: the local registry under load, killed with SIGKILL in the middle of it.

30 clients post 3,000 signed events over keep-alive connections to a registry process; when a
third are acknowledged, the process is killed with SIGKILL and started again on the same data,
and the clients carry on (retrying what got no answer). Every event acknowledged (201, or 200
for one stored before its answer was lost) is then served by the registry, once."""

from __future__ import annotations

import json
import signal
import statistics
import threading
import time
from pathlib import Path

import httpx
import pytest
from support.registry import SUBJECT, TestSigner, citation, free_port, spawn_server

CLIENTS = 30
PER_CLIENT = 100
ACTION = f"/pith/{SUBJECT.pith_number.body}/action/citation_signature"


@pytest.mark.slow
def test_3000_events_from_30_clients_with_a_kill_9_lose_no_acknowledged_event(
    tmp_path: Path,
) -> None:
    data, port = tmp_path / "reg", free_port()
    url = f"http://127.0.0.1:{port}"
    batches = [[citation(TestSigner(), i) for i in range(PER_CLIENT)] for _ in range(CLIENTS)]
    acked: dict[str, int] = {}
    seconds: list[float] = []
    lock = threading.Lock()
    failures: list[str] = []

    def client(events: list[dict[str, object]]) -> None:
        with httpx.Client(base_url=url, timeout=10) as http:
            for event in events:
                eid = str(event["event_id"])
                body = json.dumps(event).encode()
                headers = {"Idempotency-Key": eid, "Content-Type": "application/json"}
                for _ in range(400):  # about 20 s of retries at most: the restart takes ~1 s
                    started = time.monotonic()
                    try:
                        answer = http.post(ACTION, content=body, headers=headers)
                    except httpx.TransportError:  # killed under us: no answer, send again
                        time.sleep(0.05)
                        continue
                    if answer.status_code in (200, 201):
                        with lock:
                            acked[eid] = answer.status_code
                            seconds.append(time.monotonic() - started)
                        break
                    if answer.status_code != 503:
                        failures.append(f"{answer.status_code} {answer.text[:200]}")
                        return
                    time.sleep(0.05)
                else:
                    failures.append(f"{eid} never acknowledged")
                    return

    proc = spawn_server(data, port)
    threads = [threading.Thread(target=client, args=(b,), daemon=True) for b in batches]
    try:
        for thread in threads:
            thread.start()
        deadline = time.monotonic() + 120
        while len(acked) < CLIENTS * PER_CLIENT // 3 and time.monotonic() < deadline:
            time.sleep(0.01)
        proc.send_signal(signal.SIGKILL)
        with lock:
            before_kill = set(acked)
        proc.wait()
        assert 0 < len(before_kill) < CLIENTS * PER_CLIENT  # killed in the middle
        proc = spawn_server(data, port)
        for thread in threads:
            thread.join(300)
        assert not any(t.is_alive() for t in threads)
        assert failures == []
        bundle = httpx.get(f"{url}/pith/{SUBJECT.pith_number.body}/bundle.json", timeout=60)
        served = [e["event_id"] for e in bundle.json()["events"][1:]]  # after record_created
    finally:
        proc.kill()
        proc.wait()
    assert len(served) == len(set(served)), "an event is served twice"
    lost = before_kill - set(served)
    assert not lost, f"{len(lost)} events acknowledged before the kill are gone"
    assert set(acked) == set(served) == {e["event_id"] for b in batches for e in b}
    p50, p99 = (statistics.quantiles(seconds, n=100)[k] * 1e3 for k in (49, 98))
    print(
        f"registry load: {len(acked)} events from {CLIENTS} clients acknowledged, "
        f"{len(before_kill)} before the kill -9, lost 0, duplicated 0; "
        f"POST p50 {p50:.0f} ms, p99 {p99:.0f} ms"
    )
