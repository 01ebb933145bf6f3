"""What real papers showed, on the project's own manuscripts written in each class's style
(tests/fixtures/manuscripts/README.md).

- AASTeX 7: no \\maketitle, the first \\section typesets the front matter, which ends with a
  negative \\vskip-24pt; its page geometry puts a margin badge above the page.
- sn-jnl without its pdflatex option: breakurl's \\burlalt as \\href, arguments swapped.
- review copies (anonymous or under review): refused unless --force, and said why.
- blame: a main file with a dot in its name (knowledge, standalone figures), a .latexmkrc.
- spacing: the badge keeps clear of what follows the title block (NeurIPS's Abstract heading).
"""

from __future__ import annotations

from pathlib import Path

import pytest
from support.cli import RunPith, assert_one_line_error
from support.latex.arxiv import latexmk
from support.latex.inject import NUMBER, copy_manuscript, snapshot
from support.latex.pdfcheck import word_box

from pithauthor import PithNumber
from pithauthor.latex.pdf import view_badge

TEX = pytest.mark.tex("latexmk", "pdflatex")
URL = PithNumber.parse(NUMBER).url()


def inject(pith: RunPith, folder: Path, *more: str) -> tuple[int, str]:
    result = pith("latex", "inject", str(folder), "--pith", NUMBER, "--offline", *more)
    return result.returncode, result.stderr


# ------------------------------------------------------------------ AASTeX 7


@TEX
def test_aastex7_badge_ends_the_front_matter_low_on_the_page_with_room_above_the_heading(
    tmp_path: Path, pith: RunPith
) -> None:
    """The long abstract puts the end of the front matter in the lower half of page 1: the
    check passes it (the old upper-half rule refused it), and the first heading, which the
    class pulls up by 24pt, stays clear of the badge (the space is given back)."""
    folder = copy_manuscript("aastex7-frontmatter", tmp_path)
    code, err = inject(pith, folder, "--check")
    assert code == 0, err
    pdf = latexmk(folder, "paper.tex")
    view = view_badge(pdf, URL)
    assert view is not None and view.page == 1
    assert view.rect[3] < view.page_height / 2, "the badge is in the lower half"
    badge_top = view.page_height - view.rect[3]  # from the page's top, as pdftotext measures
    badge_bottom = view.page_height - view.rect[1]
    keywords = word_box(pdf, "Keywords")
    heading = word_box(pdf, "Introduction")
    assert keywords is not None and heading is not None
    assert keywords[3] <= badge_top + 1, "the badge follows the keywords, the abstract's end"
    assert heading[1] - badge_bottom > 10, (
        f"the heading is {heading[1] - badge_bottom:.1f} pt below"
    )


@TEX
def test_a_margin_badge_drawn_above_the_page_is_refused_with_the_reason(
    tmp_path: Path, pith: RunPith
) -> None:
    """Text extraction still finds a badge drawn off the page; the crop box does not."""
    folder = copy_manuscript("aastex7-frontmatter", tmp_path)
    before = snapshot(folder)
    result = pith(
        "latex",
        "inject",
        str(folder),
        "--pith",
        NUMBER,
        "--offline",
        "--check",
        "--placement",
        "margin",
    )
    assert_one_line_error(result, 1)
    assert "the badge (page 1, at " in result.stderr
    assert "is off the page: the page shows 0,0 to 612,792 pt" in result.stderr
    assert "the page's top margin has no room for it; use the default placement" in result.stderr
    assert snapshot(folder) == before


# ------------------------------------------------------------------ sn-jnl's \href


@TEX
def test_the_badge_links_even_where_the_class_swaps_href_arguments(
    tmp_path: Path, pith: RunPith
) -> None:
    folder = copy_manuscript("snjnl-breakurl", tmp_path)
    code, err = inject(pith, folder, "--check")
    assert code == 0, err
    from support.latex.pdfcheck import link_uris

    pdf = latexmk(folder, "paper.tex")
    uris = link_uris(pdf)
    assert URL in uris
    # the class still swaps the author's own \\href (its text is the target); the badge is not
    assert "Springer Nature" in uris


