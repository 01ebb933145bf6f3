"""Benchmark: `--lookup` of a 200-entry bibliography against a local arXiv API.

figure   = cost per entry of a lookup that asks the API (fresh cache): batching, HTTP over
           loopback, Atom parsing, matching, caching; arXiv's 3-second spacing is off (loopback);
baseline = cost per entry of the same lookup answered from the cache (one cached answer),
           timed over CACHED_PASSES passes so that it lasts about as long as the figure;
ratio    = median over ROUNDS interleaved rounds of each round's figure/baseline.
           This ratio has no target: the row is informational (10x a guide).
requests = HTTP requests for the 200 entries, against the 200 one-title requests it would take
           without batching; target <= 1/10 (the request budget: at most 200/10).
"""

from __future__ import annotations

import random
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from benchmarks._timing import interleaved_times, paired_ratios, row
from benchmarks.bench_bibliography import _WORDS  # one word list for made-up titles

ENTRIES = 200
SEED = 20261130
ROUNDS = 15
CACHED_PASSES = 10  # one cached pass takes ~0.1 s: too short to time on a busy machine
#: The local arXiv API server lives with the tests.
sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))
_SURNAMES = ["Smith", "Müller", "García", "Wang", "Kim", "Novak", "Rossi", "Dubois", "Tanaka"]


def papers_and_bib(path: Path, entries: int = ENTRIES) -> list[Any]:
    """The local arXiv's papers (each entry's, and as many unrelated ones) and the .bib."""
    from support.arxiv_server import Paper

    rng = random.Random(SEED)
    papers, out = [], []
    for i in range(2 * entries):
        title = " ".join(rng.sample(_WORDS, 7)).capitalize() + f" {i}"
        names = rng.sample(_SURNAMES, 3)
        year = 2010 + i % 15
        number = f"{i:05d}" if year >= 2015 else f"{i + 1:04d}"  # 5 digits from 2015 on
        papers.append(
            Paper(f"{year % 100:02d}{1 + i % 12:02d}.{number}", title,
                  [f"A. {n}" for n in names], f"{year}-03-01T00:00:00Z")
        )  # fmt: skip
        if i < entries:
            authors = " and ".join(f"{n}, A." for n in names)
            out.append(
                f"@article{{key{i},\n  title={{{title.lower()}}},\n  author={{{authors}}},\n"
                f"  journal={{Journal of things}},\n  year={{{year + i % 2}}}\n}}\n"
            )
    path.write_text("\n".join(out), encoding="utf-8")
    return papers


def run() -> list[dict[str, Any]]:
    from support.arxiv_server import ArxivServer

    from pithauthor.bibliography.arxiv_api import ArxivApi
    from pithauthor.bibliography.identifiers import name_key, person, to_unicode
    from pithauthor.bibliography.lookup import LookupCache, lookup_identifiers
    from pithauthor.bibliography.matching import normal_title, phrase_words, title_words
    from pithauthor.bibliography.reading import read_bibliographies

    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        bib = root / "refs.bib"
        papers = papers_and_bib(bib)
        reading = read_bibliographies([bib])
        with ArxivServer(papers) as server, ArxivApi(server.url) as api:
            warm = LookupCache(root / "warm")
            warm.folder.mkdir()
            first = lookup_identifiers(reading, api, cache=warm)
            resolved = sum(e.identifier_source == "lookup" for e in first.reading.entries)
            fresh: list[LookupCache] = []

            def clear() -> None:
                for memo in (to_unicode, normal_title, title_words, phrase_words, person,
                             name_key):  # fmt: skip
                    memo.cache_clear()  # no help from earlier runs

            def setup() -> None:
                clear()
                fresh.append(LookupCache(Path(tempfile.mkdtemp(dir=root))))

            def asking() -> None:
                lookup_identifiers(reading, api, cache=fresh[-1])

            def cached() -> None:
                for _ in range(CACHED_PASSES):
                    clear()
                    result = lookup_identifiers(reading, api, cache=warm)
                    assert result.requests == 0

            cached_times, asking_times = interleaved_times(
                [cached, asking], ROUNDS, setup=setup, clock=time.process_time
            )
    baselines = [t / CACHED_PASSES / ENTRIES for t in cached_times]
    figures = [t / ENTRIES for t in asking_times]
    ratios = sorted(paired_ratios(figures, baselines))
    result = row(
        f"lookup, per entry, {ENTRIES} entries asked of a local arXiv API (vs one cached answer)",
        statistics.median(figures),
        statistics.median(baselines),
        10.0,
        note=f"{resolved}/{ENTRIES} resolved; median of {ROUNDS} interleaved rounds' ratios "
        f"(range {ratios[0]:.1f}-{ratios[-1]:.1f}x); no target, 10x a guide",
        informational=True,
    )
    result["ratio"] = statistics.median(ratios)
    result["met"] = result["ratio"] <= result["target"]
    return [
        result,
        row(
            f"lookup, HTTP requests for {ENTRIES} entries (vs one request per entry)",
            float(first.requests),
            float(ENTRIES),
            0.1,
            unit="requests",
            note="titles batched 10 a request (OR of ti: phrases); the budget: at most 200/10",
        ),
    ]


if __name__ == "__main__":
    for r in run():
        sys.stdout.write(f"{r}\n")
