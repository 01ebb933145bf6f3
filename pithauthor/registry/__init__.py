"""Registries: the client that fetches and verifies, the options of a command, submission
through the durable outbox, what you already said, a paper's page, sign-in tokens and trusted
manifests; and the local registry (`local/`), the same protocol served from this machine.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from pithauthor._face import lazy_face

if TYPE_CHECKING:  # the face, one name a line (pithauthor/_face.py reads this block)
    from pithauthor.registry.access import RegistryAccess as RegistryAccess
    from pithauthor.registry.access import RegistryOptions as RegistryOptions
    from pithauthor.registry.access import badge_number as badge_number
    from pithauthor.registry.access import subject_for as subject_for
    from pithauthor.registry.client import RecordCache as RecordCache
    from pithauthor.registry.client import RegistryClient as RegistryClient
    from pithauthor.registry.statements import OnChange as OnChange
    from pithauthor.registry.statements import Settled as Settled
    from pithauthor.registry.statements import Statements as Statements
    from pithauthor.registry.submit import SubmitResult as SubmitResult
    from pithauthor.registry.submit import store_in_outbox as store_in_outbox
    from pithauthor.registry.submit import submit_pending as submit_pending

__getattr__, __dir__ = lazy_face(__name__)  # names load on first use
