"""`--lookup`, `--offline`, `--arxiv-api`, `--write-back`, for `pith cite` and `pith bib scan`."""

from __future__ import annotations

import sys
from contextlib import nullcontext
from typing import TYPE_CHECKING

import typer

from pithauthor._cli.output import message
from pithauthor.errors import InputError

if TYPE_CHECKING:
    from pithauthor.bibliography import BibReading
    from pithauthor.lookup import LookupResult

LOOKUP_OPTION = typer.Option(
    False,
    "--lookup",
    help="Find the arXiv id of entries that have none by asking arXiv's API for their title "
    "and authors; only certain matches are used (docs/cite.md).",
)
OFFLINE_OPTION = typer.Option(
    False, "--offline", help="With --lookup: use only answers cached by earlier runs."
)
ARXIV_API_OPTION = typer.Option(
    None,
    "--arxiv-api",
    metavar="URL",
    envvar="PITH_ARXIV_API",
    help="arXiv's API query URL [default: https://export.arxiv.org/api/query].",
)
WRITE_BACK_OPTION = typer.Option(
    False,
    "--write-back",
    help="With --lookup: add eprint and archivePrefix to each entry found, in its .bib file "
    "(the old file is kept as NAME.pith-backup).",
)


def check_lookup_options(lookup: bool, offline: bool, write_back: bool) -> None:
    if not lookup and (offline or write_back):
        raise InputError("--offline and --write-back go with --lookup")


def run_lookup(reading: BibReading, api_url: str | None, offline: bool) -> LookupResult:
    """Look the entries up, with a progress bar on a terminal and a summary on stderr."""
    from pithauthor.lookup import lookup_bibliography

    with _ProgressBar() if sys.stderr.isatty() else nullcontext() as progress:
        result = lookup_bibliography(reading, api_url, offline=offline, progress=progress)
    message(result.summary(offline))
    return result


def write_back(result: LookupResult) -> None:
    """Add the identifiers found to the .bib files, saying what was done to each."""
    from pithauthor.lookup import write_back as write

    done = write(result.reading)
    for item in done:
        for key, why in item.skipped:
            message(f"write-back: {item.path}: {key} left as it is: {why}")
        if item.written:
            message(
                f"write-back: {item.path}: eprint added to {len(item.written)} entr"
                f"{'y' if len(item.written) == 1 else 'ies'} (backup: {item.backup})"
            )
    if not any(item.written for item in done):
        message("write-back: nothing to add")


class _ProgressBar:
    """rich's progress bar on stderr: requests done of planned, with the time left."""

    def __enter__(self) -> _ProgressBar:
        # rich is imported only when a bar is shown: `pith --help` must not load it
        from rich.console import Console
        from rich.progress import (
            BarColumn,
            MofNCompleteColumn,
            Progress,
            TextColumn,
            TimeRemainingColumn,
        )

        self._bar = Progress(
            TextColumn("arXiv lookup"),
            BarColumn(),
            MofNCompleteColumn(),
            TextColumn("requests"),
            TimeRemainingColumn(),
            console=Console(stderr=True),
            transient=True,
        )
        self._bar.start()
        self._task = self._bar.add_task("lookup", total=None)
        return self

    def __call__(self, done: int, planned: int) -> None:
        self._bar.update(self._task, completed=done, total=max(planned, done))

    def __exit__(self, *exc: object) -> None:
        self._bar.stop()
