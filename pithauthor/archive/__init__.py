"""Archive copies of a paper: the Internet Archive's Save Page Now and CDX index (`wayback`),
Software Heritage's "save code now" (`swh`), the flow that captures a paper's arXiv pages and
checks the capture against the PDF pith downloads itself (`capture`), and this machine's record
of those checks with the verdict drawn from it (`checked`).
"""

from __future__ import annotations
