"""Badge snippets for READMEs and web pages; the SVG is drawn here (no network)."""

from __future__ import annotations

import re
from html import escape
from urllib.parse import quote

from pithauthor.errors import InputError
from pithauthor.protocol.ids import PithNumber

FORMATS = ("markdown", "html", "svg", "latex")
_LABEL = "pith"
_CHAR_WIDTH = 7  # px per character at 11px Verdana-like text (close enough for 8 base32 chars)
_PAD = 6
# What a Markdown link destination may hold as is; everything else is percent-encoded, so that
# no quote, bracket, parenthesis, angle bracket, backslash or space can end or break the link.
_URL_SAFE = "/:?#&=%~+@,;!*$-._"
_MD_SPECIAL = re.compile(r"([\\`*_{}\[\]()<>#+!|-])")


def md_url(url: str) -> str:
    """`url` (a path or URL) safe inside a Markdown link `(...)` and an HTML attribute."""
    if any(not c.isprintable() for c in url):
        raise InputError("the image path or URL holds a line break or control character")
    if url.lower().lstrip().startswith(("javascript:", "data:", "vbscript:")):
        raise InputError("the image must be a path or an http(s) URL")
    return quote(url, safe=_URL_SAFE)


def md_text(text: str) -> str:
    """`text` safe as Markdown link text (every Markdown punctuation backslash-escaped)."""
    return _MD_SPECIAL.sub(r"\\\1", " ".join(text.split()))


def badge_svg(number: PithNumber) -> str:
    """A two-part badge, `pith | XXXXXXXX`, as a standalone SVG document."""
    value = number.body[:8]
    left = _PAD * 2 + _CHAR_WIDTH * len(_LABEL)
    right = _PAD * 2 + _CHAR_WIDTH * len(value)
    width = left + right
    title = escape(str(number))
    return (
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="20" '
        f'viewBox="0 0 {width} 20" role="img" aria-label="{title}">'
        f"<title>{title}</title>"
        f'<rect width="{left}" height="20" rx="3" fill="#555"/>'
        f'<rect x="{left}" width="{right}" height="20" rx="3" fill="#2b6cb0"/>'
        f'<rect x="{left}" width="4" height="20" fill="#2b6cb0"/>'
        f'<g fill="#fff" font-family="DejaVu Sans,Verdana,Geneva,sans-serif" font-size="11">'
        f'<text x="{_PAD}" y="14">{_LABEL}</text>'
        f'<text x="{left + _PAD}" y="14">{escape(value)}</text>'
        "</g></svg>"
    )


def badge(number: PithNumber, fmt: str, *, image: str = "pith-badge.svg") -> str:
    """The snippet in `fmt` (markdown, html, svg or latex)."""
    url = number.url()
    if fmt == "svg":
        return badge_svg(number)
    if fmt == "markdown":
        return f"[![{md_text(number.short)}]({md_url(image)})]({md_url(url)})"
    if fmt == "html":
        href = escape(md_url(url), quote=True)
        return f'<a href="{href}" title="{escape(str(number))}">{badge_svg(number)}</a>'
    if fmt == "latex":
        if number.year is None:
            raise InputError(f"the LaTeX snippet needs the year: give pith:YYYY:{number.body}")
        return f"\\usepackage{{pith}}\n\\pithnumber{{{number.full}}}"
    raise InputError(f"unknown format {fmt!r}; choose one of {', '.join(FORMATS)}")
