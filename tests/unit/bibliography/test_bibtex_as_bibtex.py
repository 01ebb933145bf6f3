"""Bibliographies read as BibTeX reads them (round two): quoted values holding braces
and `%`, `\\{`, arXiv DOIs without a scheme, Mendeley's `arxivId` and `arXiv:`-prefixed
`primaryClass`, `\\AtNextCite`, and an uncited repeated key under --only-cited.

Each fixture is read by pith (always) and, where BibTeX is installed, by `bibtex` itself
(tests/support/bibtex_reference.py): every field pith reads must be the value BibTeX reads."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st
from support.bibtex_reference import bibtex_reads
from support.cli import RunPith

from pithauthor.bibliography.bibtex import prepare, read_files
from pithauthor.bibliography.cited import cited_keys
from pithauthor.bibliography.reading import read_bibliographies

FIXTURES = Path(__file__).parents[2] / "fixtures" / "bib"
QUOTED = FIXTURES / "quoted-values.bib"
IDENTIFIERS = FIXTURES / "identifiers-round2.bib"
ONLY_CITED = FIXTURES / "only-cited"


def _same_as_bibtex(bib: Path) -> None:
    """Every entry pith reads has BibTeX's key, and each of its fields BibTeX's value (white
    space collapsed, as BibTeX collapses it); BibTeX reports no error but on `%` lines and a
    repeated key (on the lines of pith's `duplicate` rows). Skipped without BibTeX."""
    entries, failures = read_files([bib])
    repeated = [f.line for f in failures if f.kind == "duplicate"]  # BibTeX keeps the first too
    assert [f for f in failures if f.kind != "duplicate"] == []
    # (`crossref` is BibTeX's own field: its style cannot declare it)
    names = sorted({n for e in entries for n in e.fields if n.isalpha() and n != "crossref"})
    theirs = bibtex_reads(bib, names)
    if theirs is None:
        pytest.skip("bibtex is not installed: pith's side was checked, BibTeX's is not")
    # BibTeX has no comments: `% @online, ...` in a file's header is an error to it and
    # nothing to biber (and pith, docs/cite.md); no other error
    lines = bib.read_text(encoding="utf-8", errors="replace").splitlines()
    comments = [n for n in theirs.error_lines() if lines[n - 1].lstrip().startswith("%")]
    assert sorted(set(theirs.error_lines()) - set(comments)) == repeated, theirs.errors
    assert [e.key for e in entries] == list(theirs.entries)
    for entry in entries:
        own = {k: v for k, v in entry.fields.items() if k not in entry.inherited}
        ours = {k: _as_bibtex(v, theirs.undefined) for k, v in own.items()}
        # the style writes a field only when BibTeX's `empty$` says it has text
        ours = {k: v for k, v in ours.items() if k in names and v}
        bibtex = theirs.entries[entry.key]
        if "crossref" in entry.fields:  # BibTeX copies more of the parent (docs/cite.md)
            bibtex = {k: v for k, v in bibtex.items() if k in own}
        assert ours == bibtex, entry.key


def _as_bibtex(value: str, undefined: set[str]) -> str:
    """pith's value as BibTeX writes it: white space collapsed, and a macro defined nowhere
    (pith keeps its name: `journal = IEEE_J_EDL`; BibTeX reads "") left out."""
    words = [word for word in value.split() if word not in undefined]
    return " ".join(words)


def test_a_quoted_value_with_an_accent_then_a_percent_sign_is_read() -> None:
    """The regression: `author = "M{\\"u}ller, A."` then `note = "100%"` was a parse_error
    (the comment scanner ended the value at the accent's `"` and took `%` for a comment)."""
    entries, failures = read_files([QUOTED])
    assert failures == []
    by_key = {e.key: e.fields for e in entries}
    assert by_key["issue37"]["author"] == 'M{\\"u}ller, A.'
    assert by_key["issue37"]["note"] == "100%"
    assert by_key["Muller:2023abc"]["slaccitation"] == "%%CITATION = ARXIV:2302.12445;%%"
    paperpile = by_key["paperpile2021"]
    assert paperpile["abstract"].endswith('{"}quoted{"} words hold {M{\\"u}nchen} % not a comment')
    assert by_key["braces-and-quotes"]["title"] == '{A "quoted" word inside braces}'
    assert by_key["braces-and-quotes"]["note"] == 'an {"} inside braces and 100% joined'
    reading = read_bibliographies([QUOTED])
    assert [e.status for e in reading.entries] == ["no_identifier", *["found"] * 5]


def test_quoted_values_read_as_bibtex_reads_them() -> None:
    _same_as_bibtex(QUOTED)


def test_identifiers_missed_before_are_found() -> None:
    reading = read_bibliographies([IDENTIFIERS])
    assert reading.failures == ()
    found = {e.key: (str(e.identifier), e.source) for e in reading.entries}
    assert found == {
        "touvron2023llama": ("2307.09288", "volume"),  # doi.org/10.48550/arXiv.ID, no scheme
        "pages-doi": ("2301.00001", "pages"),
        "doi-no-scheme": ("2302.12445", "doi"),  # was invalid_identifier
        "Adria2005": ("hep-ph/0505065", "eprint"),  # 0505065 + primaryClass {arXiv:hep-ph}
        "Mendeley2010": ("1001.0001", "eprint"),
        "MendeleyOnlyArxivId": ("1002.0002", "arxivid"),
        "MendeleyOldNoArxivId": ("hep-th/9901001", "eprint"),
        "MendeleyEverywhere": ("1011.1669v3", "eprint"),
    }
    adria = next(e for e in reading.entries if e.key == "Adria2005")
    assert adria.fields["author"].startswith("Adri\\{à}, Pere")  # `\{` read, as BibTeX does


def test_identifier_fixture_read_as_bibtex_reads_it() -> None:
    _same_as_bibtex(IDENTIFIERS)


def test_bibtex_syntax_bibtexparser_alone_misreads() -> None:
    """An entry type and its `{` on two lines (bibtexparser saw no entry at all), `\\{` and
    `\\}` in values, a `"` after a backslash that ends a quoted value, `)` in a quoted value
    of a `(...)` entry, `@` in values."""
    entries, failures = read_files([FIXTURES / "bibtex-syntax.bib"])
    assert failures == []
    fields = {e.key: e.fields for e in entries}
    assert list(fields) == ["type-on-its-own-line", "spaced-key", "parenthesised", "at-signs",
                            "escaped-braces", "backslash-quote"]  # fmt: skip
    assert fields["spaced-key"]["title"] == "xyz"
    assert fields["parenthesised"]["title"] == "a ) b"
    assert fields["escaped-braces"] == {"title": "Adri\\{à} and \\{x\\}", "note": "a \\{ b }"}
    assert fields["backslash-quote"]["title"] == "C:\\"  # BibTeX: a backslash escapes nothing
    assert fields["backslash-quote"]["note"] == 'The \\"{o} and \\" inside braces'
    assert [e.line for e in entries] == [3, 9, 11, 14, 17, 19]


@pytest.mark.parametrize(
    "name",
    [
        "bibtex-syntax.bib",
        "only-cited/refs.bib",  # two repeated keys: BibTeX's "Repeated entry" on the same lines
        "texbook2.bib",  # 530 real entries (Beebe), `"..."` values holding braces and quotes
        "xampl.bib",
        "biblatex-examples.bib",
        "every-identifier-form.bib",
        "arxiv-export.bib",
        "zotero.bib",
        "dblp.bib",
        "google-scholar.bib",
        *(f"lookup/{p.name}" for p in sorted((FIXTURES / "lookup").glob("*.bib"))),
    ],
)
def test_the_fixture_files_are_read_as_bibtex_reads_them(name: str) -> None:
    _same_as_bibtex(FIXTURES / name)


def test_biblatex_hooks_are_not_citations_and_an_uncited_repeated_key_is_skipped(
    pith: RunPith,
) -> None:
    """`\\AtNextCite{...}`, `\\AtEveryCitekey{...}` take code, not keys: no false "cited but
    in no bibliography" warning. A repeated key the manuscript does not cite is `skipped`
    like its first entry; a cited one stays `duplicate`."""
    assert cited_keys(ONLY_CITED / "main.tex") == {"vaswani2017"}
    result = pith("bib", "scan", str(ONLY_CITED / "refs.bib"), "--only-cited",
                  str(ONLY_CITED / "main.tex"))  # fmt: skip
    assert result.returncode == 0, result.stderr
    assert "cited but in no bibliography" not in result.stderr
    rows = [line.split()[:3] for line in result.stdout.splitlines()[1:-1]]
    assert [(key, status) for key, _, status in rows] == [
        ("vaswani2017", "found"),
        ("unused2019", "skipped"),
        ("unused2019", "skipped"),  # the repeated key, not cited
        ("vaswani2017", "duplicate"),  # the repeated key of a cited entry
    ]
    assert "not cited by the manuscript; repeated key (first at refs.bib:7)" in result.stdout


_BIB_PIECES = st.sampled_from(
    ["@article{", "@article", "\n@misc", "@misc(", "@string{", "@comment{", "\n@book{k,",
     "k,", " t = ", '"', "{", "}", ")", "(", "%", "\\", '\\"', "\\{", "\\}", "#", ",", "\n",
     " ", "x", "à", "\n  {", "@"]
)  # fmt: skip


@settings(max_examples=300, deadline=None)
@given(st.lists(_BIB_PIECES, max_size=40).map("".join))
@example("@article\n%\n  {")  # a comment between an entry's type and its brace
def test_prepare_keeps_every_offset_and_line_of_any_text(text: str) -> None:
    """Write-back inserts at offsets found in the prepared text, and rows carry its lines:
    whatever the text, the prepared one has the same length, each `@` the same line, and it
    differs only where a comment is blanked, a quote braced, a backslash masked, or an
    entry's `{` moved before the line break after its type."""
    prepared = prepare(text)
    assert len(prepared.text) == len(text)
    for at in (i for i, c in enumerate(text) if c == "@"):
        assert prepared.text.count("\n", 0, at) == text.count("\n", 0, at)
    blank = {i for start, end in prepared.comments for i in range(start, end)}
    for i, (was, now) in enumerate(zip(text, prepared.text, strict=True)):
        if was == now:
            continue
        # a blanked comment is blank space to the head's move: the brace and the line break
        # after an entry's type may shift across it (`@article\n%\n  {`)
        blanked = " " if i in blank else was
        assert (
            (i in blank and now in " {(")  # blanked (then perhaps a head's brace)
            or (was == '"' and now in "{}")
            or (was == "\\" and now == prepared.mask)
            or (blanked in " \t\n{(" and now in " \t\n{(")  # a head's brace and line break
        ), (i, was, now)
    assert prepared.restore(prepared.text).count("\\") == text.count("\\") - sum(
        text[i] == "\\" for i in blank
    )
