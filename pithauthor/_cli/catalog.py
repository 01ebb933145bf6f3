"""The text `pith` shows about its commands that is kept apart from them: every top-level
entry's one-line summary (ENTRIES), and an example or two for every command's help (EXAMPLES,
shown under "Examples:").

ENTRIES names each top-level entry of `pith`, whether it is a command or a group, the module
that registers it, and its one-line summary, in the order `pith --help` lists them.

This table is the one home of each summary: the command modules register their entries with
`short_help=summary(NAME)` (a group's help is its summary too), and `pith --help` lists the
entries from this table alone, importing no command module (importing all of them
was most of what `pith --help` cost beyond `import typer`). `pith NAME ...` imports NAME's
module only. tests/test_startup_imports.py checks that the modules register exactly these
entries, in this order, with these summaries.

A summary fits one line of `pith --help` at 80 columns (64 characters beside the widest name);
it is shown whole, never cut with "...". This module imports no command module and not
Typer: `pith --help` reads it before anything else.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Literal, NamedTuple

if TYPE_CHECKING:
    import typer


class Entry(NamedTuple):
    name: str
    kind: Literal["command", "group"]
    module: str  # in pithauthor._cli
    summary: str


# Commands first, then groups: Typer lists a group's commands before its subgroups.
ENTRIES: tuple[Entry, ...] = (
    Entry(
        "completion",
        "command",
        "completion_cmd",
        "Print the shell completion script for SHELL.",
    ),
    Entry(
        "doctor",
        "command",
        "doctor_cmd",
        "Check keys, backups, TeX, the outbox, registries, ORCID proofs.",
    ),
    Entry(
        "verify",
        "command",
        "verify_cmd",
        "Verify a document; exit 1 when any check fails.",
    ),
    Entry(
        "badge",
        "command",
        "badge_cmd",
        "Print a badge snippet for a README or web page.",
    ),
    Entry(
        "claim",
        "command",
        "claim_cmd",
        "Sign an author attestation of SUBJECT with your key.",
    ),
    Entry(
        "cite",
        "command",
        "cite_cmd",
        "Sign a citation (--to), or one for every paper a .bib cites.",
    ),
    Entry(
        "replicate",
        "command",
        "replicate_cmd",
        "Sign a replication record of SUBJECT.",
    ),
    Entry(
        "anchor",
        "command",
        "anchor_cmd",
        "Anchor a paper's record in Bitcoin (OpenTimestamps) and sign it.",
    ),
    Entry(
        "withdraw",
        "command",
        "withdraw_cmd",
        "Sign the withdrawal of one of your events (EVENT_ID).",
    ),
    Entry(
        "submit",
        "command",
        "submit_cmd",
        "Send every pending event of the outbox to its registry.",
    ),
    Entry(
        "timestamp",
        "command",
        "timestamp_cmd",
        "Fetch the trusted time (RFC 3161, OpenTimestamps) events lack.",
    ),
    Entry(
        "archive",
        "command",
        "archive_cmd",
        "Capture a paper on the Internet Archive, checked, and sign it.",
    ),
    Entry(
        "fetch",
        "command",
        "fetch_cmd",
        "Fetch a record, bundle or merged state; each is verified first.",
    ),
    Entry(
        "status",
        "command",
        "status_cmd",
        "A paper's page: its record, claims, citations and replications.",
    ),
    Entry(
        "papers",
        "command",
        "status_cmd",
        "The papers this machine's keys claimed, cited or replicated.",
    ),
    Entry(
        "keys",
        "group",
        "keys_cmd",
        "Create, list, export, back up, rotate and delete author keys.",
    ),
    Entry(
        "number",
        "group",
        "number_cmd",
        "Compute and inspect Pith Numbers.",
    ),
    Entry(
        "bib",
        "group",
        "bib_cmd",
        "Inspect bibliographies: what `pith cite` reads, without signing.",
    ),
    Entry(
        "latex",
        "group",
        "latex_cmd",
        "Add the Pith badge to a LaTeX manuscript and pack it for arXiv.",
    ),
    Entry(
        "outbox",
        "group",
        "outbox_cmd",
        "Events waiting for, accepted by or rejected by their registry.",
    ),
    Entry(
        "auth",
        "group",
        "auth_cmd",
        "Sign-in tokens for registries that want them.",
    ),
    Entry(
        "registry",
        "group",
        "registry_cmd",
        "Run a local registry for tests, dry runs and your own mirror.",
    ),
)

NAMES: frozenset[str] = frozenset(entry.name for entry in ENTRIES)


def summary(name: str) -> str:
    """The one-line summary of the top-level entry `name` (KeyError for no such entry)."""
    for entry in ENTRIES:
        if entry.name == name:
            return entry.summary
    raise KeyError(name)


def modules() -> list[str]:
    """The command modules, each once, in the order of their first entry: registering them in
    this order adds the entries in the order of ENTRIES (the test checks it)."""
    return list(dict.fromkeys(entry.module for entry in ENTRIES))


NUMBER = "pith:2023:NFG5PAOXQUVIWDX5F7YSYYL7EW"

EXAMPLES: dict[str, tuple[str, ...]] = {
    "doctor": ("pith doctor", "pith doctor --json"),
    "completion": (
        "pith completion bash > ~/.local/share/bash-completion/completions/pith",
        "pith completion zsh > ~/.zfunc/_pith",
    ),
    "verify": (
        "pith verify state.json --strict",
        "pith verify claim.jsonl --orcid 0000-0002-1825-0097",
    ),
    "badge": (f"pith badge {NUMBER}", f"pith badge {NUMBER} -f html"),
    "claim": (
        "pith claim 2302.12445 --position 6",
        "pith claim 2302.12445 --position 6 --submit --yes",
        "pith claim 2302.12445 --record record.json -o claim.jsonl",
        "pith claim 2302.12445 --position 6 --replace",
    ),
    "cite": (
        "pith cite refs.bib --from 2302.12445 --only-cited main.tex --lookup",
        "pith cite --from 2302.12445 --to 2204.10562 --relationship uses_method",
    ),
    "replicate": (
        "pith replicate 2302.12445 --kind replication --outcome reproduced --summary 'Re-ran it'"
        " --artifact https://example.org/log.txt --sha256 HEX",
    ),
    "anchor": ("pith anchor 2302.12445", "pith anchor 2302.12445 --submit --yes"),
    "withdraw": ("pith withdraw sha256:1da6c9b7", "pith withdraw sha256:1da6c9b7 --submit"),
    "submit": ("pith submit", "pith submit events.jsonl --registry http://127.0.0.1:8787"),
    "timestamp": ("pith timestamp", "pith timestamp events.jsonl --json"),
    "archive": (
        "pith archive 2302.12445 --submit",
        "pith archive 2302.12445 --code https://github.com/lzhangbv/dear_pytorch -o archive.jsonl",
    ),
    "fetch": ("pith fetch 2302.12445", "pith fetch 2302.12445 --what state -o state.json"),
    "status": ("pith status 2302.12445", "pith status pith:NFG5PAOX --json"),
    "papers": ("pith papers", "pith papers --json"),
    "keys generate": (
        "pith keys generate --name ada --public-name 'Ada Lovelace' --orcid 0000-0002-1825-0097",
        "pith keys generate --name ci --backend file --passphrase-file pw.txt",
    ),
    "keys list": ("pith keys list", "pith keys list --json"),
    "keys set": (
        "pith keys set --public-name 'Ada Lovelace'",
        "pith keys set ada --public-name 'A. Lovelace'",
    ),
    "keys show": ("pith keys show ada", "pith keys show ada --check"),
    "keys export": ("pith keys export ada", "pith keys export ada --format raw"),
    "keys backup": ("pith keys backup ada -o ada.backup",),
    "keys import": ("pith keys import ada.backup",),
    "keys rotate": ("pith keys rotate ada",),
    "keys delete": ("pith keys delete old-key --yes",),
    "keys prove orcid": ("pith keys prove orcid", "pith keys prove orcid --check"),
    "keys prove web": ("pith keys prove web https://lab.example.org",),
    "number from-arxiv": (
        "pith number from-arxiv arxivraw.xml",
        "pith number from-arxiv arxivraw.xml --next-version --title 'The new title'",
    ),
    "number parse": ("pith number parse 2302.12445v2", f"pith number parse {NUMBER} --json"),
    "bib scan": (
        "pith bib scan refs.bib --only-cited main.tex",
        "pith bib scan refs.bib --lookup --write-back",
    ),
    "latex inject": (
        f"pith latex inject paper/ --pith {NUMBER} --check",
        "pith latex inject paper/main.tex --pith 2302.12445 --author-key --dry-run",
        f"pith latex inject paper/ --pith {NUMBER} --placement margin",
    ),
    "latex arxiv": ("pith latex arxiv paper/ -o paper.tar.gz",),
    "latex sty": ("pith latex sty --copy paper/", "pith latex sty --install"),
    "outbox list": (
        "pith outbox list",
        "pith outbox list --state rejected --json",
        "pith outbox list --registry http://127.0.0.1:8787",
    ),
    "outbox retry": ("pith outbox retry", "pith outbox retry sha256:1da6..."),
    "outbox drop": (
        "pith outbox drop --accepted",
        "pith outbox drop --pending --registry http://127.0.0.1:8787",
    ),
    "outbox recover": ("pith outbox recover",),
    "auth login": ("pith auth login --registry https://pith.science --token-file token.txt",),
    "auth logout": ("pith auth logout --registry https://pith.science",),
    "auth status": ("pith auth status",),
    "registry serve": ("pith registry serve --examples", "pith registry serve --port 8787"),
    "registry add": ("pith registry add arxivraw.xml", "pith registry add --examples"),
    "registry approve": ("pith registry approve", "pith registry approve sha256:1da6c9b7"),
}


def add_examples(app: typer.Typer, prefix: str = "") -> None:
    """Put each command's examples in its help epilog (`\\b` keeps the lines as they are)."""
    for command in app.registered_commands:
        name = command.name or (command.callback.__name__ if command.callback else "")
        lines = EXAMPLES.get(f"{prefix}{name}".replace("_", "-"))
        if lines:
            command.epilog = "\b\nExamples:\n" + "\n".join(f"  {line}" for line in lines)
    for group in app.registered_groups:
        sub = group.typer_instance
        if sub is None:
            continue
        group_name = group.name or sub.info.name
        if isinstance(group_name, str):
            add_examples(sub, f"{prefix}{group_name} ")
