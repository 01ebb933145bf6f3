"""Checking a built PDF: it carries the Pith Number (Info key /PithNumber) and the link to its
page, and the badge can be seen as a reader sees it: its box and link inside the page's crop
box, its text not clipped away, nothing painted over it. Also the one reader of the author keys
a PDF's Info names (`pdf_author_keys`), for the paper proof and `pith latex inject`'s check.
Every read by pypdf goes through `reading_pdf`: a damaged PDF is the caller's one-line error.
"""

from __future__ import annotations

import io
import logging
import re
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pithauthor.errors import InputError, PithError, VerificationError
from pithauthor.protocol.identity import PDF_INFO_KEY
from pithauthor.protocol.ids import PithNumber

# pypdf is imported where a PDF is read (--check, `latex arxiv`, a paper proof), never at start.


@contextmanager
def reading_pdf(fault: Callable[[Exception], PithError]) -> Iterator[None]:
    """The one way pypdf reads a PDF here: its logger silenced for the block (a hostile PDF's
    warnings are noise on stderr) and restored after; a PithError raised inside passes, and any
    other exception is the PDF's fault, raised as `fault(exc)` (the caller's one line)."""
    logger = logging.getLogger("pypdf")
    level = logger.level  # its child loggers (pypdf._reader, ...) inherit the level
    logger.setLevel(logging.CRITICAL + 1)
    try:
        yield
    except PithError:
        raise
    # pypdf raises many kinds on damaged or hostile input (PdfReadError, but also KeyError,
    # AssertionError, RecursionError...): all of them mean "unreadable"
    except Exception as exc:
        raise fault(exc) from None
    finally:
        logger.setLevel(level)


# Check that a PDF carries the Pith Number (Info key /PithNumber) and the link to its page.


def pdf_facts(pdf: Path) -> tuple[str | None, list[str]]:
    """The /PithNumber Info value and every link URI in `pdf`."""
    from pypdf import PdfReader

    with reading_pdf(lambda exc: VerificationError(f"{pdf}: cannot read the PDF ({exc})")):
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
    return (str(value) if value is not None else None), uris


def pdf_author_keys(data: bytes) -> tuple[str | None, str | None]:
    """(`/PithAuthorKeys`, `/PithNumber`) from a PDF's Info dictionary; InputError if the
    bytes are not a readable PDF."""
    from pypdf import PdfReader

    with reading_pdf(lambda exc: InputError(f"not a readable PDF ({type(exc).__name__})")):
        info: Mapping[str, Any] = PdfReader(io.BytesIO(data)).metadata or {}
        keys, number = info.get(PDF_INFO_KEY), info.get("/PithNumber")
    return (str(keys) if keys is not None else None, str(number) if number is not None else None)


def check_pdf(
    pdf: Path, number: PithNumber, *, require_link: bool = True, log: Path | None = None
) -> None:
    """Raise VerificationError unless `pdf` names `number` in its Info and links to its page
    (the link is not required when the badge was placed nowhere, placement=none); a missing
    link is explained from the build's `log` when it tells why (`link_trouble`)."""
    value, uris = pdf_facts(pdf)
    if value is None:
        raise VerificationError(f"{pdf.name}: no /PithNumber in the PDF's document information")
    if value != number.full:
        raise VerificationError(f"{pdf.name}: /PithNumber is {value!r}, expected {number.full!r}")
    if require_link and number.url() not in uris:
        why = link_trouble(log) if log is not None else None
        raise VerificationError(
            f"{pdf.name}: no link to {number.url()}" + (f": {why}" if why else "")
        )


_CLASS_LINE = re.compile(r"^Document Class: (\S+)", re.M)


def link_trouble(log: Path) -> str | None:
    """What in a build's log explains a badge without its link: hyperref's draft mode, or a
    class that loads breakurl (whose \\burlalt, put in place of \\href by sn-jnl, swaps the
    link's arguments); the class is named, with the fix. None when the log tells nothing."""
    try:
        text = log.read_text("latin-1")
    except OSError:
        return None
    found = _CLASS_LINE.search(text)
    cls = found.group(1) if found else "the class"
    if "Package hyperref Warning: Draft mode on" in text:
        return "hyperref's draft mode is on (option draft, of the class or hyperref): remove it"
    if "Package: breakurl" in text:
        fix = "give it the option pdflatex" if cls.startswith("sn-") else "drop breakurl"
        return (
            f"{cls} loads breakurl, which takes over hyperref's links (sn-jnl even sets "
            f"\\href to breakurl's \\burlalt, whose arguments come the other way); {fix}"
        )
    if cls != "the class":
        return f"{cls} (or a package it loads) redefines hyperref's links"
    return None


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

    with reading_pdf(lambda exc: VerificationError(f"{pdf}: cannot read the PDF ({exc})")):
        return len(PdfReader(str(pdf)).pages)


