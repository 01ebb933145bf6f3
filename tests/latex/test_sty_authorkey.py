"""\\pithauthorkey: author key ids go into the PDF's Info dictionary as /PithAuthorKeys (the
paper proof of docs/identity.md), printing nothing, on every engine and with or without
hyperref or LaTeX's PDF management; a malformed key id stops the build."""

from __future__ import annotations

from pathlib import Path

import pytest
from support.latex.pdfcheck import info, page_text
from support.latex.texbuild import NUMBER, build

from pithauthor.latex.pdf import pdf_author_keys

K1 = "ed25519:" + "A" * 13 + "B" * 13
K2 = "ed25519:JZQ6KXTBQVLD2ZSOWD7ZNT4DG4"


def paper(keys: list[str], *, before: str = "", preamble: str = "", body: str = "") -> str:
    lines = "".join(f"\\pithauthorkey{{{k}}}\n" for k in keys)
    return (
        f"{before}\\documentclass{{article}}\n{preamble}\\usepackage{{pith}}\n{lines}"
        "\\title{T}\\author{A}\n"
        f"\\begin{{document}}\n\\maketitle\nText.{body}\n\\end{{document}}\n"
    )


@pytest.mark.tex("pdflatex")
@pytest.mark.parametrize(
    ("label", "before", "preamble", "after"),
    [
        ("plain", "", "", ""),
        ("hyperref first", "", "\\usepackage{hyperref}\n", ""),
        ("hyperref after", "", "", "\\usepackage{hyperref}\n"),
        ("with number", "", "", f"\\pithnumber{{{NUMBER}}}\n"),
        ("hyperref and number", "", "\\usepackage{hyperref}\n", f"\\pithnumber{{{NUMBER}}}\n"),
        ("DocumentMetadata", "\\DocumentMetadata{}\n", "", f"\\pithnumber{{{NUMBER}}}\n"),
    ],
)
def test_keys_are_written_to_the_info_dictionary_and_nothing_is_printed(
    tmp_path: Path, label: str, before: str, preamble: str, after: str
) -> None:
    source = paper([K1, K2, K1], before=before, preamble=preamble).replace(
        "\\title", after + "\\title"
    )
    result = build(source, tmp_path)
    assert result.ok, result.output[-2000:]
    meta = info(result.pdf)
    assert meta["/PithAuthorKeys"] == f"{K1} {K2}"  # in order, once each
    if "number" in label or "Metadata" in label:
        assert meta["/PithNumber"] == NUMBER
    assert "ed25519" not in page_text(result.pdf)
    keys, _number = pdf_author_keys(result.pdf.read_bytes())
    assert keys == f"{K1} {K2}"


@pytest.mark.tex("lualatex", "xelatex")
@pytest.mark.parametrize("engine", ["lualatex", "xelatex"])
def test_other_engines_write_the_keys(tmp_path: Path, engine: str) -> None:
    result = build(paper([K2]), tmp_path, engine=engine)
    assert result.ok, result.output[-2000:]
    assert info(result.pdf)["/PithAuthorKeys"] == K2


@pytest.mark.tex("pdflatex")
def test_pithauthorkeys_prints_the_list_when_asked(tmp_path: Path) -> None:
    result = build(paper([K1, K2], body=" Keys: \\pithauthorkeys."), tmp_path)
    assert result.ok, result.output[-2000:]
    assert f"{K1}, {K2}" in page_text(result.pdf).replace("\n", " ")


@pytest.mark.tex("pdflatex")
def test_a_paper_without_pithauthorkey_has_no_keys(tmp_path: Path) -> None:
    result = build(paper([]), tmp_path)
    assert result.ok, result.output[-2000:]
    assert "/PithAuthorKeys" not in info(result.pdf)
    assert pdf_author_keys(result.pdf.read_bytes()) == (None, None)


@pytest.mark.tex("pdflatex")
@pytest.mark.parametrize(
    "bad", ["ed25519:" + "A" * 25, "ed25519:" + "A" * 25 + "1", "ed448:" + "A" * 26, "A" * 34]
)
def test_a_malformed_key_id_stops_the_build(tmp_path: Path, bad: str) -> None:
    result = build(paper([bad]), tmp_path)
    assert not result.ok
    assert "Package pith Error" in result.log and f"`{bad[:20]}" in result.log


