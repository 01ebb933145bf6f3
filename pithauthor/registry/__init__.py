"""Registries: the client that fetches and verifies, the options of a command, submission
through the durable outbox, what you already said, a paper's page, sign-in tokens and trusted
manifests; and the local registry (`local/`), the same protocol served from this machine.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from pithauthor._face import lazy_face

if TYPE_CHECKING:
    from pithauthor.registry.access import (
        RegistryAccess,
        RegistryOptions,
        badge_number,
        check_registry_options,
        citing_number,
        read_subject,
        subject_for,
    )
    from pithauthor.registry.client import (
        RecordCache,
        RegistryClient,
        registry_binding,
        registry_url,
    )
    from pithauthor.registry.credentials import (
        TOKEN_ENV,
        TRUST_LOCAL_ENV,
        default_trust,
        env_token_origin,
        forget_token,
        store_token,
        stored_registries,
    )
    from pithauthor.registry.local.pool import Limits
    from pithauthor.registry.local.run import (
        add_papers,
        approve_held,
        check_base_url,
        check_host,
        data_folder,
        example_papers,
        read_token_file,
        start_server,
    )
    from pithauthor.registry.local.server import FaultPlan
    from pithauthor.registry.outbox import STATES, Outbox, OutboxEntry
    from pithauthor.registry.page import paper_status
    from pithauthor.registry.recovery import Recovered, recover
    from pithauthor.registry.statements import (
        OnChange,
        Settled,
        Statements,
        events_in_file,
        gist,
        key_lineage,
        my_papers,
        own_events_in_state,
        papers_on_registry,
    )
    from pithauthor.registry.submit import (
        SubmitResult,
        check_destination,
        combined,
        deliver,
        paper_titles,
        pending_by_registry,
        store_in_outbox,
        submit_everywhere,
        submit_pending,
    )

__all__ = [
    "STATES",
    "TOKEN_ENV",
    "TRUST_LOCAL_ENV",
    "FaultPlan",
    "Limits",
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
    "add_papers",
    "approve_held",
    "badge_number",
    "check_base_url",
    "check_destination",
    "check_host",
    "check_registry_options",
    "citing_number",
    "combined",
    "data_folder",
    "default_trust",
    "deliver",
    "env_token_origin",
    "events_in_file",
    "example_papers",
    "forget_token",
    "gist",
    "key_lineage",
    "my_papers",
    "own_events_in_state",
    "paper_status",
    "paper_titles",
    "papers_on_registry",
    "pending_by_registry",
    "read_subject",
    "read_token_file",
    "recover",
    "registry_binding",
    "registry_url",
    "start_server",
    "store_in_outbox",
    "store_token",
    "stored_registries",
    "subject_for",
    "submit_everywhere",
    "submit_pending",
]

# where each name lives (pithauthor/_face.py: why they load on first use)
__getattr__, __dir__ = lazy_face(
    __name__,
    {
        "FaultPlan": "pithauthor.registry.local.server",
        "Limits": "pithauthor.registry.local.pool",
        "OnChange": "pithauthor.registry.statements",
        "Outbox": "pithauthor.registry.outbox",
        "OutboxEntry": "pithauthor.registry.outbox",
        "RecordCache": "pithauthor.registry.client",
        "Recovered": "pithauthor.registry.recovery",
        "RegistryAccess": "pithauthor.registry.access",
        "RegistryClient": "pithauthor.registry.client",
        "RegistryOptions": "pithauthor.registry.access",
        "STATES": "pithauthor.registry.outbox",
        "Settled": "pithauthor.registry.statements",
        "Statements": "pithauthor.registry.statements",
        "SubmitResult": "pithauthor.registry.submit",
        "TOKEN_ENV": "pithauthor.registry.credentials",
        "TRUST_LOCAL_ENV": "pithauthor.registry.credentials",
        "add_papers": "pithauthor.registry.local.run",
        "approve_held": "pithauthor.registry.local.run",
        "badge_number": "pithauthor.registry.access",
        "check_base_url": "pithauthor.registry.local.run",
        "check_destination": "pithauthor.registry.submit",
        "check_host": "pithauthor.registry.local.run",
        "check_registry_options": "pithauthor.registry.access",
        "citing_number": "pithauthor.registry.access",
        "combined": "pithauthor.registry.submit",
        "data_folder": "pithauthor.registry.local.run",
        "default_trust": "pithauthor.registry.credentials",
        "deliver": "pithauthor.registry.submit",
        "env_token_origin": "pithauthor.registry.credentials",
        "events_in_file": "pithauthor.registry.statements",
        "example_papers": "pithauthor.registry.local.run",
        "forget_token": "pithauthor.registry.credentials",
        "gist": "pithauthor.registry.statements",
        "key_lineage": "pithauthor.registry.statements",
        "my_papers": "pithauthor.registry.statements",
        "own_events_in_state": "pithauthor.registry.statements",
        "papers_on_registry": "pithauthor.registry.statements",
        "paper_status": "pithauthor.registry.page",
        "paper_titles": "pithauthor.registry.submit",
        "pending_by_registry": "pithauthor.registry.submit",
        "read_subject": "pithauthor.registry.access",
        "read_token_file": "pithauthor.registry.local.run",
        "recover": "pithauthor.registry.recovery",
        "registry_binding": "pithauthor.registry.client",
        "registry_url": "pithauthor.registry.client",
        "start_server": "pithauthor.registry.local.run",
        "store_in_outbox": "pithauthor.registry.submit",
        "store_token": "pithauthor.registry.credentials",
        "stored_registries": "pithauthor.registry.credentials",
        "subject_for": "pithauthor.registry.access",
        "submit_everywhere": "pithauthor.registry.submit",
        "submit_pending": "pithauthor.registry.submit",
    },
)