@TEX
def test_a_class_that_turns_links_off_is_named_with_the_fix(tmp_path: Path, pith: RunPith) -> None:
    folder = copy_manuscript("snjnl-breakurl", tmp_path)
    paper = folder / "paper.tex"
    paper.write_text(paper.read_text().replace("{snlike}", "[draft]{snlike}"))
    result = pith("latex", "inject", str(folder), "--pith", NUMBER, "--offline", "--check")
    assert_one_line_error(result, 1)
    assert f"no link to {URL}: hyperref's draft mode is on" in result.stderr


# ------------------------------------------------------------------ review copies

PAPER = (
    "\\documentclass%s{%s}\n%s\n\\title{T}\\author{A}\n\\begin{document}\nText.\n\\end{document}\n"
)

REVIEW = {
    "eccv review": ("[runningheads]", "llncs", "\\usepackage[review]{eccv}", "option review"),
    "cvpr review": ("[10pt,twocolumn]", "article", "\\usepackage[review]{cvpr}", "option review"),
    "icml anonymous": ("", "article", "\\usepackage{icml2025}", "without accepted"),
    "neurips submission": ("", "article", "\\usepackage{neurips_2025}", "without final"),
    "neurips workshop": (
        "",
        "article",
        "\\usepackage[sglblindworkshop]{neurips_2025}",
        "without final or preprint",
    ),
    "iclr submission": ("", "article", "\\usepackage{iclr2025_conference}", "\\iclrfinalcopy"),
    "tmlr under review": ("", "article", "\\usepackage{tmlr}", "without accepted or preprint"),
    "acmart anonymous": ("[sigconf,anonymous]", "acmart", "", "option anonymous"),
    "acmart review": ("[acmsmall,review=true]", "acmart", "", "option review"),
    "acl review": ("[11pt]", "article", "\\usepackage[review]{acl}", "option review"),
    "aaai submission": ("", "article", "\\usepackage[submission]{aaai25}", "option submission"),
    "lipics anonymous": ("[a4paper,anonymous]", "lipics-v2021", "", "option anonymous"),
    # options passed ahead of the load count as the load's own
    "cvpr review passed ahead": (
        "[10pt,twocolumn]",
        "article",
        "\\PassOptionsToPackage{review}{cvpr}\n\\usepackage{cvpr}",
        "\\PassOptionsToPackage{review}{cvpr} and \\usepackage{cvpr}: option review",
    ),
    # CVPR's template before 2022: a review copy unless \cvprfinalcopy is live
    "cvpr 2021 without cvprfinalcopy": (
        "[10pt,twocolumn,letterpaper]",
        "article",
        "OLD_CVPR\n%\\cvprfinalcopy",  # commented out, as the template ships it
        "\\usepackage{cvpr} without \\cvprfinalcopy",
    ),
}
FINAL = {
    "icml accepted": ("", "article", "\\usepackage[accepted]{icml2025}"),
    "neurips final": ("", "article", "\\usepackage[final]{neurips_2025}"),
    "neurips preprint": ("", "article", "\\usepackage[preprint]{neurips_2025}"),
    "iclr final": ("", "article", "\\usepackage{iclr2025_conference}\n\\iclrfinalcopy"),
    "tmlr accepted": ("", "article", "\\usepackage[accepted]{tmlr}"),
    "cvpr final": ("[10pt,twocolumn]", "article", "\\usepackage{cvpr}"),
    "acmart final": ("[sigconf]", "acmart", ""),
    "elsarticle review": ("[review]", "elsarticle", ""),  # double spacing, not blind
    "commented out": ("", "article", "%\\usepackage{icml2025}"),
    "icml accepted passed ahead": (
        "",
        "article",
        "\\PassOptionsToPackage{accepted}{icml2025}\n\\usepackage{icml2025}",
    ),
    "review passed to a package never loaded": (
        "",
        "article",
        "\\PassOptionsToPackage{review}{cvpr}\n\\usepackage{amsmath}",
    ),
    "cvpr 2021 final": ("[10pt,twocolumn]", "article", "\\cvprfinalcopy\nOLD_CVPR"),
}