# pypdf is imported where a PDF is read.

# Whether the badge can be seen on the page, as a viewer shows it: its link's rectangle and its
# text inside the page's crop box (text extraction does not clip: a margin badge drawn above the
# page's top edge is still "there"), its text not clipped away by a clipping path, and nothing
# painted over its box. Where on its page it is is pith.sty's business: the end of the title
# block may be low on a page after a long front matter (elsarticle's highlights, a long abstract).
#
# Text extraction finds the badge's words even under a figure (a CVPR teaser drawn over
# it), so the page's content stream is read as a PDF viewer paints it: in order, each text run,
# path, image and form (an included figure) with the box it covers on the page. The badge is the
# link to its record page; what it draws is the first run of paintings inside that link's
# rectangle. Whatever is painted after the last of them, across the rectangle's middle line and
# over a fifth of it at least, hides it.
#
# Boxes are conservative estimates, not glyph outlines: a text run's width is taken from its
# characters (half an em each, with the kerning of TJ arrays), and a path's box from its points.

Box = tuple[float, float, float, float]  # x0, y0, x1, y1 in the page's coordinates


Matrix = tuple[float, float, float, float, float, float]


_IDENTITY: Matrix = (1.0, 0.0, 0.0, 1.0, 0.0, 0.0)


_COVERED = 0.2  # a painting over this share of the badge's rectangle hides it


_EM = 0.5  # a character's width, in em, for the box of a text run


_PAINT = frozenset({b"S", b"s", b"f", b"F", b"f*", b"B", b"B*", b"b", b"b*"})


_SHOW = frozenset({b"Tj", b"TJ", b"'", b'"'})


@dataclass(frozen=True, slots=True)
class Painting:
    """One thing painted on the page: what it is, and the box it covers."""

    kind: str  # "text", "path", "image", "figure"
    box: Box  # where it is drawn, clipped by the clipping path then in force
    clipped: bool = False  # the clipping path hides all of it


@dataclass(frozen=True, slots=True)
class BadgeView:
    """The badge as the page shows it."""

    page: int  # 1-based
    rect: Box
    covered_by: Painting | None
    page_height: float
    crop: Box = (0.0, 0.0, 0.0, 0.0)  # the page's crop box (what a viewer shows)
    seen: bool = True  # some of the badge's own text is drawn, unclipped, inside the crop box


def _multiply(a: Matrix, b: Matrix) -> Matrix:
    """a·b (a applied first), as PDF concatenates matrices."""
    return (
        a[0] * b[0] + a[1] * b[2],
        a[0] * b[1] + a[1] * b[3],
        a[2] * b[0] + a[3] * b[2],
        a[2] * b[1] + a[3] * b[3],
        a[4] * b[0] + a[5] * b[2] + b[4],
        a[4] * b[1] + a[5] * b[3] + b[5],
    )


def _apply(m: Matrix, x: float, y: float) -> tuple[float, float]:
    return m[0] * x + m[2] * y + m[4], m[1] * x + m[3] * y + m[5]


def _box_of(m: Matrix, x0: float, y0: float, x1: float, y1: float) -> Box:
    corners = [_apply(m, x, y) for x in (x0, x1) for y in (y0, y1)]
    xs, ys = [c[0] for c in corners], [c[1] for c in corners]
    return min(xs), min(ys), max(xs), max(ys)


def _overlap(a: Box, b: Box) -> float:
    """The share of `a`'s area that `b` covers."""
    w = min(a[2], b[2]) - max(a[0], b[0])
    h = min(a[3], b[3]) - max(a[1], b[1])
    area = (a[2] - a[0]) * (a[3] - a[1])
    if w <= 0 or h <= 0 or area <= 0:
        return 0.0
    return w * h / area


def _inside(box: Box, rect: Box) -> bool:
    """Whether `box` lies mostly inside `rect` (a stroked line has no area: its middle counts)."""
    x, y = (box[0] + box[2]) / 2, (box[1] + box[3]) / 2
    if not (rect[0] <= x <= rect[2] and rect[1] <= y <= rect[3]):
        return False
    flat = box[2] - box[0] <= 0 or box[3] - box[1] <= 0
    return flat or _overlap(box, rect) > 0.5


