"""What the LaTeX tests share: TeX builds shared across workers (texbuild), reading a PDF back
(pdfcheck), the manuscripts of the layout matrix (layout), injection (inject) and arXiv
sources (arxiv)."""
