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
from pithauthor._version import __version__  # noqa: E402

if TYPE_CHECKING:
    from pithauthor.bibliography import read_bibliographies, sign_bibliography
    from pithauthor.errors import PithError
    from pithauthor.keys import AuthorKey, load_signing_key
    from pithauthor.protocol import ArxivId, AuthorEvent, Check, PithNumber, Report, Subject
    from pithauthor.registry import RegistryClient, store_in_outbox, submit_pending
    from pithauthor.sign import (
        Settle,
        artifact_sha256,
        attest_authorship,
        record_replication,
        sign_citation,
        withdraw,
    )
    from pithauthor.verify import (
        read_arxiv_metadata,
        read_documents,
        verify_document,
        verify_documents,
        verify_file,
    )

__all__ = [
    "ArxivId",
    "AuthorEvent",
    "AuthorKey",
    "Check",
    "PithError",
    "PithNumber",
    "RegistryClient",
    "Report",
    "Settle",
    "Subject",
    "__version__",
    "artifact_sha256",
    "attest_authorship",
    "load_signing_key",
    "read_arxiv_metadata",
    "read_bibliographies",
    "read_documents",
    "record_replication",
    "sign_bibliography",
    "sign_citation",
    "store_in_outbox",
    "submit_pending",
    "verify_document",
    "verify_documents",
    "verify_file",
    "withdraw",
]

# where each name lives (pithauthor/_face.py: why they load on first use)
__getattr__, __dir__ = lazy_face(
    __name__,
    {
        "verify_documents": "pithauthor.verify",
        "read_documents": "pithauthor.verify",
        "Settle": "pithauthor.sign",
        "artifact_sha256": "pithauthor.sign",
        "ArxivId": "pithauthor.protocol",
        "AuthorEvent": "pithauthor.protocol",
        "AuthorKey": "pithauthor.keys",
        "Check": "pithauthor.protocol",
        "PithError": "pithauthor.errors",
        "PithNumber": "pithauthor.protocol",
        "RegistryClient": "pithauthor.registry",
        "Report": "pithauthor.protocol",
        "Subject": "pithauthor.protocol",
        "attest_authorship": "pithauthor.sign",
        "load_signing_key": "pithauthor.keys",
        "read_arxiv_metadata": "pithauthor.verify",
        "read_bibliographies": "pithauthor.bibliography",
        "record_replication": "pithauthor.sign",
        "sign_bibliography": "pithauthor.bibliography",
        "sign_citation": "pithauthor.sign",
        "store_in_outbox": "pithauthor.registry",
        "submit_pending": "pithauthor.registry",
        "verify_document": "pithauthor.verify",
        "verify_file": "pithauthor.verify",
        "withdraw": "pithauthor.sign",
    },
)
