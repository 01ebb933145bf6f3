"""Options of pith.sty: placement, style, link, metadata, base URL; \\pithbadge by hand; the
package never clashes with hyperref options and never writes a second XMP stream."""

from __future__ import annotations

from pathlib import Path

import pytest
from support.latex.pdfcheck import (
    info,
    link_uris,
    log_problems,
    metadata_streams,
    page_text,
    xmp_text,
)
from support.latex.texbuild import BODY, NUMBER, SHORT, URL, build, paper

pytestmark = pytest.mark.tex("pdflatex")


def test_placement_none_prints_no_badge_but_keeps_metadata(tmp_path: Path) -> None:
    result = build(paper(NUMBER, "placement=none"), tmp_path)
    assert result.ok, result.output[-2000:]
    assert SHORT not in page_text(result.pdf)
    assert link_uris(result.pdf) == []
    assert info(result.pdf)["/PithNumber"] == NUMBER


@pytest.mark.parametrize("options", ["compact,none", "none,nolink,nometadata", "title,full,margin"])
def test_class_options_named_like_old_shortcuts_leave_the_badge_alone(
    tmp_path: Path, options: str
) -> None:
    # LaTeX hands class options to every package with a key of that name: pith has only
    # key=value options, so a class option can neither hide the badge nor change its style.
    plain = "\\documentclass{article}"
    source = paper(NUMBER).replace(plain, f"\\documentclass[{options}]{{article}}")
    assert f"[{options}]{{article}}" in source
    result = build(source, tmp_path)
    assert result.ok, result.output[-2000:]
    assert "Pith Number " + SHORT in page_text(result.pdf).replace("\n", " ")
    assert link_uris(result.pdf) == [URL]
    assert info(result.pdf)["/PithNumber"] == NUMBER
    assert "Unused global option" in result.log


@pytest.mark.parametrize("shortcut", ["none", "compact", "nolink"])
def test_a_bare_option_given_to_pith_stops_the_build_naming_it(
    tmp_path: Path, shortcut: str
) -> None:
    result = build(paper(NUMBER, shortcut), tmp_path)
    assert not result.ok
    assert f"Unknown option '{shortcut}' for package pith" in result.log


def test_pithbadge_places_the_badge_by_hand(tmp_path: Path) -> None:
    source = paper(NUMBER, "placement=none").replace("Text.", "See \\pithbadge{} here.")
    result = build(source, tmp_path)
    assert result.ok, result.output[-2000:]
    assert SHORT in page_text(result.pdf)
    assert link_uris(result.pdf) == [URL]


def test_full_style_has_the_label_and_compact_has_not(tmp_path: Path) -> None:
    full = build(paper(NUMBER), tmp_path / "full")
    compact = build(paper(NUMBER, "style=compact"), tmp_path / "compact")
    assert "Pith Number" in page_text(full.pdf)
    assert SHORT in page_text(compact.pdf)
    assert "Pith Number" not in page_text(compact.pdf)


def test_link_false_and_metadata_false(tmp_path: Path) -> None:
    result = build(paper(NUMBER, "link=false,metadata=false"), tmp_path)
    assert result.ok, result.output[-2000:]
    assert SHORT in page_text(result.pdf)
    assert link_uris(result.pdf) == []
    assert "/PithNumber" not in info(result.pdf)


@pytest.mark.parametrize("hyperref", ["", "\\usepackage{hyperref}\n"])
def test_link_false_still_writes_both_info_keys(tmp_path: Path, hyperref: str) -> None:
    result = build(paper(NUMBER, "link=false", preamble=hyperref), tmp_path)
    assert result.ok, result.output[-2000:]
    assert link_uris(result.pdf) == []
    assert info(result.pdf)["/PithNumber"] == NUMBER
    assert info(result.pdf)["/PithURL"] == URL


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


def test_pithsetup_baseurl_after_pithnumber_still_counts(tmp_path: Path) -> None:
    source = paper(NUMBER, preamble="\\pithsetup{baseurl=https://mirror.example.org}\n")
    result = build(source, tmp_path)
    assert result.ok, result.output[-2000:]
    assert link_uris(result.pdf) == ["https://mirror.example.org/pith/" + BODY]


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


