"""One rule decides whether an identifier is a Pith Number, an alias or an arXiv paper."""

from __future__ import annotations

import pytest

from pithauthor.errors import ArxivIdError, PithNumberError
from pithauthor.protocol.ids import classify_reference

BODY = "NFG5PAOXQUVIWDX5F7YSYYL7EW"


@pytest.mark.parametrize(
    ("text", "kind"),
    [
        (f"pith:2023:{BODY}", "pith_number"),
        (BODY, "pith_number"),
        (f"pith:{BODY[:8]}", "alias"),
        (BODY[:12], "alias"),
        ("2302.12445", "arxiv"),
        ("arXiv:2302.12445v2", "arxiv"),
        ("hep-th/9901001", "arxiv"),
        ("10.48550/arXiv.2302.12445", "arxiv"),
        ("https://arxiv.org/abs/2302.12445v1", "arxiv"),
    ],
)
def test_each_form_is_read_as_the_one_kind_it_is(text: str, kind: str) -> None:
    assert classify_reference(text).kind == kind


def test_a_malformed_identifier_raises_the_error_of_the_kind_it_looks_like() -> None:
    with pytest.raises(ArxivIdError):
        classify_reference("2302.1")
    with pytest.raises(PithNumberError):
        classify_reference("pith:2023:NOPE")
