"""Read arXiv's OAI-PMH `arXivRaw` metadata (a whole GetRecord answer or the bare element)."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET

from pithauthor._core.record import ArxivMetadata
from pithauthor.errors import MetadataError

ARXIV_RAW_NS = "http://arxiv.org/OAI/arXivRaw/"
OAI_NS = "http://www.openarchives.org/OAI/2.0/"
_VERSION_RE = re.compile(r"v([0-9]+)")


def parse_arxiv_raw(data: bytes | str) -> ArxivMetadata:
    """The metadata of the one paper in an arXivRaw document."""
    if isinstance(data, bytes) and b"\x00" in data:
        raise MetadataError("this is a binary file, not arXivRaw XML")
    if not data.strip():
        raise MetadataError("the arXivRaw document is empty")
    try:
        root = ET.fromstring(data)
    except ET.ParseError as exc:
        raise MetadataError(f"not well-formed XML ({exc})") from None
    error = root.find(f".//{{{OAI_NS}}}error")
    if error is not None:
        code = error.get("code", "error")
        raise MetadataError(f"the OAI-PMH answer is an error: {code}: {(error.text or '').strip()}")
    raw = (
        root
        if root.tag == f"{{{ARXIV_RAW_NS}}}arXivRaw"
        else root.find(f".//{{{ARXIV_RAW_NS}}}arXivRaw")
    )
    if raw is None:
        raise MetadataError("no arXivRaw element (metadataPrefix=arXivRaw) in the document")

    def text(name: str, required: bool = True) -> str:
        el = raw.find(f"{{{ARXIV_RAW_NS}}}{name}")
        if el is None or el.text is None:
            if required:
                raise MetadataError(f"arXivRaw has no <{name}>")
            return ""
        return el.text

    versions: dict[int, str] = {}
    for el in raw.findall(f"{{{ARXIV_RAW_NS}}}version"):
        m = _VERSION_RE.fullmatch(el.get("version", ""))
        date = el.find(f"{{{ARXIV_RAW_NS}}}date")
        if m is None or date is None or not date.text:
            raise MetadataError("arXivRaw has a <version> without a version number or date")
        versions[int(m.group(1))] = date.text
    if 1 not in versions:
        raise MetadataError("arXivRaw has no v1 <version> element (its date is the submission)")
    return ArxivMetadata.from_fields(
        arxiv_id=text("id").strip(),
        latest_version=max(versions),
        title=text("title"),
        abstract=text("abstract"),
        categories=text("categories"),
        license=text("license", required=False).strip(),
        v1_date=versions[1],
    )


def arxiv_raw_authors(data: bytes | str) -> str:
    """The `<authors>` of an arXivRaw document that `parse_arxiv_raw` accepted, white space
    folded ("" when it has none). Displayed beside a record, never part of it."""
    root = ET.fromstring(data)
    element = next(root.iter(f"{{{ARXIV_RAW_NS}}}authors"), None)
    return " ".join((element.text or "").split()) if element is not None else ""