def _title_count(tmp_path: Path, preamble: str, hooks_hidden: bool = False) -> int:
    source = paper(NUMBER, preamble=preamble)
    if hooks_hidden:  # what an old kernel without \AddToHook looks like to pith.sty
        source = source.replace(
            "\\usepackage{pith}",
            "\\let\\savedhook\\AddToHook\\let\\AddToHook\\undefined"
            "\\let\\savedabd\\AtBeginDocument\\def\\AtBeginDocument{\\savedhook{begindocument}}\n"
            "\\usepackage{pith}\n\\let\\AddToHook\\savedhook\\let\\AtBeginDocument\\savedabd",
        )
    result = build(source, tmp_path)
    assert result.ok, result.output[-2000:]
    assert link_uris(result.pdf) == [URL]
    return page_text(result.pdf).count(SHORT)


def test_badge_once_after_a_robust_maketitle(tmp_path: Path) -> None:
    robust = (
        "\\makeatletter\\let\\origmt\\maketitle"
        "\\DeclareRobustCommand\\maketitle{\\origmt}\\makeatother\n"
    )
    assert _title_count(tmp_path, robust) == 1


def test_badge_once_when_maketitle_is_redefined_after_the_kernel_patched_it(
    tmp_path: Path,
) -> None:
    late = (
        "\\makeatletter\\AddToHook{begindocument/end}[late]"
        "{\\def\\maketitle{\\begin{center}\\LARGE\\@title\\end{center}}}\\makeatother\n"
        "\\DeclareHookRule{begindocument/end}{late}{before}{pith}\n"
    )
    source_text = paper(NUMBER, preamble=late)
    assert "\\maketitle" in source_text
    assert _title_count(tmp_path, late) == 1


def _block_then_after(tmp_path: Path, block: str, call: str) -> list[str]:
    """The order of the block's text, the badge and a line that the class's \\maketitle
    sets after its block (`call` sets the block with `block`'s \\@maketitle)."""
    own = (
        f"\\makeatletter{block}"
        f"\\renewcommand\\maketitle{{{call}\\par AFTERBLOCK\\par}}\\makeatother\n"
    )
    result = build(paper(NUMBER, preamble=own), tmp_path)
    assert result.ok, result.output[-2000:]
    text = page_text(result.pdf)
    assert text.count(SHORT) == 1
    return sorted(("BLOCKTEXT", SHORT, "AFTERBLOCK"), key=lambda word: text.find(word))


def test_the_badge_ends_a_title_block_set_by_a_macro_without_parameters(
    tmp_path: Path,
) -> None:
    # such an \@maketitle is wrapped, not hooked: the badge still ends the
    # block, before what \maketitle sets after it
    block = "\\def\\@maketitle{\\begin{center}BLOCKTEXT\\end{center}}"
    order = _block_then_after(tmp_path, block, "\\@maketitle")
    assert order == ["BLOCKTEXT", SHORT, "AFTERBLOCK"]


def test_the_badge_ends_a_title_block_set_by_a_macro_with_a_parameter(
    tmp_path: Path,
) -> None:
    # such an \@maketitle keeps the kernel's hook: a wrapper would take its argument
    block = "\\def\\@maketitle#1{\\begin{center}#1\\end{center}}"
    order = _block_then_after(tmp_path, block, "\\@maketitle{BLOCKTEXT}")
    assert order == ["BLOCKTEXT", SHORT, "AFTERBLOCK"]


def test_badge_once_without_kernel_hooks(tmp_path: Path) -> None:
    assert _title_count(tmp_path, "", hooks_hidden=True) == 1


def test_options_still_count_on_a_kernel_without_process_key_options(tmp_path: Path) -> None:
    # LaTeX before 2022-06 has no \ProcessKeyOptions: pith-compat.def, read in the preamble,
    # processes the options with l3keys2e (outside the group the file is read in, or the
    # options it sets would be lost when the group ends)
    source = paper(NUMBER, "style=compact,baseurl=https://mirror.example.org/").replace(
        "\\usepackage", "\\let\\ProcessKeyOptions\\undefined\n\\usepackage", 1
    )
    assert "\\let\\ProcessKeyOptions\\undefined" in source
    result = build(source, tmp_path, recorder=True)
    assert result.ok, result.output[-2000:]
    assert any(
        line.endswith("l3keys2e.sty")
        for line in result.pdf.with_suffix(".fls").read_text("latin-1").splitlines()
    )
    mirror = "https://mirror.example.org/pith/" + BODY
    assert link_uris(result.pdf) == [mirror]
    assert info(result.pdf)["/PithURL"] == mirror
    text = page_text(result.pdf)
    assert SHORT in text and "Pith Number" not in text  # style=compact: no label


