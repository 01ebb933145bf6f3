"""`pith keys ...`: create, list, export, back up, rotate and delete author keys; prove them."""

from __future__ import annotations

import functools
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

import typer

from pithauthor._cli.app import new_app
from pithauthor._cli.catalog import summary
from pithauthor._cli.options import (
    BACKEND_OPTION,
    BACKUP_PASSPHRASE_FILE_OPTION,
    INSECURE_PLAINTEXT_OPTION,
    JSON_OPTION,
    PASSPHRASE_FILE_OPTION,
    complete_key,
)
from pithauthor._cli.output import ask, at_terminal, data, emit_json, message
from pithauthor.errors import InputError, NetworkError

if TYPE_CHECKING:
    from pithauthor.keys.storage import KeyRecord

keys_app = new_app(summary("keys"), name="keys")

PUBLIC_NAME_HELP = (
    'Your name as on your papers, e.g. "Ada Lovelace": signed into your claims and compared '
    "with the paper's author list (the key's --name is only its label on this machine)."
)
PUBLIC_NAME_OPTION = typer.Option(None, "--public-name", help=PUBLIC_NAME_HELP)
NAME_ARG = typer.Argument(
    None,
    metavar="[NAME|KEY_ID]",
    help="Default: the single active key.",
    autocompletion=complete_key,
)
_FIELDS = (
    ("name", "name"),
    ("public_name", "public_name"),
    ("orcid", "orcid"),
    ("key_id", "key_id"),
    ("fingerprint", "public_key_fingerprint"),
    ("public_key", "public_key_b64"),
    ("status", "status"),
    ("backend", "backend"),
    ("created", "created_at"),
    ("retired", "retired_at"),
    ("replaces", "replaces"),
    ("replaced_by", "replaced_by"),
)


def _print_record(record: KeyRecord, as_json: bool, extra: dict[str, Any] | None = None) -> None:

    doc = {**record.to_json(), **(extra or {})}
    if as_json:
        emit_json(doc)
        return
    for label, key in _FIELDS:
        if doc.get(key) is not None:
            data(f"{label + ':':<13}{doc[key]}")
    for key, value in (extra or {}).items():
        data(f"{key + ':':<13}{value}")


def _sources(passphrase_file: str | None, backup_file: str | None = None) -> Any:
    from pithauthor.keys.passphrase import backup_passphrase_source, passphrase_source

    # each source reads its first line of stdin: two would split one stream between them
    if passphrase_file == "-" and backup_file == "-":
        raise InputError("only one of the passphrases can come from standard input")
    key = passphrase_source(passphrase_file)
    return key, backup_passphrase_source(backup_file, key)


@keys_app.command("generate")
def generate_cmd(
    name: str = typer.Option(..., "--name", help="A short name for the key, e.g. your login."),
    public_name: str | None = PUBLIC_NAME_OPTION,
    orcid: str | None = typer.Option(None, "--orcid", help="Your ORCID iD (checked)."),
    backend: str = BACKEND_OPTION,
    insecure_plaintext: bool = INSECURE_PLAINTEXT_OPTION,
    passphrase_file: str | None = PASSPHRASE_FILE_OPTION,
    as_json: bool = JSON_OPTION,
) -> None:
    """Create a new Ed25519 author key and print its key id and fingerprint."""
    from pithauthor.keys.author import check_public_name, generate

    if public_name is None and at_terminal():
        asked = typer.prompt(
            "Your name as on your papers (signed into your claims; empty: set it later with "
            "`pith keys set --public-name`)",
            default="",
            show_default=False,
            err=True,
        )
        public_name = asked if asked.strip() else None
    if public_name is not None:
        public_name = check_public_name(public_name)  # before a passphrase is asked for
    key_source, _ = _sources(passphrase_file)
    record = generate(
        name,
        public_name=public_name,
        orcid=orcid,
        backend=backend,
        passphrase=key_source,
        insecure_plaintext=insecure_plaintext,
    )
    _print_record(record, as_json)
    if record.public_name is None:
        message(
            "note: no public name: claims are refused until you run "
            'pith keys set --public-name "Your Name"'
        )


@keys_app.command("set")
def set_cmd(
    name: str | None = NAME_ARG,
    public_name: str = typer.Option(..., "--public-name", help=PUBLIC_NAME_HELP),
    as_json: bool = JSON_OPTION,
) -> None:
    """Change a key's public name: the name future claims sign (those made stay as signed)."""
    from pithauthor.keys.author import set_public_name

    _print_record(set_public_name(name, public_name), as_json)


@keys_app.command("list")
def list_cmd(as_json: bool = JSON_OPTION) -> None:
    """List every key, active and retired."""
    from pithauthor.keys.author import list_keys

    records = list_keys()
    if as_json:
        emit_json([r.to_json() for r in records])
        return
    if not records:
        message("no keys yet; create one with: pith keys generate --name NAME")
    for r in records:
        data(f"{r.name}\t{r.status}\t{r.backend}\t{r.key_id}\t{r.created_at}")


