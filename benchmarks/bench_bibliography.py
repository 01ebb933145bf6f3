"""Benchmark: reading a 5,000-entry bibliography against bibtexparser's own parse.

figure   = `read_bibliographies` (parse + string/crossref resolution + identifier extraction +
           Unicode titles) on a generated 5,000-entry .bib;
baseline = plain `bibtexparser.parse_file` (its default parse stack) of the same file;
target   = ratio <= 1.5.
"""

from __future__ import annotations

import random
import sys
import tempfile
from pathlib import Path
from typing import Any

from benchmarks._timing import interleaved_medians, row

ENTRIES = 5000
SEED = 20260601
REPEATS = 7

_WORDS = [
    "learning",
    "neural",
    "quantum",
    "graph",
    "sparse",
    "robust",
    "optimal",
    "transport",
    "attention",
    "field",
    "theory",
    "lattice",
    "gauge",
    "inference",
    "bayesian",
    "stochastic",
    "gradient",
    "convex",
    "manifold",
    "spectral",
    "kernel",
    "entropy",
    "causal",
    "diffusion",
    "random",
    "matrix",
    "topological",
    "phase",
    "transition",
    "scattering",
]
_LATEX_TITLES = (
    r"Schr{\"o}dinger operators and {$\alpha$}-stable processes",
    r"Caf{\'e} au lait: {\em a} study of {BERT} \& friends",
    r"On the {Erd\H{o}s}--R{\'e}nyi model",
)
_SURNAMES = [
    "Smith",
    'M{\\"u}ller',
    "Garc{\\'\\i}a",
    "Wang",
    "Kim",
    "Novak",
    "Rossi",
    "Dubois",
    "Tanaka",
    "Silva",
]


def _identifier_fields(rng: random.Random, i: int) -> list[str]:
    year = 7 + i % 17
    new_id = f"{year:02d}{1 + i % 12:02d}.{(i * 7919) % 10000:04d}"
    if year >= 15:
        new_id = f"{year:02d}{1 + i % 12:02d}.{(i * 7919) % 100000:05d}"
    kind = i % 10
    if kind == 0:
        return [f"eprint = {{{new_id}}}", "archivePrefix = {arXiv}", "primaryClass = {cs.LG}"]
    if kind == 1:
        return [f"journal = {{arXiv preprint arXiv:{new_id}}}"]
    if kind == 2:
        return [
            "journal = {CoRR}",
            f"volume = {{abs/{new_id}}}",
            f"url = {{http://arxiv.org/abs/{new_id}}}",
        ]
    if kind == 3:
        return [f"doi = {{10.48550/arXiv.{new_id}}}", "publisher = {arXiv}"]
    if kind == 4:
        return [f"url = {{https://arxiv.org/pdf/{new_id}v{1 + i % 3}.pdf}}"]
    if kind == 5:
        return [f"note = {{arXiv:hep-th/{9 + i % 1:01d}{(1 + i % 12) % 10}{i % 10}{i % 1000:04d}}}"]
    if kind == 6:
        return [f"eprint = {{{new_id}}}", "eprinttype = {arxiv}", "eprintclass = {math.AG}"]
    # published papers with no arXiv identifier
    return [f"journal = {{Phys. Rev. {rng.choice('ABDE')}}}", f"doi = {{10.1103/PhysRev.{i}}}"]


def generate(path: Path, entries: int = ENTRIES, seed: int = SEED) -> None:
    """A deterministic bibliography mixing export styles and identifier forms."""
    rng = random.Random(seed)
    out = ['@string{prl = "Physical Review Letters"}', "% generated for benchmarking\n"]
    for i in range(entries):
        if i % 25 == 0:
            title = rng.choice(_LATEX_TITLES)
        else:
            words = rng.sample(_WORDS, 6)
            title = " ".join(words).capitalize() + (" with {GPU}s" if i % 7 == 0 else "")
        authors = " and ".join(rng.sample(_SURNAMES, 3))
        fields = [
            f"title = {{{title}}}",
            f"author = {{{authors}}}",
            f"year = {{{2000 + i % 25}}}",
            *_identifier_fields(rng, i),
        ]
        if i % 50 == 0:
            fields.append("journal = prl")
        body = ",\n  ".join(fields)
        out.append(f"@article{{key{i},\n  {body},\n}}\n")
    path.write_text("\n".join(out), encoding="utf-8")


def run() -> list[dict[str, Any]]:
    import bibtexparser

    from pithauthor.bibliography.identifiers import to_unicode
    from pithauthor.bibliography.reading import read_bibliographies

    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "refs.bib"
        generate(path)

        def ours() -> object:
            to_unicode.cache_clear()  # no help from earlier rounds
            return read_bibliographies([path])

        baseline, figure = interleaved_medians(
            [lambda: bibtexparser.parse_file(str(path)), ours], runs=REPEATS
        )
    return [
        row(
            f"read_bibliographies, {ENTRIES} entries (vs bibtexparser.parse_file)",
            figure,
            baseline,
            1.5,
            note=f"median of {REPEATS} interleaved runs",
        )
    ]


if __name__ == "__main__":
    for r in run():
        sys.stdout.write(f"{r}\n")
