"""Reading: a messy file, several files, relationships, --only-cited, unreadable files."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from pithauthor.bibliography.reading import (
    BibEntry,
    BibReading,
    parse_relationship_map,
    read_bibliographies,
)
from pithauthor.errors import BibliographyError, InputError
from pithauthor.protocol.ids import ArxivId
from pithauthor.protocol.payloads import RELATIONSHIPS

FIXTURES = Path(__file__).parents[2] / "fixtures" / "bib"
MESSY = FIXTURES / "messy.bib"


def _by_key(reading: BibReading) -> dict[str, BibEntry]:
    return {entry.key: entry for entry in reading.entries}


def _write(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def _line_of(needle: str) -> int:
    lines = MESSY.read_text("utf-8").splitlines()
    return next(i for i, line in enumerate(lines, start=1) if needle in line)


@pytest.fixture(scope="module")
def messy() -> BibReading:
    return read_bibliographies([MESSY])


def test_messy_every_status_is_what_the_file_says(messy: BibReading) -> None:
    statuses = [(row.key, row.status) for row in messy.rows()]
    assert statuses == [
        ("Shouting2020", "found"),
        ("Parens2019", "found"),
        ("Broken2021", "parse_error"),
        ("AfterBroken2021", "found"),
        ("Twice", "found"),
        ("Twice", "duplicate"),
        ("SamePaperA", "found"),
        ("SamePaperB", "duplicate"),
        ("Extends2023", "found"),
        ("BadRelation2023", "invalid_relationship"),
        ("ShortPith", "invalid_identifier"),
        ("BadEprint", "invalid_identifier"),
        ("HalEprint", "no_identifier"),
        ("PlainDoi", "no_identifier"),
        ("RepeatedField", "found"),
        ("OrphanChild", "no_identifier"),
        ("EmptyEntry", "no_identifier"),
    ]


def test_messy_rows_carry_the_real_line_numbers(messy: BibReading) -> None:
    for row in messy.rows():
        if row.key == "Twice" and row.status == "duplicate":
            expected = _line_of("title = {Second of two}") - 1
        else:
            expected = (
                _line_of("{" + row.key + ",")
                if row.key != "Parens2019"
                else _line_of("@Misc(Parens2019")
            )
        assert row.line == expected, row


def test_messy_values_macros_concatenation_and_case(messy: BibReading) -> None:
    entries = _by_key(messy)
    assert entries["Shouting2020"].identifier == ArxivId("2002.05709")
    assert entries["Shouting2020"].fields["journal"] == "arXiv preprint arXiv:2002.05709"
    assert entries["Shouting2020"].title_unicode == "A GPU Study of Monte Carlo"
    assert entries["AfterBroken2021"].fields["journal"] == "J.~Phys. A"
    assert entries["Parens2019"].identifier == ArxivId("1905.11946", 5)
    assert "not-an-entry" not in entries


def test_messy_duplicates_point_at_the_first(messy: BibReading) -> None:
    entries = _by_key(messy)
    assert entries["Twice"].fields["title"] == "First of two"
    same = entries["SamePaperB"]
    assert same.duplicate_of is entries["SamePaperA"]
    row = same.row()
    assert "SamePaperA" in row.detail
    twice_rows = [r for r in messy.rows() if r.key == "Twice" and r.status == "duplicate"]
    assert "first at messy.bib:" in twice_rows[0].detail


def test_messy_relationships_from_the_field(messy: BibReading) -> None:
    entries = _by_key(messy)
    assert entries["Extends2023"].relationship == "extends"
    bad = entries["BadRelation2023"]
    assert bad.relationship_error is not None and "inspired_by" in bad.relationship_error
    assert bad not in messy.to_sign()


def test_messy_notes_for_repeated_field_and_missing_crossref(messy: BibReading) -> None:
    entries = _by_key(messy)
    assert entries["RepeatedField"].fields["title"] == "First title"
    assert "repeated field title" in entries["RepeatedField"].row().detail
    assert "NoSuchProceedings" in entries["OrphanChild"].row().detail


def test_to_sign_is_exactly_the_found_entries(messy: BibReading) -> None:
    keys = [e.key for e in messy.to_sign()]
    assert keys == [r.key for r in messy.rows() if r.status == "found"]
    assert len(set(keys)) == len(keys)


@pytest.mark.parametrize("identifier", [None, "pith:2023:NFG5PAOXQUVIWDX5F7YSYYL7EW"])
def test_an_outcome_row_is_the_reading_row_with_the_signers_outcome(
    messy: BibReading, identifier: str | None
) -> None:
    """`pith cite` builds each signed entry's row directly: it must be the reading's row with
    status, detail and (when resolved) identifier replaced, for every kind of entry."""
    assert {e.status for e in messy.entries} >= {"found", "duplicate", "no_identifier"}
    for entry in messy.entries:
        row = entry.row()
        new = {"identifier": identifier} if identifier is not None else {}
        expected = dataclasses.replace(row, status="signed", detail="extends; sha256:…", **new)
        assert entry.outcome_row("signed", "extends; sha256:…", identifier) == expected


def test_relationship_precedence_field_then_map_then_default(tmp_path: Path) -> None:
    bib = _write(
        tmp_path,
        "r.bib",
        "@misc{a, eprint={2302.12445}, archivePrefix={arXiv}, pith-relationship={refutes}}\n"
        "@misc{b, eprint={1706.03762}, archivePrefix={arXiv}}\n"
        "@misc{c, eprint={1512.03385}, archivePrefix={arXiv}}\n"
        "@misc{d, eprint={2204.10562}, archivePrefix={arXiv}}\n",
    )
    reading = read_bibliographies(
        [bib],
        default_relationship="compares",
        relationship_map={"a": "supports", "b": "uses_method", "D": "nonsense", "zzz": "cites"},
    )
    entries = _by_key(reading)
    assert entries["a"].relationship == "refutes"
    assert entries["b"].relationship == "uses_method"
    assert entries["c"].relationship == "compares"
    assert entries["d"].status == "invalid_relationship"  # --map keys match case-insensitively
    assert reading.unknown_map_keys == ("zzz",)


def test_all_eight_relationships_are_accepted(tmp_path: Path) -> None:
    text = "".join(
        f"@misc{{k{i}, eprint={{1706.0{i:04d}}}, archivePrefix={{arXiv}}, "
        f"pith-relationship={{{name.upper()}}}}}\n"
        for i, name in enumerate(RELATIONSHIPS, start=1)
    )
    reading = read_bibliographies([_write(tmp_path, "all.bib", text)])
    assert [e.relationship for e in reading.entries] == list(RELATIONSHIPS)
    # the registry's citation form (docs/protocol.md): exactly these eight, in this order
    assert " ".join(RELATIONSHIPS) == (
        "supports refutes extends uses_method depends_on replaces compares cites"
    )


def test_an_invalid_default_relationship_is_a_usage_error() -> None:
    with pytest.raises(InputError, match="not a relationship"):
        read_bibliographies([MESSY], default_relationship="likes")


@pytest.mark.parametrize("item", ["nokey", "=cites", "a=", "a"])
def test_malformed_map_options_are_refused(item: str) -> None:
    with pytest.raises(InputError, match="KEY=RELATIONSHIP"):
        parse_relationship_map([item])


def test_map_giving_two_relationships_to_one_key_is_refused() -> None:
    assert parse_relationship_map(["a=cites", "b = extends", "a=cites"]) == {
        "a": "cites",
        "b": "extends",
    }
    with pytest.raises(InputError, match="two relationships"):
        parse_relationship_map(["a=cites", "a=extends"])


def test_several_files_share_strings_and_keys(tmp_path: Path) -> None:
    first = _write(
        tmp_path,
        "a.bib",
        '@string{pre = "arXiv preprint arXiv:"}\n@misc{one, journal = pre # "2302.12445"}\n',
    )
    second = _write(
        tmp_path,
        "b.bib",
        '@misc{two, journal = pre # "1706.03762"}\n\n@misc{ONE, title = {again}}\n',
    )
    reading = read_bibliographies([first, second])
    entries = _by_key(reading)
    assert entries["two"].identifier == ArxivId("1706.03762")
    [dup] = reading.failures
    assert (dup.key, dup.status, dup.file, dup.line) == ("ONE", "duplicate", str(second), 3)
    assert "a.bib:2" in dup.detail
    assert [r.file for r in reading.rows()] == [str(first), str(second), str(second)]


def test_crossref_fills_missing_fields_but_never_identifiers(tmp_path: Path) -> None:
    bib = _write(
        tmp_path,
        "x.bib",
        "@inproceedings{child, title = {Child}, crossref = {Parent}}\n"
        "@proceedings{parent, title = {Proceedings of X}, year = 2020, publisher = {P},"
        " eprint = {2302.12445}, archivePrefix = {arXiv}, pith-relationship = {refutes}}\n",
    )
    child = _by_key(read_bibliographies([bib]))["child"]
    assert child.fields["booktitle"] == "Proceedings of X"
    assert child.fields["year"] == "2020"
    assert child.fields["title"] == "Child"
    assert child.identifier is None
    assert child.relationship == "cites"


def test_only_cited_marks_the_rest_skipped(tmp_path: Path) -> None:
    reading = read_bibliographies([MESSY], only_cited={"shouting2020", "SamePaperB", "Ghost"})
    entries = _by_key(reading)
    assert entries["Shouting2020"].status == "found"
    assert entries["SamePaperB"].status == "found"  # its twin is skipped, so it is first
    assert entries["SamePaperA"].status == "skipped"
    assert entries["BadEprint"].status == "skipped"
    assert reading.missing_cited == ("ghost",)
    everything = read_bibliographies([MESSY], only_cited={"*"})
    assert not any(e.status == "skipped" for e in everything.entries)


def test_unicode_titles_from_latex(tmp_path: Path) -> None:
    bib = _write(
        tmp_path,
        "t.bib",
        r"@misc{a, title = {Schr{\"o}dinger and {\'E}cole on $\alpha$-stable {GPU}s \& more}}"
        "\n",
    )
    [entry] = read_bibliographies([bib]).entries
    assert entry.title_unicode == "Schrödinger and École on \u03b1-stable GPUs & more"


def test_missing_file_is_one_clear_error(tmp_path: Path) -> None:
    with pytest.raises(BibliographyError, match="no such file"):
        read_bibliographies([tmp_path / "nope.bib"])


def test_folder_and_binary_files_are_refused(tmp_path: Path) -> None:
    with pytest.raises(BibliographyError, match="folder"):
        read_bibliographies([tmp_path])
    binary = tmp_path / "refs.bib"
    binary.write_bytes(b"%PDF-1.5\x00\x01\x02")
    with pytest.raises(BibliographyError, match="binary"):
        read_bibliographies([binary])


def test_latin1_file_is_read_with_a_warning(tmp_path: Path) -> None:
    bib = tmp_path / "old.bib"
    bib.write_bytes("@misc{a, title = {Caf\u00e9}, eprint = {1706.03762}}\n".encode("latin-1"))
    reading = read_bibliographies([bib])
    assert reading.entries[0].title_unicode == "Café"
    assert reading.entries[0].identifier == ArxivId("1706.03762")
    assert "not UTF-8" in reading.warnings[0] and "line 1" in reading.warnings[0]


def test_empty_file_is_refused_as_no_bibliography(tmp_path: Path) -> None:
    with pytest.raises(BibliographyError, match=r"e\.bib is empty"):
        read_bibliographies([_write(tmp_path, "e.bib", " \n")])


@pytest.mark.parametrize(
    "text", ['{"title": "x"}\n', "[1, 2]", "\x80\xfe junk text", "% a comment\n@comment{x}"]
)
def test_a_file_with_no_entry_is_refused_not_read_as_zero_entries(
    tmp_path: Path, text: str
) -> None:
    with pytest.raises(BibliographyError, match="no bibliography entry"):
        read_bibliographies([_write(tmp_path, "junk.bib", text)])


def test_a_macros_only_file_is_a_bibliography(tmp_path: Path) -> None:
    macros = _write(tmp_path, "abbrev.bib", "@string{prl = {Phys. Rev. Lett.}}\n")
    refs = _write(tmp_path, "refs.bib", "@article{a, journal = prl, title = {T}}\n")
    entries = _by_key(read_bibliographies([macros, refs]))
    assert entries["a"].fields["journal"] == "Phys. Rev. Lett."


def test_a_redefined_string_takes_its_later_value_as_in_bibtex(tmp_path: Path) -> None:
    bib = _write(
        tmp_path,
        "s.bib",
        "@string{j = {Old}}\n@misc{a, journal = j}\n@string{j = {New}}\n@misc{b, journal = j}\n",
    )
    entries = _by_key(read_bibliographies([bib]))
    assert (entries["a"].fields["journal"], entries["b"].fields["journal"]) == ("Old", "New")
