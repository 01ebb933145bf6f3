"""Builds of the project's real manuscripts three ways (without pith, with the badge after the
title, with placement=margin), shared by the layout tests and `make pictures`.

Each build runs the engine once, as arXiv's first pass would: citations stay `?` the same way in
all three builds, so any difference between them is the badge's doing."""

from __future__ import annotations

import re
import shutil
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

from support.latex.pdfcheck import Box
from support.latex.texbuild import (
    ENGINES,
    NUMBER,
    SHORT,
    STY,
    TEX_FLAGS,
    Build,
    _run,
    load_build,
    save_build,
    shared_folder,
)

MANUSCRIPTS = Path(__file__).resolve().parents[2] / "fixtures" / "manuscripts"
VARIANTS = ("baseline", "title", "margin")


@dataclass(frozen=True)
class Manuscript:
    """A fixture folder, its main file, and words that find its title page and title."""

    name: str  # short name used in test ids and picture names
    folder: str
    main: str
    marker: str  # a word printed on the title page before any other page has it
    title: str  # a word of the printed title
    edits: tuple[tuple[str, str], ...] = ()  # (old, new) applied to the main file
    flush_left: bool = False  # the title block is flush left, and so is the badge (PNAS)
    acm_reference: bool = False  # the badge ends acmart's "ACM Reference Format:" line


MANUSCRIPT_LIST = [
    Manuscript(
        "acmart-sigconf",
        "acmart-sigconf",
        "sigconf-paper.tex",
        "ABSTRACT",
        "Hope",
        acm_reference=True,
    ),
    Manuscript(
        "acmart-biblatex",
        "acmart-biblatex",
        "sample-sigconf-biblatex.tex",
        "ABSTRACT",
        "Hope",
        acm_reference=True,
    ),
    Manuscript("ieeetran-conf", "ieeetran-conf", "bare_conf.tex", "Abstract", "IEEEtran.cls"),
    Manuscript("ieeetran-jrnl", "ieeetran-jrnl", "bare_jrnl.tex", "Abstract", "IEEEtran.cls"),
    Manuscript("revtex4-2-aps", "revtex4-2-aps", "aps-paper.tex", "article", "Manuscript"),
    # the publisher's template leaves \title{} empty; a title makes the title page findable
    Manuscript(
        "elsarticle-grabs",
        "elsarticle-num",
        "els-paper.tex",
        "Keywords:",
        "Frontmatter",
        edits=(("\\title{}", "\\title{A Frontmatter Test}"),),
    ),
    # the example names pdftex as a class option, which XeLaTeX and LuaLaTeX cannot honour
    Manuscript(
        "llncs",
        "llncs-llncsconf",
        "example.tex",
        "Abstract.",
        "Simple",
        edits=((", pdftex]", "]"),),
    ),
    # a test file of amsrefs: it sets no title block of its own until given \maketitle
    Manuscript(
        "amsart",
        "amsart-amsrefs",
        "main.tex",
        "CITATION",
        "CITATION",
        edits=(("\\author{Michael Downes}\n", "\\author{Michael Downes}\n\\maketitle\n"),),
    ),
    Manuscript("article", "article-sample2e", "sample2e.tex", "Lamport", "Example"),
    # the project's own manuscripts, each with a minimal style file of its own
    Manuscript("icml", "icml-twocolumn", "paper.tex", "Abstract", "Headers"),
    Manuscript("cvpr-teaser", "cvpr-teaser", "paper.tex", "Abstract", "Teasers"),
    # the same paper with its teaser in cuted's strip, right after \maketitle
    Manuscript(
        "cvpr-strip",
        "cvpr-teaser",
        "paper.tex",
        "Abstract",
        "Teasers",
        edits=(
            (
                "\\twocolumn[{%\n\\renewcommand\\twocolumn[1][]{#1}%\n\\maketitle\n\\begin{center}",
                "\\maketitle\n\\begin{strip}\n\\centering",
            ),
            ("\\end{center}\n}]\n", "\\end{strip}\n"),
        ),
    ),
    Manuscript("acl-review", "acl-review", "paper.tex", "Abstract", "Review-Mode"),
    Manuscript("thmtools", "thmtools-theorems", "paper.tex", "Abstract", "Restated"),
    # the project's own manuscripts of what real papers showed (their README.md)
    Manuscript("neurips-preprint", "neurips-preprint", "paper.tex", "Abstract", "Sparse"),
    Manuscript("pnas", "pnas-flushleft", "paper.tex", "Introduction", "Seasonal", flush_left=True),
]
BY_NAME = {m.name: m for m in MANUSCRIPT_LIST}
_BEGIN = re.compile(r"^\\begin\{document\}", re.M)


