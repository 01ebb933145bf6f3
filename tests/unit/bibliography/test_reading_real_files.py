"""Real .bib files nobody in the project wrote, and exports in the shapes real services give."""

from __future__ import annotations

import re
from pathlib import Path

from pithauthor.bibliography.reading import BibEntry, BibReading, read_bibliographies
from pithauthor.protocol.ids import ArxivId

FIXTURES = Path(__file__).parents[2] / "fixtures" / "bib"
# An entry start as a person would count it: `@type{` or `@type(` at a line start, not a
# @string/@preamble/@comment. Independent of the reader under test.
_ENTRY_START = re.compile(r"^\s*@(?!string|preamble|comment)[a-z]+\s*[{(]", re.I | re.M)


def _read(*names: str) -> BibReading:
    return read_bibliographies([FIXTURES / name for name in names])


def _by_key(reading: BibReading) -> dict[str, BibEntry]:
    return {entry.key: entry for entry in reading.entries}


def _line_of(name: str, needle: str) -> int:
    lines = (FIXTURES / name).read_text("utf-8").splitlines()
    return next(i for i, line in enumerate(lines, start=1) if needle in line)


def _rows_match_entry_count(reading: BibReading, *names: str) -> None:
    expected = sum(
        len(_ENTRY_START.findall((FIXTURES / n).read_bytes().decode("latin-1"))) for n in names
    )
    assert len(reading.rows()) == expected


def test_biblatex_examples_finds_its_three_arxiv_papers_and_one_duplicate() -> None:
    reading = _read("biblatex-examples.bib")
    _rows_match_entry_count(reading, "biblatex-examples.bib")
    found = {e.key: e.identifier for e in reading.entries if e.identifier is not None}
    assert found == {
        "baez/article": ArxivId("math/0307200", 3),
        "baez/online": ArxivId("math/0307200", 3),
        "itzhaki": ArxivId("hep-th/9603067"),
        "wassenberg": ArxivId("1008.2849", 1),
    }
    statuses = {e.key: e.status for e in reading.entries if e.identifier is not None}
    assert statuses["baez/online"] == "duplicate"
    assert [e.key for e in reading.to_sign()] == ["baez/article", "itzhaki", "wassenberg"]


def test_biblatex_examples_strings_crossrefs_and_unicode_titles() -> None:
    entries = _by_key(_read("biblatex-examples.bib"))
    assert entries["kant:kpv"].fields["publisher"] == "Walter de Gruyter"
    # westfahl:space takes its booktitle from the crossref'd collection's title
    space = entries["westfahl:space"]
    assert "Space and Beyond" in space.fields["booktitle"]
    assert entries["knuth:ct:a"].title_unicode == "The TeXbook"
    assert entries["aristotle:anima"].title_unicode == "De Anima"


def test_xampl_crossref_and_macros() -> None:
    reading = _read("xampl.bib")
    _rows_match_entry_count(reading, "xampl.bib")
    entries = _by_key(reading)
    child = entries["inproceedings-crossref"]
    assert (
        child.fields["booktitle"] == "Proc. Fifteenth Annual Symposium on the Theory of Computing"
    )
    assert child.fields["year"] == "1983"
    assert entries["article-full"].fields["month"] == "July"
    assert all(e.status == "no_identifier" for e in reading.entries)


def test_ieee_journal_macros_come_from_the_other_file_even_in_latin1() -> None:
    reading = _read("IEEEabrv.bib", "IEEEexample.bib")
    _rows_match_entry_count(reading, "IEEEexample.bib")
    assert any("IEEEabrv.bib" in w and "Latin-1" in w for w in reading.warnings)
    entry = _by_key(reading)["IEEEexample:article_typical"]
    assert entry.fields["journal"] == "{IEEE} Electron Device Lett."
    assert entry.fields["month"] == "November"


def test_ieee_example_alone_keeps_unknown_macros_as_written() -> None:
    entry = _by_key(_read("IEEEexample.bib"))["IEEEexample:article_typical"]
    assert entry.fields["journal"] == "IEEE_J_EDL"


