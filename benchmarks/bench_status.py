"""`pith status` of a paper with 1,000, 10,000 and 100,000 citations, run as a user runs
it (a fresh process each time) against the local registry (a real server process on loopback).

First look (an empty PITH_HOME: nothing kept): the command downloads the merged state and
verifies it (the record, every event against its own key, the merge redone here). Baseline,
in the same rounds: a fresh `python -c` that imports httpx and downloads and parses the same
state (the same bytes read, without pith's checks). The figures are CPU seconds of the child
process (the load of other processes hardly changes them). Target (docs/performance.md): a
10,000-event paper under 0.5 s of CPU (in the note); the ratio (what verifying costs over reading,
2x a guide) is informational.

Second look (the state kept from the first, revalidated with `If-None-Match`: 304, nothing
downloaded or verified; the text page, which reads only the kept summary of its first rows and
counts): against the same second look of a 10-event paper. Targets: under 0.2 s of CPU (in the
notes); the 10,000-event paper within 2x of the small paper, the 100,000-event paper within
1.2x (what a second look reads does not grow with the paper's citations).

The 100,000-event paper is looked at once first (it must work: it was refused over 64 MiB
before; its figure is in the note), then its second looks are interleaved with the others.
"""

from __future__ import annotations

import hashlib
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from benchmarks._timing import row

SIZES = (10, 1_000, 10_000, 100_000)
RUNS = 5
FIRST_LIMIT = 0.5  # CPU seconds, 10,000 events
SECOND_LIMIT = 0.2
FLAT = 1.2  # the 100,000-event paper's second look against the 10-event paper's


def _fill(data: Path) -> dict[int, str]:
    """Example papers in a fresh registry folder with SIZES citations each: {size: number}."""
    from nacl.signing import SigningKey

    from pithauthor.protocol.identity import key_id
    from pithauthor.protocol.ids import PithNumber
    from pithauthor.protocol.subject import Subject
    from pithauthor.registry.local.answers import load_or_create_key
    from pithauthor.registry.local.run import add_paper, example_papers
    from pithauthor.registry.local.store import RegistryStore
    from pithauthor.sign import sign_citation

    class Signer:
        def __init__(self) -> None:
            self._key = SigningKey(b"\x09" * 32)
            self.public_key = bytes(self._key.verify_key)
            self.signer_id = key_id(self.public_key)

        def sign_digest(self, digest: bytes) -> bytes:
            return bytes(self._key.sign(digest).signature)

    store, key = RegistryStore(data), load_or_create_key(data)
    papers = example_papers()
    for i in range(len(SIZES) - len(papers)):  # more papers than the examples: synthetic ones
        extra = data.parent / f"2101.9995{i}.json"
        extra.write_text(json.dumps({
            "arxiv_id": f"2101.9995{i}", "latest_version": 1, "authors": "Bench Author",
            "title": f"A benchmark paper {i}", "abstract": "For the benchmark.",
            "categories": "cs.DL", "license": "", "v1_date_rfc2822": "Mon, 4 Jan 2021 10:00:00 GMT",
        }), "utf-8")  # fmt: skip
        papers.append(extra)
    recs = [add_paper(store, key, p)[0] for p in papers[: len(SIZES)]]
    signer = Signer()
    numbers = {}
    for rec, n in zip(recs, SIZES, strict=True):
        subject = Subject(PithNumber.parse(rec.pith_number), rec.canonical_sha256)
        jobs = []
        for i in range(n):
            citing = PithNumber.from_digest(hashlib.sha256(b"%d" % i).hexdigest(), 2024)
            when = "2026-11-29T12:00:00Z"
            jobs.append(sign_citation(signer, subject, citing, "cites", created_at=when))
        body = rec.body
        with ThreadPoolExecutor(64) as pool:  # many waiting writers: large group commits
            list(pool.map(lambda e, b=body: store.insert_event(b, e, "2026-11-29T12:00:00Z"), jobs))
        numbers[n] = rec.pith_number
    store.close()
    return numbers


