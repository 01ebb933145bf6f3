"""`pith cite refs.bib` of 300 and of 5,000 entries as an author runs it: a fresh process, the
outbox in use, against the local registry (a real server process on loopback).

The registry's key is trusted as an author of pith.science has its key: from a file, read at
start (`--trust-manifest FILE`, the local registry's `/pith-mirrors.json` saved once, as
docs/submit.md and docs/registry.md describe), so a warm run asks the registry nothing, as an
author's run against pith.science, whose key is pinned, asks nothing. The same command with
`--trust-local-registry` instead (which fetches that manifest on every run, and so loads
httpx for one request) is a second, informational row, in the same rounds.

Every entry names an arXiv paper the registry holds. The record cache is warm (a first run
resolved and fetched every record, as an author's earlier run or `pith bib scan --lookup` has),
and the outbox's pending events are dropped before each run (`pith outbox drop --pending`), so
every run signs 300 citations anew and stores them. The key is stored without a passphrase:
unlocking one (the key file's KDF) is reported apart, in the note. Baseline, in the same
rounds: `pith bib scan` of the same file (a fresh process) plus raw PyNaCl signing of 300
digests. CPU seconds of the processes (what other processes' load hardly changes); median of 5
interleaved rounds (the 5,000-entry file: 3). Target (docs/performance.md): <= 2x for 300
entries; the 5,000-entry row holds the same ratio as a guide (informational): what grows with the
bibliography is the signing and storing, which the baseline grows with too.
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
import time
import urllib.request
from pathlib import Path
from typing import Any

from benchmarks._timing import row

ENTRIES = 300
RUNS = 5
BIG_ENTRIES = 5_000  # a long bibliography (a review article's), as the command runs it
BIG_RUNS = 3
TARGET = 2.0


def _cpu(argv: list[str], env: dict[str, str], ok: tuple[int, ...] = (0,)) -> float:
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    done = subprocess.run(argv, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                          stdin=subprocess.DEVNULL, text=True)  # fmt: skip
    if done.returncode not in ok:
        raise RuntimeError(f"{argv[3:5]} failed: {done.stderr.strip()[-300:]}")
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def _registry(root: Path, count: int) -> tuple[str, list[str]]:
    """A registry folder with the example papers and `count` synthetic ones: (the citing
    paper's number, the synthetic arXiv ids)."""
    from pithauthor.registry.local.answers import load_or_create_key
    from pithauthor.registry.local.run import add_paper, example_papers
    from pithauthor.registry.local.store import RegistryStore

    data = root / "registry"
    store, key = RegistryStore(data), load_or_create_key(data)
    citing = add_paper(store, key, example_papers()[0])[0].pith_number
    ids = [f"2101.9{i:04d}" for i in range(count)]
    for aid in ids:
        meta = root / f"{aid}.json"
        meta.write_text(json.dumps({
            "arxiv_id": aid, "latest_version": 1, "authors": "Bench Author, Other Author",
            "title": f"A cited paper {aid}", "abstract": "For the benchmark.",
            "categories": "cs.DL", "license": "", "v1_date_rfc2822": "Mon, 4 Jan 2021 10:00:00 GMT",
        }), "utf-8")  # fmt: skip
        add_paper(store, key, meta)
    store.close()
    return citing, ids


def _bib(path: Path, ids: list[str]) -> None:
    entries = [
        f"@article{{ref{i},\n  title = {{A cited paper {aid}}},\n  author = {{Author, Bench}},\n"
        f"  year = {{2021}},\n  eprint = {{{aid}}},\n  archivePrefix = {{arXiv}},\n}}\n"
        for i, aid in enumerate(ids)
    ]
    path.write_text("\n".join(entries), "utf-8")


def run() -> list[dict[str, Any]]:
    unlock = _unlock_seconds()
    rows = []
    for entries, runs in ((ENTRIES, RUNS), (BIG_ENTRIES, BIG_RUNS)):
        figure, local, base = _measure(entries, runs)
        note = (
            f"CPU of the processes, median of {runs} interleaved; baseline: `pith bib scan` of "
            f"the same file plus raw signing of {entries:,} digests; record cache warm, pending "
            "events dropped each run"
        )
        big = entries != ENTRIES
        rows.append(
            row(
                f"cite: `pith cite refs.bib` of {entries:,} entries, outbox in use, key unlock "
                "apart",
                figure,
                base,
                TARGET,
                note=f"{note}; the local registry's key from its saved manifest "
                f"(--trust-manifest FILE); unlocking a passphrase key (its KDF) adds "
                f"{unlock:.2f} s"
                + ("; the 2x of 300 entries as a guide (informational)" if big else ""),
                informational=big,
            )
        )
        if not big:
            rows.append(
                row(
                    "cite: the same with `--trust-local-registry` (its manifest fetched each run)",
                    local,
                    base,
                    TARGET,
                    note=f"{note}; one request per run, and httpx loaded for it (informational)",
                    informational=True,
                )
            )
    return rows


def _measure(entries: int, runs: int) -> tuple[float, float, float]:
    """Medians of CPU seconds over `runs` interleaved rounds: `pith cite` of an `entries`-entry
    file trusting a saved manifest, the same trusting the local registry, and the baseline."""
    from nacl.signing import SigningKey

    with tempfile.TemporaryDirectory(prefix="pith-bench-") as tmp:
        root = Path(tmp)
        citing, ids = _registry(root, entries)
        bib = root / "refs.bib"
        _bib(bib, ids)
        home = root / "home"
        home.mkdir(mode=0o700)
        env = {**os.environ, "PITH_HOME": str(home)}
        make_key = (
            "from pithauthor.keys.author import generate; generate('bench', public_name="
            "'Bench Author', backend='file', insecure_plaintext=True, note=lambda _: None)"
        )
        subprocess.run([sys.executable, "-c", make_key], env=env, check=True)
        serve = [sys.executable, "-m", "pithauthor", "registry", "serve", "--port", "0"]
        quiet = {"stdout": subprocess.PIPE, "stderr": subprocess.DEVNULL, "text": True}
        proc = subprocess.Popen([*serve, "--data", str(root / "registry")], **quiet)  # type: ignore[call-overload]
        url = proc.stdout.readline().strip()
        manifest = root / "pith-mirrors.json"  # saved once, as an author keeps a manifest
        with urllib.request.urlopen(f"{url}/pith-mirrors.json", timeout=30) as answer:
            manifest.write_bytes(answer.read())
        pith = [sys.executable, "-m", "pithauthor"]
        cite_base = [*pith, "cite", str(bib), "--from", citing, "--yes", "--registry", url]
        cite = [*cite_base, "--trust-manifest", str(manifest)]
        cite_local = [*cite_base, "--trust-local-registry"]
        scan = [*pith, "bib", "scan", str(bib)]
        raw_key = SigningKey.generate()
        digests = [hashlib.sha256(b"%d" % i).digest() for i in range(entries)]

        def empty_outbox() -> None:  # as an author's outbox: there, holding nothing pending
            drop = [*pith, "outbox", "drop", "--pending", "--yes"]
            subprocess.run(drop, env=env, check=True, capture_output=True)

        try:
            _cpu(cite, env)  # warm: the records resolved, fetched and cached once
            figures, locals_, bases = [], [], []
            for _ in range(runs):
                empty_outbox()
                figures.append(_cpu(cite, env))
                if entries == ENTRIES:  # the informational row: the 300-entry file only
                    empty_outbox()
                    locals_.append(_cpu(cite_local, env))
                start = time.process_time()
                for d in digests:
                    raw_key.sign(d)
                signing = time.process_time() - start
                bases.append(_cpu(scan, env) + signing)
        finally:
            proc.terminate()
            proc.wait(10)
    local = statistics.median(locals_) if locals_ else float("nan")
    return statistics.median(figures), local, statistics.median(bases)


def _unlock_seconds() -> float:
    """CPU seconds of unlocking a passphrase-protected key, as `pith cite` does first."""
    script = (
        "import os, time; from pithauthor.keys.author import generate, load_signing_key; "
        "generate('k', backend='file', note=lambda _: None); "
        "t = time.process_time(); load_signing_key('k'); print(time.process_time() - t)"
    )
    with tempfile.TemporaryDirectory(prefix="pith-bench-") as home:
        os.chmod(home, 0o700)
        env = {**os.environ, "PITH_HOME": home, "PITH_PASSPHRASE": "bench passphrase"}
        done = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True,
                              text=True, check=True)  # fmt: skip
    return float(done.stdout.strip().splitlines()[-1])


if __name__ == "__main__":
    for r in run():
        print(r)
