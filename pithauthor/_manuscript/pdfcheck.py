"""Check that a PDF carries the Pith Number (Info key /PithNumber) and the link to its page."""

from __future__ import annotations

from pathlib import Path

from pithauthor._core.pith_number import PithNumber
from pithauthor.errors import VerificationError

# pypdf is imported where a PDF is read: only --check and `latex arxiv` do.


def pdf_facts(pdf: Path) -> tuple[str | None, list[str]]:
    """The /PithNumber Info value and every link URI in `pdf`."""
    from pypdf import PdfReader
    from pypdf.errors import PdfReadError

    try:
        reader = PdfReader(str(pdf))
        info: dict[str, object] = dict(reader.metadata or {})
        value = info.get("/PithNumber")
        uris: list[str] = []
        for page in reader.pages:
            for ref in page.get("/Annots") or []:
                annot = ref.get_object()
                action = annot.get("/A")
                action = action.get_object() if action is not None else None
                if action is not None and action.get("/URI") is not None:
                    uris.append(str(action["/URI"]))
    except (PdfReadError, OSError, ValueError) as exc:
        raise VerificationError(f"{pdf}: cannot read the PDF ({exc})") from None
    return (str(value) if value is not None else None), uris


def check_pdf(pdf: Path, number: PithNumber, *, require_link: bool = True) -> None:
    """Raise VerificationError unless `pdf` names `number` in its Info and links to its page
    (the link is not required when the badge was placed nowhere, placement=none)."""
    value, uris = pdf_facts(pdf)
    if value is None:
        raise VerificationError(f"{pdf.name}: no /PithNumber in the PDF's document information")
    if value != number.full:
        raise VerificationError(f"{pdf.name}: /PithNumber is {value!r}, expected {number.full!r}")
    if require_link and number.url() not in uris:
        raise VerificationError(f"{pdf.name}: no link to {number.url()}")


NO_TITLE_BLOCK = "Package pith Warning: No title block found"
"""The start of the warning pith.sty writes when the title page went out without a title block
it could add the badge to (then the badge is in the page's top margin)."""


def placement_notes(log: Path) -> list[str]:
    """What the author should hear about where pith.sty put the badge, read from a build's log:
    one line when no title block was found."""
    try:
        text = log.read_text("latin-1")
    except OSError:
        return []
    if NO_TITLE_BLOCK in text:
        return [
            "pith.sty found no title block on the title page: the badge is in the page's top "
            "margin (add \\maketitle, or pass --placement margin to choose it)"
        ]
    return []


def page_count(pdf: Path) -> int:
    """How many pages `pdf` has."""
    from pypdf import PdfReader
    from pypdf.errors import PdfReadError

    try:
        return len(PdfReader(str(pdf)).pages)
    except (PdfReadError, OSError, ValueError) as exc:
        raise VerificationError(f"{pdf}: cannot read the PDF ({exc})") from None
