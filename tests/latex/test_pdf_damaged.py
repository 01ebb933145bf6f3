"""A PDF damaged so that pypdf fails with something other than its PdfReadError (a TypeError, an
AttributeError) is still one error of the command that read it: `pith latex inject --check`
and `pith latex arxiv` read their builds through `latex.pdf.reading_pdf`, never a traceback.
Built by hand here: no TeX is needed."""

from __future__ import annotations

import logging
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from pithauthor.errors import VerificationError
from pithauthor.latex.pdf import (
    check_badge_visible,
    check_pdf,
    page_count,
    pdf_facts,
    view_badge,
)
from pithauthor.protocol.ids import PithNumber

NUMBER = PithNumber.from_digest("11" * 32, 2026)
CATALOG = b"<< /Type /Catalog /Pages 2 0 R >>"


def _pdf(*objects: bytes) -> bytes:
    """A PDF of `objects` (numbered from 1, the first the catalog) with a classic xref table."""
    out, offsets = b"%PDF-1.4\n", []
    for number, body in enumerate(objects, start=1):
        offsets.append(len(out))
        out += b"%d 0 obj\n%s\nendobj\n" % (number, body)
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1)
    out += b"".join(b"%010d 00000 n \n" % offset for offset in offsets)
    trailer = b"trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n"
    return out + trailer % (len(objects) + 1, xref)


# a page whose annotation is a number, not a dictionary: pypdf hands it over as it is, and
# reading its action raises AttributeError (not a PdfReadError)
NUMBER_FOR_ANNOTATION = _pdf(
    CATALOG,
    b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
    b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Annots [5] >>",
)


def _catalog_in_a_missing_object_stream() -> bytes:
    """A PDF whose cross-reference stream puts the catalog in object stream 9, which does not
    exist: counting its pages raises TypeError inside pypdf."""
    out = b"%PDF-1.5\n"
    pages = len(out)
    out += b"2 0 obj\n<< /Type /Pages /Kids [] /Count 0 >>\nendobj\n"
    xref = len(out)
    rows = bytes([0, 0, 0, 0, 2, 0, 9, 0, 1, 0, pages, 0, 1, 0, xref, 0])
    out += b"3 0 obj\n<< /Type /XRef /Size 4 /W [1 2 1] /Root 1 0 R /Length %d >>\n" % len(rows)
    return out + b"stream\n" + rows + b"\nendstream\nendobj\nstartxref\n%d\n%%%%EOF\n" % xref


def _check_badge(pdf: Path) -> Any:
    return check_badge_visible(pdf, NUMBER.url(), "margin")


READERS: list[tuple[str, Callable[[Path], Any], bytes]] = [
    ("pdf_facts", pdf_facts, NUMBER_FOR_ANNOTATION),
    ("check_pdf", lambda pdf: check_pdf(pdf, NUMBER), NUMBER_FOR_ANNOTATION),
    ("view_badge", lambda pdf: view_badge(pdf, NUMBER.url()), NUMBER_FOR_ANNOTATION),
    ("check_badge_visible", _check_badge, NUMBER_FOR_ANNOTATION),
    ("page_count", page_count, _catalog_in_a_missing_object_stream()),
]


@pytest.mark.parametrize(
    ("read", "data"), [(read, data) for _, read, data in READERS], ids=[n for n, _, _ in READERS]
)
def test_a_pdf_pypdf_fails_on_outside_its_own_errors_is_one_verification_error(
    read: Callable[[Path], Any], data: bytes, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    # before `reading_pdf`, each of these let pypdf's TypeError or AttributeError out of
    # `inject --check` and `latex arxiv` as a traceback
    pdf = tmp_path / "paper.pdf"
    pdf.write_bytes(data)
    before = logging.getLogger("pypdf").level
    with caplog.at_level(logging.DEBUG), pytest.raises(VerificationError) as caught:
        read(pdf)
    message = str(caught.value)
    assert "paper.pdf: cannot read" in message and "\n" not in message
    assert logging.getLogger("pypdf").level == before  # silenced only while reading
    assert not [r for r in caplog.records if r.name.startswith("pypdf")]