# the preamble of CVPR's LaTeX template up to 2021 (the final copy is a switch, not an option)
OLD_CVPR = "\\usepackage{cvpr}\n\\def\\cvprPaperID{****}\n\\ifcvprfinal\\pagestyle{empty}\\fi"


def paper_folder(tmp_path: Path, options: str, cls: str, load: str) -> Path:
    folder = tmp_path / "paper"
    folder.mkdir()
    text = PAPER % (options, cls, load.replace("OLD_CVPR", OLD_CVPR))
    (folder / "paper.tex").write_text(text)
    return folder


@pytest.mark.parametrize("mode", sorted(REVIEW))
def test_a_review_copy_is_refused_naming_its_mode_unless_forced(
    tmp_path: Path, pith: RunPith, mode: str
) -> None:
    options, cls, load, why = REVIEW[mode]
    folder = paper_folder(tmp_path, options, cls, load)
    before = snapshot(folder)
    result = pith("latex", "inject", str(folder), "--pith", NUMBER, "--offline")
    assert_one_line_error(result, 2)  # a ManuscriptError
    assert "the paper is an anonymous review copy" in result.stderr or (
        "the paper is a copy under review" in result.stderr
    )
    assert why in result.stderr
    assert "or use --force" in result.stderr
    assert snapshot(folder) == before
    forced = pith(
        "latex", "inject", str(folder), "--pith", NUMBER, "--offline", "--force", "--dry-run"
    )
    assert forced.returncode == 0, forced.stderr
    assert "warning: the paper is a" in forced.stderr and why in forced.stderr


def test_acmart_review_without_anonymous_is_under_review_but_not_anonymous(
    tmp_path: Path, pith: RunPith
) -> None:
    options, cls, load, _why = REVIEW["acmart review"]
    result = pith(
        "latex",
        "inject",
        str(paper_folder(tmp_path, options, cls, load)),
        "--pith",
        NUMBER,
        "--offline",
    )
    assert "the paper is a copy under review (\\documentclass[acmsmall,review=true]" in (
        result.stderr
    )


def test_a_single_blind_workshop_is_under_review_but_not_anonymous(
    tmp_path: Path, pith: RunPith
) -> None:
    options, cls, load, _why = REVIEW["neurips workshop"]
    result = pith(
        "latex",
        "inject",
        str(paper_folder(tmp_path, options, cls, load)),
        "--pith",
        NUMBER,
        "--offline",
    )
    assert "the paper is a copy under review" in result.stderr


def test_a_review_mode_set_in_an_input_preamble_file_is_found(
    tmp_path: Path, pith: RunPith
) -> None:
    """Overleaf style: the main file inputs preamble.tex, which loads the venue's style."""
    folder = paper_folder(tmp_path, "", "article", "\\input{setup/preamble}")
    (folder / "setup").mkdir()
    (folder / "setup" / "preamble.tex").write_text("\\usepackage{neurips_2024}\n")
    result = pith("latex", "inject", str(folder), "--pith", NUMBER, "--offline")
    assert_one_line_error(result, 2)
    assert "(\\usepackage{neurips_2024} without final or preprint)" in result.stderr


def test_an_option_passed_to_the_class_before_it_loads_makes_a_review_copy(
    tmp_path: Path, pith: RunPith
) -> None:
    folder = paper_folder(tmp_path, "[sigconf]", "acmart", "")
    text = (folder / "paper.tex").read_text()
    (folder / "paper.tex").write_text("\\PassOptionsToClass{anonymous}{acmart}\n" + text)
    result = pith("latex", "inject", str(folder), "--pith", NUMBER, "--offline")
    assert_one_line_error(result, 2)
    assert (
        "an anonymous review copy (\\PassOptionsToClass{anonymous}{acmart} and "
        "\\documentclass[sigconf]{acmart}: option anonymous)"
    ) in result.stderr


