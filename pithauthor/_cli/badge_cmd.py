"""`pith badge`: a badge snippet for a README or web page."""

from __future__ import annotations

from typing import Literal

import typer

from pithauthor._cli.catalog import summary
from pithauthor._cli.options import (
    OFFLINE_NUMBER_OPTION,
    REGISTRY_OPTION,
    TRUST_LOCAL_OPTION,
    TRUST_MANIFEST_OPTION,
    number_access,
)
from pithauthor._cli.output import data, message


def badge_cmd(
    number: str = typer.Argument(
        ...,
        metavar="NUMBER|ARXIV_ID",
        help="The Pith Number (pith:YYYY:BODY, or the body) or an arXiv id.",
    ),
    fmt: Literal["markdown", "html", "svg", "latex"] = typer.Option(
        "markdown", "--format", "-f", help="The snippet's format."
    ),
    image: str = typer.Option(
        "pith-badge.svg", "--image", help="Image path or URL for the markdown snippet."
    ),
    registry: str | None = REGISTRY_OPTION,
    trust_manifest: list[str] = TRUST_MANIFEST_OPTION,
    trust_local: bool = TRUST_LOCAL_OPTION,
    offline: bool = OFFLINE_NUMBER_OPTION,
) -> None:
    """Print a badge snippet for a README or web page (the SVG is made locally). A full Pith
    Number is checked with its record (cached, or the registry's); an arXiv id is looked up."""
    from pithauthor.latex.sty import badge
    from pithauthor.protocol.ids import classify_reference
    from pithauthor.registry.access import badge_number

    named = classify_reference(number)
    if named.number is not None and named.number.year is None:
        data(badge(named.number, fmt, image=image))  # a bare body: no year to get wrong
        return
    with number_access(registry, trust_manifest, trust_local) as access:
        checked, note = badge_number(number, access, offline=offline)
    snippet = badge(checked, fmt, image=image)  # a bad --image is the one error line
    if note:
        message(note)
    data(snippet)


def register(app: typer.Typer) -> None:
    app.command("badge", short_help=summary("badge"))(badge_cmd)
