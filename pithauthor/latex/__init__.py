r"""The LaTeX badge: inject `\usepackage{pith}` + `\pithnumber{...}` (`injection`), build and
check the manuscript (`build`, `pdf`), pack it for arXiv (`arxiv`), pith.sty and badge
snippets (`sty`), project archives in and out (`archives`: an Overleaf zip).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from pithauthor._face import lazy_face

if TYPE_CHECKING:
    from pithauthor.latex.archives import ProjectZip
    from pithauthor.latex.arxiv import build_arxiv_archive
    from pithauthor.latex.injection import Step, inject
    from pithauthor.latex.pdf import check_pdf
    from pithauthor.latex.sources import find_main_file
    from pithauthor.latex.sty import (
        badge,
        copy_sty,
        found_by_tex,
        install_sty,
        shipped_files,
        zip_sty,
    )

__all__ = [
    "ProjectZip",
    "Step",
    "badge",
    "build_arxiv_archive",
    "check_pdf",
    "copy_sty",
    "find_main_file",
    "found_by_tex",
    "inject",
    "install_sty",
    "shipped_files",
    "zip_sty",
]

# where each name lives (pithauthor/_face.py: why they load on first use)
__getattr__, __dir__ = lazy_face(
    __name__,
    {
        "ProjectZip": "pithauthor.latex.archives",
        "Step": "pithauthor.latex.injection",
        "badge": "pithauthor.latex.sty",
        "build_arxiv_archive": "pithauthor.latex.arxiv",
        "check_pdf": "pithauthor.latex.pdf",
        "copy_sty": "pithauthor.latex.sty",
        "find_main_file": "pithauthor.latex.sources",
        "found_by_tex": "pithauthor.latex.sty",
        "inject": "pithauthor.latex.injection",
        "install_sty": "pithauthor.latex.sty",
        "shipped_files": "pithauthor.latex.sty",
        "zip_sty": "pithauthor.latex.sty",
    },
)
