"""Test-side readers for built PDFs and TeX logs: Info keys, page-1 links, page text,
XMP streams, and the warnings of a log in a form that two builds can be compared by."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

from pypdf import PdfReader
from pypdf.generic import ContentStream, DictionaryObject, IndirectObject


def info(pdf: Path) -> dict[str, str]:
    """The Info dictionary, keys with their leading slash, values as text."""
    meta = PdfReader(pdf).metadata or {}
    return {str(key): str(value) for key, value in meta.items()}


def link_uris(pdf: Path, page: int = 0) -> list[str]:
    """The URIs of the link annotations on one page (0-based)."""
    uris = []
    for ref in PdfReader(pdf).pages[page].get("/Annots", []) or []:
        annot = ref.get_object()
        action = annot.get("/A")
        if annot.get("/Subtype") == "/Link" and action is not None:
            action = action.get_object()
            if action.get("/S") == "/URI":
                uris.append(str(action["/URI"]))
    return uris


def link_rects(pdf: Path, page: int = 0) -> list[tuple[float, float, float, float]]:
    """The normalised rectangles (x0, y0, x1, y1) of the link annotations on one page."""
    rects = []
    for ref in PdfReader(pdf).pages[page].get("/Annots", []) or []:
        annot = ref.get_object()
        if annot.get("/Subtype") == "/Link":
            x0, y0, x1, y1 = (float(v) for v in annot["/Rect"])
            rects.append((min(x0, x1), min(y0, y1), max(x0, x1), max(y0, y1)))
    return rects


def page_text(pdf: Path, page: int = 1) -> str:
    """The text of one page (1-based) as pdftotext reads it."""
    args = ["pdftotext", "-f", str(page), "-l", str(page), str(pdf), "-"]
    return subprocess.run(args, capture_output=True, text=True, check=True).stdout


def metadata_streams(pdf: Path) -> int:
    """How many objects in the file are XMP streams (/Type /Metadata)."""
    reader = PdfReader(pdf)
    count = 0
    for num in range(1, int(reader.trailer.get("/Size", 0))):
        try:
            obj = reader.get_object(IndirectObject(num, 0, reader))
        except Exception:
            continue
        if isinstance(obj, DictionaryObject) and obj.get("/Type") == "/Metadata":
            count += 1
    return count


def xmp_text(pdf: Path) -> str:
    """The catalog's XMP packet as text, or '' when there is none."""
    root = PdfReader(pdf).trailer["/Root"].get_object()
    stream = root.get("/Metadata")
    if stream is None:
        return ""
    return bytes(stream.get_object().get_data()).decode("utf-8", "replace")


_WARNING_START = re.compile(r"(Warning|Overfull|Underfull|^! )")
_CONTINUATION = re.compile(r"^\((\w[\w.-]*)\)\s+")


def log_problems(log_text: str) -> set[str]:
    """Errors and warnings of a TeX log, each joined into one line and stripped of what
    changes between two builds of different files (line and page numbers, sizes)."""
    problems: set[str] = set()
    lines = log_text.splitlines()
    i = 0
    while i < len(lines):
        line = lines[i]
        if _WARNING_START.search(line):
            block = [line]
            while i + 1 < len(lines) and _CONTINUATION.match(lines[i + 1]):
                i += 1
                block.append(_CONTINUATION.sub("", lines[i]))
            problems.add(_normalise(" ".join(block)))
        i += 1
    return problems


def _normalise(text: str) -> str:
    text = re.sub(r"\S+\.(tex|aux|out|log)\b", "FILE", text)
    text = re.sub(r"-?\d+(\.\d+)?(pt)?", "N", text)
    return re.sub(r"\s+", " ", text).strip()


_WORD = re.compile(
    r'<word xMin="([\d.]+)" yMin="([\d.]+)" xMax="([\d.]+)" yMax="([\d.]+)">([^<]*)</word>'
)


def word_box(pdf: Path, word: str, page: int = 1) -> tuple[float, float, float, float] | None:
    """The box (x0, y0 from the top, x1, y1) in points of the first word on a page that
    holds `word`, or None."""
    args = ["pdftotext", "-bbox", "-f", str(page), "-l", str(page), str(pdf), "-"]
    html = subprocess.run(args, capture_output=True, text=True, check=True).stdout
    for match in _WORD.finditer(html):
        if word in match.group(5):
            x0, y0, x1, y1 = (float(v) for v in match.groups()[:4])
            return x0, y0, x1, y1
    return None


