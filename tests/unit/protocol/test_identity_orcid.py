"""ORCID iDs: the format and the ISO 7064 MOD 11-2 check digit."""

from __future__ import annotations

import pytest

from pithauthor.errors import OrcidError
from pithauthor.protocol.identity import check_digit, normalize_orcid

# Real iDs published by ORCID in its documentation (Josiah Carberry and others).
REAL_IDS = ["0000-0002-1825-0097", "0000-0001-5109-3700", "0000-0002-1694-233X"]


@pytest.mark.parametrize("orcid", REAL_IDS)
def test_real_orcid_ids_pass_the_check_digit(orcid: str) -> None:
    assert normalize_orcid(orcid) == orcid
    digits = orcid.replace("-", "")
    assert check_digit(digits[:15]) == digits[15]


def test_orcid_urls_and_lower_case_x_are_normalised() -> None:
    assert normalize_orcid("https://orcid.org/0000-0002-1825-0097") == "0000-0002-1825-0097"
    assert normalize_orcid(" 0000-0002-1694-233x ") == "0000-0002-1694-233X"


@pytest.mark.parametrize(
    "bad",
    ["0000-0002-1825-0098", "0000-0002-1694-2330", "0000-0001-5109-370X"],
)
def test_a_wrong_check_digit_is_refused(bad: str) -> None:
    with pytest.raises(OrcidError, match="check digit"):
        normalize_orcid(bad)


@pytest.mark.parametrize(
    "bad", ["", "1234", "0000000218250097", "0000-0002-1825-009", "abcd-0002-1825-0097"]
)
def test_malformed_orcid_ids_are_refused(bad: str) -> None:
    with pytest.raises(OrcidError, match="not an ORCID iD"):
        normalize_orcid(bad)