@pytest.mark.parametrize(
    ("engine", "preamble", "metadata"),
    [
        pytest.param(
            "xelatex",
            "\\usepackage{hyperxmp}\\usepackage{hyperref}\n",
            "",
            marks=[pytest.mark.tex("xelatex"), pytest.mark.slow],  # hyperxmp: also on dvips
            id="hyperxmp-xelatex",
        ),
        pytest.param(
            "dvips",
            "\\usepackage{hyperxmp}\\usepackage{hyperref}\n",
            "",
            marks=pytest.mark.tex("latex", "dvips", "ps2pdf"),
            id="hyperxmp-dvips",
        ),
        pytest.param(
            "lualatex",
            "",
            "\\DocumentMetadata{pdfstandard=A-2b}\n",
            marks=pytest.mark.tex("lualatex"),
            id="documentmetadata-lualatex",
        ),
        pytest.param(
            "xelatex",
            "\\usepackage{hyperref}\n",
            "\\DocumentMetadata{pdfstandard=A-2b}\n",
            marks=pytest.mark.tex("xelatex"),
            id="documentmetadata-hyperref-xelatex",
        ),
        pytest.param(
            "dvips",
            "",
            "\\DocumentMetadata{}\n",
            marks=pytest.mark.tex("latex", "dvips", "ps2pdf"),
            id="documentmetadata-dvips",
        ),
    ],
)
def test_xmp_gets_the_identifier_and_stays_one_stream_on_every_engine(
    tmp_path: Path, engine: str, preamble: str, metadata: str
) -> None:
    result = build(metadata + paper(NUMBER, preamble=preamble), tmp_path, engine)
    assert result.ok, result.output[-2000:]
    assert metadata_streams(result.pdf) == 1
    assert NUMBER in xmp_text(result.pdf)
    assert info(result.pdf)["/PithNumber"] == NUMBER
    assert link_uris(result.pdf) == [URL]


@pytest.mark.tex("latex", "dvipdfmx")
def test_latex_with_dvipdfmx_class_option_writes_dvipdfmx_specials(tmp_path: Path) -> None:
    source = paper(NUMBER).replace("{article}", "[dvipdfmx]{article}")
    result = build(source, tmp_path, "dvipdfmx")
    assert result.ok, result.output[-2000:]
    assert info(result.pdf)["/PithNumber"] == NUMBER
    assert link_uris(result.pdf) == [URL]
    assert SHORT in page_text(result.pdf)


def test_badge_in_a_section_title_becomes_the_short_form_in_bookmarks(tmp_path: Path) -> None:
    source = paper(NUMBER, preamble="\\usepackage{hyperref}\n")
    source = source.replace("Text.", "\\section{See \\pithbadge}Text.")
    result = build(source, tmp_path, runs=2)
    assert result.ok, result.output[-2000:]
    assert "Token not allowed" not in result.log
    outline = (tmp_path / "paper.out").read_text("latin-1")
    assert "\\000".join("pith:NFG5PAOX") in outline


@pytest.mark.parametrize("hyperref", ["", "\\usepackage{hyperref}\n"])
def test_parentheses_in_the_base_url_are_escaped_in_pdf_strings(
    tmp_path: Path, hyperref: str
) -> None:
    source = paper(NUMBER, "baseurl=https://m.example.org/a(b)", preamble=hyperref)
    result = build(source, tmp_path)
    assert result.ok, result.output[-2000:]
    assert info(result.pdf)["/PithURL"] == "https://m.example.org/a(b)/pith/" + BODY


