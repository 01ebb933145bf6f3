"""Author keys: create, list, export, back up, rotate, delete, and load one for signing.

Secrets live in the OS keyring or in passphrase-encrypted files (`secrets`), never in the
public key list (`storage`); `pith doctor` (`pithauthor.doctor`) says where keys go and
whether that is safe.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from pithauthor._face import lazy_face

if TYPE_CHECKING:
    from pithauthor.keys.author import (
        AuthorKey,
        DeferredKey,
        backup,
        check_public_name,
        deferred_signing_key,
        delete,
        export_public,
        generate,
        import_backup,
        known_keys,
        list_keys,
        load_key,
        load_signing_key,
        rotate,
        set_public_name,
        show,
    )
    from pithauthor.keys.passphrase import backup_passphrase_source, passphrase_source
    from pithauthor.keys.storage import KeyRecord

__all__ = [
    "AuthorKey",
    "DeferredKey",
    "KeyRecord",
    "backup",
    "backup_passphrase_source",
    "check_public_name",
    "deferred_signing_key",
    "delete",
    "export_public",
    "generate",
    "import_backup",
    "known_keys",
    "list_keys",
    "load_key",
    "load_signing_key",
    "passphrase_source",
    "rotate",
    "set_public_name",
    "show",
]

# where each name lives (pithauthor/_face.py: why they load on first use)
__getattr__, __dir__ = lazy_face(
    __name__,
    {
        "AuthorKey": "pithauthor.keys.author",
        "DeferredKey": "pithauthor.keys.author",
        "KeyRecord": "pithauthor.keys.storage",
        "backup": "pithauthor.keys.author",
        "backup_passphrase_source": "pithauthor.keys.passphrase",
        "check_public_name": "pithauthor.keys.author",
        "deferred_signing_key": "pithauthor.keys.author",
        "delete": "pithauthor.keys.author",
        "export_public": "pithauthor.keys.author",
        "generate": "pithauthor.keys.author",
        "import_backup": "pithauthor.keys.author",
        "known_keys": "pithauthor.keys.author",
        "list_keys": "pithauthor.keys.author",
        "load_key": "pithauthor.keys.author",
        "load_signing_key": "pithauthor.keys.author",
        "passphrase_source": "pithauthor.keys.passphrase",
        "rotate": "pithauthor.keys.author",
        "set_public_name": "pithauthor.keys.author",
        "show": "pithauthor.keys.author",
    },
)
