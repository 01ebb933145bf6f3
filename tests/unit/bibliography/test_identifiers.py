"""Identifier extraction: every form the issue lists, each with the exact id it must give."""

from __future__ import annotations

from pathlib import Path

import pytest

from pithauthor.bibliography.identifiers import find_identifier
from pithauthor.bibliography.reading import BibEntry, read_bibliographies
from pithauthor.protocol.ids import ArxivId, PithNumber

FIXTURES = Path(__file__).parents[2] / "fixtures" / "bib"
DEAR_BODY = "NFG5PAOXQUVIWDX5F7YSYYL7EW"  # pith:2023:... of arXiv:2302.12445 (tests/fixtures)

# key in every-identifier-form.bib -> (the id it names, the rule that must find it)
ARXIV_FORMS: dict[str, tuple[ArxivId, str]] = {
    "eprint-archiveprefix": (ArxivId("2302.12445"), "eprint"),
    "eprint-eprinttype-version": (ArxivId("2302.12445", 2), "eprint"),
    "eprint-old-style": (ArxivId("hep-th/9711200"), "eprint"),
    "eprint-old-primaryclass": (ArxivId("hep-th/9711200"), "eprint"),
    "eprint-arxiv-prefix": (ArxivId("1706.03762", 7), "eprint"),
    "eprint-url": (ArxivId("1706.03762"), "eprint"),
    "eprint-no-prefix": (ArxivId("1706.03762"), "eprint (no archivePrefix)"),
    "eprint-five-digit": (ArxivId("2410.01234"), "eprint"),
    "doi-plain": (ArxivId("2302.12445"), "doi"),
    "doi-upper": (ArxivId("2302.12445"), "doi"),
    "doi-url": (ArxivId("2302.12445"), "doi"),
    "url-abs-version": (ArxivId("2302.12445", 2), "url (arxiv.org URL)"),
    "url-pdf": (ArxivId("2302.12445", 1), "url (arxiv.org URL)"),
    "url-pdf-noext": (ArxivId("2302.12445"), "url (arxiv.org URL)"),
    "url-old-style": (ArxivId("hep-th/9901001", 2), "url (arxiv.org URL)"),
    "url-export-www": (ArxivId("1706.03762"), "url (arxiv.org URL)"),
    "howpublished-url": (ArxivId("1706.03762"), "howpublished (arxiv.org URL)"),
    "note-href": (ArxivId("1706.03762", 5), "note (arxiv.org URL)"),
    "journal-google-scholar": (ArxivId("2302.12445"), "journal (arXiv text)"),
    "journal-google-scholar-old": (ArxivId("hep-th/9901001"), "journal (arXiv text)"),
    "note-arxiv-old-version": (ArxivId("hep-th/9901001", 2), "note (arXiv text)"),
    "howpublished-text": (ArxivId("2302.12445"), "howpublished (arXiv text)"),
    "note-eprint-words": (ArxivId("1706.03762"), "note (arXiv text)"),
    "dblp-corr-volume": (ArxivId("1701.02221"), "volume (under journal CoRR)"),
    "corr-in-journal-text": (ArxivId("1701.02221"), "journal (arXiv text)"),
    "semantic-scholar": (ArxivId("1706.03762"), "volume (under journal ArXiv)"),
    "number-zotero": (ArxivId("2206.07697"), "number (arXiv text)"),
    "braced-latex": (ArxivId("2302.12445"), "journal (arXiv text)"),
    "string-macro": (ArxivId("2302.12445"), "journal (arXiv text)"),
    "note-old-bare": (ArxivId("hep-th/9901001"), "note (old-style id)"),
    "reportnumber-old": (ArxivId("hep-th/9901001"), "reportnumber (old-style id)"),
    "note-old-subject-class": (ArxivId("math/0211159"), "note (old-style id)"),
}
NO_IDENTIFIER = ("none-hal", "none-doi", "none-url", "none-numbers", "none-archive-lookalike")


@pytest.fixture(scope="module")
def every_form() -> dict[str, BibEntry]:
    reading = read_bibliographies([FIXTURES / "every-identifier-form.bib"])
    assert not reading.failures
    return {entry.key: entry for entry in reading.entries}


