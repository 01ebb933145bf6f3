"""Internals of the LaTeX helpers: byte-faithful text files, the main-file finder, the preamble
locator (pylatexenc), the latexmk runner and the PDF checker."""
