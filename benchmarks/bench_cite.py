"""Benchmark: sign every citation of a 5,000-entry bibliography (`pith.cite.sign_bibliography`).

The bibliography is the one `bench_bibliography` generates; every identifier is resolved
beforehand to a subject (resolution is network work, measured by `bench_submit`'s registry, not
here). The figure is the whole signing step as `pith cite` takes it, with what the outbox holds
(`Statements`, an empty outbox: this row once timed a batch path the command never
took): deduplication, the outbox asked about each paper, one citation event per distinct paper
built, schema-checked and signed, and a report row per entry. Baseline, measured in the
same run: raw PyNaCl Ed25519 signing of as many 32-byte digests as there are events.
Target (docs/performance.md): <= 2x.
"""

from __future__ import annotations

import hashlib
import os
import tempfile
from pathlib import Path
from typing import Any

from benchmarks._timing import interleaved_medians, row
from benchmarks.bench_bibliography import generate
from benchmarks.bench_events import _BenchSigner

TARGET = 2.0  # docs/performance.md's table of benchmarks
LOCAL = "http://127.0.0.1:8787"  # the registry the outbox is asked about (never contacted)


def run() -> list[dict[str, Any]]:
    from nacl.signing import SigningKey

    from pithauthor.bibliography.cite import sign_bibliography
    from pithauthor.bibliography.reading import read_bibliographies
    from pithauthor.protocol.ids import PithNumber
    from pithauthor.protocol.subject import Subject
    from pithauthor.registry.outbox import Outbox
    from pithauthor.registry.statements import Statements

    with tempfile.TemporaryDirectory() as tmp:
        bib = Path(tmp) / "refs.bib"
        generate(bib)
        reading = read_bibliographies([bib])
    resolved: dict[str, Subject | str] = {}
    for entry in reading.to_sign():
        digest = hashlib.sha256(str(entry.identifier).encode()).hexdigest()
        resolved[str(entry.identifier)] = Subject(PithNumber.from_digest(digest, 2020), digest)
    citing = PithNumber.parse("pith:2023:NFG5PAOXQUVIWDX5F7YSYYL7EW")
    signer = _BenchSigner()
    count = len(sign_bibliography(reading, citing, signer, resolved).events)
    raw_key = SigningKey.generate()
    digests = [hashlib.sha256(str(i).encode()).digest() for i in range(count)]

    def raw() -> None:
        for d in digests:
            raw_key.sign(d)

    def work() -> None:
        # as `pith cite` signs: with what the outbox holds (an empty one here, so
        # every citation is new; the command never signs without it)
        held = Statements.from_outbox(LOCAL)
        sign_bibliography(reading, citing, signer, resolved, held=held)

    saved = os.environ.get("PITH_HOME")
    with tempfile.TemporaryDirectory(prefix="pith-bench-") as home:
        os.environ["PITH_HOME"] = home
        try:
            Outbox().close()  # the outbox `pith cite` reads
            figure, base = interleaved_medians([work, raw], runs=7)
        finally:
            if saved is None:
                os.environ.pop("PITH_HOME", None)
            else:
                os.environ["PITH_HOME"] = saved
    return [
        row(
            f"cite: sign a {len(reading.entries):,}-entry bibliography ({count:,} events)",
            figure,
            base,
            TARGET,
            note="median of 7, interleaved; with the outbox, as `pith cite` signs; "
            "baseline: raw PyNaCl signing of as many digests",
        )
    ]