@pytest.mark.tex("pdflatex")
@pytest.mark.parametrize(
    ("before", "preamble"),
    [("\\DocumentMetadata{}\n", ""), ("", "\\usepackage{hyperref}\\usepackage{hyperxmp}\n")],
    ids=["DocumentMetadata", "hyperxmp"],
)
def test_keys_join_the_xmp_packet_where_one_is_written(
    tmp_path: Path, before: str, preamble: str
) -> None:
    import xml.etree.ElementTree as ET

    from support.latex.pdfcheck import xmp_text

    source = paper([K1, K2], before=before, preamble=preamble).replace(
        "\\title", f"\\pithnumber{{{NUMBER}}}\n\\title"
    )
    result = build(source, tmp_path, runs=2)
    assert result.ok, result.output[-2000:]
    xmp = xmp_text(result.pdf)
    root = ET.fromstring(xmp[xmp.index("<x:xmpmeta") : xmp.index("</x:xmpmeta>") + 12])
    ns = "{https://pith.science/ns/xmp/1.0/}AuthorKeys"
    (bag,) = [el for el in root.iter(ns)]
    items = [li.text for li in bag.iter("{http://www.w3.org/1999/02/22-rdf-syntax-ns#}li")]
    assert items == [K1, K2]
    assert NUMBER in xmp  # the number's own identifier is still there
    assert info(result.pdf)["/PithAuthorKeys"] == f"{K1} {K2}"


def _fls_reads(result_pdf: Path, name: str) -> bool:
    fls = result_pdf.with_suffix(".fls").read_text("latin-1")
    return any(line.endswith(name) for line in fls.splitlines())


@pytest.mark.tex("pdflatex")
@pytest.mark.parametrize(
    ("keys", "reads"), [([K1], True), ([], False)], ids=["with-keys", "without-keys"]
)
def test_pith_authorkeys_def_is_read_only_at_a_pithauthorkey(
    tmp_path: Path, keys: list[str], reads: bool
) -> None:
    result = build(paper(keys, body=" Keys: \\pithauthorkeys."), tmp_path, recorder=True)
    assert result.ok, result.output[-2000:]
    assert _fls_reads(result.pdf, "pith-authorkeys.def") == reads
    assert (K1 in page_text(result.pdf)) == reads  # \pithauthorkeys: the list, or nothing


@pytest.mark.tex("pdflatex")
def test_a_paper_without_keys_needs_no_pith_authorkeys_def(tmp_path: Path) -> None:
    source = paper([], body=" Keys: \\pithauthorkeys.").replace(
        "\\title", f"\\pithnumber{{{NUMBER}}}\n\\title"
    )
    result = build(source, tmp_path, authorkeys_def=False)
    assert result.ok, result.output[-2000:]
    assert info(result.pdf)["/PithNumber"] == NUMBER
    assert "Keys: ." in page_text(result.pdf).replace("\n", " ")


@pytest.mark.tex("pdflatex")
def test_a_missing_pith_authorkeys_def_stops_the_build_saying_where_it_belongs(
    tmp_path: Path,
) -> None:
    result = build(paper([K1]), tmp_path, authorkeys_def=False)
    assert not result.ok
    assert (
        "Fatal Package pith Error: File pith-authorkeys.def not found: put it beside" in result.log
    )
    assert not result.pdf.exists()


@pytest.mark.tex("pdflatex")
@pytest.mark.parametrize("keys", [[K1], []], ids=["after-a-key", "first"])
def test_pithauthorkey_in_the_body_is_an_error(tmp_path: Path, keys: list[str]) -> None:
    # \@onlypreamble: at \begin{document} the kernel makes it an error, read file or not
    result = build(paper(keys, body=f"\\pithauthorkey{{{K2}}}"), tmp_path, halt=False)
    assert "Can be used only in preamble" in result.log
    assert K2 not in info(result.pdf).get("/PithAuthorKeys", "")