@pytest.mark.parametrize("hyperref", ["", "\\usepackage{hyperref}\n"])
def test_a_paper_without_a_title_block_gets_the_badge_in_the_top_margin_and_a_warning(
    tmp_path: Path, hyperref: str
) -> None:
    source = paper(NUMBER, preamble=hyperref).replace("\\maketitle\n", "")
    result = build(source, tmp_path)
    assert result.ok, result.output[-2000:]
    assert SHORT in page_text(result.pdf)
    assert link_uris(result.pdf) == [URL]
    from support.latex.pdfcheck import link_rects, word_box

    (rect,) = link_rects(result.pdf)
    height = 792  # US letter, article's default
    assert rect[1] > height - 72, "in the top margin (above 1in from the top), not at the foot"
    text_top = word_box(result.pdf, "Text.")
    assert text_top is not None and height - rect[1] < text_top[1]
    assert "Package pith Warning: No title block found on the title page" in result.log


def test_a_badge_placed_by_hand_is_not_repeated_in_the_margin(tmp_path: Path) -> None:
    source = paper(NUMBER).replace("\\maketitle\n", "").replace("Text.", "See \\pithbadge{}.")
    result = build(source, tmp_path)
    assert result.ok, result.output[-2000:]
    assert link_uris(result.pdf) == [URL]
    assert page_text(result.pdf).count(SHORT) == 1
    assert "No title block found" not in result.log


def test_a_title_page_shipped_inside_maketitle_gets_the_margin_badge_not_one_at_its_foot(
    tmp_path: Path,
) -> None:
    """article's titlepage option ships the title page before any title hook can add to it."""
    source = paper(NUMBER).replace(
        "\\documentclass{article}", "\\documentclass[titlepage]{article}"
    )
    result = build(source, tmp_path)
    assert result.ok, result.output[-2000:]
    assert SHORT in page_text(result.pdf, 1) and SHORT not in page_text(result.pdf, 2)
    from support.latex.pdfcheck import link_rects

    (rect,) = link_rects(result.pdf, 0)
    assert rect[1] > 792 - 72, "in the top margin of the title page"


def _fls_reads(result_pdf: Path, name: str) -> bool:
    fls = result_pdf.with_suffix(".fls").read_text("latin-1")
    return any(line.endswith(name) for line in fls.splitlines())


def _fls_reads_compat(result_pdf: Path) -> bool:
    return _fls_reads(result_pdf, "pith-compat.def")


@pytest.mark.parametrize(
    ("head", "preamble", "reads"),
    [
        # pdfTeX without hyperref: the link by \pdfstartlink, the Info keys by \pdfinfo, both
        # written by pith.sty itself (reading a file costs 0.15% of a small build)
        pytest.param("", "", False, id="no-hyperref"),
        # pdfTeX with hyperref: the link is hyperref's, the Info keys pdfTeX's \pdfinfo
        pytest.param("", "\\usepackage{hyperref}\n", False, id="hyperref-no-pdfmanagement"),
        pytest.param("\\DocumentMetadata{}\n", "\\usepackage{hyperref}\n", False, id="both"),
        # hyperxmp without PDF management: the Info keys and the XMP through pith-compat.def
        pytest.param("", "\\usepackage{hyperxmp}\n", True, id="hyperxmp"),
    ],
)
def test_pith_compat_is_read_only_without_hyperref_or_pdf_management(
    tmp_path: Path, head: str, preamble: str, reads: bool
) -> None:
    result = build(head + paper(NUMBER, preamble=preamble), tmp_path, recorder=True)
    assert result.ok, result.output[-2000:]
    assert link_uris(result.pdf) == [URL]
    assert info(result.pdf)["/PithNumber"] == NUMBER
    assert _fls_reads_compat(result.pdf) == reads


def test_pith_sty_alone_with_hyperref_and_pdf_management_needs_no_compat(tmp_path: Path) -> None:
    source = "\\DocumentMetadata{}\n" + paper(NUMBER, preamble="\\usepackage{hyperref}\n")
    result = build(source, tmp_path, compat=False)
    assert result.ok, result.output[-2000:]
    assert link_uris(result.pdf) == [URL]
    assert info(result.pdf)["/PithURL"] == URL