@pytest.mark.parametrize("mode", sorted(FINAL))
def test_a_camera_ready_copy_gets_its_badge(tmp_path: Path, pith: RunPith, mode: str) -> None:
    folder = paper_folder(tmp_path, *FINAL[mode])
    result = pith("latex", "inject", str(folder), "--pith", NUMBER, "--offline", "--dry-run")
    assert result.returncode == 0, result.stderr
    assert "review" not in result.stderr


# ------------------------------------------------------------------ blame


@TEX
def test_a_main_file_with_a_dot_in_its_name_builds_and_checks(
    tmp_path: Path, pith: RunPith
) -> None:
    """wqo-on-words.lncs.tex makes wqo-on-words.lncs.pdf: once read back as wqo-on-words.pdf,
    a build that had succeeded was blamed on the paper ("No file wqo-on-words.lncs.bbl")."""
    folder = copy_manuscript("lncs-knowledge-standalone", tmp_path)
    code, err = inject(pith, folder, "--check")
    assert code == 0, err
    assert "No file" not in err
    assert "\\pithnumber{" in (folder / "wqo-on-words.lncs.tex").read_text()


@TEX
def test_a_class_found_only_through_latexmkrc_is_blamed_on_the_setting(
    tmp_path: Path, pith: RunPith
) -> None:
    folder = copy_manuscript("latexmkrc-texinputs", tmp_path)
    result = pith("latex", "inject", str(folder), "--pith", NUMBER, "--offline", "--check")
    assert_one_line_error(result, 1)
    assert "does not compile as arXiv builds it: imslike.cls not found" in result.stderr
    assert "it is texmf/imslike.cls" in result.stderr
    assert "your .latexmkrc adds its folder to TEXINPUTS" in result.stderr
    assert "latexmk -norc, as arXiv reads no latexmkrc" in result.stderr
    assert "without the badge either" not in result.stderr


@TEX
def test_a_paper_that_needs_shell_escape_is_told_so(tmp_path: Path, pith: RunPith) -> None:
    folder = tmp_path / "paper"
    folder.mkdir()
    (folder / "paper.tex").write_text(
        "\\documentclass{article}\n\\usepackage{minted}\n\\begin{document}\n"
        "\\begin{minted}{python}\nprint(1)\n\\end{minted}\n\\end{document}\n"
    )
    result = pith("latex", "inject", str(folder), "--pith", NUMBER, "--offline", "--check")
    assert_one_line_error(result, 1)
    assert "does not compile as arXiv builds it: " in result.stderr
    assert "-shell-escape" in result.stderr
    assert "pith builds without shell escape, as arXiv does" in result.stderr


def test_a_first_pass_no_file_line_is_never_the_error(tmp_path: Path) -> None:
    """latexmk's last words on a fresh build may be LaTeX's "No file paper.bbl.": the line
    before it is the error."""
    import subprocess

    from pithauthor.latex.build import first_error

    said = "Latexmk: Errors, so I did not complete making targets\nNo file paper.lncs.bbl.\n"
    completed = subprocess.CompletedProcess(["latexmk"], 12, said, "")
    line = first_error(tmp_path / "missing.log", completed)
    assert line == "Latexmk: Errors, so I did not complete making targets"


# ------------------------------------------------------------------ spacing


@TEX
def test_neurips_preprint_badge_keeps_clear_of_the_abstract_heading(
    tmp_path: Path, pith: RunPith
) -> None:
    """NeurIPS's title block is one \\vbox that ends with its own space: the badge follows the
    box, and sat close above the Abstract heading (6.3 pt from its link to pdftotext's box of
    the heading, about 2 pt of white); it now brings half a line of its own (12.3 pt)."""
    folder = copy_manuscript("neurips-preprint", tmp_path)
    code, err = inject(pith, folder, "--check")
    assert code == 0, err
    pdf = latexmk(folder, "paper.tex")
    view = view_badge(pdf, URL)
    heading = word_box(pdf, "Abstract")
    assert view is not None and heading is not None
    gap = heading[1] - (view.page_height - view.rect[1])
    assert gap > 9, f"the Abstract heading is {gap:.1f} pt below the badge"


