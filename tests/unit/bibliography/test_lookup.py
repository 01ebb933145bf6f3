"""`--lookup`: arXiv identifiers found by title and authors, against a local server that answers
in arXiv's Atom format; only certain matches resolve an entry; requests paced, batched, cached."""

from __future__ import annotations

import itertools
import time
from pathlib import Path

import httpx
import pytest
from support.arxiv_server import ArxivServer, Paper
from support.lookup_corpus import SCHOLAR
from support.lookup_corpus import SCHOLAR_PAPERS as PAPERS

from pithauthor._version import __version__
from pithauthor.bibliography import arxiv_api
from pithauthor.bibliography.arxiv_api import ArxivApi, parse_feed
from pithauthor.bibliography.lookup import LookupCache, LookupResult, lookup_identifiers
from pithauthor.bibliography.reading import BibReading, read_bibliographies
from pithauthor.errors import ArxivApiError, InputError
from pithauthor.progress import Report, Retrying, reporting

FIXTURES = Path(__file__).parents[2] / "fixtures" / "bib"


@pytest.fixture
def server() -> ArxivServer:
    with ArxivServer(PAPERS) as running:
        yield running


def _lookup(server: ArxivServer, cache: LookupCache | None = None) -> LookupResult:
    with ArxivApi(server.url) as api:
        return lookup_identifiers(read_bibliographies([SCHOLAR]), api, cache=cache)


def _by_key(reading: BibReading) -> dict[str, tuple[str, str | None, str | None]]:
    return {
        e.key: (e.status, None if e.identifier is None else str(e.identifier), e.source)
        for e in reading.entries
    }


def test_papers_on_arxiv_are_resolved_and_near_misses_never_are(server: ArxivServer) -> None:
    result = _lookup(server)
    rows = _by_key(result.reading)
    assert rows["vaswani2017attention"] == ("found", "1706.03762", "lookup")
    # arXiv v1 in 2018, the venue in 2019: a year before is consistent
    assert rows["devlin2019bert"] == ("found", "1810.04805", "lookup")
    assert rows["witten1998anti"] == ("found", "hep-th/9802150", "lookup")  # DOI-only entry
    # "X" is on arXiv beside "X: An Overview" by the same author: the equal title wins
    assert rows["li2018deep"] == ("found", "1810.06339", "lookup")
    # "X" vs arXiv's "X: A Survey" (same authors): not certain
    assert rows["khan2022transformers"][:2] == ("ambiguous", None)
    # the same short title, another paper: arXiv's "Deep Learning" by other authors is not even
    # a candidate (the query asks for the entry's authors); see test_matching.py
    assert rows["goodfellow2016deep"] == ("not_found", None, None)
    # the right paper, its arXiv year two years before the journal's (within YEARS_BEFORE)
    assert rows["maldacena1999large"] == ("found", "hep-th/9711200", "lookup")
    assert rows["knuth1984texbook"] == ("not_found", None, None)  # books not on arXiv
    assert rows["schrodinger1926"] == ("not_found", None, None)
    assert rows["anonymous2020notes"] == ("no_identifier", None, None)  # no author to check
    assert rows["he2022rethinking"] == ("found", "2301.00303", "journal")  # had its id
    assert result.looked_up == 9
    assert result.requests == 1 and len(server.state.requests) == 1  # one batch of 9 titles


def test_ambiguous_rows_list_their_candidates_and_why(server: ArxivServer) -> None:
    rows = {row.key: row for row in _lookup(server).reading.rows()}
    assert "2101.01169" in rows["khan2022transformers"].detail
    assert "another title" in rows["khan2022transformers"].detail
    assert "arXiv 1997" in rows["maldacena1999large"].detail
    assert rows["vaswani2017attention"].source == "lookup"
    assert "author Vaswani" in rows["vaswani2017attention"].detail
    assert "DOI" in rows["witten1998anti"].detail
    assert "no author" in rows["anonymous2020notes"].detail


def test_the_query_is_one_or_of_title_phrases_with_authors(server: ArxivServer) -> None:
    _lookup(server)
    (request,) = server.state.requests
    assert '(ti:"attention is all you need" AND (au:vaswani OR au:shazeer OR au:parmar))' in (
        request.query
    )
    assert request.query.count(" OR (ti:") == 8
    assert request.max_results >= 9 * 10
    assert request.user_agent.startswith(f"pithauthor/{__version__} (")
    assert "https://" in request.user_agent


