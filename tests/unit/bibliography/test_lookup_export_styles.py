"""`--lookup` over a bibliography in each export style (Google Scholar, DBLP, ACL Anthology,
Zotero + Better BibTeX, INSPIRE, NASA ADS, MathSciNet), against the local arXiv API
(tests/support/arxiv_server.py, over loopback HTTP in arXiv's Atom format) holding the real papers
as arXiv stores them and decoys made to be taken by a wrong rule (tests/support/lookup_corpus.py).

The figure: resolved / should-resolve (entries whose paper is on arXiv), and wrong ids, which
must be 0: an entry resolved to another paper, or to any paper when its own is not on arXiv.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from support.arxiv_server import ArxivServer
from support.lookup_corpus import DECLARED, ON_ARXIV, PAPERS, STYLES

from pithauthor.bibliography.arxiv_api import ArxivApi
from pithauthor.bibliography.lookup import LookupCache, lookup_identifiers
from pithauthor.bibliography.reading import BibEntry, read_bibliographies

EXPORTS = Path(__file__).parents[2] / "fixtures" / "bib" / "lookup"
#: Resolved entries of the 29 whose paper is on arXiv. The three not resolved: Goodfellow's
#: "nets" (arXiv's title is "Networks"), Gubser's "noncritical" (arXiv: "Non-Critical", which
#: its search splits), Green-Tao (preprint 4 years before, and a later same-title decoy).
RESOLVED_FLOOR = 26


@pytest.fixture(scope="module")
def server() -> Iterator[ArxivServer]:
    with ArxivServer(PAPERS) as running:
        yield running


def _looked_up(server: ArxivServer, name: str, tmp_path: Path) -> dict[str, BibEntry]:
    cache = LookupCache(tmp_path / name)
    cache.folder.mkdir(exist_ok=True)
    with ArxivApi(server.url) as api:
        result = lookup_identifiers(read_bibliographies([EXPORTS / name]), api, cache=cache)
    return {entry.key: entry for entry in result.reading.entries}


def _wrong(entry: BibEntry) -> bool:
    return entry.identifier_source == "lookup" and str(entry.identifier) != ON_ARXIV[entry.key]


@pytest.mark.parametrize("style", STYLES)
def test_every_entry_of_each_style_gets_its_own_id_or_none(
    server: ArxivServer, style: str, tmp_path: Path
) -> None:
    entries = _looked_up(server, STYLES[style], tmp_path)
    assert set(entries) <= set(ON_ARXIV) | set(DECLARED)  # the table covers the file
    for key, entry in entries.items():
        if key in DECLARED:  # found in its own fields, not looked up
            assert (str(entry.identifier), entry.identifier_source) != (None, "lookup")
            assert str(entry.identifier) == DECLARED[key]
            continue
        assert not _wrong(entry), (key, entry.identifier, entry.lookup_detail)
        if ON_ARXIV[key] is None:
            assert entry.status in ("ambiguous", "not_found"), (key, entry.lookup_detail)


def test_the_figure_resolved_of_should_resolve_and_no_wrong_id(
    server: ArxivServer, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    lines, should, resolved, wrong = [], 0, 0, 0
    for style, name in STYLES.items():
        entries = [e for e in _looked_up(server, name, tmp_path).values() if e.key in ON_ARXIV]
        on_arxiv = [e for e in entries if ON_ARXIV[e.key] is not None]
        right = [e for e in on_arxiv if str(e.identifier) == ON_ARXIV[e.key]]
        bad = [e.key for e in entries if _wrong(e)]
        should, resolved, wrong = should + len(on_arxiv), resolved + len(right), wrong + len(bad)
        lines.append(f"  {style}: {len(right)}/{len(on_arxiv)} resolved, {len(bad)} wrong")
    with capsys.disabled():
        print(f"\nlookup over 7 export styles: {resolved}/{should} resolved, {wrong} wrong ids")
        print("\n".join(lines))
    assert wrong == 0
    assert should == 29 and resolved >= RESOLVED_FLOOR


def test_the_decoys_leave_entries_ambiguous_with_every_candidate(
    server: ArxivServer, tmp_path: Path
) -> None:
    maths = _looked_up(server, STYLES["MathSciNet"], tmp_path)
    green_tao = maths["MR2415383"]
    assert green_tao.status == "ambiguous"
    assert "0805.4417" in green_tao.lookup_detail and "math/0404188" in green_tao.lookup_detail
    assert "except for its year" in green_tao.lookup_detail
    assert str(maths["MR3090258"].identifier) == "1111.4914"  # not its survey
    assert maths["MR0705527"].status == "not_found"
    dblp = _looked_up(server, STYLES["DBLP"], tmp_path)
    chapter = dblp["DBLP:series/ssml/ElskenMH19"]
    assert chapter.status == "ambiguous" and "another title" in (chapter.lookup_detail or "")
    assert str(dblp["DBLP:journals/jmlr/RaffelSRLNMZLL20"].identifier) == "1910.10683"
    scholar = _looked_up(server, STYLES["Google Scholar"], tmp_path)
    for key in ("james2013introduction", "lee1999learning"):  # given-name decoys only
        assert scholar[key].status == "ambiguous", key
        assert "no author in common" in (scholar[key].lookup_detail or "")
    assert scholar["goodfellow2014generative"].status == "not_found"
