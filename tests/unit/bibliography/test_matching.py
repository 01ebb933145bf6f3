"""The rules that make a lookup match *certain* (pure: no network)."""

from __future__ import annotations

import time

import pytest

from pithauthor.bibliography.arxiv_api import (
    BATCH_TITLES,
    MAX_QUERY_CHARS,
    batches,
    search_query,
    term,
)
from pithauthor.bibliography.bibtex import MAX_VALUE_CHARS
from pithauthor.bibliography.identifiers import find_identifier
from pithauthor.bibliography.matching import (
    LATER_NAMESAKE,
    MAX_TITLE_CHARS,
    Candidate,
    Query,
    bib_surnames,
    decide,
    entry_year,
    normal_title,
    query_for,
)

ATTENTION = Candidate("1706.03762", "Attention Is All You Need", ("Ashish Vaswani",), 2017)


def _query(title: str = "Attention is all you need", author: str = "Vaswani, Ashish",
           year: str = "2017", **more: str) -> Query:  # fmt: skip
    query = query_for({"title": title, "author": author, "year": year, **more})
    assert isinstance(query, Query), query
    return query


@pytest.mark.parametrize(
    ("ours", "theirs"),
    [
        ("Attention is all you need", "Attention Is All You Need"),
        ("{BERT}: Pre-training of deep bidirectional transformers", "BERT: Pre-training of Deep "
         "Bidirectional Transformers"),
        (r"Schr{\"o}dinger operators and {$\alpha$}-stable processes",
         "Schrödinger Operators and \u03b1-Stable Processes"),
        ("Anti de {S}itter space and holography", "Anti De Sitter Space And Holography"),
        ("The large-N limit of superconformal field theories", "The Large N Limit of "
         "Superconformal\n  Field Theories"),
        (r"Caf{\'e} au lait", "Cafe au lait"),
    ],
)  # fmt: skip
def test_titles_equal_ignoring_case_markup_accents_and_punctuation(ours: str, theirs: str) -> None:
    assert normal_title(ours) == normal_title(theirs)


@pytest.mark.parametrize(
    ("ours", "theirs"),
    [
        ("Transformers in vision", "Transformers in Vision: A Survey"),
        ("Deep learning", "Deep learning II"),
        ("Attention is all you need", "Attention is not all you need"),
    ],
)
def test_near_miss_titles_differ(ours: str, theirs: str) -> None:
    assert normal_title(ours) != normal_title(theirs)


def test_the_certain_match_resolves_with_its_evidence() -> None:
    outcome = decide(_query(), [ATTENTION])
    assert (outcome.status, outcome.arxiv_id) == ("resolved", "1706.03762")
    assert "author Vaswani" in outcome.detail


def test_a_longer_title_holding_ours_is_only_a_candidate() -> None:
    survey = Candidate("2101.01169", "Transformers in Vision: A Survey", ("Salman Khan",), 2021)
    outcome = decide(_query("Transformers in vision", "Khan, Salman", "2022"), [survey])
    assert outcome.status == "ambiguous" and outcome.arxiv_id is None
    assert outcome.candidates == ("2101.01169",) and "another title" in outcome.detail


def test_the_same_title_by_other_authors_is_not_certain() -> None:
    other = Candidate("1807.07987", "Deep Learning", ("Nicholas G. Polson", "Vadim Sokolov"), 2015)
    outcome = decide(_query("Deep learning", "LeCun, Yann and Bengio, Yoshua", "2015"), [other])
    assert outcome.status == "ambiguous" and "no author in common" in outcome.detail


@pytest.mark.parametrize(("arxiv_year", "certain"), [(2014, True), (2016, True), (2017, True),
                                                    (2013, False), (2018, False)])  # fmt: skip
def test_the_arxiv_year_may_be_the_entry_year_or_up_to_three_years_before(
    arxiv_year: int, certain: bool
) -> None:
    candidate = Candidate("1706.03762", "Attention is all you need", ("A. Vaswani",), arxiv_year)
    outcome = decide(_query(), [candidate])
    assert (outcome.status == "resolved") is certain, outcome


