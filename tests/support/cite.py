"""The cite tests' world, shared by the cite, publish-once and lookup CLI tests: the papers the
local registry adds for them, the bibliography they cite, and how they run `pith cite`. The
fixtures built on it (`cite_registry`, `cite_author`) are in tests/conftest.py."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pithauthor.protocol.record import ArxivMetadata, build_canonical_record, pith_number_of
from support.cli import RunPith
from support.registry import arxiv_metadata

PASSPHRASE = "cite tests passphrase"
EXTRA_IDS = ["2101.99903", "2101.99904", "hep-th/9901001"]
# the arXiv papers cited by biblatex's own example bibliography (TeX Live), registered here with
# synthetic metadata: the registry only has to know them
REAL_BIB_IDS = ["math/0307200", "hep-th/9603067", "1008.2849"]


def number_of(arxiv_id: str) -> str:
    """The full Pith Number of the synthetic paper `arxiv_id` (support.registry.arxiv_metadata)."""
    meta = ArxivMetadata.from_json(arxiv_metadata(arxiv_id))
    return pith_number_of(build_canonical_record(meta)).full


CITING = "2101.99901"  # an example paper of the local registry

BIB = r"""
@article{real, title = {DeAR}, eprint = {2302.12445v1}, archivePrefix = {arXiv},
  pith-relationship = {uses_method}}
@misc{byurl, title = {B}, url = {https://arxiv.org/abs/2101.99903v1}}
@misc{bydoi, title = {C}, doi = {10.48550/arXiv.2101.99904}}
@article{again, title = {C again}, journal = {arXiv preprint arXiv:2101.99904}}
@misc{bypith, title = {D}, pith = {%(PITH)s}}
@misc{missing, title = {Not registered}, eprint = {2101.99999}, archivePrefix = {arXiv}}
@book{nothing, title = {A book without any identifier}, publisher = {P}, year = {2001}}
@misc{badrel, title = {E}, eprint = {2101.99902}, archivePrefix = {arXiv},
  pith-relationship = {likes}}
@misc{self, title = {Our own paper}, eprint = {2101.99901}, archivePrefix = {arXiv}}
"""


def write_bib(tmp_path: Path, text: str = BIB) -> Path:
    """`text` (BIB by default) as tmp_path/refs.bib, its %(PITH)s filled in."""
    path = tmp_path / "refs.bib"
    path.write_text(text % {"PITH": number_of("hep-th/9901001")}, "utf-8")
    return path


def run_cite(pith: RunPith, registry: dict[str, Any], *args: str) -> Any:
    """`pith cite ARGS --from CITING` against `registry` (the `cite_registry` fixture)."""
    return pith(
        "cite", *args, "--from", CITING, "--registry", registry["url"],
        "--trust-manifest", registry["manifest"],
    )  # fmt: skip
