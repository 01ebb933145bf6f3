"""Typer options for choosing and trusting a registry, shared by every command that talks to one."""

from __future__ import annotations

from typing import TYPE_CHECKING

import typer

from pithauthor._cli.output import message, warn

if TYPE_CHECKING:
    from pithauthor.registry import RegistryAccess, RegistryClient, RegistryOptions

REGISTRY_HELP = "Registry base URL (default: $PITH_REGISTRY or https://pith.science)."
TRUST_HELP = "Also trust the keys of this mirror manifest (a local registry's); repeatable."
LOCAL_HELP = "Trust the key a LOCAL (loopback) registry publishes. For tests and dry runs."

REGISTRY_OPTION = typer.Option(None, "--registry", help=REGISTRY_HELP)
TRUST_MANIFEST_OPTION = typer.Option([], "--trust-manifest", metavar="FILE", help=TRUST_HELP)
TRUST_LOCAL_OPTION = typer.Option(False, "--trust-local-registry", help=LOCAL_HELP)
SUBMIT_OPTION = typer.Option(
    False, "--submit", help="Also send the signed events to the registry (through the outbox)."
)
REPLACE_OPTION = typer.Option(
    False,
    "--replace",
    help="Correct the statement of yours the outbox holds for this paper: the new event names "
    "the one it replaces, and the registry shows it instead (docs/publishing.md).",
)
YES_OPTION = typer.Option(
    False,
    "--yes",
    "-y",
    help="Sign and submit without asking. Without a terminal, --submit needs it.",
)


def registry_options(
    registry: str | None,
    trust_manifest: list[str],
    trust_local: bool,
    *,
    parallel: int = 8,
    retries: int = 6,
    timeout: float = 20.0,
) -> RegistryOptions:
    """The shared options (and a command's own budget) as one object with named fields."""
    from pithauthor.registry import RegistryOptions

    return RegistryOptions(
        registry,
        tuple(trust_manifest),
        trust_local,
        retries=retries,
        timeout=timeout,
        parallel=parallel,
    )


def make_client(
    registry: str | None,
    trust_manifest: list[str],
    trust_local: bool,
    parallel: int = 8,
    retries: int = 6,
    timeout: float = 20.0,
) -> RegistryClient:
    """A client with the options; its warning goes to stderr."""
    options = registry_options(
        registry, trust_manifest, trust_local, parallel=parallel, retries=retries, timeout=timeout
    )
    return options.connect(warn=warn)


OFFLINE_NUMBER_OPTION = typer.Option(
    False,
    "--offline",
    help="Ask no registry: a full Pith Number is checked with a cached record only.",
)


def number_access(
    registry: str | None, trust_manifest: list[str], trust_local: bool
) -> RegistryAccess:
    """The registry a badge's number is checked with: two tries, 10 s each. A registry that
    does not answer only leaves the year unchecked (and says so); a badge never waits long."""
    return registry_access(registry, trust_manifest, trust_local, retries=2, timeout=10.0)


def registry_access(
    registry: str | None,
    trust_manifest: list[str],
    trust_local: bool,
    *,
    retries: int = 6,
    timeout: float = 20.0,
) -> RegistryAccess:
    """The options as a registry opened on first use; its notes and warnings go to stderr."""
    from pithauthor.registry import RegistryAccess

    options = registry_options(
        registry, trust_manifest, trust_local, retries=retries, timeout=timeout
    )
    return RegistryAccess(options, note=message, warn=warn)
