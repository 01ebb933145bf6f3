"""`pith badge`: a badge snippet for a README or web page."""

from __future__ import annotations

from typing import Literal

import typer

from pithauthor._cli.output import data


def badge_cmd(
    number: str = typer.Argument(..., help="The Pith Number (pith:YYYY:BODY or the body)."),
    fmt: Literal["markdown", "html", "svg", "latex"] = typer.Option(
        "markdown", "--format", "-f", help="The snippet's format."
    ),
    image: str = typer.Option(
        "pith-badge.svg", "--image", help="Image path or URL for the markdown snippet."
    ),
) -> None:
    """Print a badge snippet for a README or web page (the SVG is made locally)."""
    from pithauthor import PithNumber
    from pithauthor.badge import badge

    data(badge(PithNumber.parse(number), fmt, image=image))


def register(app: typer.Typer) -> None:
    app.command("badge")(badge_cmd)