def test_pdflatex_with_hyperref_needs_no_compat_for_its_info_keys(tmp_path: Path) -> None:
    result = build(paper(NUMBER, preamble="\\usepackage{hyperref}\n"), tmp_path, compat=False)
    assert result.ok, result.output[-2000:]
    assert link_uris(result.pdf) == [URL]
    assert info(result.pdf)["/PithNumber"] == NUMBER
    assert info(result.pdf)["/PithURL"] == URL


def test_pdflatex_without_hyperref_needs_no_compat_for_its_link_or_info_keys(
    tmp_path: Path,
) -> None:
    result = build(paper(NUMBER), tmp_path, compat=False)
    assert result.ok, result.output[-2000:]
    assert link_uris(result.pdf) == [URL]
    assert info(result.pdf)["/PithNumber"] == NUMBER
    assert info(result.pdf)["/PithURL"] == URL


def test_pdflatex_links_a_mirror_url_escaped_without_compat(tmp_path: Path) -> None:
    # the URL of the link goes into a PDF string: a mirror's baseurl is escaped as before
    mirror = "https://example.org/a(b)"
    result = build(paper(NUMBER, f"baseurl={{{mirror}}}"), tmp_path, compat=False)
    assert result.ok, result.output[-2000:]
    assert link_uris(result.pdf) == [mirror + "/pith/" + NUMBER.rsplit(":", 1)[-1]]


def test_a_missing_pith_compat_stops_the_build_saying_where_it_belongs(tmp_path: Path) -> None:
    # hyperxmp on pdfTeX takes the Info keys through pith-compat.def
    result = build(paper(NUMBER, preamble="\\usepackage{hyperxmp}\n"), tmp_path, compat=False)
    assert not result.ok
    assert "Fatal Package pith Error: File pith-compat.def not found: put it beside" in result.log
    assert not result.pdf.exists()


@pytest.mark.parametrize(
    ("options", "number", "reads"),
    [
        pytest.param("", NUMBER, True, id="title"),
        pytest.param("placement=margin", NUMBER, True, id="margin"),
        pytest.param("placement=none", NUMBER, False, id="none"),
        pytest.param("", None, False, id="no-number"),
    ],
)
def test_pith_placement_is_read_only_when_pith_places_a_badge(
    tmp_path: Path, options: str, number: str | None, reads: bool
) -> None:
    source = paper(NUMBER, options)
    if number is None:
        source = source.replace(f"\\pithnumber{{{NUMBER}}}\n", "")
    result = build(source, tmp_path, recorder=True)
    assert result.ok, result.output[-2000:]
    assert _fls_reads(result.pdf, "pith-placement.def") == reads
    assert (SHORT in page_text(result.pdf, 1)) == reads


def test_placement_none_needs_no_pith_placement(tmp_path: Path) -> None:
    source = paper(NUMBER, "placement=none").replace("Text.", "Text \\pithbadge.")
    result = build(source, tmp_path, placement_def=False)
    assert result.ok, result.output[-2000:]
    assert SHORT in page_text(result.pdf, 1)
    assert link_uris(result.pdf) == [URL]


def test_a_missing_pith_placement_stops_the_build_saying_where_it_belongs(tmp_path: Path) -> None:
    result = build(paper(NUMBER), tmp_path, placement_def=False)
    assert not result.ok
    assert (
        "Fatal Package pith Error: File pith-placement.def not found: put it beside" in result.log
    )
    assert not result.pdf.exists()


# pith's keys are defined only when something sets one (a small build's cost). Each way of setting
# one must still reach them: a class option named like a key, a second \usepackage with options (the
# kernel's option handler), \PassOptionsToPackage, \pithsetup (above).
@pytest.mark.parametrize(
    "how",
    [
        pytest.param("class", id="class-option"),
        pytest.param("again", id="second-usepackage"),
        pytest.param("pass", id="pass-options"),
    ],
)
def test_style_compact_reaches_pith_however_it_is_given(tmp_path: Path, how: str) -> None:
    source = paper(NUMBER)
    if how == "class":
        source = source.replace(
            "\\documentclass{article}", "\\documentclass[style=compact]{article}"
        )
    elif how == "again":
        source = source.replace("\\title{T}", "\\usepackage[style=compact]{pith}\n\\title{T}")
    else:
        source = "\\PassOptionsToPackage{style=compact}{pith}\n" + source
    result = build(source, tmp_path)
    assert result.ok, result.output[-2000:]
    text = page_text(result.pdf)
    assert SHORT in text
    assert "Pith Number" not in text
    assert "Unused global option" not in result.log


