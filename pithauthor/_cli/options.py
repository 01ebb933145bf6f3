"""The options commands share, declared once: the registry, its trust and timeout; the key and
its passphrase; and `--lookup`'s options. (What `--only-cited` reads is `bib_cmd.cited`: the
entry point's plain `pith bib scan` reads it without Typer.)
"""

from __future__ import annotations

import sys
from contextlib import nullcontext
from dataclasses import replace
from typing import TYPE_CHECKING

import typer

from pithauthor._cli.access import registry_access, registry_options
from pithauthor._cli.output import at_terminal, message, warn
from pithauthor.protocol.text import escaped

if TYPE_CHECKING:
    from pithauthor.bibliography.lookup import LookupResult
    from pithauthor.bibliography.reading import BibEntry, BibReading
    from pithauthor.registry.access import RegistryAccess
    from pithauthor.registry.client import RegistryClient


# Typer options for choosing and trusting a registry, shared by every command that talks to one.

REGISTRY_HELP = "Registry base URL (default: $PITH_REGISTRY or https://pith.science)."

TRUST_HELP = "Also trust the keys of this mirror manifest (a local registry's); repeatable."

LOCAL_HELP = "Trust the key a LOCAL (loopback) registry publishes. For tests and dry runs."
# `--trust-local-registry` for a whole session: `PITH_TRUST_LOCAL_REGISTRY=1` (the name is the
# registry face's TRUST_LOCAL_ENV; written here, as the other literals of the options, so that
# `pith --help` imports no library module; tests/test_platform.py holds the two equal)
TRUST_LOCAL_ENV = "PITH_TRUST_LOCAL_REGISTRY"

REGISTRY_OPTION = typer.Option(None, "--registry", help=REGISTRY_HELP)

TRUST_MANIFEST_OPTION = typer.Option([], "--trust-manifest", metavar="FILE", help=TRUST_HELP)

TRUST_LOCAL_OPTION = typer.Option(
    False, "--trust-local-registry", envvar=TRUST_LOCAL_ENV, show_envvar=False, help=LOCAL_HELP
)

SUBMIT_OPTION = typer.Option(
    False, "--submit", help="Also send the signed events to the registry (through the outbox)."
)

REPLACE_OPTION = typer.Option(
    False,
    "--replace",
    help="Correct the statement of yours the outbox holds for this paper: the new event names "
    "the one it replaces, and the registry shows it instead (docs/publishing.md).",
)

NO_TIMESTAMP_OPTION = typer.Option(
    False,
    "--no-timestamp",
    help="Ask no time-stamp authority or OpenTimestamps calendar for this event's trusted time "
    "(also PITH_TSA=none with PITH_OTS_CALENDARS=none). Without one, a claim by a key retired "
    "later is not identity-bound (docs/identity.md).",
)

