"""arXiv's author order of one paper version (`author_order`), from the arXiv API's entry
(`id_list`) through `ArxivApi.entry`, against a local stand-in over loopback: the entry must be
the version asked for, the answer is cached (a later call asks nothing), and arXiv away or
silent about the paper is an answer without names that says why, never an exception."""

from __future__ import annotations

from pathlib import Path

import pytest
from support.arxiv_server import DEAR_ARXIV_ORDER, ArxivServer, Paper, feed
from support.registry import free_port

from pithauthor.bibliography.arxiv_api import ArxivApi
from pithauthor.bibliography.arxiv_order import author_order
from pithauthor.bibliography.lookup import LookupCache

V1 = Paper("2302.12445", "DeAR", ["Lin Zhang", "Shaohuai Shi"], "2023-02-24T04:11:18Z", version=1)


def test_an_entry_of_another_version_is_not_taken_for_the_one_asked(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A server that answers v1 whatever is asked: v2's order is not v1's (authors change
    between versions), so asking v2 finds no entry."""
    with ArxivServer([V1]) as server:

        def only_v1(query: str, start: int, size: int, id_list: str = "") -> tuple[int, bytes]:
            return 200, feed(query, [V1], 1, 0, size)

        monkeypatch.setattr(server.state, "answer", only_v1)
        with ArxivApi(server.url) as api:
            assert api.entry("2302.12445v2") is None
            found = api.entry("2302.12445v1")
            assert found is not None and found.authors == ("Lin Zhang", "Shaohuai Shi")
            latest = api.entry("2302.12445")  # no version asked: the latest, whichever it is
            assert latest is not None and latest.version == 1


def test_the_order_is_cached_per_version_and_api(tmp_path: Path) -> None:
    v2 = Paper("2302.12445", "DeAR", DEAR_ARXIV_ORDER, "2023-02-24T04:11:18Z", version=2)
    (tmp_path / "cache").mkdir()
    cache = LookupCache(tmp_path / "cache")
    with ArxivServer([v2]) as server:
        first = author_order("2302.12445", 2, api_url=server.url, cache=cache)
        again = author_order("2302.12445", 2, api_url=server.url, cache=cache)
        assert len(server.state.requests) == 1
    assert first.names == again.names == tuple(DEAR_ARXIV_ORDER)
    assert first.paper == "arXiv 2302.12445v2"
    # the cache is keyed by the API's URL: another API's answer is never taken for this one's
    dead = f"http://127.0.0.1:{free_port()}/api/query"
    away = author_order("2302.12445", 2, api_url=dead, cache=cache)
    assert away.names is None and "did not answer" in away.why_not


def test_no_entry_and_no_arxiv_id_are_answers_without_names(tmp_path: Path) -> None:
    (tmp_path / "cache").mkdir()
    cache = LookupCache(tmp_path / "cache")
    with ArxivServer([V1]) as server:
        missing = author_order("2302.12445", 2, api_url=server.url, cache=cache)
    assert missing.names is None and "has no entry with authors for it" in missing.why_not
    assert list((tmp_path / "cache").glob("*.json")) == []  # nothing cached for a miss
    unnamed = author_order(None, None, cache=cache)
    assert unnamed.names is None and "names no arXiv id" in unnamed.why_not