def test_the_fixture_has_exactly_the_forms_listed_here(every_form: dict[str, BibEntry]) -> None:
    listed = {*ARXIV_FORMS, *NO_IDENTIFIER, "pith-full", "pith-body"}
    assert set(every_form) == listed


@pytest.mark.parametrize("key", sorted(ARXIV_FORMS))
def test_each_arxiv_form_gives_its_exact_id(key: str, every_form: dict[str, BibEntry]) -> None:
    expected, source = ARXIV_FORMS[key]
    entry = every_form[key]
    assert entry.identifier == expected
    assert entry.identifier_source == source
    assert entry.identifier_error is None


@pytest.mark.parametrize("key", NO_IDENTIFIER)
def test_lookalikes_give_no_identifier(key: str, every_form: dict[str, BibEntry]) -> None:
    entry = every_form[key]
    assert entry.identifier is None
    assert entry.status == "no_identifier"


def test_pith_field_full_number_wins_over_an_eprint(every_form: dict[str, BibEntry]) -> None:
    entry = every_form["pith-full"]
    assert entry.identifier == PithNumber(DEAR_BODY, 2023)
    assert entry.identifier_source == "pith"


def test_pith_field_bare_body_in_lower_case(every_form: dict[str, BibEntry]) -> None:
    assert every_form["pith-body"].identifier == PithNumber(DEAR_BODY)


@pytest.mark.parametrize(
    ("fields", "source"),
    [
        (
            {"eprint": "1706.03762", "archiveprefix": "arXiv", "url": "arxiv.org/abs/2302.12445"},
            "eprint",
        ),
        ({"doi": "10.48550/arXiv.1706.03762", "url": "arxiv.org/abs/2302.12445"}, "doi"),
        (
            {"url": "https://arxiv.org/abs/1706.03762", "journal": "arXiv:2302.12445"},
            "url (arxiv.org URL)",
        ),
        (
            {"journal": "arXiv preprint arXiv:1706.03762", "note": "hep-th/9901001"},
            "journal (arXiv text)",
        ),
    ],
)
def test_rules_apply_in_the_documented_order(fields: dict[str, str], source: str) -> None:
    found = find_identifier(fields)
    assert found.identifier == ArxivId("1706.03762")
    assert found.source == source


@pytest.mark.parametrize(
    ("fields", "words"),
    [
        ({"pith": "pith:NFG5PAOX"}, "short form"),
        ({"pith": "pith:2023:NFG5PAOXQUVIWDX5F7YSYYL7E1"}, "position"),
        ({"eprint": "2302.1244", "eprinttype": "arxiv"}, "5-digit"),
        ({"eprint": "0613.12345", "archiveprefix": "arXiv"}, "month"),
        ({"doi": "10.48550/arXiv.nonsense"}, "not an arXiv identifier"),
    ],
)
def test_a_malformed_declared_identifier_is_a_problem_not_a_guess(
    fields: dict[str, str], words: str
) -> None:
    found = find_identifier({**fields, "url": "https://arxiv.org/abs/1706.03762"})
    assert found.identifier is None
    assert found.problem is not None and words in found.problem


def test_a_malformed_arxiv_url_leaves_a_hint_for_the_report() -> None:
    found = find_identifier({"url": "https://arxiv.org/abs/2313.12345"})
    assert found.identifier is None and found.problem is None
    assert found.hint is not None and "13" in found.hint


def test_an_unlabelled_eprint_that_is_not_arxiv_is_ignored() -> None:
    assert find_identifier({"eprint": "PMC1234567"}).identifier is None


@pytest.mark.parametrize(
    "fields",
    [
        {"note": "math.\u212aT/0101001"},  # the Kelvin sign (its case fold is k)
        {"journal": "arXiv preprint arXiv:math.\u212aT/0101001"},
        {"url": "https://arxiv.org/abs/phy\u017fics/9901001"},  # the long s
        {"volume": "abs/math.\u212aT/0101001", "journal": "CoRR"},
    ],
)
def test_an_identifier_spelt_with_a_lookalike_letter_is_not_read(fields: dict[str, str]) -> None:
    assert find_identifier(fields).identifier is None
