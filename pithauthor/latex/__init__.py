r"""The LaTeX badge: inject `\usepackage{pith}` + `\pithnumber{...}` (`injection`), build and
check the manuscript (`build`, `pdf`), pack it for arXiv (`arxiv`), pith.sty and badge
snippets (`sty`), project archives in and out (`archives`: an Overleaf zip).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from pithauthor._face import lazy_face

if TYPE_CHECKING:  # the face, one name a line (pithauthor/_face.py reads this block)
    from pithauthor.latex.arxiv import build_arxiv_archive as build_arxiv_archive
    from pithauthor.latex.injection import Step as Step
    from pithauthor.latex.injection import inject as inject
    from pithauthor.latex.pdf import check_pdf as check_pdf
    from pithauthor.latex.sources import find_main_file as find_main_file
    from pithauthor.latex.sty import shipped_files as shipped_files

__getattr__, __dir__ = lazy_face(__name__)  # names load on first use
