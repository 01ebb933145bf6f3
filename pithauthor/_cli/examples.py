"""An example or two for every command's help, in one table (shown under "Examples:")."""

from __future__ import annotations

import typer

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
        "pith claim 2302.12445 --position 2",
        "pith claim 2302.12445 --position 2 --submit --yes",
        "pith claim 2302.12445 --record record.json -o claim.jsonl",
        "pith claim 2302.12445 --position 3 --replace",
    ),
    "cite": (
        "pith cite refs.bib --from 2302.12445 --only-cited main.tex --lookup",
        "pith cite --from 2302.12445 --to 2204.10562 --relationship uses_method",
    ),
    "replicate": (
        "pith replicate 2302.12445 --kind replication --outcome reproduced --summary 'Re-ran it'"
        " --artifact https://example.org/log.txt --sha256 HEX",
    ),
    "withdraw": ("pith withdraw sha256:1da6c9b7", "pith withdraw sha256:1da6c9b7 --submit"),
    "submit": ("pith submit", "pith submit events.jsonl --registry http://127.0.0.1:8787"),
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