@keys_app.command("show")
def show_cmd(
    name: str | None = NAME_ARG,
    check: bool = typer.Option(
        False, "--check", help="Also unlock the secret key and test that it signs."
    ),
    passphrase_file: str | None = PASSPHRASE_FILE_OPTION,
    as_json: bool = JSON_OPTION,
) -> None:
    """Show one key's public facts (never the secret)."""
    from pithauthor.keys.author import load_key, show

    if not check:
        _print_record(show(name), as_json)
        return
    key_source, _ = _sources(passphrase_file)
    key = load_key(name, passphrase=key_source)
    key.self_test()
    _print_record(key.record, as_json, {"unlocks": "yes"})


@keys_app.command("export")
def export_cmd(
    name: str | None = NAME_ARG,
    fmt: Literal["json", "raw"] = typer.Option("json", "--format", help="raw = base64 only."),
) -> None:
    """Print the public key: JSON (with key id, fingerprint, signer id) or raw base64."""
    from pithauthor.keys.author import export_public

    doc = export_public(name)
    if fmt == "raw":
        data(doc["public_key_b64"])
    elif fmt == "json":
        emit_json(doc)
    else:
        raise InputError(f"unknown --format {fmt!r}; use json or raw")


@keys_app.command("backup")
def backup_cmd(
    name: str | None = NAME_ARG,
    out: str = typer.Option(..., "-o", "--out", metavar="FILE", help="Backup file to write."),
    passphrase_file: str | None = PASSPHRASE_FILE_OPTION,
    backup_passphrase_file: str | None = BACKUP_PASSPHRASE_FILE_OPTION,
) -> None:
    """Write one key to a passphrase-encrypted backup file (restore with `pith keys import`)."""
    from pithauthor.fs import check_output_file
    from pithauthor.keys.author import backup

    check_output_file(out, InputError, "a backup file to write")
    key_source, backup_source = _sources(passphrase_file, backup_passphrase_file)
    record = backup(name, Path(out), passphrase=key_source, backup_passphrase=backup_source)
    message(f"key {record.name!r} ({record.key_id}) backed up to {out}")


@keys_app.command("import")
def import_cmd(
    backup_file: str = typer.Argument(..., metavar="BACKUP_FILE"),
    backend: str = BACKEND_OPTION,
    insecure_plaintext: bool = INSECURE_PLAINTEXT_OPTION,
    passphrase_file: str | None = PASSPHRASE_FILE_OPTION,
    backup_passphrase_file: str | None = BACKUP_PASSPHRASE_FILE_OPTION,
    offline: bool = typer.Option(
        False,
        "--offline",
        help="Do not ask ORCID whether the key was retired: restore it as the backup says.",
    ),
    orcid_api: str | None = typer.Option(
        None, "--orcid-api", metavar="URL", help="Default: $PITH_ORCID_API or pub.orcid.org."
    ),
    as_json: bool = JSON_OPTION,
) -> None:
    """Restore a key from a backup file made by `pith keys backup`. A key that this store or
    its ORCID link marks retired is restored retired."""
    from pithauthor.identity.proofs import orcid_api_base, orcid_retirement
    from pithauthor.keys.author import import_backup

    if orcid_api is not None:
        orcid_api_base(orcid_api)  # a bad --orcid-api is one line, before any passphrase
    key_source, backup_source = _sources(passphrase_file, backup_passphrase_file)
    record = import_backup(
        Path(backup_file),
        backup_passphrase=backup_source,
        backend=backend,
        passphrase=key_source,
        insecure_plaintext=insecure_plaintext,
        orcid_retirement=(
            None if offline else functools.partial(orcid_retirement, orcid_api=orcid_api)
        ),
    )
    _print_record(record, as_json)


@keys_app.command("rotate")
def rotate_cmd(
    name: str | None = NAME_ARG,
    backend: str = BACKEND_OPTION,
    insecure_plaintext: bool = INSECURE_PLAINTEXT_OPTION,
    passphrase_file: str | None = PASSPHRASE_FILE_OPTION,
    as_json: bool = JSON_OPTION,
) -> None:
    """Make a new active key; the old one is kept as retired so its signatures still verify."""
    from pithauthor.keys.author import rotate

    key_source, _ = _sources(passphrase_file)
    old, new = rotate(
        name, backend=backend, passphrase=key_source, insecure_plaintext=insecure_plaintext
    )
    if as_json:
        emit_json({"retired": old.to_json(), "active": new.to_json()})
        _rotation_steps(old, new)
        return
    message(f"retired {old.key_id}")
    _print_record(new, False)
    _rotation_steps(old, new)