def _cpu(argv: list[str], env: dict[str, str]) -> float:
    """CPU seconds (user + system) of one run of `argv` (output discarded; failure raises)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    subprocess.run(argv, check=True, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def run() -> list[dict[str, Any]]:
    with tempfile.TemporaryDirectory(prefix="pith-bench-") as tmp:
        root = Path(tmp)
        numbers = _fill(root / "registry")
        serve = [sys.executable, "-m", "pithauthor", "registry", "serve", "--port", "0"]
        quiet = {"stdout": subprocess.PIPE, "stderr": subprocess.DEVNULL, "text": True}
        proc = subprocess.Popen([*serve, "--data", str(root / "registry")], **quiet)  # type: ignore[call-overload]
        assert proc.stdout is not None
        url = proc.stdout.readline().strip()
        try:
            return _measure(root, url, numbers)
        finally:
            proc.terminate()
            proc.wait(10)


def _measure(root: Path, url: str, numbers: dict[int, str]) -> list[dict[str, Any]]:
    import httpx

    for number in numbers.values():  # the registry merges each once (not the client's cost)
        httpx.get(f"{url}/pith/{number.rsplit(':', 1)[1]}/state.json", timeout=3600)
    homes = iter(range(10_000))

    def home() -> dict[str, str]:
        path = root / f"home-{next(homes)}"
        path.mkdir(mode=0o700)
        return {**os.environ, "PITH_HOME": str(path)}

    def status(n: int) -> list[str]:
        return [sys.executable, "-m", "pithauthor", "status", numbers[n], "--registry", url,
                "--trust-local-registry"]  # fmt: skip

    def download(n: int) -> list[str]:
        body = numbers[n].rsplit(":", 1)[1]
        code = (
            "import json, httpx; "
            f"json.loads(httpx.get('{url}/pith/{body}/state.json', timeout=600).content)"
        )
        return [sys.executable, "-c", code]

    rows = []
    for n in (1_000, 10_000):
        firsts, bases = [], []
        for _ in range(RUNS):  # interleaved: a burst of load falls on both
            firsts.append(_cpu(status(n), home()))
            bases.append(_cpu(download(n), dict(os.environ)))
        first, base = statistics.median(firsts), statistics.median(bases)
        limit = f"; target under {FIRST_LIMIT} s CPU: " if n == 10_000 else ""
        if limit:
            limit += "met" if first < FIRST_LIMIT else "NOT met"
        rows.append(
            row(
                f"status: `pith status` of a {n:,}-event paper, first look (CPU)",
                first,
                base,
                2.0,
                note=f"median of {RUNS} interleaved runs, fresh PITH_HOME each; baseline: a "
                f"python process downloading and parsing the same state{limit}",
                informational=True,
            )
        )
    kept = {n: home() for n in (10, 10_000, 100_000)}
    big_first = _cpu(status(100_000), kept[100_000])  # it works: the state is over 64 MiB
    for n in (10, 10_000):
        _cpu(status(n), kept[n])  # the first look keeps the state
    seconds = {n: [] for n in kept}  # type: dict[int, list[float]]
    for _ in range(RUNS):
        for n in kept:
            seconds[n].append(_cpu(status(n), kept[n]))
    second = {n: statistics.median(v) for n, v in seconds.items()}

    def under(n: int) -> str:
        return "met" if second[n] < SECOND_LIMIT else "NOT met"

    rows.append(
        row(
            "status: `pith status` of a 10,000-event paper, second look (kept, 304) vs a "
            "10-event paper's",
            second[10_000],
            second[10],
            2.0,
            note=f"CPU, median of {RUNS}; target under {SECOND_LIMIT} s: {under(10_000)}",
        )
    )
    rows.append(
        row(
            "status: `pith status` of a 100,000-event paper, second look (kept, 304) vs a "
            "10-event paper's",
            second[100_000],
            second[10],
            FLAT,
            note=f"CPU, median of {RUNS} interleaved with the others; target under "
            f"{SECOND_LIMIT} s: {under(100_000)}; its first look {big_first:.1f} s CPU",
        )
    )
    return rows


if __name__ == "__main__":
    for r in run():
        print(r)
