"""`--only-cited MAIN.tex|MAIN.aux`, for `pith cite` and `pith bib scan`."""

from __future__ import annotations

from pathlib import Path

from pithauthor._cli.output import warn


def cited(path: Path) -> set[str]:
    """The keys the manuscript cites; a warning names the citation macros it defines that
    could not be followed (their entries may be `skipped`: the .aux is exact)."""
    from pithauthor.bibliography import read_citations

    found = read_citations(Path(path))
    if found.unfollowed:
        names = "; ".join(f"\\{name}: {why}" for name, why in sorted(found.unfollowed.items()))
        warn(
            f"--only-cited {path}: citation macros not followed ({names}); the entries they "
            "cite may be 'skipped': give the .aux (after a LaTeX run) for the exact list"
        )
    return set(found.keys)