def _rotation_steps(old: KeyRecord, new: KeyRecord) -> None:
    """Tell the author which identity proofs to update (docs/identity.md)."""
    from pithauthor.identity.proofs import orcid_proof

    retired, active = orcid_proof(old), orcid_proof(new)
    message("update your identity proofs (docs/identity.md):")
    if old.orcid:
        message(
            f"  ORCID {old.orcid}: rename the researcher URL {retired.url} to "
            f"{retired.url_name!r} (keep it: it still proves the claims the old key made), "
            f"and add {active.url_name!r} {active.url}  (pith keys prove orcid)"
        )
    message("  web: publish again: pith keys prove web https://your.site")
    message(
        f"  papers: new manuscripts carry \\pithauthorkey{{{new.key_id}}} "
        "(pith latex inject --author-key); PDFs already on arXiv keep the old key, "
        "which verify reports as retired once your ORCID link or site says so"
    )
    message(
        f"make a new backup now: pith keys backup {new.name} --out FILE (your old backups "
        "hold the retired key, not this one)"
    )


@keys_app.command("delete")
def delete_cmd(
    name: str = typer.Argument(..., metavar="NAME|KEY_ID", autocompletion=complete_key),
    yes: bool = typer.Option(False, "--yes", "-y", help="Do not ask for confirmation."),
) -> None:
    """Delete a key for good (secret and record). Asks first unless --yes."""
    from pithauthor.keys.author import delete, show

    record = show(name)
    if not yes and not at_terminal():
        raise InputError("not deleted: no terminal to confirm on; pass --yes to delete")
    if not yes:
        question = (
            f"Delete key {record.name!r} ({record.key_id}, {record.status})? "
            "Signatures already made stay valid, but it can never sign again"
        )
        if not ask(question):
            raise InputError("not deleted (confirm, or pass --yes)")
    delete(record.key_id)
    message(f"deleted key {record.name!r} ({record.key_id})")


prove_app = new_app(
    "Print what to publish so that anyone can check a key is yours (docs/identity.md).",
    name="prove",
)
keys_app.add_typer(prove_app, name="prove")
PROVE_KEY_OPTION = typer.Option(
    None,
    "--key",
    metavar="NAME|KEY_ID",
    help="Default: the single active key.",
    autocompletion=complete_key,
)


@prove_app.command("orcid")
def prove_orcid_cmd(
    key: str | None = PROVE_KEY_OPTION,
    check: bool = typer.Option(
        False, "--check", help="Also ask ORCID's public API whether the record shows it yet."
    ),
    orcid_api: str | None = typer.Option(
        None, "--orcid-api", metavar="URL", help="Default: $PITH_ORCID_API or pub.orcid.org."
    ),
    as_json: bool = JSON_OPTION,
) -> None:
    """Print the researcher URL to add to your public ORCID record for this key."""
    from pithauthor.identity.proofs import orcid_api_base, orcid_proof
    from pithauthor.keys.author import show

    if check or orcid_api is not None:
        orcid_api_base(orcid_api)  # a bad --orcid-api is one line, before the instructions
    record = show(key)
    if record.orcid is None:
        raise InputError(
            f"key {record.name!r} has no ORCID iD; an ORCID proof binds a key to an iD "
            "(make a key with: pith keys generate --name NAME --orcid ID)"
        )
    proof = orcid_proof(record)
    if as_json:
        emit_json(
            {
                "orcid": proof.orcid,
                "key_id": proof.key_id,
                "url_name": proof.url_name,
                "url": proof.url,
            }
        )
    else:
        message(
            f"On https://orcid.org/{record.orcid} (signed in): Websites & social links, edit, "
            "add a link with visibility Everyone:"
        )
        data(f"Link name: {proof.url_name}")
        data(f"URL:       {proof.url}")
        message("Removing the link later revokes the proof.")
    if check:
        _check_orcid_now(record, orcid_api)


def _check_orcid_now(record: KeyRecord, orcid_api: str | None) -> None:
    from pithauthor.identity.proofs import check_key_on_orcid

    proof = check_key_on_orcid(record, orcid_api)
    if proof.finding is None:
        raise NetworkError(f"{proof.where}: {proof.problem}")
    message(f"{proof.where}: {proof.finding.detail}")
    if proof.finding.standing == "absent":
        raise typer.Exit(1)


@prove_app.command("web")
def prove_web_cmd(
    url: str = typer.Argument(..., help="Your site, e.g. https://lab.example.org"),
    key: str | None = PROVE_KEY_OPTION,
) -> None:
    """Print the /.well-known/pith-keys.json to publish on your site (keys and ORCID iD)."""
    from pithauthor.identity.proofs import web_proof_document
    from pithauthor.keys.author import list_keys, show
    from pithauthor.protocol.identity import well_known_url

    where = well_known_url(url)
    record = show(key)
    # every key of this author (same ORCID iD), retired ones too: the document must keep
    # naming a retired key, or the claims it signed while current would lose their proof
    mine = [
        r
        for r in list_keys()
        if r.key_id == record.key_id or (record.orcid is not None and r.orcid == record.orcid)
    ]
    emit_json(web_proof_document(mine, record.orcid))
    message(f"publish this at {where} (served as application/json, over https)")


def register(app: typer.Typer) -> None:
    """Add `pith keys ...`."""
    app.add_typer(keys_app, name="keys", short_help=summary("keys"))
