"""The local registry: the same protocol as pith.science, served from this machine.

`run` (start one, add papers), `server` and `pool` (HTTP), `store` (SQLite), `answers`
(record, bundle and state JSON), `signer` (its own key, receipts and manifest). Never
trusted by a client unless the user says so.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from pithauthor._face import lazy_face

if TYPE_CHECKING:
    from pithauthor.registry.local.pool import Limits
    from pithauthor.registry.local.run import (
        AddedPaper,
        add_papers,
        check_base_url,
        check_host,
        data_folder,
        example_papers,
        read_token_file,
        start_server,
    )
    from pithauthor.registry.local.server import FaultPlan, RegistryServer

__all__ = [
    "AddedPaper",
    "FaultPlan",
    "Limits",
    "RegistryServer",
    "add_papers",
    "check_base_url",
    "check_host",
    "data_folder",
    "example_papers",
    "read_token_file",
    "start_server",
]

# where each name lives (pithauthor/_face.py: why they load on first use)
__getattr__, __dir__ = lazy_face(
    __name__,
    {
        "AddedPaper": "pithauthor.registry.local.run",
        "FaultPlan": "pithauthor.registry.local.server",
        "Limits": "pithauthor.registry.local.pool",
        "RegistryServer": "pithauthor.registry.local.server",
        "add_papers": "pithauthor.registry.local.run",
        "check_base_url": "pithauthor.registry.local.run",
        "check_host": "pithauthor.registry.local.run",
        "data_folder": "pithauthor.registry.local.run",
        "example_papers": "pithauthor.registry.local.run",
        "read_token_file": "pithauthor.registry.local.run",
        "start_server": "pithauthor.registry.local.run",
    },
)
