"""`pith badge`: hostile --image values cannot break out of the Markdown link or the HTML."""

from __future__ import annotations

from html.parser import HTMLParser
from urllib.parse import unquote

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from markdown_it import MarkdownIt
from support.examples_budget import examples

from pithauthor.errors import InputError
from pithauthor.latex.sty import badge
from pithauthor.protocol.ids import PithNumber

NUMBER = PithNumber.parse("pith:2023:NFG5PAOXQUVIWDX5F7YSYYL7EW")

HOSTILE = [
    'x.svg" onerror="alert(1)',
    "x.svg) [click](https://evil.example",
    "x.svg)](https://evil.example)<script>alert(1)</script>",
    "<img src=x onerror=alert(1)>",
    "a b/c d.svg",
    "]]]][[[[",
    "x'y\"z`w\\v",
    "https://img.example/b.svg?a=1&b=<2>#frag",
]


class _Tags(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.tags: list[tuple[str, dict[str, str | None]]] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, dict(attrs)))


def _rendered_tags(markdown: str) -> list[tuple[str, dict[str, str | None]]]:
    parser = _Tags()
    parser.feed(MarkdownIt("commonmark").render(markdown))
    return parser.tags


def _assert_one_link_one_image(image: str) -> None:
    snippet = badge(NUMBER, "markdown", image=image)
    assert "\n" not in snippet
    tags = [t for t in _rendered_tags(snippet) if t[0] != "p"]
    assert [t[0] for t in tags] == ["a", "img"], (snippet, tags)
    (_, link), (_, img) = tags
    assert link["href"] == NUMBER.url()
    # the same image, only percent-encoded (an author's own %XX escapes are kept, not doubled)
    assert unquote(img["src"] or "") == unquote(image)
    assert img["alt"] == NUMBER.short


@pytest.mark.parametrize("image", HOSTILE)
def test_hostile_image_values_stay_inside_one_markdown_image(image: str) -> None:
    _assert_one_link_one_image(image)


@settings(max_examples=examples(300), deadline=None)
@given(st.text(alphabet=st.characters(blacklist_categories=("Cc", "Cs", "Zl", "Zp")), min_size=1))
def test_any_printable_image_value_renders_as_exactly_one_image(image: str) -> None:
    if image.lower().lstrip().startswith(("javascript:", "data:", "vbscript:")):
        return
    if not image.isprintable():
        return
    _assert_one_link_one_image(image)


@pytest.mark.parametrize("image", ["x.svg\n[a](b)", "x\r.svg", "x\x00.svg", "javascript:alert(1)"])
def test_line_breaks_controls_and_script_urls_are_refused(image: str) -> None:
    with pytest.raises(InputError):
        badge(NUMBER, "markdown", image=image)


def test_html_badge_is_one_link_around_the_svg() -> None:
    snippet = badge(NUMBER, "html")
    parser = _Tags()
    parser.feed(snippet)
    assert parser.tags[0] == ("a", {"href": NUMBER.url(), "title": str(NUMBER)})
    assert [t for t, _ in parser.tags].count("a") == 1
