"""Author keys: create, list, export, back up, rotate, delete, and load one for signing.

Secrets live in the OS keyring or in passphrase-encrypted files (`secrets`), never in the
public key list (`storage`); `pith doctor` (`pithauthor.doctor`) says where keys go and
whether that is safe.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from pithauthor._face import lazy_face

if TYPE_CHECKING:  # the face, one name a line (pithauthor/_face.py reads this block)
    from pithauthor.keys.author import AuthorKey as AuthorKey
    from pithauthor.keys.author import DeferredKey as DeferredKey
    from pithauthor.keys.author import load_signing_key as load_signing_key
    from pithauthor.keys.author import show as show
    from pithauthor.keys.passphrase import passphrase_source as passphrase_source
    from pithauthor.keys.storage import KeyRecord as KeyRecord

__getattr__, __dir__ = lazy_face(__name__)  # names load on first use
