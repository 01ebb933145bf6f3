"""Typer options shared by the commands that sign: choosing and unlocking a key, the record,
and where the signed events go.

from pithauthor._cli.keyopts import KEY_OPTION, PASSPHRASE_FILE_OPTION

def claim(..., key: str | None = KEY_OPTION, passphrase_file: str | None = PASSPHRASE_FILE_OPTION):
    from pithauthor.keys import load_signing_key
    from pithauthor.keys import passphrase_source
    signer = load_signing_key(key, passphrase=passphrase_source(passphrase_file))
"""

from __future__ import annotations

import typer


def complete_key(incomplete: str) -> list[tuple[str, str]]:
    """Shell completion of a key: the names (and key ids) in the key store, each with its status.

    It reads only the public key list, never a secret; a missing or damaged store completes to
    nothing rather than to file names or a traceback in the middle of the author's command line.
    """
    from pithauthor.errors import PithError
    from pithauthor.keys import known_keys

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
    """Shell completion of the eight relationships (the one list in _core/relationships.py)."""
    from pithauthor.protocol import RELATIONSHIPS

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
