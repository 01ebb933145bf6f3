"""Typer options shared by the commands that sign: choosing and unlocking a key, the record,
and where the signed events go.

from pithauthor._cli.keyopts import KEY_OPTION, PASSPHRASE_FILE_OPTION

def claim(..., key: str | None = KEY_OPTION, passphrase_file: str | None = PASSPHRASE_FILE_OPTION):
    from pithauthor.keys import load_signing_key, passphrase_source
    signer = load_signing_key(key, passphrase=passphrase_source(passphrase_file))
"""

from __future__ import annotations

import typer

KEY_OPTION = typer.Option(
    None,
    "--key",
    "-k",
    metavar="NAME|KEY_ID",
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
