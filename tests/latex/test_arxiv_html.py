"""arXiv's HTML view: LaTeXML (Debian's `latexml`) turns a packed paper into HTML through
pith.sty.ltxml: the badge is a link to the record with the number, and there is no error box."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest
from support.latex.arxiv import BODY, NUMBER, article, run_pith, unpack

REPO = Path(__file__).resolve().parents[2]
LATEXML = pytest.mark.tex("latexml", "latexmlpost", "latexmk", "pdflatex")
KEY = "ed25519:" + "A" * 26
LINK = re.compile(r'<a href="([^"]+)"[^>]*class="[^"]*ltx_pith_badge[^"]*"[^>]*>([^<]*)</a>')


def html_of(folder: Path, main: str) -> str:
    """LaTeXML, then latexmlpost to HTML, as arXiv's HTML view runs them (no network)."""
    stem = Path(main).stem
    for command in (
        ["latexml", f"--dest={stem}.xml", main],
        ["latexmlpost", f"--dest={stem}.html", f"{stem}.xml"],
    ):
        done = subprocess.run(command, cwd=folder, capture_output=True, text=True, timeout=300)
        assert done.returncode == 0, done.stderr[-2000:]
    return (folder / f"{stem}.html").read_text("utf-8")


@LATEXML
@pytest.mark.slow
def test_html_of_a_packed_paper_links_the_badge_to_its_record_without_error(
    tmp_path: Path,
) -> None:
    folder = tmp_path / "paper"
    folder.mkdir()
    (folder / "paper.tex").write_text(article("Some text."))
    shutil.copy(REPO / "latex" / "pith.sty", folder / "pith.sty")
    archive = tmp_path / "upload.tar.gz"
    packed = run_pith("latex", "arxiv", str(folder), "-o", str(archive), home=tmp_path / "home")
    assert packed.returncode == 0, packed.stderr
    unpack(archive, tmp_path / "arxiv")
    html = html_of(tmp_path / "arxiv", "paper.tex")
    assert "ltx_ERROR" not in html
    assert LINK.findall(html) == [
        (f"https://pith.science/pith/{BODY}", f"Pith Number pith:{BODY[:8]}")
    ]


@LATEXML
@pytest.mark.slow
def test_html_follows_the_options_baseurl_placement_and_compact_and_pithbadge(
    tmp_path: Path,
) -> None:
    source = article("Cite this as \\pithbadge. Keys: \\pithauthorkeys.").replace(
        "\\usepackage{pith}",
        f"\\usepackage[baseurl=https://example.org/,placement=none]{{pith}}\n\\pithauthorkey{{{KEY}}}",
    )
    source = source.replace("\\begin{document}", "\\pithsetup{style=compact}\n\\begin{document}")
    (tmp_path / "paper.tex").write_text(source)
    shutil.copy(REPO / "latex" / "pith.sty.ltxml", tmp_path / "pith.sty.ltxml")
    html = html_of(tmp_path, "paper.tex")
    assert "ltx_ERROR" not in html
    # placement=none: no badge under the title, only where \pithbadge stands, in compact style
    assert LINK.findall(html) == [(f"https://example.org/pith/{BODY}", f"pith:{BODY[:8]}")]
    # \pithauthorkey prints nothing where it stands; \pithauthorkeys lists the keys
    assert (
        html.count(KEY) == 1 and f'Keys: <span class="ltx_text ltx_font_typewriter">{KEY}' in html
    )


def test_ltxml_is_packaged_beside_pith_sty_and_defines_every_public_macro() -> None:
    from pithauthor.latex.sty import pith_ltxml_path

    ltxml = pith_ltxml_path().read_bytes()
    assert ltxml == (REPO / "latex" / "pith.sty.ltxml").read_bytes()
    text = ltxml.decode("utf-8")
    for macro in (
        "pithnumber",
        "pithbadge",
        "pithsetup",
        "pithbadgename",
        "pithauthorkey",
        "pithauthorkeys",
    ):
        assert f"'\\{macro}" in text, macro
    assert NUMBER.split(":")[0] == "pith"