def test_a_second_run_is_answered_from_the_cache(server: ArxivServer) -> None:
    first = _lookup(server)
    again = _lookup(server)
    assert again.requests == 0 and again.cached == 9
    assert len(server.state.requests) == 1
    assert _by_key(again.reading) == _by_key(first.reading)


def test_cache_files_are_private(server: ArxivServer, isolated_home: Path) -> None:
    _lookup(server)
    folder = isolated_home / "cache" / "arxiv-lookup"
    files = list(folder.glob("*.json"))
    assert len(files) == 9
    assert folder.stat().st_mode & 0o777 == 0o700
    assert {f.stat().st_mode & 0o777 for f in files} == {0o600}


def test_offline_uses_only_the_cache(server: ArxivServer) -> None:
    reading = read_bibliographies([SCHOLAR])
    nothing = lookup_identifiers(reading, ArxivApi(server.url), offline=True)
    assert nothing.requests == 0 and not server.state.requests
    row = {r.key: r for r in nothing.reading.rows()}["vaswani2017attention"]
    assert row.status == "no_identifier" and "--offline" in row.detail
    _lookup(server)
    cached = lookup_identifiers(reading, ArxivApi(server.url), offline=True)
    assert _by_key(cached.reading)["vaswani2017attention"] == ("found", "1706.03762", "lookup")
    assert len(server.state.requests) == 1


def test_a_cache_file_that_is_not_json_is_a_miss(server: ArxivServer, tmp_path: Path) -> None:
    cache = LookupCache(tmp_path)
    _lookup(server, cache=cache)
    for path in tmp_path.glob("*.json"):
        path.write_bytes(b'{"version": 1, "version": 2}')  # duplicate keys: refused
    again = _lookup(server, cache=cache)
    assert again.requests == 1 and again.cached == 0


def _many(n: int, surname: str = "Smith") -> list[Paper]:
    return [
        Paper(f"2001.{i:05d}", f"Study number {i} of lattice gauge fields", [f"Ann {surname}"],
              "2020-01-10T00:00:00Z")
        for i in range(n)
    ]  # fmt: skip


def _bib(tmp_path: Path, papers: list[Paper], extra: str = "") -> Path:
    body = "".join(
        f"@article{{k{i},\n  title={{{p.title}}},\n  author={{{p.authors[0].split()[-1]}, "
        f"Ann}},\n  journal={{Phys. Rev. D}},\n  year={{2020}}\n}}\n\n"
        for i, p in enumerate(papers)
    )
    path = tmp_path / "refs.bib"
    path.write_text(body + extra, encoding="utf-8")
    return path


def test_requests_are_batched_spaced_and_on_one_connection(tmp_path: Path) -> None:
    papers = _many(25)
    with ArxivServer(papers) as server:
        reading = read_bibliographies([_bib(tmp_path, papers)])
        with ArxivApi(server.url, loopback_interval=0.1) as api:
            result = lookup_identifiers(reading, api)
        seen = server.state.requests
    assert result.requests == len(seen) == 3  # 25 titles, 10 a request
    gaps = [b.at - a.at for a, b in itertools.pairwise(seen)]
    assert all(gap >= 0.1 for gap in gaps), gaps
    assert len({r.port for r in seen}) == 1  # one connection, kept alive
    assert all(e.status == "found" for e in result.reading.entries)


def test_arxiv_itself_always_gets_three_seconds() -> None:
    with ArxivApi("https://export.arxiv.org/api/query", loopback_interval=0) as api:
        assert api.interval == arxiv_api.ARXIV_INTERVAL == 3.0
    with ArxivApi("http://127.0.0.1:9/api/query", loopback_interval=0.5) as api:
        assert api.interval == 0.5
    with pytest.raises(InputError, match="plain http"):
        ArxivApi("http://export.arxiv.org/api/query")


def test_the_pacer_waits_out_the_interval() -> None:
    clock = [100.0]
    slept: list[float] = []

    def sleep(seconds: float) -> None:
        slept.append(seconds)
        clock[0] += seconds

    with ArxivApi("https://export.arxiv.org/api/query", sleep=sleep, clock=lambda: clock[0]) as api:
        api._pace()
        clock[0] += 1.0
        api._pace()
    assert slept == [pytest.approx(2.0)]


