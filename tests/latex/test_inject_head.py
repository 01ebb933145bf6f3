"""`inject` decodes and edits only a manuscript's head and writes its body back as the bytes it
read: `read_preamble` must give what `read_text_file` + `locate` give on the whole
text (the same preamble, encoding, BOM, line ending, refusal), and `inject` must write the same
bytes and say the same as when it reads the whole text. Differential tests: the head against
the whole, on hand-made manuscripts and on generated ones."""

from __future__ import annotations

import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from support.examples_budget import examples
from support.latex.inject import NUMBER

from pithauthor import PithNumber
from pithauthor.errors import ManuscriptError
from pithauthor.latex import sources
from pithauthor.latex.injection import inject
from pithauthor.latex.preamble import locate
from pithauthor.latex.sources import engine_of, read_preamble, read_text_file

NUMBER_OBJ = PithNumber.parse(NUMBER)
HEAD = "% !TEX program = xelatex\n\\documentclass{article}\n"
BODY = "".join(f"Line {i} of text, $a_{i}$.\n" for i in range(30)) + "\\end{document}\n"
PADDING = "".join(f"% padding {i}\n" for i in range(20))  # the head must hold 20 lines

# preambles (between HEAD and `\begin{document}`) and why each one is here
PREAMBLES = {
    "plain": "\\usepackage{amsmath}\n",
    "hyperref-and-macros": "\\newcommand{\\x}{y}\n\\usepackage[colorlinks]{hyperref}\n",
    "pith-loaded": "\\usepackage[placement=margin]{pith}\n",
    "pith-number-there": f"\\usepackage{{pith}}\n\\pithnumber{{{NUMBER}}}\n",
    "other-number-there": "\\usepackage{pith}\n\\pithnumber{pith:2020:" + "A" * 26 + "}\n",
    # the first `\begin{document}` is not the live one: the head is not enough
    "commented-begin-first": "% \\begin{document}\n\\usepackage{amsmath}\n",
    "verbatim-begin-first": "\\begin{comment}\n\\begin{document}\n\\end{comment}\n",
    "iffalse-begin-first": "\\iffalse\n\\begin{document}\n\\fi\n",
    "unclosed-brace": "\\newcommand{\\u}{\\textbf{unclosed}\n",
    # `\iffalse` in the preamble: `\newif` switches are looked for in the whole text (the body
    # below declares `\ifdraft`, which makes the first `\fi` here close it, not the `\iffalse`)
    "iffalse-and-a-switch-of-the-body": "\\iffalse\n\\ifdraft\n\\fi\n\\newcommand{\\x}{y}\n\\fi\n",
    # ... and after a first `\begin{document}` that is not the live one (hyperref is loaded
    # only without the body's switch)
    "comment-then-iffalse-and-a-switch-of-the-body": "% \\begin{document}\n"
    "\\iffalse\\ifdraft\\fi\\usepackage{hyperref}\\fi\n",
    "begin-split-over-lines": "\\usepackage{amsmath}\n\\begin \n {document}\n% the next one\n",
    "no-documentclass-before": "",
}
BODIES = {
    "plain": BODY,
    "a-switch": "\\newif\\ifdraft\n" + BODY,
    "short": "\\end{document}",  # fewer lines after `\begin{document}` than the diff shows
    "a-second-begin": "\\begin{document}\n" + BODY,
}
ENCODINGS = {  # how the text becomes bytes, and a character that shows the encoding
    "ascii": ("utf-8", ""),
    "utf-8": ("utf-8", "é"),
    "utf-8-bom": ("utf-8-sig", "é"),
    "latin-1": ("latin-1", "é"),
    "utf-8-head-latin-1-body": ("mixed", "é"),
}


def manuscript(preamble: str, body: str, encoding: str, crlf: bool = False) -> bytes:
    codec, char = ENCODINGS[encoding]
    head = HEAD if preamble != "no-documentclass-before" else "% no class\n"
    text = head + PADDING + PREAMBLES[preamble] + f"% {char}\n\\begin{{document}}\n" + BODIES[body]
    text += f"{char}\n"
    if crlf:
        text = text.replace("\n", "\r\n")
    if codec == "mixed":  # valid UTF-8 up to the body, then a Latin-1 byte: Latin-1 throughout
        return text.encode("utf-8") + "é\n".encode("latin-1")
    return text.encode(codec)


