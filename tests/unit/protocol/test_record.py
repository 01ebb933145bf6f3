"""The canonical record from arXiv metadata (JSON and OAI-PMH arXivRaw), on the real vector."""

from __future__ import annotations

import pytest
from support.paths import FIXTURES, load_fixture

from pithauthor.errors import MetadataError
from pithauthor.protocol.canonical_json import canonical_sha256
from pithauthor.protocol.record import (
    ArxivMetadata,
    build_canonical_record,
    parse_arxiv_metadata,
    pith_number_of,
    rfc2822_to_utc,
    text_canon_sha256,
)

META = load_fixture("arxiv-metadata-2302.12445.json")
EXPECTED = META["expected"]
RECORD = load_fixture("record-2302.12445v2.json")


def test_title_and_abstract_hashes_fold_case_and_whitespace_as_the_registry_does() -> None:
    assert text_canon_sha256(META["title"]) == EXPECTED["title_canon_sha256"]
    assert text_canon_sha256(META["abstract"]) == EXPECTED["abstract_canon_sha256"]


def test_v1_date_becomes_utc_at_second_precision() -> None:
    assert rfc2822_to_utc(META["v1_date_rfc2822"]) == EXPECTED["submitted_at"]
    assert rfc2822_to_utc("Fri, 24 Feb 2023 05:11:18 +0100") == EXPECTED["submitted_at"]


@pytest.mark.parametrize(
    "date",
    [
        "Fri, 24 Feb 2023 18446744073709551616:11:18 GMT",  # found by fuzzing the vector
        "Fri, 24 Feb 2023 04:11:18 +99999999999999999999",
        "Fri, 31 Dec 9999 23:59:59 -2359",  # past year 9999 once in UTC
    ],
)
def test_a_date_out_of_range_is_not_an_rfc2822_date(date: str) -> None:
    # these raised OverflowError: `pith number from-arxiv` ended in "internal error"
    with pytest.raises(MetadataError, match="is not an RFC 2822 date"):
        rfc2822_to_utc(date)


def test_record_from_json_metadata_matches_every_expected_hash_and_the_real_record() -> None:
    record = build_canonical_record(ArxivMetadata.from_json(META))
    md = record["metadata"]
    assert md["primary_cat"] == EXPECTED["primary_cat"]
    assert md["cross_cats_sorted"] == EXPECTED["cross_cats_sorted"]
    assert canonical_sha256(record) == EXPECTED["canonical_sha256"]
    assert pith_number_of(record).full == EXPECTED["pith_number"]
    assert record == RECORD["canonical_record"]


def test_record_from_arxivraw_xml_gives_the_same_number() -> None:
    meta = parse_arxiv_metadata((FIXTURES / "arxivraw-2302.12445.xml").read_bytes())
    assert meta.latest_version == 2
    assert pith_number_of(build_canonical_record(meta)).full == EXPECTED["pith_number"]


def test_bare_arxivraw_element_without_the_oai_envelope_is_accepted() -> None:
    xml = (FIXTURES / "arxivraw-2302.12445.xml").read_text("utf-8")
    start = xml.index("<arXivRaw")
    end = xml.index("</arXivRaw>") + len("</arXivRaw>")
    meta = parse_arxiv_metadata(xml[start:end].encode())
    assert canonical_sha256(build_canonical_record(meta)) == EXPECTED["canonical_sha256"]


def test_cross_categories_are_sorted_and_primary_comes_first() -> None:
    meta = ArxivMetadata.from_fields(
        "hep-th/9901001", 1, "T", "A", "hep-th math.AG gr-qc", None, "1999-01-01T00:00:00Z"
    )
    md = build_canonical_record(meta)["metadata"]
    assert md["primary_cat"] == "hep-th"
    assert md["cross_cats_sorted"] == ["gr-qc", "math.AG"]
    assert md["license"] == ""
    assert build_canonical_record(meta)["source"]["id"] == "hep-th/9901001"


def test_an_oai_pmh_error_answer_is_reported_with_its_code() -> None:
    xml = (
        b'<OAI-PMH xmlns="http://www.openarchives.org/OAI/2.0/"><error code="idDoesNotExist">'
        b"No such id</error></OAI-PMH>"
    )
    with pytest.raises(MetadataError, match="idDoesNotExist"):
        parse_arxiv_metadata(xml)


@pytest.mark.parametrize(
    ("data", "fragment"),
    [
        (b"", "empty"),
        (b"\x00\x01\x02", "binary"),
        (b"<OAI-PMH><unclosed>", "not well-formed"),
        (b"<a/>", "no arXivRaw element"),
        (b'{"arxiv_id": "2302.12445"}', "lacks the field"),
        (b"{not json", "not valid JSON"),
        (b"hello", "expected arXivRaw XML or JSON"),
    ],
)
def test_broken_metadata_raises_metadata_error(data: bytes, fragment: str) -> None:
    with pytest.raises(MetadataError, match=fragment):
        parse_arxiv_metadata(data)


def test_arxivraw_without_v1_is_refused() -> None:
    xml = (FIXTURES / "arxivraw-2302.12445.xml").read_text("utf-8")
    xml = xml.replace('version="v1"', 'version="v3"')
    with pytest.raises(MetadataError, match="v1"):
        parse_arxiv_metadata(xml.encode())


# Found by fuzzing: `int()`/`str()` converted a field of another JSON type, each giving a wrong
# Pith Number silently (true = version 1, null = the title "None") or an internal error (a
# licence of 5: AttributeError).
@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("latest_version", True),
        ("latest_version", 2.0),
        ("latest_version", 2.7),
        ("latest_version", "2"),
        ("latest_version", "\u0662"),  # Arabic-Indic 2
        ("title", None),
        ("title", 12),
        ("abstract", ["an abstract"]),
        ("arxiv_id", 2302.12445),
        ("categories", {"cs.LG": 1}),
        ("categories", ["cs.LG", 5]),
        ("license", 5),
        ("license", False),
        ("v1_date_rfc2822", 1677211878),
    ],
)
def test_a_json_metadata_field_of_another_type_is_refused(field: str, value: object) -> None:
    doc = {k: v for k, v in META.items() if k != "expected"}
    assert build_canonical_record(ArxivMetadata.from_json(doc))  # the real one is taken
    with pytest.raises(MetadataError, match=f"malformed: {field} is "):
        ArxivMetadata.from_json({**doc, field: value})


def test_json_metadata_categories_as_an_array_and_no_licence_are_taken() -> None:
    doc = {k: v for k, v in META.items() if k != "expected"}
    as_array = {**doc, "categories": doc["categories"].split()}
    assert ArxivMetadata.from_json(as_array) == ArxivMetadata.from_json(doc)
    assert ArxivMetadata.from_json({**doc, "license": None}).license == ""
