"""The console entry point. `pith --version` answers before the command tree (and Typer) is
loaded; everything else goes to the Typer application in `pithauthor._cli.main`."""

from __future__ import annotations

import sys


def main() -> None:
    if sys.argv[1:] == ["--version"]:
        from pithauthor._version import __version__

        sys.stdout.write(f"pith {__version__}\n")
        return
    from pithauthor._cli.main import main as run

    run()
