"""The registry options of the commands as objects, and the checks of option combinations that
need no Typer (`options`, which declares the Typer options, loads it): `pith cite`'s plain
forms run without Typer (`pithauthor._cli.entry`)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from pithauthor._cli.output import message, warn
from pithauthor.errors import InputError

if TYPE_CHECKING:
    from pithauthor.registry.access import RegistryAccess, RegistryOptions


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
    from pithauthor.registry.access import RegistryOptions

    return RegistryOptions(
        registry,
        tuple(trust_manifest),
        trust_local,
        retries=retries,
        timeout=timeout,
        parallel=parallel,
    )


def registry_access(
    registry: str | None,
    trust_manifest: list[str],
    trust_local: bool,
    *,
    retries: int = 6,
    timeout: float = 20.0,
) -> RegistryAccess:
    """The options as a registry opened on first use; its notes and warnings go to stderr."""
    from pithauthor.registry.access import RegistryAccess

    options = registry_options(
        registry, trust_manifest, trust_local, retries=retries, timeout=timeout
    )
    return RegistryAccess(options, note=message, warn=warn)


def check_lookup_options(
    lookup: bool, offline: bool, write_back: bool, choose: bool = False
) -> None:
    if not lookup and (offline or write_back or choose):
        raise InputError("--offline, --write-back and --choose go with --lookup")