@TEX
def test_pnas_badge_is_flush_left_with_its_title_block(tmp_path: Path, pith: RunPith) -> None:
    folder = copy_manuscript("pnas-flushleft", tmp_path)
    code, err = inject(pith, folder, "--check")
    assert code == 0, err
    pdf = latexmk(folder, "paper.tex")
    view = view_badge(pdf, URL)
    title = word_box(pdf, "Seasonal")
    keywords = word_box(pdf, "migration")
    assert view is not None and title is not None and keywords is not None
    assert abs(view.rect[0] - title[0]) < 2, (view.rect, title)
    assert view.page_height - view.rect[3] > keywords[3], "below the keywords"


ABSTRACT = (
    "We measure how long the front matter of a journal article can grow before its end "
    "falls in the lower half of the title page, and find that a generous abstract does it. "
) * 9


def long_elsarticle(tmp_path: Path, repeats: int) -> Path:
    folder = copy_manuscript("elsarticle-num", tmp_path)
    paper = folder / "els-paper.tex"
    text = paper.read_text()
    text = text.replace("\\title{}", "\\title{A Frontmatter Test}", 1)
    text = text.replace("%% Text of abstract\n", ABSTRACT * repeats + "\n", 1)
    paper.write_text(text)
    return folder


@TEX
def test_a_front_matter_that_runs_over_its_page_gets_the_badge_at_its_end(
    tmp_path: Path, pith: RunPith
) -> None:
    """A longer abstract pushes elsarticle's keywords onto the next page: the title page went
    out while \\maketitle still ran, and got the margin badge with a "no title block" note;
    the badge now waits for the front matter's end, on the next page."""
    folder = long_elsarticle(tmp_path, 2)
    code, err = inject(pith, folder, "--check")
    assert code == 0, err
    assert "no title block" not in err
    pdf = latexmk(folder, "els-paper.tex")
    view = view_badge(pdf, URL)
    assert view is not None and view.page == 4, "after the keywords, on the title's next page"
    keywords = word_box(pdf, "Keywords", page=4)
    assert keywords is not None and keywords[3] < view.page_height - view.rect[3]


THESIS = r"""\documentclass{article}
\makeatletter
\renewcommand\maketitle{\begingroup\centering\vspace*{5cm}{\LARGE\@title\par}\vskip1cm
  \@author\par\endgroup\newpage}
\makeatother
\title{A Thesis}\author{A. Student}
\begin{document}
\maketitle
Chapter text.
\end{document}
"""


@TEX
def test_a_title_page_that_maketitle_ends_itself_keeps_the_margin_badge(
    tmp_path: Path, pith: RunPith
) -> None:
    """The other side of the wait above: a \\maketitle that ends its page with \\newpage
    (a thesis class) ships a whole title page, which gets the margin badge, not page 2."""
    folder = tmp_path / "thesis"
    folder.mkdir()
    (folder / "paper.tex").write_text(THESIS)
    code, err = inject(pith, folder, "--check")
    assert code == 0, err
    assert "found no title block on the title page" in err
    view = view_badge(latexmk(folder, "paper.tex"), URL)
    assert view is not None and view.page == 1


@TEX
def test_elsarticle_badge_after_a_long_front_matter_passes_the_check(
    tmp_path: Path, pith: RunPith
) -> None:
    """elsarticle ships its graphical abstract and highlights first: the title page is page 3,
    and a long abstract puts the end of its front matter, the badge, in the page's lower half,
    which the old upper-half rule refused."""
    folder = long_elsarticle(tmp_path, 1)
    code, err = inject(pith, folder, "--check")
    assert code == 0, err
    pdf = latexmk(folder, "els-paper.tex")
    view = view_badge(pdf, URL)
    assert view is not None and view.page == 3
    assert view.rect[3] < view.page_height / 2, "the badge is in the lower half of page 3"
