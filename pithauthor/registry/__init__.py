"""Registries: the client that fetches and verifies (`client`, `access`), submission
through the durable outbox (`submit`, `outbox`, `journal`, `recovery`), what was already
said (`statements`), a paper's page (`status`), sign-in tokens and trusted manifests.
The local registry is `pithauthor.registry.local`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from pithauthor._face import lazy_face

if TYPE_CHECKING:
    from pithauthor.registry.access import (
        RegistryAccess,
        RegistryOptions,
        check_number,
        check_registry_options,
        citing_number,
        connect,
        read_subject,
        subject_for,
    )
    from pithauthor.registry.client import (
        MAX_TIMEOUT,
        RegistryClient,
        fetch_subject,
        is_local_registry,
        registry_binding,
        registry_url,
        resolve_arxiv,
    )
    from pithauthor.registry.manifests import default_trust, load_manifest_file, pinned_trust
    from pithauthor.registry.outbox import STATES, Outbox, OutboxEntry
    from pithauthor.registry.record_cache import RecordCache
    from pithauthor.registry.recovery import Recovered, recover
    from pithauthor.registry.statements import OnChange, Settled, Statements, events_in_file, gist
    from pithauthor.registry.status import COMPLETENESS, my_papers, paper_status
    from pithauthor.registry.submit import (
        SubmitResult,
        append_jsonl,
        check_destination,
        combined,
        deliver,
        paper_titles,
        pending_by_registry,
        store_in_outbox,
        submit_events,
        submit_everywhere,
        submit_pending,
    )
    from pithauthor.registry.tokens import (
        TOKEN_ENV,
        env_token_origin,
        forget_token,
        store_token,
        stored_registries,
    )

__all__ = [
    "COMPLETENESS",
    "MAX_TIMEOUT",
    "STATES",
    "TOKEN_ENV",
    "OnChange",
    "Outbox",
    "OutboxEntry",
    "RecordCache",
    "Recovered",
    "RegistryAccess",
    "RegistryClient",
    "RegistryOptions",
    "Settled",
    "Statements",
    "SubmitResult",
    "append_jsonl",
    "check_destination",
    "check_number",
    "check_registry_options",
    "citing_number",
    "combined",
    "connect",
    "default_trust",
    "deliver",
    "env_token_origin",
    "events_in_file",
    "fetch_subject",
    "forget_token",
    "gist",
    "is_local_registry",
    "load_manifest_file",
    "my_papers",
    "paper_status",
    "paper_titles",
    "pending_by_registry",
    "pinned_trust",
    "read_subject",
    "recover",
    "registry_binding",
    "registry_url",
    "resolve_arxiv",
    "store_in_outbox",
    "store_token",
    "stored_registries",
    "subject_for",
    "submit_events",
    "submit_everywhere",
    "submit_pending",
]

# where each name lives (pithauthor/_face.py: why they load on first use)
__getattr__, __dir__ = lazy_face(
    __name__,
    {
        "COMPLETENESS": "pithauthor.registry.status",
        "MAX_TIMEOUT": "pithauthor.registry.client",
        "OnChange": "pithauthor.registry.statements",
        "Outbox": "pithauthor.registry.outbox",
        "OutboxEntry": "pithauthor.registry.outbox",
        "RecordCache": "pithauthor.registry.record_cache",
        "Recovered": "pithauthor.registry.recovery",
        "RegistryAccess": "pithauthor.registry.access",
        "RegistryClient": "pithauthor.registry.client",
        "RegistryOptions": "pithauthor.registry.access",
        "STATES": "pithauthor.registry.outbox",
        "Settled": "pithauthor.registry.statements",
        "Statements": "pithauthor.registry.statements",
        "SubmitResult": "pithauthor.registry.submit",
        "TOKEN_ENV": "pithauthor.registry.tokens",
        "append_jsonl": "pithauthor.registry.submit",
        "check_destination": "pithauthor.registry.submit",
        "check_number": "pithauthor.registry.access",
        "check_registry_options": "pithauthor.registry.access",
        "citing_number": "pithauthor.registry.access",
        "combined": "pithauthor.registry.submit",
        "connect": "pithauthor.registry.access",
        "default_trust": "pithauthor.registry.manifests",
        "deliver": "pithauthor.registry.submit",
        "env_token_origin": "pithauthor.registry.tokens",
        "events_in_file": "pithauthor.registry.statements",
        "fetch_subject": "pithauthor.registry.client",
        "forget_token": "pithauthor.registry.tokens",
        "gist": "pithauthor.registry.statements",
        "is_local_registry": "pithauthor.registry.client",
        "load_manifest_file": "pithauthor.registry.manifests",
        "my_papers": "pithauthor.registry.status",
        "paper_status": "pithauthor.registry.status",
        "paper_titles": "pithauthor.registry.submit",
        "pending_by_registry": "pithauthor.registry.submit",
        "pinned_trust": "pithauthor.registry.manifests",
        "read_subject": "pithauthor.registry.access",
        "recover": "pithauthor.registry.recovery",
        "registry_binding": "pithauthor.registry.client",
        "registry_url": "pithauthor.registry.client",
        "resolve_arxiv": "pithauthor.registry.client",
        "store_in_outbox": "pithauthor.registry.submit",
        "store_token": "pithauthor.registry.tokens",
        "stored_registries": "pithauthor.registry.tokens",
        "subject_for": "pithauthor.registry.access",
        "submit_events": "pithauthor.registry.submit",
        "submit_everywhere": "pithauthor.registry.submit",
        "submit_pending": "pithauthor.registry.submit",
    },
)