def test_a_cut_batch_asks_its_titles_again_alone(tmp_path: Path) -> None:
    # 25 papers hold the phrase "lattice gauge fields" by the same author: a batch of two
    # titles asks 20 papers, arXiv has more, so each title is asked again on its own
    papers = _many(25)
    wanted = [papers[3], papers[17]]
    generic = Paper("2001.99999", "Lattice gauge fields", ["Ann Smith"], "2020-02-01T00:00:00Z")
    with ArxivServer([*papers, generic]) as server:
        reading = read_bibliographies([_bib(tmp_path, [generic, wanted[0]])])
        with ArxivApi(server.url) as api:
            result = lookup_identifiers(reading, api)
        queries = [r.query for r in server.state.requests]
    assert result.requests == 3 and len(queries) == 3
    assert " OR " in queries[0] and " OR (" not in queries[1] + queries[2]
    assert _by_key(result.reading)["k0"] == ("found", "2001.99999", "lookup")
    assert _by_key(result.reading)["k1"] == ("found", "2001.00003", "lookup")


def test_an_error_feed_stops_the_lookup_with_its_reason(server: ArxivServer) -> None:
    server.state.error = "incorrect id format for 1234.12345"
    with pytest.raises(ArxivApiError, match="refused the query: incorrect id format") as exc:
        _lookup(server)
    assert exc.value.exit_code == 3
    assert len(server.state.requests) == 1  # a refusal is not retried


def test_an_error_feed_with_http_200_is_an_error_too(server: ArxivServer) -> None:
    server.state.error, server.state.error_status = "start must be an integer", 200
    with pytest.raises(ArxivApiError, match="refused the query: start must be an integer"):
        _lookup(server)


def test_a_wrong_api_path_says_its_http_status(server: ArxivServer) -> None:
    with (
        ArxivApi(server.url.replace("/api/query", "/nothing")) as api,
        pytest.raises(ArxivApiError, match="answered HTTP 404"),
    ):
        lookup_identifiers(read_bibliographies([SCHOLAR]), api)


def test_an_empty_answer_means_not_found(server: ArxivServer) -> None:
    server.state.papers = []
    rows = _by_key(_lookup(server).reading)
    assert rows["vaswani2017attention"] == ("not_found", None, None)


def test_a_slow_answer_times_out_is_retried_then_fails_cleanly(server: ArxivServer) -> None:
    server.state.delay = 1.0
    reading = read_bibliographies([SCHOLAR])
    start = time.monotonic()
    with (
        ArxivApi(server.url, timeout=0.2, attempts=2) as api,
        pytest.raises(ArxivApiError, match=r"did not answer \(timed out\) after 2 attempts"),
    ):
        lookup_identifiers(reading, api)
    assert time.monotonic() - start < 5
    assert len(server.state.requests) == 2


def test_an_answer_trickling_in_is_cut_at_the_timeout(server: ArxivServer) -> None:
    server.state.trickle = 0.1  # every read is in time, the whole answer is not
    reading = read_bibliographies([SCHOLAR])
    with (
        ArxivApi(server.url, timeout=0.5, attempts=1) as api,
        pytest.raises(ArxivApiError, match=r"\(timed out\)"),
    ):
        lookup_identifiers(reading, api)


def test_rate_exceeded_is_retried(server: ArxivServer) -> None:
    server.state.rate_exceeded = 1
    result = _lookup(server)
    assert len(server.state.requests) == 2 and result.requests == 1
    assert _by_key(result.reading)["vaswani2017attention"][0] == "found"


FEED = b'<feed xmlns="http://www.w3.org/2005/Atom"></feed>'


def test_a_retry_after_is_waited_up_to_a_minute_and_no_back_off_else() -> None:
    # what the one retry loop (`net.with_retries`) must give arXiv: no wait of our own between
    # tries (the pacer spaces them), arXiv's Retry-After on any retried answer, capped at 60 s
    answers = iter(
        [
            httpx.Response(503),
            httpx.Response(429, headers={"Retry-After": "2"}),
            httpx.Response(200, content=b"Rate exceeded.", headers={"Retry-After": "3600"}),
            httpx.Response(200, content=FEED),
        ]
    )
    slept: list[float] = []
    told: list[Report] = []
    with (
        ArxivApi(
            "http://127.0.0.1:9/api/query",  # loopback: no pacing, so every wait is a retry's
            attempts=4,
            transport=httpx.MockTransport(lambda request: next(answers)),
            sleep=slept.append,
        ) as api,
        reporting(told.append),
    ):
        assert api.search("ti:x", 1).candidates == ()
    assert api.requests == 4
    assert slept == [2.0, 60.0]
    retries = [t for t in told if isinstance(t, Retrying)]
    assert [(t.reason, t.attempt, t.attempts, t.wait, t.left) for t in retries] == [
        ("HTTP 429", 3, 4, 2.0, 2.0),
        ("rate exceeded", 4, 4, 60.0, 60.0),
    ]


