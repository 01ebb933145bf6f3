"""Whose fault a failed build is: when the paper with its badge does not compile, the same
sources are built without the badge (with a `pith.sty` that defines pith's commands and does
nothing), and the author is told which of the two it is."""

from __future__ import annotations

from pathlib import Path

from pithauthor.errors import BuildError, CompileFailed
from pithauthor.latex.build import build_sources
from pithauthor.latex.buildtime import BuildClock

STY_NAME = "pith.sty"

# pith.sty's public commands (docs/latex.md, "Usage"), each doing nothing: the paper builds as
# if pith had never been added, and a \pithbadge or \pithsetup of the author's stays harmless
NULL_STY = rb"""\ProvidesPackage{pith}[2000/01/01 doing nothing: the paper without its badge]
\DeclareOption*{}
\ProcessOptions\relax
\providecommand\pithnumber[1]{}
\providecommand\pithsetup[1]{}
\providecommand\pithbadge{}
\providecommand\pithbadgename{Pith Number}
\providecommand\pithauthorkey[1]{}
\providecommand\pithauthorkeys{}
\endinput
"""


def whose_fault(
    failed: CompileFailed,
    main: Path,
    engine: str,
    without_badge: dict[str, bytes],
    clock: BuildClock | None,
) -> BuildError:
    """The error to raise for `failed` (the build with the badge), once the sources of `main`
    are built with `without_badge` (name -> bytes; pith.sty becomes the one doing nothing)."""
    overrides = {**without_badge, STY_NAME: NULL_STY}
    try:
        with build_sources(main, engine, overrides, clock):
            pass
    except CompileFailed as plain:
        return BuildError(f"the paper does not compile without the badge either: {plain.reason}")
    except BuildError as plain:
        return BuildError(f"the paper does not build without the badge either: {plain}")
    return BuildError(
        f"adding the badge breaks the build: {failed.reason} (the paper compiles without it: "
        "this is a bug in pith.sty; please report it with this message and the preamble)"
    )
