"""Canonical JSON, Pith Numbers and arXiv identifiers, proven on the registry's real vectors."""

from __future__ import annotations

import hashlib
import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from support.examples_budget import examples
from support.paths import load_fixture

from pithauthor.errors import ArxivIdError, PithNumberError
from pithauthor.protocol.canonical_json import canonical, canonical_sha256, parse_json
from pithauthor.protocol.ids import ArxivId, PithAlias, PithNumber, parse_reference

CANONICAL_ROWS = load_fixture("canonical_records.jsonl")
RECORD = load_fixture("record-2302.12445v2.json")


def test_canonical_bytes_sort_keys_drop_spaces_and_keep_unicode() -> None:
    assert canonical({"b": 1, "a": [1, {"d": "é", "c": None}]}) == (
        '{"a":[1,{"c":null,"d":"é"}],"b":1}'.encode()
    )


@pytest.mark.parametrize("row", CANONICAL_ROWS, ids=lambda r: r["canonical_record"]["source"]["id"])
def test_canonical_hash_of_every_vector_record_matches_the_registry(row: dict) -> None:
    assert canonical_sha256(row["canonical_record"]) == row["canonical_sha256"]


@pytest.mark.parametrize("row", CANONICAL_ROWS, ids=lambda r: r["pith_number"])
def test_pith_number_derives_from_the_32_byte_digest_and_first_submission_year(row: dict) -> None:
    year = int(row["canonical_record"]["metadata"]["submitted_at"][:4])
    assert PithNumber.from_digest(row["canonical_sha256"], year).full == row["pith_number"]


def test_the_body_is_26_base32_characters_of_the_whole_digest_not_of_16_bytes() -> None:
    import base64

    digest = bytes.fromhex(RECORD["canonical_sha256"])
    of_16 = base64.b32encode(digest[:16]).decode().rstrip("=")
    body = PithNumber.parse(RECORD["pith_number"]).body
    assert body == base64.b32encode(digest).decode()[:26]
    assert len(body) == 26
    # 16 bytes give 26 characters too, but the last differs: the rule takes 130 bits of 32 bytes
    assert of_16 != body


def test_short_form_and_aliases_match_the_real_record() -> None:
    number = PithNumber.parse(RECORD["pith_number"])
    assert number.short == RECORD["short_pith_number"]
    aliases = {a["alias_kind"]: a["alias_value"] for a in RECORD["aliases"]}
    for n in (8, 12, 16):
        assert number.alias(n) == aliases[f"pith_short_{n}"]
    assert RECORD["links"]["html"] == number.url()


@pytest.mark.parametrize(
    "text",
    [
        "pith:2023:NFG5PAOXQUVIWDX5F7YSYYL7EW",
        "PITH:2023:nfg5paoxquviwdx5f7ysyyl7ew",
        "  pith:2023:NFG5PAOXQUVIWDX5F7YSYYL7EW\n",
    ],
)
def test_full_numbers_parse_in_any_case(text: str) -> None:
    number = PithNumber.parse(text)
    assert number.full == "pith:2023:NFG5PAOXQUVIWDX5F7YSYYL7EW"


def test_bare_body_parses_without_a_year() -> None:
    number = PithNumber.parse("nfg5paoxquviwdx5f7ysyyl7ew")
    assert number.body == "NFG5PAOXQUVIWDX5F7YSYYL7EW" and number.year is None
    with pytest.raises(PithNumberError, match="year"):
        _ = number.full


@pytest.mark.parametrize(
    ("text", "fragment"),
    [
        ("pith:2023:NFG5PAOXQUVIWDX5F7YSYYL7E0", "'0' at position 26"),
        ("pith:2023:NFG5PAOXQUVIWDX5F7YSYYL7E", "25 characters"),
        ("pith:2023:NFG5PAOXQUVIWDX5F7YSYYL7EWA", "27 characters"),
        ("pith:23:NFG5PAOXQUVIWDX5F7YSYYL7EW", "four digits"),
        ("pith:1989:NFG5PAOXQUVIWDX5F7YSYYL7EW", "before 1991"),
        ("pth:2023:NFG5PAOXQUVIWDX5F7YSYYL7EW", "does not start with 'pith:'"),
        ("pith:2023:NFG5PAOX", "expected 26"),
        ("NFG5PAOX", "short alias"),
        ("pith:NFG5PAOX", "short form"),
        ("pith:2023:NFG5:PAOX", "too many"),
        ("", "empty"),
        # lookalikes that str.upper() folds into the alphabet: refused as written, not read as
        # the number they imitate (the dotless i, the long s, the Kelvin sign, ligature st)
        ("pith:2023:NFG5PAOXQUV\u0131WDX5F7YSYYL7EW", "'\u0131' at position 12"),
        ("pith:2023:nfg5paoxquviwdx5f7y\u017fyyl7ew", "'\u017f' at position 20"),
        ("pith:2023:NFG5PAOXQUVIWDX5F7YSYYL7E\ufb06", "position 26"),
        ("pith:NFG5P\u0131OX", "position 6"),
    ],
)
def test_malformed_numbers_get_a_precise_error(text: str, fragment: str) -> None:
    with pytest.raises(PithNumberError) as info:
        PithNumber.parse(text)
    assert fragment in str(info.value)