def test_a_maketitle_with_an_optional_argument_keeps_it_and_gets_the_badge(tmp_path: Path) -> None:
    # \maketitle without parameters is wrapped (cheaper than the kernel's hook); one that reads an
    # optional argument (\newcommand's form) keeps the kernel's hook, so `[Extra]' still reaches it.
    redefine = (
        "\\makeatletter\\let\\pithtestmaketitle\\maketitle\n"
        "\\renewcommand\\maketitle[1][None]{\\pithtestmaketitle\\par Opt:#1.\\par}\\makeatother\n"
    )
    source = paper(NUMBER, preamble=redefine).replace(
        "\\maketitle\nText", "\\maketitle[Extra]\nText"
    )
    result = build(source, tmp_path)
    assert result.ok, result.output[-2000:]
    text = page_text(result.pdf).replace("\n", " ")
    assert "Opt:Extra." in text
    assert "[Extra]" not in text
    assert "Pith Number " + SHORT in text
    assert "No title block found" not in result.log


def test_pithsetup_after_one_in_a_group_still_finds_the_keys(tmp_path: Path) -> None:
    # l3keys definitions are local: keys first defined by a \pithsetup inside a group (an
    # example in pith-doc.tex) are gone after it, and the next \pithsetup defines them again
    preamble = "{\\pithsetup{style=full}}\n\\pithsetup{link=false}\n"
    result = build(paper(NUMBER, preamble=preamble), tmp_path)
    assert result.ok, result.output[-2000:]
    assert "is unknown" not in result.log
    assert link_uris(result.pdf) == []


@pytest.mark.tex("latex", "dvipdfmx")
def test_hyperref_given_dvipdfmx_alone_gets_dvipdfmx_info_under_latex(tmp_path: Path) -> None:
    # LaTeX's own back-end stays dvips here (no class option): pith must follow hyperref's driver.
    source = paper(NUMBER, preamble="\\usepackage[dvipdfmx]{hyperref}\n")
    result = build(source, tmp_path, "dvipdfmx")
    assert result.ok, result.output[-2000:]
    assert info(result.pdf)["/PithNumber"] == NUMBER
    assert info(result.pdf)["/PithURL"] == URL
    assert link_uris(result.pdf) == [URL]


# LaTeX sets \c_sys_backend_str again as the document begins: undefined in that hook, before
# pith's (begindocument/end), it is gone when pith asks.
_NO_BACKEND_STR = (
    "\\ExplSyntaxOn\\AtBeginDocument{\\cs_undefine:N\\c_sys_backend_str}\\ExplSyntaxOff\n"
)


@pytest.mark.parametrize(
    ("engine", "preamble"),
    [
        pytest.param("pdflatex", _NO_BACKEND_STR, id="pdflatex-no-kernel-backend"),
        pytest.param(
            "dvips",
            _NO_BACKEND_STR,
            marks=pytest.mark.tex("latex", "dvips", "ps2pdf"),
            id="dvips-no-kernel-backend",
        ),
        pytest.param(
            "dvips",
            "\\usepackage[hypertex]{hyperref}\n",
            marks=pytest.mark.tex("latex", "dvips", "ps2pdf"),
            id="dvips-hyperref-driver-pith-has-no-code-for",
        ),
    ],
)
def test_the_back_end_falls_back_to_latex_then_to_the_engine(
    tmp_path: Path, engine: str, preamble: str
) -> None:
    # No \c_sys_backend_str (a kernel before 2020-02): pith finds the back-end from the engine
    # and its output mode; a hyperref driver pith has no code for: LaTeX's back-end.
    result = build(paper(NUMBER, preamble=preamble), tmp_path, engine)
    assert result.ok, result.output[-2000:]
    assert info(result.pdf)["/PithNumber"] == NUMBER
    if "hyperref" not in preamble:  # hypertex's links are not PDF annotations
        assert link_uris(result.pdf) == [URL]