class _Painter:
    """Walks content streams and lists what they paint, in painting order."""

    def __init__(self, reader: Any) -> None:
        self.reader = reader
        self.paintings: list[Painting] = []
        inf = float("inf")
        self.clip: Box = (-inf, -inf, inf, inf)  # the clipping path's box (q/Q save it)

    def paint(self, kind: str, box: Box) -> None:
        """Record a painting, clipped by the clipping path in force."""
        clip = self.clip
        cut = (
            max(box[0], clip[0]),
            max(box[1], clip[1]),
            min(box[2], clip[2]),
            min(box[3], clip[3]),
        )
        hidden = cut[0] > cut[2] or cut[1] > cut[3]
        self.paintings.append(Painting(kind, box if hidden else cut, hidden))

    def walk(self, contents: Any, resources: Any, ctm: Matrix) -> None:
        from pypdf.generic import ContentStream

        if contents is None:
            return
        stack: list[tuple[Matrix, Box]] = []
        path: list[tuple[float, float]] = []
        clipping = False  # a W or W* waits for the path's painting (or n) to clip
        tm = tlm = _IDENTITY
        size, leading = 0.0, 0.0
        for operands, op in ContentStream(contents, self.reader).operations:
            if op == b"q":
                stack.append((ctm, self.clip))
            elif op == b"Q":
                ctm, self.clip = stack.pop() if stack else (ctm, self.clip)
            elif op in (b"W", b"W*"):
                clipping = True
            elif op == b"cm":
                ctm = _multiply(tuple(float(v) for v in operands), ctm)  # type: ignore[arg-type]
            elif op in (b"m", b"l"):
                path.append(_apply(ctm, float(operands[0]), float(operands[1])))
            elif op in (b"c", b"v", b"y"):
                values = [float(v) for v in operands]
                path += [_apply(ctm, values[i], values[i + 1]) for i in range(0, len(values), 2)]
            elif op == b"re":
                x, y, w, h = (float(v) for v in operands)
                box = _box_of(ctm, x, y, x + w, y + h)
                path += [(box[0], box[1]), (box[2], box[3])]
            elif op in _PAINT or op == b"n":
                if path:
                    xs, ys = [p[0] for p in path], [p[1] for p in path]
                    box = (min(xs), min(ys), max(xs), max(ys))
                    if op != b"n":
                        self.paint("path", box)
                    if clipping:  # the new clip applies after this painting
                        c = self.clip
                        self.clip = (
                            max(c[0], box[0]),
                            max(c[1], box[1]),
                            min(c[2], box[2]),
                            min(c[3], box[3]),
                        )
                path, clipping = [], False
            elif op == b"BT":
                tm = tlm = _IDENTITY
            elif op == b"Tf":
                size = float(operands[1])
            elif op == b"TL":
                leading = float(operands[0])
            elif op in (b"Td", b"TD"):
                tx, ty = float(operands[0]), float(operands[1])
                if op == b"TD":
                    leading = -ty
                tm = tlm = _multiply((1, 0, 0, 1, tx, ty), tlm)
            elif op == b"Tm":
                tm = tlm = tuple(float(v) for v in operands)  # type: ignore[assignment]
            elif op == b"T*":
                tm = tlm = _multiply((1, 0, 0, 1, 0, -leading), tlm)
            elif op in _SHOW:
                if op in (b"'", b'"'):
                    tm = tlm = _multiply((1, 0, 0, 1, 0, -leading), tlm)
                width = _run_width(operands[-1], size)
                m = _multiply(tm, ctm)
                self.paint("text", _box_of(m, 0, -0.2 * size, width, 0.8 * size))
                tm = _multiply((1, 0, 0, 1, width, 0), tm)
            elif op == b"INLINE IMAGE":
                self.paint("image", _box_of(ctm, 0, 0, 1, 1))
            elif op == b"Do":
                self._xobject(resources, operands[0], ctm)

    def _xobject(self, resources: Any, name: Any, ctm: Matrix) -> None:
        xobjects = resources.get("/XObject") if resources is not None else None
        xobject = xobjects.get_object().get(name) if xobjects is not None else None
        if xobject is None:
            return
        xobject = xobject.get_object()
        if xobject.get("/Subtype") == "/Image":
            self.paint("image", _box_of(ctm, 0, 0, 1, 1))
            return
        matrix = tuple(float(v) for v in xobject.get("/Matrix", _IDENTITY))
        inner = _multiply(matrix, ctm)  # type: ignore[arg-type]
        bbox = [float(v) for v in xobject.get("/BBox", (0, 0, 0, 0))]
        # an included figure (a form) is one painting the size of its box: what it draws
        # inside, white or not, is the figure's own business
        self.paint("figure", _box_of(inner, *bbox))


