"""Typer options for choosing and trusting a registry, shared by every command that talks to one."""

from __future__ import annotations

from typing import TYPE_CHECKING

import typer

if TYPE_CHECKING:
    from pithauthor.submit import RegistryClient

REGISTRY_HELP = "Registry base URL (default: $PITH_REGISTRY or https://pith.science)."
TRUST_HELP = "Also trust the keys of this mirror manifest (a local registry's); repeatable."
LOCAL_HELP = "Trust the key a LOCAL (loopback) registry publishes. For tests and dry runs."

MAX_TIMEOUT = 3600.0
"""The longest --timeout accepted (seconds per attempt)."""

REGISTRY_OPTION = typer.Option(None, "--registry", help=REGISTRY_HELP)
TRUST_MANIFEST_OPTION = typer.Option([], "--trust-manifest", help=TRUST_HELP)
TRUST_LOCAL_OPTION = typer.Option(False, "--trust-local-registry", help=LOCAL_HELP)
SUBMIT_OPTION = typer.Option(
    False, "--submit", help="Also send the signed events to the registry (through the outbox)."
)


def check_registry_options(registry: str | None, trust_manifest: list[str]) -> None:
    """Refuse a bad --registry or --trust-manifest even when this run needs no registry: bad
    input is said, not silently ignored."""
    from pithauthor.submit import default_trust, registry_url

    registry_url(registry)
    default_trust(trust_manifest)


def make_client(
    registry: str | None,
    trust_manifest: list[str],
    trust_local: bool,
    parallel: int = 8,
    retries: int = 6,
    timeout: float = 20.0,
) -> RegistryClient:
    """A client with the trust the options ask for (warning when a local key is trusted)."""
    import math

    from pithauthor._cli.output import warn
    from pithauthor.errors import InputError
    from pithauthor.submit import RegistryClient, RetryPolicy, default_trust

    if not math.isfinite(timeout) or not 0 < timeout <= MAX_TIMEOUT:
        raise InputError(f"--timeout must be a number of seconds in (0, {MAX_TIMEOUT:g}]")
    client = RegistryClient(
        registry,
        trust=default_trust(trust_manifest),
        max_connections=max(parallel, 4),
        retry=RetryPolicy(max_attempts=retries),
        timeout=timeout,
    )
    if trust_local:
        try:
            client.trust_local_registry()
        except BaseException:
            client.close()
            raise
        warn(f"trusting the local registry at {client.base_url}: its key is not pith.science's")
    return client