def source(manuscript: Manuscript, variant: str) -> str:
    """The main file as the variant builds it: pith's two lines just before \\begin{document}."""
    text = (MANUSCRIPTS / manuscript.folder / manuscript.main).read_text("utf-8")
    for old, new in manuscript.edits:
        assert old in text, old
        text = text.replace(old, new, 1)
    if variant == "baseline":
        return text
    options = "[placement=margin]" if variant == "margin" else ""
    match = _BEGIN.search(text)
    assert match is not None
    lines = f"\\usepackage{options}{{pith}}\n\\pithnumber{{{NUMBER}}}\n"
    return text[: match.start()] + lines + text[match.start() :]


def build_variant(manuscript: Manuscript, engine: str, variant: str, workdir: Path) -> Build:
    """Copy the manuscript's folder to `workdir`, write the variant's main file and build it."""
    if workdir.exists():
        shutil.rmtree(workdir)
    shutil.copytree(MANUSCRIPTS / manuscript.folder, workdir)
    shutil.copy(STY, workdir / "pith.sty")
    shutil.copy(STY.with_name("pith-compat.def"), workdir / "pith-compat.def")
    shutil.copy(STY.with_name("pith-placement.def"), workdir / "pith-placement.def")
    shutil.copy(STY.with_name("pith-authorkeys.def"), workdir / "pith-authorkeys.def")
    main = workdir / manuscript.main
    main.write_text(source(manuscript, variant), "utf-8")
    result = _run([ENGINES[engine], *TEX_FLAGS, main.name], workdir)
    log_path = main.with_suffix(".log")
    log = log_path.read_text("latin-1") if log_path.exists() else ""
    return Build(result.returncode == 0, main.with_suffix(".pdf"), log, result.stdout)


def build_all(manuscript: Manuscript, engine: str, root: Path) -> dict[str, Build]:
    """The three variants, built side by side (each TeX run is single-threaded)."""
    with ThreadPoolExecutor(max_workers=len(VARIANTS)) as pool:
        futures = {v: pool.submit(build_variant, manuscript, engine, v, root / v) for v in VARIANTS}
        return {v: f.result() for v, f in futures.items()}


def shared_builds(manuscript: Manuscript, engine: str) -> dict[str, Build]:
    """`build_all`, done once per test session (all pytest-xdist workers) and shared."""
    key = "\0".join(
        (
            "layout",
            manuscript.name,
            engine,
            STY.read_text("utf-8"),
            STY.with_name("pith-compat.def").read_text("utf-8"),
            STY.with_name("pith-placement.def").read_text("utf-8"),
            STY.with_name("pith-authorkeys.def").read_text("utf-8"),
            *(source(manuscript, v) for v in VARIANTS),
        )
    )

    def fill(root: Path) -> None:
        for variant, build in build_all(manuscript, engine, root).items():
            save_build(build, root / variant)

    root = shared_folder(key, fill)
    stem = Path(manuscript.main).stem
    return {v: load_build(root / v, stem) for v in VARIANTS}


Words = list[tuple[str, Box]]
"""The words of a page, each with its box, as pdfcheck.pages_words reads them."""


def title_page(pages: list[tuple[tuple[float, float], Words]], manuscript: Manuscript) -> int:
    """The 0-based index of the first page that prints the manuscript's marker word."""
    for index, (_size, words) in enumerate(pages):
        if any(manuscript.marker in word for word, _box in words):
            return index
    raise AssertionError(f"{manuscript.marker!r} is on no page")


def badge_words(words: Words) -> Words:
    """The badge's words: the short form and the label words on its line just before it."""
    found: Words = []
    for word, box in words:
        if word == SHORT:
            found.append((word, box))
            for other, obox in words:
                same_line = abs(obox[3] - box[3]) < 1.5 and box[0] - 90 < obox[0] < box[0]
                if same_line and other in ("Pith", "Number"):
                    found.append((other, obox))
    return found


def union(boxes: list[Box]) -> Box:
    return (
        min(b[0] for b in boxes),
        min(b[1] for b in boxes),
        max(b[2] for b in boxes),
        max(b[3] for b in boxes),
    )


def overlaps(a: Box, b: Box, clearance: float = 0.5) -> bool:
    return not (
        a[2] + clearance <= b[0]
        or b[2] + clearance <= a[0]
        or a[3] + clearance <= b[1]
        or b[3] + clearance <= a[1]
    )


def rounded(words: Words) -> Counter[tuple[str, tuple[float, ...]]]:
    return Counter((word, tuple(round(v, 1) for v in box)) for word, box in words)


def only_badge_pages(pages: list[tuple[tuple[float, float], Words]]) -> list[int]:
    return [i for i, (_size, words) in enumerate(pages) if badge_words(words)]
