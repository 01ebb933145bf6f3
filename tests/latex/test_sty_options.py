"""Options of pith.sty: placement, style, link, metadata, base URL; \\pithbadge by hand; the
package never clashes with hyperref options and never writes a second XMP stream."""

from __future__ import annotations

from pathlib import Path

import pytest
from pdfcheck import info, link_uris, log_problems, metadata_streams, page_text, xmp_text
from test_sty_number import paper
from texbuild import BODY, NUMBER, SHORT, URL, build

pytestmark = pytest.mark.tex("pdflatex")


def test_placement_none_prints_no_badge_but_keeps_metadata(tmp_path: Path) -> None:
    result = build(paper(NUMBER, "none"), tmp_path)
    assert result.ok, result.output[-2000:]
    assert SHORT not in page_text(result.pdf)
    assert link_uris(result.pdf) == []
    assert info(result.pdf)["/PithNumber"] == NUMBER


def test_pithbadge_places_the_badge_by_hand(tmp_path: Path) -> None:
    source = paper(NUMBER, "placement=none").replace("Text.", "See \\pithbadge{} here.")
    result = build(source, tmp_path)
    assert result.ok, result.output[-2000:]
    assert SHORT in page_text(result.pdf)
    assert link_uris(result.pdf) == [URL]


def test_full_style_has_the_label_and_compact_has_not(tmp_path: Path) -> None:
    full = build(paper(NUMBER), tmp_path / "full")
    compact = build(paper(NUMBER, "compact"), tmp_path / "compact")
    assert "Pith Number" in page_text(full.pdf)
    assert SHORT in page_text(compact.pdf)
    assert "Pith Number" not in page_text(compact.pdf)


def test_nolink_and_nometadata(tmp_path: Path) -> None:
    result = build(paper(NUMBER, "nolink,nometadata"), tmp_path)
    assert result.ok, result.output[-2000:]
    assert SHORT in page_text(result.pdf)
    assert link_uris(result.pdf) == []
    assert "/PithNumber" not in info(result.pdf)


def test_baseurl_option_points_link_and_metadata_at_a_mirror(tmp_path: Path) -> None:
    result = build(paper(NUMBER, "baseurl=https://mirror.example.org/"), tmp_path)
    mirror = "https://mirror.example.org/pith/" + BODY
    assert result.ok, result.output[-2000:]
    assert link_uris(result.pdf) == [mirror]
    assert info(result.pdf)["/PithURL"] == mirror


def test_pithsetup_sets_options_after_loading(tmp_path: Path) -> None:
    source = paper(NUMBER, preamble="\\pithsetup{style=compact, link=false}\n")
    result = build(source, tmp_path)
    assert result.ok, result.output[-2000:]
    assert "Pith Number" not in page_text(result.pdf)
    assert link_uris(result.pdf) == []


def test_hyperref_with_options_after_pith_has_no_option_clash(tmp_path: Path) -> None:
    source = paper(NUMBER, preamble="\\usepackage[colorlinks,pdfusetitle]{hyperref}\n")
    result = build(source, tmp_path)
    assert result.ok, result.output[-2000:]
    assert "Option clash" not in result.log
    assert link_uris(result.pdf) == [URL]
    assert info(result.pdf)["/PithNumber"] == NUMBER


def test_class_rewriting_pdfkeywords_at_maketitle_keeps_pith_keys(tmp_path: Path) -> None:
    rewrite = (
        "\\usepackage{hyperref}\n\\makeatletter\\let\\pithorig\\maketitle"
        "\\def\\maketitle{\\pithorig\\hypersetup{pdfkeywords={k},pdftitle={t}}}\\makeatother\n"
    )
    result = build(paper(NUMBER, preamble=rewrite), tmp_path)
    assert result.ok, result.output[-2000:]
    meta = info(result.pdf)
    assert meta["/PithNumber"] == NUMBER
    assert meta.get("/Keywords") == "k"


def test_hyperxmp_gets_the_identifier_in_its_single_xmp_stream(tmp_path: Path) -> None:
    source = paper(NUMBER, preamble="\\usepackage{hyperxmp}\n\\usepackage{hyperref}\n")
    result = build(source, tmp_path)
    assert result.ok, result.output[-2000:]
    assert metadata_streams(result.pdf) == 1
    assert NUMBER in xmp_text(result.pdf)
    assert info(result.pdf)["/PithNumber"] == NUMBER


def test_documentmetadata_writes_info_through_pdfmanagement(tmp_path: Path) -> None:
    source = "\\DocumentMetadata{}\n" + paper(NUMBER)
    result = build(source, tmp_path)
    assert result.ok, result.output[-2000:]
    assert info(result.pdf)["/PithNumber"] == NUMBER
    assert info(result.pdf)["/PithURL"] == URL
    assert link_uris(result.pdf) == [URL]
    assert metadata_streams(result.pdf) <= 1


def test_documentmetadata_with_hyperref_and_xmp_keeps_one_metadata_stream(tmp_path: Path) -> None:
    source = "\\DocumentMetadata{pdfstandard=A-2b}\n" + paper(
        NUMBER, preamble="\\usepackage{hyperref}\n"
    )
    result = build(source, tmp_path)
    assert result.ok, result.output[-2000:]
    assert metadata_streams(result.pdf) == 1
    assert info(result.pdf)["/PithNumber"] == NUMBER
    assert NUMBER in xmp_text(result.pdf)


def test_missing_number_warns_once_and_prints_nothing(tmp_path: Path) -> None:
    source = paper(NUMBER).replace(f"\\pithnumber{{{NUMBER}}}\n", "")
    source = source.replace("Text.", "\\pithbadge")
    result = build(source, tmp_path)
    assert result.ok, result.output[-2000:]
    assert any("Package pith Warning" in p for p in log_problems(result.log))
    assert "/PithNumber" not in info(result.pdf)
