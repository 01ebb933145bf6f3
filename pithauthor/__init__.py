"""pithauthor: the author's side of the Pith open graph.

The names here are what an author's script calls first: load a key, sign a claim, citations,
a replication or a withdrawal, submit through the outbox, verify what a registry sent; the
typed results of those calls, and the root error. Everything a single domain or only the
command line uses stays in its package's public face (`pithauthor.keys`, `pithauthor.registry`,
`pithauthor.latex`, `pithauthor.identity`, ...), listed in docs/architecture.md. Every public
error, `PithError` and the tree below it, is in `pithauthor.errors`.
"""

from __future__ import annotations

import sys

# not `typing.TYPE_CHECKING`: importing typing (and the `re` it loads) is most of what `pith
# --version` would cost beyond Python itself; type checkers read this one alike
TYPE_CHECKING = False

# The oldest Python pithauthor runs on: pyproject.toml's requires-python (tests/test_platform.py
# holds them equal). Below it, every run (`pith`, `python -m pithauthor`, an import) stops here
# with one line, before a module that needs a newer Python fails with a traceback (Ubuntu
# 22.04's python3 is 3.10). Nothing may need a 3.11 patch release: 3.11.0 is supported.
_OLDEST_PYTHON = (3, 11)
if sys.version_info[:2] < _OLDEST_PYTHON:
    raise SystemExit(
        f"pith: error: pithauthor needs Python 3.11 or newer, and {sys.executable} is "
        f"{sys.version.split()[0]}; next: `uv tool install .` (uv brings its own Python) or "
        "`pipx install --python python3.11 .` (README.md, Install)"
    )

from pithauthor._face import lazy_face  # noqa: E402 (after the check: it may need 3.11)
from pithauthor._version import __version__ as __version__  # noqa: E402

if TYPE_CHECKING:  # the face, one name a line (pithauthor/_face.py reads this block)
    from pithauthor.bibliography.cite import sign_bibliography as sign_bibliography
    from pithauthor.bibliography.reading import read_bibliographies as read_bibliographies
    from pithauthor.errors import PithError as PithError
    from pithauthor.keys.author import AuthorKey as AuthorKey
    from pithauthor.keys.author import load_signing_key as load_signing_key
    from pithauthor.protocol.documents import AuthorEvent as AuthorEvent
    from pithauthor.protocol.ids import ArxivId as ArxivId
    from pithauthor.protocol.ids import PithNumber as PithNumber
    from pithauthor.protocol.subject import Subject as Subject
    from pithauthor.protocol.verdict import Check as Check
    from pithauthor.protocol.verdict import Report as Report
    from pithauthor.registry.client import RegistryClient as RegistryClient
    from pithauthor.registry.submit import store_in_outbox as store_in_outbox
    from pithauthor.registry.submit import submit_pending as submit_pending
    from pithauthor.sign import Settle as Settle
    from pithauthor.sign import artifact_sha256 as artifact_sha256
    from pithauthor.sign import attest_authorship as attest_authorship
    from pithauthor.sign import record_replication as record_replication
    from pithauthor.sign import sign_citation as sign_citation
    from pithauthor.sign import withdraw as withdraw
    from pithauthor.verify import read_arxiv_metadata as read_arxiv_metadata
    from pithauthor.verify import read_documents as read_documents
    from pithauthor.verify import verify_document as verify_document
    from pithauthor.verify import verify_documents as verify_documents
    from pithauthor.verify import verify_file as verify_file

__getattr__, __dir__ = lazy_face(__name__, "__version__")  # names load on first use