def test_every_attempt_asked_to_retry_is_one_error_naming_the_last_reason() -> None:
    slept: list[float] = []
    with (
        ArxivApi(
            "http://127.0.0.1:9/api/query",
            attempts=2,
            transport=httpx.MockTransport(lambda request: httpx.Response(502)),
            sleep=slept.append,
        ) as api,
        pytest.raises(ArxivApiError, match=r"did not answer \(HTTP 502\) after 2 attempts"),
    ):
        api.search("ti:x", 1)
    assert api.requests == 2 and slept == []


def test_an_oversized_answer_is_refused(
    server: ArxivServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(arxiv_api, "MAX_ANSWER_BYTES", 4096)
    server.state.oversized = 10_000
    with pytest.raises(ArxivApiError, match="larger than"):
        _lookup(server)


def test_entity_expansion_and_foreign_xml_are_refused() -> None:
    bomb = (
        b'<?xml version="1.0"?><!DOCTYPE lolz [<!ENTITY lol "lol">'
        b'<!ENTITY lol2 "&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;">]>'
        b'<feed xmlns="http://www.w3.org/2005/Atom"><title>&lol2;</title></feed>'
    )
    with pytest.raises(ArxivApiError, match="not an Atom feed"):
        parse_feed(bomb, "http://x")
    with pytest.raises(ArxivApiError, match="not an Atom feed"):
        parse_feed(b"<html><body>maintenance</body></html>", "http://x")
    with pytest.raises(ArxivApiError, match="not an Atom feed"):
        parse_feed(b"Rate exceeded.", "http://x")
    # found by fuzzing: an encoding with no text codec raised LookupError, not this
    for encoding in ("bogus", "rot13", "utf-7"):
        answer = f'<?xml version="1.0" encoding="{encoding}"?><feed/>'.encode()
        with pytest.raises(ArxivApiError, match="not an Atom feed"):
            parse_feed(answer, "http://x")


def test_entries_that_are_not_papers_are_left_out() -> None:
    data = (
        b'<feed xmlns="http://www.w3.org/2005/Atom"><entry><id>http://arxiv.org/abs/junk</id>'
        b"<title>Attention Is All You Need</title><published>2017-06-12</published></entry>"
        b"<entry><id>http://arxiv.org/abs/1706.03762v7</id><title>Attention Is All\n  You "
        b"Need</title><published>2017-06-12T17:57:34Z</published><author><name>Ashish Vaswani"
        b"</name></author></entry></feed>"
    )
    feed = parse_feed(data, "http://x")
    assert [c.arxiv_id for c in feed.candidates] == ["1706.03762"]
    assert feed.candidates[0].title == "Attention Is All You Need"
    assert feed.total == 2 and feed.complete


@pytest.mark.parametrize(
    "stored",
    [r"Sur la rationalit\'e des vari\'et\'es de Fano", "Sur la rationalité des variétés de Fano"],
)
def test_a_tex_accented_title_is_found_however_arxiv_stores_it(stored: str, tmp_path: Path) -> None:
    """arXiv keeps many titles as typed, TeX accents and all; its search splits `rationalit\'e`
    in two. (A made-up paper.)"""
    bib = tmp_path / "refs.bib"
    bib.write_text(
        "@article{dupont2020,\n  title = {Sur la rationalit\\'e des vari\\'et\\'es de {F}ano},\n"
        "  author = {Dupont, Marie},\n  journal = {C. R. Math.},\n  year = {2020}\n}\n",
        encoding="utf-8",
    )
    paper = Paper(
        "2003.01234", stored, ["Marie Dupont"], "2020-03-03T10:00:00Z", category="math.AG"
    )
    cache = LookupCache(tmp_path / "cache")
    cache.folder.mkdir()
    with ArxivServer([paper]) as running, ArxivApi(running.url) as api:
        result = lookup_identifiers(read_bibliographies([bib]), api, cache=cache)
    (entry,) = result.reading.entries
    assert (entry.status, str(entry.identifier)) == ("found", "2003.01234"), entry.lookup_detail