def test_a_different_doi_makes_it_uncertain_and_the_same_doi_is_evidence() -> None:
    doi = Candidate("1706.03762", ATTENTION.title, ATTENTION.authors, 2017, "10.1000/other")
    outcome = decide(_query(doi="https://doi.org/10.5555/3295222.3295349"), [doi])
    assert outcome.status == "ambiguous" and "DOI 10.1000/other" in outcome.detail
    same = Candidate("1706.03762", ATTENTION.title, ATTENTION.authors, 2017, "10.5555/ABC")
    outcome = decide(_query(doi="10.5555/abc"), [same])
    assert outcome.status == "resolved" and outcome.detail.endswith(", DOI")


def test_two_certain_papers_are_ambiguous_and_versions_are_one_paper() -> None:
    twin = Candidate("1706.99999", ATTENTION.title, ("Ashish Vaswani",), 2017)
    outcome = decide(_query(), [ATTENTION, twin])
    assert outcome.status == "ambiguous" and set(outcome.candidates) == {
        ATTENTION.arxiv_id,
        twin.arxiv_id,
    }
    assert decide(_query(), [ATTENTION, ATTENTION]).status == "resolved"


def test_a_cut_answer_never_resolves() -> None:
    outcome = decide(_query(), [ATTENTION], complete=False)
    assert outcome.status == "ambiguous" and "more papers" in outcome.detail
    assert decide(_query(), [], complete=False).status == "not_found"


def test_nothing_is_not_found() -> None:
    outcome = decide(_query(), [])
    assert outcome.status == "not_found" and outcome.arxiv_id is None


@pytest.mark.parametrize(
    ("field", "surnames"),
    [
        ("Vaswani, Ashish and Kaiser, {\\L}ukasz", ["Vaswani", "Kaiser"]),
        ("Ashish Vaswani and Laurens van der Maaten", ["Vaswani", "van der Maaten"]),
        ("Smith, Jr., John and John Doe Jr. and Wei Wang 0001", ["Smith", "Doe", "Wang"]),
        ("Ngô, Bao Châu and Mouhot, Cl{\\'e}ment", ["Ngô", "Mouhot"]),
        ("van der Maaten, Laurens and others", ["van der Maaten"]),
        ('{Google DeepMind} and Schr{\\"o}dinger, Erwin', ["Google DeepMind", "Schrödinger"]),
        ("{Smith and Sons} AND Doe, J.", ["Smith and Sons", "Doe"]),
    ],
)
def test_surnames_from_bibtex_author_fields(field: str, surnames: list[str]) -> None:
    assert bib_surnames(field) == surnames


@pytest.mark.parametrize(
    ("author", "arxiv_author"),
    [
        ("Kaiser, {\\L}ukasz", "Łukasz Kaiser"),
        ("van der Maaten, Laurens", "Laurens van der Maaten"),
        ('Schr{\\"o}dinger, Erwin', "Erwin Schrodinger"),
        ("Zhang, Wei", "Zhang Wei"),  # family name first on arXiv
    ],
)
def test_surnames_match_across_spellings(author: str, arxiv_author: str) -> None:
    candidate = Candidate("2001.00001", "A title", (arxiv_author,), 2020)
    assert decide(_query("A title", author, "2020"), [candidate]).status == "resolved"


def test_entries_without_title_author_or_year_are_not_looked_up() -> None:
    assert query_for({"title": "X", "year": "2020"}) == (
        "not looked up: no author to confirm a match"
    )
    assert "title or year" in str(query_for({"author": "Doe, J."}))
    assert entry_year({"date": "2019-06-01"}) == 2019
    assert entry_year({"year": "{2017a}"}) == 2017