YES_OPTION = typer.Option(
    False,
    "--yes",
    "-y",
    help="Sign and submit without asking. Without a terminal, --submit needs it.",
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


# Typer options shared by the commands that sign: choosing and unlocking a key, the record,
# and where the signed events go.
#
# from pithauthor._cli.options import KEY_OPTION, PASSPHRASE_FILE_OPTION
#
# def claim(..., key: str | None = KEY_OPTION,
#           passphrase_file: str | None = PASSPHRASE_FILE_OPTION):
#     from pithauthor.keys import load_signing_key, passphrase_source
#     signer = load_signing_key(key, passphrase=passphrase_source(passphrase_file))


def complete_key(incomplete: str) -> list[tuple[str, str]]:
    """Shell completion of a key: the names (and key ids) in the key store, each with its status.

    It reads only the public key list, never a secret; a missing or damaged store completes to
    nothing rather than to file names or a traceback in the middle of the author's command line.
    """
    from pithauthor.errors import PithError
    from pithauthor.keys.author import known_keys

    try:
        records = known_keys()  # creates no key store on a Tab
    except (PithError, OSError, ValueError):
        return []
    out: list[tuple[str, str]] = []
    for record in records:
        label = f"{record.status} key {record.key_id}"
        if record.name.startswith(incomplete):
            out.append((record.name, label))
        elif incomplete and record.key_id.startswith(incomplete):
            out.append((record.key_id, f"{record.status} key {record.name}"))
    return out


def complete_relationship(incomplete: str) -> list[str]:
    """Shell completion of the eight relationships (their one list: protocol/payloads.py)."""
    from pithauthor.protocol.payloads import RELATIONSHIPS

    return [r for r in RELATIONSHIPS if r.startswith(incomplete.lower())]


def complete_mapping(incomplete: str) -> list[str]:
    """`--map KEY=RELATIONSHIP`: after the '=', the eight relationships (the key is the
    author's own BibTeX key, which only the file knows)."""
    key, sep, rest = incomplete.partition("=")
    if not sep:
        return []
    return [f"{key}={r}" for r in complete_relationship(rest)]


KEY_OPTION = typer.Option(
    None,
    "--key",
    "-k",
    metavar="NAME|KEY_ID",
    autocompletion=complete_key,
    help="Key to sign with: a name or key id (default: the single active key).",
)

PASSPHRASE_FILE_OPTION = typer.Option(
    None,
    "--passphrase-file",
    metavar="PATH",
    help="Read the key passphrase from the first line of PATH ('-' = standard input). "
    "Default: $PITH_PASSPHRASE, else a prompt in a terminal.",
)

BACKUP_PASSPHRASE_FILE_OPTION = typer.Option(
    None,
    "--backup-passphrase-file",
    metavar="PATH",
    help="Passphrase of the backup file ('-' = standard input). "
    "Default: $PITH_BACKUP_PASSPHRASE, else the key passphrase source.",
)

BACKEND_OPTION = typer.Option(
    "auto",
    "--backend",
    metavar="auto|keyring|file",
    help="Where the secret goes: the OS keyring, an encrypted file, or auto "
    "(keyring when one answers, else file).",
)

INSECURE_PLAINTEXT_OPTION = typer.Option(
    False,
    "--insecure-plaintext",
    help="Store the secret key UNENCRYPTED in a 0600 file. Avoid: only for throwaway keys.",
)

JSON_OPTION = typer.Option(False, "--json", help="Print JSON.")

# --- what the signing commands (claim, cite, replicate) share ---------------------------------
RECORD_OPTION = typer.Option(
    None, "--record", help="The paper's record JSON (or `pith number from-arxiv --json`)."
)

OUT_OPTION = typer.Option(
    None, "-o", "--out", metavar="FILE", help="Append the signed events to FILE (JSONL)."
)

EVENT_JSON_OPTION = typer.Option(False, "--json", help="Print the signed event (JSONL).")


# `--lookup`, `--offline`, `--arxiv-api`, `--write-back`, `--choose`, for `pith cite` and
# `pith bib scan`.

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


def run_lookup(reading: BibReading, api_url: str | None, offline: bool) -> LookupResult:
    """Look the entries up, with a progress bar on a terminal and a summary on stderr."""
    from pithauthor.bibliography.lookup import lookup_bibliography

    with _ProgressBar() if sys.stderr.isatty() else nullcontext() as progress:
        result = lookup_bibliography(reading, api_url, offline=offline, progress=progress)
    message(result.summary(offline))
    return result


def settle_ambiguous(result: LookupResult, choose: bool) -> LookupResult:
    """For each `ambiguous` entry with candidates: with `choose` on a terminal, ask the author
    which one it is; otherwise print, for each candidate, the line that settles it by hand."""
    from pithauthor.bibliography.lookup import paste_line, settle

    open_entries = [e for e in result.reading.entries if e.status == "ambiguous"]
    open_entries = [e for e in open_entries if e.lookup_choices]
    if not open_entries:
        return result
    asking = choose and at_terminal()
    if choose and not asking:
        warn("--choose needs a terminal to ask on; the lines to paste are printed instead")
    reading = result.reading
    for entry in open_entries:
        message(
            f"{entry.key} ({entry.source_file}:{entry.line}) is ambiguous: "
            f'"{_shown(entry.title_unicode)}"'
        )
        for number, choice in enumerate(entry.lookup_choices, 1):
            authors = ", ".join(_shown(a) for a in choice.authors)
            why = choice.problem or "fits the title, author and year rules"
            message(
                f'  {number}) {choice.arxiv_id}  "{_shown(choice.title)}" ({authors}; '
                f"arXiv {choice.year}): {why}"
            )
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
    from pithauthor.bibliography.lookup import write_back as write

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
