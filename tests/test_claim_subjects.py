"""Odd subjects for `pith claim`: never signed for a paper version the user did not name."""

from __future__ import annotations

import pytest
from conftest import FIXTURES, RunPith, assert_one_line_error

DEAR_RECORD = str(FIXTURES / "record-2302.12445v2.json")  # arXiv 2302.12445v2


@pytest.mark.parametrize("subject", ["2302.12445v1", "arXiv:2302.12445v3"])
def test_claim_of_another_version_than_the_record_is_refused(pith: RunPith, subject: str) -> None:
    result = pith("claim", subject, "--record", DEAR_RECORD, "--json")
    assert_one_line_error(result, 2)
    assert "is the record of arXiv 2302.12445v2 (pith:2023:" in result.stderr
    assert result.stderr.rstrip().endswith(f"not of {subject}")
    assert result.stdout == ""