def whole(path: Path) -> object:
    """What `inject` read before: the whole text, and its preamble (or the refusal)."""
    try:
        source = read_text_file(path)
        return source, locate(source.text, path.name)
    except ManuscriptError as exc:
        return str(exc)


def same_reading(path: Path) -> bool | None:
    """Checks that `read_preamble` reads `path` as `whole` does; whether it read only a head
    (None when both refused it, with the same message)."""
    before = whole(path)
    try:
        source, preamble = read_preamble(path)
    except ManuscriptError as exc:
        assert str(exc) == before
        return None
    assert not isinstance(before, str), before
    full, full_preamble = before
    assert preamble == full_preamble
    assert (source.raw, source.encoding, source.bom) == (full.raw, full.encoding, full.bom)
    assert source.newline == full.newline
    assert engine_of(source.text) == engine_of(full.text)
    assert full.text.startswith(source.text)
    assert b"".join(source.pieces(source.text)) == source.raw
    if source.end is None:
        assert source.text == full.text
        return False
    assert source.raw[source.end :].decode(source.encoding) == full.text[len(source.text) :]
    return True


CASES = [
    (p, b, e, crlf)
    for p in sorted(PREAMBLES)
    for b in sorted(BODIES)
    for e in sorted(ENCODINGS)
    for crlf in (False, True)
]


@pytest.mark.parametrize("preamble", sorted(PREAMBLES))
def test_the_head_reads_as_the_whole_text(preamble: str, tmp_path: Path) -> None:
    for _, body, encoding, crlf in (case for case in CASES if case[0] == preamble):
        path = tmp_path / f"{body}-{encoding}-{crlf}.tex"
        path.write_bytes(manuscript(preamble, body, encoding, crlf))
        try:
            same_reading(path)
        except AssertionError as exc:
            exc.add_note(f"manuscript: {preamble} {path.name}")
            raise


def test_the_head_is_read_alone_where_it_suffices_and_not_where_it_does_not(
    tmp_path: Path,
) -> None:
    """Proves the comparisons above compare two readings: the head alone is taken for the
    ordinary manuscripts, and the whole text where the head cannot be proven to suffice."""
    expected = {
        ("plain", "plain"): True,
        ("plain", "a-second-begin"): True,
        ("plain", "short"): False,
        ("iffalse-and-a-switch-of-the-body", "a-switch"): False,
        ("commented-begin-first", "plain"): False,
        ("no-documentclass-before", "plain"): None,
    }
    for encoding in ENCODINGS:
        for crlf in (False, True):
            for (preamble, body), taken in expected.items():
                path = tmp_path / f"{preamble}-{body}-{encoding}-{crlf}.tex"
                path.write_bytes(manuscript(preamble, body, encoding, crlf))
                assert same_reading(path) is taken, path.name


def test_a_switch_declared_in_the_body_changes_the_preamble_so_the_whole_is_read(
    tmp_path: Path,
) -> None:
    """Proves that the `\\iffalse` case above needs the whole text: its preamble differs with
    and without the body's `\\newif`, and each is read from the whole text."""
    with_switch, without = tmp_path / "a.tex", tmp_path / "b.tex"
    with_switch.write_bytes(manuscript("iffalse-and-a-switch-of-the-body", "a-switch", "ascii"))
    without.write_bytes(manuscript("iffalse-and-a-switch-of-the-body", "plain", "ascii"))
    assert read_preamble(with_switch)[1].boundaries != read_preamble(without)[1].boundaries
    assert same_reading(with_switch) is False
    assert same_reading(without) is False


def test_a_live_begin_document_after_a_dead_one_on_its_line_needs_the_whole_text(
    tmp_path: Path,
) -> None:
    """The first `\\begin{document}` (in a `comment` environment) is not the live one, and the
    live one, on the same line, comes after an `\\iffalse` whose branch the body's switch
    changes: read from the head alone, hyperref would be loaded."""
    line = (
        "\\begin{comment}\\begin{document}\\end{comment}"
        "\\iffalse\\ifdraft\\fi\\usepackage{hyperref}\\fi\\begin{document}\n"
    )
    path = tmp_path / "paper.tex"
    path.write_text(HEAD + PADDING + line + BODIES["a-switch"], encoding="utf-8")
    assert same_reading(path) is False
    assert read_preamble(path)[1].hyperref is None