def _run_width(operand: Any, size: float) -> float:
    """The estimated advance of a text run (a string, or a TJ array with kerning)."""
    if isinstance(operand, list):
        total = 0.0
        for item in operand:
            if isinstance(item, bytes | str):
                total += len(item) * _EM * size
            else:
                total -= float(item) / 1000 * size
        return max(total, 0.0)
    return len(operand) * _EM * size if isinstance(operand, bytes | str) else 0.0


def view_badge(pdf: Path, url: str) -> BadgeView | None:
    """The badge (its first link to `url`) as its page paints it, or None when no page links
    to `url`."""
    from pypdf import PdfReader

    def fault(exc: Exception) -> VerificationError:
        return VerificationError(f"{pdf.name}: cannot read the page of the badge ({exc})")

    with reading_pdf(fault):
        reader = PdfReader(str(pdf))
        for number, page in enumerate(reader.pages, start=1):
            rect = _link_rect(page, url)
            if rect is None:
                continue
            painter = _Painter(reader)
            painter.walk(page.get_contents(), page.get("/Resources"), _IDENTITY)
            crop = page.cropbox
            box = (float(crop.left), float(crop.bottom), float(crop.right), float(crop.top))
            return _view(number, rect, painter.paintings, float(page.mediabox.height), box)
    return None


def _link_rect(page: Any, url: str) -> Box | None:
    for ref in page.get("/Annots") or []:
        annot = ref.get_object()
        action = annot.get("/A")
        action = action.get_object() if action is not None else None
        if annot.get("/Subtype") == "/Link" and action is not None and action.get("/URI") == url:
            x0, y0, x1, y1 = (float(v) for v in annot["/Rect"])
            return min(x0, x1), min(y0, y1), max(x0, x1), max(y0, y1)
    return None


def _view(number: int, rect: Box, paintings: list[Painting], height: float, crop: Box) -> BadgeView:
    # the badge's own paintings: the first run of consecutive ones mostly inside its rectangle
    # (it is one box, painted at once; a cover of its very size painted later is not its own)
    inside = [_inside(p.box, rect) for p in paintings]
    first = last = inside.index(True) if any(inside) else -1
    while 0 <= last < len(paintings) - 1 and inside[last + 1]:
        last += 1
    own = paintings[first : last + 1] if first >= 0 else []
    # its words as a viewer shows them: drawn, not clipped away, and on the visible page
    seen = any(p.kind == "text" and not p.clipped and _overlap(p.box, crop) > 0.5 for p in own)
    middle = (rect[1] + rect[3]) / 2
    # a line of text just above or below touches the edge of the box, never its middle line
    covering = next(
        (
            p
            for p in paintings[last + 1 :]
            if not p.clipped and _overlap(rect, p.box) >= _COVERED and p.box[1] < middle < p.box[3]
        ),
        None,
    )
    return BadgeView(number, rect, covering, height, crop, seen)


def check_badge_visible(pdf: Path, url: str, placement: str | None) -> None:
    """Raise VerificationError unless the badge linking to `url` is seen as a reader sees the
    page: its link and its text inside the page's crop box, its text not clipped away, and
    nothing painted over it. For the margin placement, a badge off the page is refused saying
    that the page's top margin has no room for it."""
    view = view_badge(pdf, url)
    if view is None:
        raise VerificationError(f"{pdf.name}: no page links to {url}")
    where = f"page {view.page}, at {view.rect[0]:.0f},{view.rect[1]:.0f} pt"
    crop = view.crop
    off = _overlap(view.rect, crop) < 0.99
    if off or not view.seen:
        size = f"{crop[0]:.0f},{crop[1]:.0f} to {crop[2]:.0f},{crop[3]:.0f} pt"
        state = "is off the page" if off else "is not drawn where a reader sees it (clipped)"
        fix = (
            "the page's top margin has no room for it; use the default placement (title)"
            if placement == "margin"
            else "use --placement margin, or place \\pithbadge by hand"
        )
        raise VerificationError(
            f"{pdf.name}: the badge ({where}) {state}: the page shows {size}; {fix}"
        )
    if view.covered_by is not None:
        what = {"figure": "a figure", "image": "an image", "text": "text", "path": "a drawing"}
        raise VerificationError(
            f"{pdf.name}: the badge ({where}) is hidden: {what[view.covered_by.kind]} is drawn "
            "over it; move the figure, or use --placement margin"
        )