def render_crop(
    pdf: Path, out_png: Path, box: tuple[float, float, float, float], dpi: int = 150
) -> Path:
    """Render page 1 to PNG at `dpi`, cropped to `box` (points, y from the top)."""
    scale = dpi / 72
    x0, y0, x1, y1 = (round(v * scale) for v in box)
    stem = out_png.with_suffix("")
    args = ["pdftoppm", "-png", "-singlefile", "-r", str(dpi), "-f", "1", "-l", "1"]
    args += ["-x", str(max(x0, 0)), "-y", str(max(y0, 0)), "-W", str(x1 - x0), "-H", str(y1 - y0)]
    subprocess.run([*args, str(pdf), str(stem)], capture_output=True, check=True)
    return stem.with_suffix(".png")


Box = tuple[float, float, float, float]
_PAGE = re.compile(r'<page width="([\d.]+)" height="([\d.]+)">(.*?)</page>', re.S)


def pages_words(pdf: Path) -> list[tuple[tuple[float, float], list[tuple[str, Box]]]]:
    """Every page as ((width, height), [(word, (x0, y0 from the top, x1, y1)), ...]) in
    points, as `pdftotext -bbox` reads it."""
    args = ["pdftotext", "-bbox", str(pdf), "-"]
    html = subprocess.run(args, capture_output=True, text=True, check=True).stdout
    pages = []
    for page in _PAGE.finditer(html):
        words = [
            (
                m.group(5),
                (float(m.group(1)), float(m.group(2)), float(m.group(3)), float(m.group(4))),
            )
            for m in _WORD.finditer(page.group(3))
        ]
        pages.append(((float(page.group(1)), float(page.group(2))), words))
    return pages


def drawn_rects(pdf: Path, page: int = 0) -> list[Box]:
    """The rectangles (x0, y0 from the top, x1, y1; points) of the images and form XObjects
    (an included PDF figure) painted on one page (0-based), as the content stream places them."""
    reader = PdfReader(pdf)
    pdf_page = reader.pages[page]
    height = float(pdf_page.mediabox.height)
    resources = pdf_page.get("/Resources")
    xobjects = resources.get_object().get("/XObject") if resources is not None else None
    xobjects = xobjects.get_object() if xobjects is not None else {}
    rects: list[Box] = []
    stack: list[list[float]] = []
    ctm = [1.0, 0.0, 0.0, 1.0, 0.0, 0.0]
    for operands, operator in ContentStream(pdf_page.get_contents(), reader).operations:
        if operator == b"q":
            stack.append(ctm)
        elif operator == b"Q" and stack:
            ctm = stack.pop()
        elif operator == b"cm":
            a, b, c, d, e, f = (float(v) for v in operands)
            m = ctm
            ctm = [
                a * m[0] + b * m[2],
                a * m[1] + b * m[3],
                c * m[0] + d * m[2],
                c * m[1] + d * m[3],
                e * m[0] + f * m[2] + m[4],
                e * m[1] + f * m[3] + m[5],
            ]
        elif operator == b"Do" and str(operands[0]) in xobjects:
            xobject = xobjects[str(operands[0])].get_object()
            if xobject.get("/Subtype") == "/Form":
                x0, y0, x1, y1 = (float(v) for v in xobject["/BBox"])
                matrix = [float(v) for v in xobject.get("/Matrix", [1, 0, 0, 1, 0, 0])]
            else:
                x0, y0, x1, y1 = 0.0, 0.0, 1.0, 1.0
                matrix = [1.0, 0.0, 0.0, 1.0, 0.0, 0.0]
            xs, ys = [], []
            for x, y in ((x0, y0), (x1, y0), (x0, y1), (x1, y1)):
                x, y = (
                    matrix[0] * x + matrix[2] * y + matrix[4],
                    matrix[1] * x + matrix[3] * y + matrix[5],
                )
                xs.append(ctm[0] * x + ctm[2] * y + ctm[4])
                ys.append(ctm[1] * x + ctm[3] * y + ctm[5])
            rects.append((min(xs), height - max(ys), max(xs), height - min(ys)))
    return rects
