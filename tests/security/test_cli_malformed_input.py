"""Malformed inputs: each ends in one line on stderr and exit 2, no traceback."""

from __future__ import annotations

from pathlib import Path

import pytest
from support.cli import RunPith, assert_one_line_error
from support.paths import FIXTURES

RECORD_TEXT = (FIXTURES / "record-2302.12445v2.json").read_text("utf-8")
XML_TEXT = (FIXTURES / "arxivraw-2302.12445.xml").read_text("utf-8")

MALFORMED_NUMBERS = [
    "pith:2023:NFG5PAOXQUVIWDX5F7YSYYL7E0",  # bad alphabet
    "pith:2023:NFG5PAOXQUVIWDX5F7YSYYL7",  # too short
    "pith:20x3:NFG5PAOXQUVIWDX5F7YSYYL7EW",  # bad year
    "pith:1985:NFG5PAOXQUVIWDX5F7YSYYL7EW",  # year before arXiv
    "pihh:2023:NFG5PAOXQUVIWDX5F7YSYYL7EW",  # bad prefix
    "pith:2023:NFG5PAOX!UVIWDX5F7YSYYL7EW",  # punctuation
]
MALFORMED_IDS = ["2313.12345", "1501.1234", "foo-bar/9901001", "arXiv:12.3456"]


@pytest.mark.parametrize("text", MALFORMED_NUMBERS + MALFORMED_IDS)
def test_malformed_identifier_exits_2_with_one_line(pith: RunPith, text: str) -> None:
    assert_one_line_error(pith("number", "parse", text), 2)


FILES: dict[str, bytes] = {
    "empty.json": b"",
    "blank.json": b"  \n\n ",
    "binary.json": bytes(range(256)),
    "truncated.json": RECORD_TEXT[: len(RECORD_TEXT) // 2].encode(),
    "not-pith.json": b'{"hello": "world"}',
    "array.json": b"[1, 2, 3]",
    "latin1.json": '{"title": "caf\xe9"}'.encode("latin-1"),
    "bad-line.jsonl": (RECORD_TEXT.replace("\n", "") + "\n{oops\n").encode(),
}


@pytest.mark.parametrize("name", FILES)
def test_malformed_file_to_verify_exits_2_with_one_line(
    pith: RunPith, tmp_path: Path, name: str
) -> None:
    path = tmp_path / name
    path.write_bytes(FILES[name])
    assert_one_line_error(pith("verify", str(path)), 2)


@pytest.mark.parametrize(
    "content",
    [b"", bytes(range(256)), XML_TEXT[:400].encode(), b"<a/>"],
    ids=["empty", "binary", "truncated-xml", "no-arxivraw"],
)
def test_malformed_metadata_exits_2_with_one_line(
    pith: RunPith, tmp_path: Path, content: bytes
) -> None:
    path = tmp_path / "meta.xml"
    path.write_bytes(content)
    assert_one_line_error(pith("number", "from-arxiv", str(path)), 2)


# Found by fuzzing: a declaration naming an encoding with no text codec raised LookupError from
# the XML parser ("internal error", exit 1); one expat cannot take raised ValueError.
@pytest.mark.parametrize("encoding", ["UTF-18446744073709551616", "rot13", "utf-32", "idna"])
def test_metadata_in_an_unreadable_declared_encoding_exits_2(
    pith: RunPith, tmp_path: Path, encoding: str
) -> None:
    path = tmp_path / "meta.xml"
    path.write_bytes(XML_TEXT.replace('encoding="UTF-8"', f'encoding="{encoding}"', 1).encode())
    result = pith("number", "from-arxiv", str(path))
    assert_one_line_error(result, 2)
    assert "encoding that cannot be read" in result.stderr


def test_missing_file_and_folder_exit_2(pith: RunPith, tmp_path: Path) -> None:
    assert_one_line_error(pith("verify", str(tmp_path / "nope.json")), 2)
    assert_one_line_error(pith("verify", str(tmp_path)), 2)
    assert_one_line_error(pith("number", "from-arxiv", str(tmp_path / "nope.xml")), 2)


def test_unknown_option_is_a_usage_error_exit_2(pith: RunPith) -> None:
    result = pith("verify", "--no-such-option")
    assert result.returncode == 2 and "Traceback" not in result.stderr