def test_a_head_short_of_the_lines_that_are_read_does_not_suffice() -> None:
    """The head must hold the first 20 lines (`engine_of`) and 4 after `\\begin{document}`
    (`inject`'s diff)."""
    from pithauthor.latex.sources import _head_suffices

    for lines_before, lines_after, suffices in ((16, 4, True), (15, 4, False), (20, 3, False)):
        head = "\\documentclass{article}\n" + "%\n" * (lines_before - 1)
        head += "\\begin{document}" + "\n" * lines_after
        assert _head_suffices(head, locate(head, "paper.tex")) is suffices


def _inject_outcome(path: Path, original: bytes, **kw: object) -> object:
    """The bytes `inject` leaves in `path` (a fresh copy of `original`), its diff and notes, or
    its refusal."""
    path.write_bytes(original)
    for other in path.parent.iterdir():
        if other != path:
            other.unlink()
    try:
        result = inject(path, NUMBER_OBJ, **kw)  # type: ignore[arg-type]
    except ManuscriptError as exc:
        return str(exc)
    return path.read_bytes(), result.changed, result.diff, result.notes


@pytest.mark.parametrize(("preamble", "body", "encoding", "crlf"), CASES[::7])
def test_inject_writes_the_same_bytes_from_the_head_as_from_the_whole_text(
    preamble: str,
    body: str,
    encoding: str,
    crlf: bool,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    placement = "margin" if crlf else None  # a `\\usepackage{pith}` rewritten, or kept
    path = tmp_path / "paper" / "paper.tex"
    path.parent.mkdir()
    original = manuscript(preamble, body, encoding, crlf)
    fast = _inject_outcome(path, original, force=True, placement=placement)
    monkeypatch.setattr(sources, "_head_end", lambda raw, start: None)  # the whole text
    assert _inject_outcome(path, original, force=True, placement=placement) == fast


def test_inject_with_author_keys_reads_the_whole_text(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Author keys are placed by a parse of the edited text, proven on the whole text only."""
    path = tmp_path / "paper.tex"
    path.write_bytes(manuscript("plain", "plain", "utf-8"))
    heads = []
    real = sources.read_preamble

    def spy(main: Path, *, whole: bool = False) -> object:
        heads.append(whole)
        return real(main, whole=whole)

    monkeypatch.setattr("pithauthor.latex.injection.read_preamble", spy)
    inject(path, NUMBER_OBJ, author_keys=["ed25519:" + "a" * 16])
    inject(path, NUMBER_OBJ)
    assert heads == [True, False]


# generated manuscripts: the pieces that move the first live `\begin{document}` or the reading
# of what comes before it, in any order
PIECES = [
    "\\documentclass{article}\n",
    "\\begin{document}\n",
    "\\begin \n{document}",
    "% \\begin{document}\n",
    "\\iffalse\n",
    "\\fi\n",
    "\\else\n",
    "\\newif\\ifdraft\n",
    "\\ifdraft\n",
    "\\usepackage{hyperref}\n",
    "\\usepackage{pith}\n",
    f"\\pithnumber{{{NUMBER}}}\n",
    "\\newcommand{\\x}{\\begin{equation}}\n",
    "\\begin{verbatim}\n",
    "\\end{verbatim}\n",
    "{\n",
    "}\n",
    "é\n",
    "\r\n",
    "text\n",
    "\n",
]


@settings(
    max_examples=examples(300),
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(
    parts=st.lists(st.sampled_from(PIECES), min_size=1, max_size=60),
    codec=st.sampled_from(["utf-8", "utf-8-sig", "latin-1"]),
)
def test_generated_manuscripts_read_the_same_from_the_head(parts: list[str], codec: str) -> None:
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "paper.tex"
        path.write_bytes("".join(parts).encode(codec))
        same_reading(path)


def test_the_fixture_manuscripts_read_the_same_from_the_head(tmp_path: Path) -> None:
    """Every .tex of the real templates in tests/fixtures/manuscripts (main files and the
    pieces they input), and the main files read from their head alone."""
    from support.latex.inject import MAINS, MANUSCRIPTS

    taken = {p.relative_to(MANUSCRIPTS): same_reading(p) for p in MANUSCRIPTS.rglob("*.tex")}
    assert len(taken) > len(MAINS)
    whole = [name for name, main in MAINS.items() if taken[Path(name) / main] is not True]
    assert whole == ["llncs-biblatex"]  # shorter than a head (20 lines)