@pytest.mark.parametrize("text", ["pith:NFG5PAOX", "NFG5PAOXQUVI", "nfg5paoxquviwdx5"])
def test_short_forms_are_recognised_only_as_aliases(text: str) -> None:
    ref = parse_reference(text)
    assert isinstance(ref, PithAlias)
    assert ref.matches(PithNumber.parse(RECORD["pith_number"]))


def test_parse_reference_gives_full_numbers_as_numbers() -> None:
    assert isinstance(parse_reference(RECORD["pith_number"]), PithNumber)


@pytest.mark.parametrize(
    ("text", "normal", "version"),
    [
        ("2302.12445", "2302.12445", None),
        ("2302.12445v2", "2302.12445", 2),
        ("arXiv:2302.12445v2", "2302.12445", 2),
        ("ARXIV: 2302.12445", "2302.12445", None),
        ("0704.0001", "0704.0001", None),
        ("1412.9999v3", "1412.9999", 3),
        ("hep-th/9901001", "hep-th/9901001", None),
        ("HEP-TH/9901001v2", "hep-th/9901001", 2),
        ("math.GT/0309136", "math/0309136", None),
        ("arXiv:hep-lat/0305021", "hep-lat/0305021", None),
        ("10.48550/arXiv.2302.12445", "2302.12445", None),
        ("10.48550/ARXIV.2302.12445", "2302.12445", None),
        ("https://doi.org/10.48550/arxiv.2302.12445", "2302.12445", None),
        ("https://arxiv.org/abs/2302.12445v2", "2302.12445", 2),
        ("http://arxiv.org/pdf/2302.12445v1.pdf", "2302.12445", 1),
        ("arxiv.org/abs/hep-th/9901001", "hep-th/9901001", None),
    ],
)
def test_arxiv_ids_parse_and_normalise(text: str, normal: str, version: int | None) -> None:
    parsed = ArxivId.parse(text)
    assert (parsed.id, parsed.version) == (normal, version)


@pytest.mark.parametrize(
    ("text", "fragment"),
    [
        ("2313.12345", "month 13"),
        ("1501.1234", "5-digit"),
        ("1412.12345", "4-digit"),
        ("0612.1234", "April 2007"),
        ("foo-bar/9901001", "not an arXiv archive"),
        ("hep-th/0801001", "9108 to 0703"),
        ("2302.12445v0", "v1"),
        ("12445", "not an arXiv identifier"),
        ("   ", "empty"),
    ],
)
def test_malformed_arxiv_ids_say_what_is_wrong(text: str, fragment: str) -> None:
    with pytest.raises(ArxivIdError) as info:
        ArxivId.parse(text)
    assert fragment in str(info.value)


def test_arxiv_doi_is_the_datacite_form() -> None:
    assert ArxivId.parse("2302.12445v2").doi.lower() == "10.48550/arxiv.2302.12445"


def test_canonical_matches_the_protocol_definition_literally() -> None:
    obj = RECORD["canonical_record"]
    expected = json.dumps(obj, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    assert canonical(obj) == expected.encode("utf-8")
    assert hashlib.sha256(canonical(obj)).hexdigest() == RECORD["canonical_sha256"]


_JSON_VALUES = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-(2**53) + 1, 2**53 - 1)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(st.characters(exclude_categories=["Cs"])),
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=5)
    ),
    max_leaves=12,
)


@settings(max_examples=examples(80), deadline=None)
@given(st.dictionaries(st.text(max_size=8), _JSON_VALUES, max_size=6))
def test_canonical_writes_what_json_dumps_writes_for_any_object(obj: dict) -> None:
    """`canonical` calls CPython's C encoder directly (made once): byte for byte the output of
    the protocol's definition, escapes, control characters and non-ASCII text included."""
    expected = json.dumps(obj, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    assert canonical(obj) == expected.encode("utf-8")
    assert parse_json(canonical(obj)) == obj


def test_canonical_refuses_what_json_cannot_write() -> None:
    """A value that is not JSON raises as `json.dumps` does; a lone surrogate cannot be UTF-8."""
    with pytest.raises(TypeError):
        canonical({"a": object()})
    with pytest.raises(UnicodeEncodeError):
        canonical({"a": "\ud800"})
    loop: dict = {}
    loop["self"] = loop
    with pytest.raises((ValueError, RecursionError)):
        canonical(loop)


@pytest.mark.parametrize(
    "text",
    [
        "math.\u212aT/0101001",  # the Kelvin sign, whose case fold is k: once read as math/0101001
        "phy\u017fics/9901001",  # the long s, whose case fold is s
        "hep-\u0167h/9901001",
    ],
)
def test_an_old_style_id_with_a_non_ascii_letter_is_refused_not_folded(text: str) -> None:
    with pytest.raises(ArxivIdError):
        ArxivId.parse(text)


@pytest.mark.parametrize("text", ["ed25519:\u017f" + "A" * 25, "ed25519:" + "a" * 25 + "\u0131"])
def test_a_key_id_spelt_with_a_lookalike_letter_is_refused(text: str) -> None:
    from pithauthor.errors import InputError
    from pithauthor.protocol.identity import parse_key_id

    assert parse_key_id("ed25519:" + "a" * 26) == "ed25519:" + "A" * 26
    with pytest.raises(InputError):
        parse_key_id(text)
