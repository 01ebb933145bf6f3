"""`--lookup`, `--offline`, `--arxiv-api`, `--write-back`, `--choose`, for `pith cite` and
`pith bib scan`."""

from __future__ import annotations

import sys
from contextlib import nullcontext
from dataclasses import replace
from typing import TYPE_CHECKING

import typer

from pithauthor._cli.output import at_terminal, message, warn
from pithauthor.errors import InputError
from pithauthor.protocol import escaped

if TYPE_CHECKING:
    from pithauthor.bibliography import BibEntry, BibReading, LookupResult

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


CHOOSE_OPTION = typer.Option(
    False,
    "--choose",
    help="With --lookup, on a terminal: ask which candidate each ambiguous entry is (the one "
    "chosen is then used like a certain match).",
)
#: Answers asked for before an entry is left as it is.
_ATTEMPTS = 3


def check_lookup_options(
    lookup: bool, offline: bool, write_back: bool, choose: bool = False
) -> None:
    if not lookup and (offline or write_back or choose):
        raise InputError("--offline, --write-back and --choose go with --lookup")


def run_lookup(reading: BibReading, api_url: str | None, offline: bool) -> LookupResult:
    """Look the entries up, with a progress bar on a terminal and a summary on stderr."""
    from pithauthor.bibliography import lookup_bibliography

    with _ProgressBar() if sys.stderr.isatty() else nullcontext() as progress:
        result = lookup_bibliography(reading, api_url, offline=offline, progress=progress)
    message(result.summary(offline))
    return result


def settle_ambiguous(result: LookupResult, choose: bool) -> LookupResult:
    """For each `ambiguous` entry with candidates: with `choose` on a terminal, ask the author
    which one it is; otherwise print, for each candidate, the line that settles it by hand."""
    from pithauthor.bibliography import paste_line, settle

    open_entries = [e for e in result.reading.entries if e.status == "ambiguous"]
    open_entries = [e for e in open_entries if e.lookup_choices]
    if not open_entries:
        return result
    asking = choose and at_terminal()
    if choose and not asking:
        warn("--choose needs a terminal to ask on; the lines to paste are printed instead")
    reading = result.reading
    for entry in open_entries:
        message(f'{entry.key} ({entry.source_file}:{entry.line}) is ambiguous: '
                f'"{_shown(entry.title_unicode)}"')  # fmt: skip
        for number, choice in enumerate(entry.lookup_choices, 1):
            authors = ", ".join(_shown(a) for a in choice.authors)
            why = choice.problem or "fits the title, author and year rules"
            message(f'  {number}) {choice.arxiv_id}  "{_shown(choice.title)}" ({authors}; '
                    f"arXiv {choice.year}): {why}")  # fmt: skip
            if not asking:
                message(f"       {paste_line(choice.arxiv_id)}")
        if asking:
            picked = _ask(entry)
            if picked is not None:
                reading = settle(reading, _same(reading, entry), picked)
        else:
            message("  if it is one of them, paste that line into the entry")
    return replace(result, reading=reading)


def _ask(entry: BibEntry) -> str | None:
    """The arXiv id the author picks for `entry`, or None (Enter, or no valid answer)."""
    count = len(entry.lookup_choices)
    for _ in range(_ATTEMPTS):
        sys.stderr.write(f"Which paper is {entry.key}? [1-{count}, Enter: none of them] ")
        sys.stderr.flush()
        answer = sys.stdin.readline().strip()
        if not answer:
            return None
        if answer.isdigit() and 1 <= int(answer) <= count:
            return entry.lookup_choices[int(answer) - 1].arxiv_id
        message(f"  answer a number from 1 to {count}, or Enter")
    return None


def _same(reading: BibReading, entry: BibEntry) -> BibEntry:
    """`entry` as it is in `reading` (settling one entry rebuilds the others)."""
    where = (entry.key, entry.source_file)
    return next(e for e in reading.entries if (e.key, e.source_file) == where)


def _shown(text: str) -> str:
    """Text pith did not write (arXiv's), safe on a terminal: control and bidirectional
    formatting characters are shown as escapes (`pithauthor.protocol.text.escaped`)."""
    return escaped(text)


def write_back(result: LookupResult) -> None:
    """Add the identifiers found to the .bib files, saying what was done to each."""
    from pithauthor.bibliography import write_back as write

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