def test_the_text_rules_and_the_lookup_take_bounded_time_on_the_longest_values() -> None:
    """A value may expand to MAX_VALUE_CHARS: "arXiv arXiv ..." in a note took 4.5 s at
    24,000 characters (each `arXiv` rescanned the rest); a 200,000-character LaTeX title took
    2.4 s to decode for the lookup. Both are now linear or not done."""
    note = "arXiv " * (MAX_VALUE_CHARS // 6)
    started = time.process_time()
    assert find_identifier({"note": note, "journal": note}).identifier is None
    assert time.process_time() - started < 2.0  # 0.25 s here; quadratic, it was minutes
    title = '{\\"o}' * (MAX_VALUE_CHARS // 5)
    fields = {"title": title, "author": "Doe, J.", "year": "2020"}
    assert (
        query_for(fields) == "not looked up: its title or author list is too long to be a paper's"
    )
    fields["title"] = "A title " * (MAX_TITLE_CHARS // 8)
    assert isinstance(query_for(fields), Query)


def test_queries_are_batched_by_count_and_length() -> None:
    queries = [_query(f"Paper number {i} about gauge fields", "Doe, Jane") for i in range(25)]
    assert [len(b) for b in batches(queries)] == [BATCH_TITLES, BATCH_TITLES, 5]
    long = [_query(" ".join(["word"] * 24) + f" {i}", "Doe, Jane") for i in range(40)]
    for batch in batches(long):
        assert len(search_query(batch)) <= MAX_QUERY_CHARS
    assert term(_query('Quotes "inside" (and) OR parens', "O'Neil, Jo")) == (
        'ti:"quotes inside and or parens"'  # O'Neil is not a plain au: term
    )


def test_a_year_only_reject_makes_the_entry_ambiguous_not_the_other_candidate_certain() -> None:
    """Green and Tao's preprint is four years older than the Annals paper; a later paper of
    the same title with one of the surnames fits every rule, but is not certain."""
    entry = _query("The primes contain arbitrarily long arithmetic progressions",
                   "Green, Ben and Tao, Terence", "2008")  # fmt: skip
    preprint = Candidate("math/0404188", "The primes contain arbitrarily long arithmetic "
                         "progressions", ("Ben Green", "Terence Tao"), 2004)  # fmt: skip
    decoy = Candidate("0805.01234", preprint.title, ("Laura Tao",), 2008)
    outcome = decide(entry, [preprint, decoy])
    assert outcome.status == "ambiguous" and outcome.arxiv_id is None
    assert set(outcome.candidates) == {"math/0404188", "0805.01234"}
    assert "except for its year" in outcome.detail
    assert decide(entry, [decoy]).status == "resolved"  # alone, the decoy would fit
    # listed so that the decoy cannot be taken by accident: the preprint first (oldest first,
    # whatever order arXiv answered in), and the decoy's reason says it is suspect
    for answer in ([preprint, decoy], [decoy, preprint]):
        choices = decide(entry, answer).choices
        assert [c.arxiv_id for c in choices] == ["math/0404188", "0805.01234"]
        assert choices[0].problem == "arXiv year 2004, entry year 2008"
        assert choices[1].problem == LATER_NAMESAKE and "namesake" in choices[1].problem
    assert outcome.detail.index("math/0404188") < outcome.detail.index("0805.01234")


@pytest.mark.parametrize("name", ["Kim", "Lee", "James", "Thomas", "Scott"])
def test_a_given_name_equal_to_the_entry_surname_is_no_shared_author(name: str) -> None:
    entry = _query("Convolutional neural networks for sentence classification",
                   f"{name}, Yoon", "2014")  # fmt: skip
    for spelled in (f"{name} Jones", f"{name} A. Jones", f"{name}-Jin Jones"):
        decoy = Candidate("1408.99999", "Convolutional Neural Networks for Sentence "
                          "Classification", (spelled,), 2014)  # fmt: skip
        outcome = decide(entry, [decoy])
        assert outcome.status == "ambiguous" and "no author in common" in outcome.detail
    real = Candidate("1408.5882", "Convolutional Neural Networks for Sentence Classification",
                     (f"Yoon {name}",), 2014)  # fmt: skip
    assert decide(entry, [real]).arxiv_id == "1408.5882"


@pytest.mark.parametrize(
    ("author", "arxiv_author", "same"),
    [
        ("Ngô, Bao Châu", "Ngo Bao Chau", True),  # family name first, every given name
        ("Zhang, W.", "Zhang Wei", False),  # an initial is not enough
        ("Zhang, Wei", "Zhang Li", False),
        ("Lee, Kenton", "Lee Kenton", True),
        ("Lee, Kenton", "Lee Smith", False),
        ("García Márquez, José Luis", "José Luis García Márquez", True),
        ("Márquez, Ana", "José Luis García Márquez", True),  # its last word is a surname
        ("Luis, Ana", "José Luis García Márquez", False),  # a middle given name is not
        ("de la Fuente, A.", "Alberto de la Fuente", True),
        ("Van der Berg, Anna", "Anna van der Berg", True),
        ("Smith, Jr., John", "John Smith Jr.", True),
        ("Jr, Anna", "John Smith Jr.", False),
        ("Wang, Wei", "Wei Wang 0001", True),  # DBLP's homonym number
        ("{Google DeepMind}", "Google DeepMind", True),  # a corporate name is whole
        ("{Google DeepMind}", "DeepMind Smith", False),
    ],
)
def test_names_agree_only_by_their_surnames(author: str, arxiv_author: str, same: bool) -> None:
    candidate = Candidate("2001.00001", "A title", (arxiv_author,), 2020)
    outcome = decide(_query("A title", author, "2020"), [candidate])
    assert (outcome.status == "resolved") is same, outcome


@pytest.mark.parametrize(
    ("bib_title", "phrase"),
    [
        (r"Le lemme fondamental pour les alg\`ebres de {L}ie", "le lemme fondamental pour les"),
        (r"Sur la rationalit\'e", "sur la"),  # two plain words will do beside a surname
        (r"\'Etude", "etude"),  # no plain word: all of them
        ("Attention is all you need", "attention is all you need"),
    ],
)
def test_the_phrase_asked_avoids_accented_words(bib_title: str, phrase: str) -> None:
    assert " ".join(_query(bib_title).words) == phrase


@pytest.mark.parametrize(
    "arxiv_title",
    [r"Le lemme fondamental pour les alg\`ebres de Lie",  # as arXiv stores many titles
     "Le lemme fondamental pour les algèbres de Lie"],
)  # fmt: skip
def test_tex_accents_in_either_title_are_decoded_before_comparing(arxiv_title: str) -> None:
    entry = _query(r"Le lemme fondamental pour les alg{\`e}bres de {L}ie", r"Ng{\^o}, Bao Ch{\^a}u",
                   "2010")  # fmt: skip
    candidate = Candidate("0801.0446", arxiv_title, ("Bao Chau Ngo",), 2008)
    assert decide(entry, [candidate]).arxiv_id == "0801.0446"


@pytest.mark.parametrize(
    ("fields", "arxiv_author", "same"),
    [
        ({"author": "Aad, Georges and others", "collaboration": "ATLAS"},
         "The ATLAS Collaboration", True),
        ({"author": "{ATLAS Collaboration}"}, "ATLAS Collaboration", True),
        ({"author": "Aad, Georges and others", "collaboration": "ATLAS"},
         "The CMS Collaboration", False),
        ({"author": "family=Driessche, given=George, prefix=van den, useprefix=true"},
         "George van den Driessche", True),
        ({"author": "family=Driessche, given=George, prefix=van den, useprefix=true"},
         "George Driessche", True),
        ({"author": "family=Driessche, given=George, prefix=van den, useprefix=true"},
         "Driessche Smith", False),
    ],
)  # fmt: skip
def test_collaborations_and_biblatex_extended_names(
    fields: dict[str, str], arxiv_author: str, same: bool
) -> None:
    query = query_for({"title": "A title", "year": "2012", **fields})
    assert isinstance(query, Query)
    candidate = Candidate("1207.00001", "A title", (arxiv_author,), 2012)
    assert (decide(query, [candidate]).status == "resolved") is same


def test_greek_letters_equal_their_spelled_names() -> None:
    ads = r"{Measurements of {\ensuremath{\Omega}} and {\ensuremath{\Lambda}} from 42 Supernovae}"
    assert normal_title(ads) == normal_title("Measurements of Omega and Lambda from 42 Supernovae")
    assert normal_title(r"$\alpha$-stable") == normal_title("alpha-Stable")