def test_texbook2_every_entry_is_read_as_bibtex_reads_it_with_true_lines() -> None:
    """`Greene:1982:MAA` has `"{... "optionalen" ...}."`: quotes inside braces inside a quoted
    value. bibtexparser alone cannot parse it (it counts no braces inside quotes); BibTeX,
    and pith, read it."""
    reading = _read("texbook2.bib")
    _rows_match_entry_count(reading, "texbook2.bib")
    assert reading.failures == ()
    entries = _by_key(reading)
    greene = entries["Greene:1982:MAA"]
    assert greene.line == _line_of("texbook2.bib", "@Book{Greene:1982:MAA,")
    assert '"optionalen" Kapitel' in greene.fields["remark"]
    # entries after it still carry their real line numbers
    for key in ("Abragam:VVF91", "Gries:EMR89", "Mesterton-Gibbons:CAM89", "Steele:1990:CLL"):
        assert entries[key].line == _line_of("texbook2.bib", "{" + key + ",")
    assert len(reading.entries) > 500


def test_texbook3_excerpt_arxiv_only_in_its_url() -> None:
    [entry] = _read("texbook3-excerpt.bib").entries
    assert entry.key == "Miller:2022:RCF"
    assert entry.identifier == ArxivId("2008.06537")
    assert entry.identifier_source == "url (arxiv.org URL)"


def test_google_scholar_export() -> None:
    reading = _read("google-scholar.bib")
    ids = {e.key: e.identifier for e in reading.entries}
    assert ids == {
        "vaswani2017attention": None,
        "he2022rethinking": ArxivId("2301.00303"),
        "caesar2019nuscenes": ArxivId("1903.11027"),
        "witten1998anti": ArxivId("hep-th/9802150"),
        "maldacena1999large": None,
        "devlin2019bert": None,
        "schrodinger1926": None,
    }
    assert _by_key(reading)["schrodinger1926"].title_unicode == "Quantisierung als Eigenwertproblem"


def test_dblp_export_with_and_without_eprint_and_a_crossref() -> None:
    reading = _read("dblp.bib")
    ids = {e.key: (e.identifier, e.identifier_source) for e in reading.entries}
    assert ids["DBLP:journals/corr/abs-1906-09302"] == (ArxivId("1906.09302"), "eprint")
    assert ids["DBLP:journals/corr/abs-2105-15203"] == (ArxivId("2105.15203"), "eprint")
    assert ids["DBLP:journals/corr/QinL13"] == (ArxivId("1306.2597"), "url (arxiv.org URL)")
    assert ids["DBLP:conf/icde/LiZCJW18"] == (None, None)
    child = _by_key(reading)["DBLP:conf/icde/LiZCJW18"]
    assert child.fields["publisher"] == "{IEEE} Computer Society"
    # the parent's url is not the child's: crossref never lends identifiers
    assert child.fields["url"] == "https://doi.org/10.1109/ICDE.2018.00062"
    assert "isbn" in child.fields


def test_arxiv_export_forms() -> None:
    reading = _read("arxiv-export.bib")
    ids = {e.key: (e.identifier, e.identifier_source) for e in reading.entries}
    assert ids == {
        "shi2023dear": (ArxivId("2302.12445"), "eprint"),
        "maldacena1997largen": (ArxivId("hep-th/9711200"), "eprint"),
        "https://doi.org/10.48550/arxiv.1706.03762": (ArxivId("1706.03762"), "doi"),
    }


def test_zotero_exports_and_the_duplicate_paper() -> None:
    reading = _read("zotero.bib")
    entries = _by_key(reading)
    assert entries["batatiaMACEHigherOrder2022"].identifier == ArxivId("2206.07697")
    assert entries["batatiaDesignSpaceE32022"].identifier == ArxivId("2205.06643")
    assert entries["xie2021segformer"].identifier == ArxivId("2105.15203")
    native = entries["zotero-native-note-only"]
    assert native.identifier == ArxivId("2206.07697")
    assert native.status == "duplicate"
    assert native.duplicate_of.key == "batatiaMACEHigherOrder2022"
    assert entries["batatiaMACEHigherOrder2022"].title_unicode.startswith("MACE: Higher Order")
