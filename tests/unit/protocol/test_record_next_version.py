"""`pith number from-arxiv --next-version`: the number a version will get before arXiv has it,
proven on the real paper: v1's metadata alone predicts the registry's record of v2."""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path

import pytest
from support.cli import RunPith, assert_one_line_error
from support.paths import REPO

from pithauthor.errors import MetadataError
from pithauthor.verify import read_arxiv_metadata

RAW = REPO / "tests" / "fixtures" / "arxivraw-2302.12445.xml"
REAL_V2 = "pith:2023:NFG5PAOXQUVIWDX5F7YSYYL7EW"  # the registry's record of 2302.12445v2


def _v1_only(tmp_path: Path) -> Path:
    text = RAW.read_text("utf-8")
    v1_only = re.sub(r'\s*<version version="v2">.*?</version>', "", text, flags=re.S)
    assert v1_only != text
    path = tmp_path / "v1.xml"
    path.write_text(v1_only, "utf-8")
    return path


def test_v1_metadata_with_next_version_gives_the_real_v2_number(
    pith: RunPith, tmp_path: Path
) -> None:
    v1 = _v1_only(tmp_path)
    now = pith("number", "from-arxiv", str(v1))
    assert now.returncode == 0 and now.stdout.strip() != REAL_V2
    nxt = pith("number", "from-arxiv", str(v1), "--next-version")
    assert nxt.returncode == 0, nxt.stderr
    assert nxt.stdout.strip() == REAL_V2
    assert "v2 of arXiv:2302.12445" in nxt.stderr


def test_a_changed_title_for_the_next_version_changes_the_number(pith: RunPith) -> None:
    same = pith("number", "from-arxiv", str(RAW), "--next-version").stdout.strip()
    retitled = pith("number", "from-arxiv", str(RAW), "--next-version", "--title", "Another title")
    assert retitled.returncode == 0
    assert retitled.stdout.strip() not in (same, REAL_V2)
    assert retitled.stdout.strip().startswith("pith:2023:")  # v1's year is kept


def test_metadata_changes_without_next_version_are_refused(pith: RunPith) -> None:
    assert_one_line_error(pith("number", "from-arxiv", str(RAW), "--title", "x"), 2)


@pytest.mark.parametrize("option", ["--title", "--license"])
def test_a_next_version_field_that_is_not_utf8_is_refused(pith: RunPith, option: str) -> None:
    # Found by fuzzing: a byte that is not UTF-8 in an argument arrives as a lone surrogate
    # (surrogate escape), which has no bytes to hash: UnicodeEncodeError, the "bug" last resort.
    result = pith("number", "from-arxiv", str(RAW), "--next-version", option, "A title\udcff")
    assert_one_line_error(result, 2)
    assert "is not UTF-8 text" in result.stderr and "this is a bug" not in result.stderr


def test_metadata_with_a_lone_surrogate_is_refused() -> None:
    meta = read_arxiv_metadata(RAW)
    for field in ("title", "abstract", "license"):
        with pytest.raises(MetadataError, match="not UTF-8 text"):
            dataclasses.replace(meta, **{field: "text \ud800"})
