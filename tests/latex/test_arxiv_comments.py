"""Comment stripping for the arXiv upload: comments go (whole lines with their line, trailing
ones keeping their `%`), while `\\%`, URLs, `\\verb` and verbatim-like environments stay as
they are. These are text-level checks; test_arxiv_upload.py builds the stripped paper."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from pithauthor.latex.upload import strip_comments
from pithauthor.latex.verbatim import VERBATIM_ENVIRONMENTS


def test_whole_line_comments_go_with_their_line_and_are_counted() -> None:
    result = strip_comments("a\n% secret note\n  % indented note\nb\n")
    assert result.text == "a\nb\n"
    assert (result.comments, result.whole_lines) == (2, 2)


def test_trailing_comment_keeps_its_percent_so_no_space_appears() -> None:
    result = strip_comments("\\newcommand{\\x}{%\n  y% private\n}\nword% joined\nnext\n")
    assert result.text == "\\newcommand{\\x}{%\n  y%\n}\nword%\nnext\n"
    assert (result.comments, result.whole_lines) == (2, 0)


def test_escaped_percent_stays_and_a_double_backslash_does_not_escape_it() -> None:
    result = strip_comments("50\\% off\\\\% gone\n")
    assert result.text == "50\\% off\\\\%\n"


@pytest.mark.parametrize(
    "line",
    [
        "\\url{https://example.org/a%20b#c}",
        "\\href{https://example.org/%7Euser}{50\\% off}",
        "\\href[pdfnewwindow]{https://x.org/q?a=1%2C2}{x}",
        "\\nolinkurl{a%b}",
        "\\url|https://example.org/%41|",
        "\\verb|%not a comment|",
        "\\verb*+100%+",
        "\\lstinline|x % 2|",
    ],
)
def test_urls_and_inline_verbatim_keep_their_percent(line: str) -> None:
    assert strip_comments(line + " % note\n").text == line + " %\n"


@pytest.mark.parametrize("env", VERBATIM_ENVIRONMENTS)
def test_verbatim_like_environments_are_copied_as_they_are(env: str) -> None:
    body = f"\\begin{{{env}}}\n% shown, not a comment\n50% \\verb\n\\end{{{env}}}"
    result = strip_comments(f"{body}\n% gone\n")
    assert result.text == body + "\n"
    assert result.comments == 1


def test_arxiv_format_directive_on_the_first_line_is_kept() -> None:
    assert strip_comments("%&latex\n% gone\n\\documentclass{article}\n").text == (
        "%&latex\n\\documentclass{article}\n"
    )


def test_crlf_line_endings_survive() -> None:
    result = strip_comments("a % note\r\n% whole\r\nb\r\n")
    assert result.text == "a %\r\nb\r\n"


def test_last_line_comment_without_newline_and_empty_percent() -> None:
    assert strip_comments("a%\n%").text == "a%\n"
    assert strip_comments("a%\n%").comments == 1  # the bare % of a content line is not one


@given(st.text(alphabet="ab \n\\{}%|", max_size=60))
def test_stripping_is_idempotent_and_never_grows_the_text(text: str) -> None:
    once = strip_comments(text).text
    assert len(once) <= len(text)
    assert strip_comments(once).text == once
