"""`pith cite`: sign that your paper cites another, and how."""

from __future__ import annotations

import typer

from pithauthor._cli.keyopts import KEY_OPTION, PASSPHRASE_FILE_OPTION


def cite(
    bibfiles: list[str] = typer.Argument(
        None, help="Bibliography files to sign every reference of (not available yet)."
    ),
    citing: str = typer.Option(..., "--from", help="Your (citing) paper: a Pith Number."),
    citing_record: str | None = typer.Option(
        None, "--from-record", help="The citing paper's record JSON, if --from is an arXiv id."
    ),
    cited: str | None = typer.Option(
        None, "--to", help="The cited paper: a Pith Number or an arXiv id."
    ),
    record: str | None = typer.Option(
        None, "--record", help="The cited paper's record JSON (or from-arxiv --json output)."
    ),
    relationship: str = typer.Option(
        "cites",
        "--relationship",
        help="supports, refutes, extends, uses_method, depends_on, replaces, compares or cites.",
    ),
    citation_key: str | None = typer.Option(
        None, "--citation-key", help="The key your paper cites it by."
    ),
    context: str | None = typer.Option(
        None, "--context", help="Where and how it is cited (at most 500 characters)."
    ),
    key: str | None = KEY_OPTION,
    passphrase_file: str | None = PASSPHRASE_FILE_OPTION,
    out: str | None = typer.Option(None, "--out", help="Append the signed events to FILE.jsonl."),
    as_json: bool = typer.Option(False, "--json", help="Print the signed events (JSONL)."),
) -> None:
    """Sign a citation of one paper (--to) by yours (--from)."""
    from pithauthor._cli.output import message
    from pithauthor._cli.signing import (
        check_destination,
        citing_number,
        deliver,
        load_key,
        subject_for,
        summary,
    )
    from pithauthor.errors import InputError
    from pithauthor.sign import RELATIONSHIPS, sign_citation

    if bibfiles:
        raise InputError("bibliography signing is not available yet; use --to CITED")
    if cited is None:
        raise InputError("give --to CITED (the paper your paper cites)")
    if relationship not in RELATIONSHIPS:
        raise InputError(
            f"--relationship {relationship!r} is not one of {', '.join(RELATIONSHIPS)}"
        )
    check_destination(out, as_json)
    citing_paper = citing_number(citing, citing_record)
    cited_paper = subject_for(cited, record)
    signer = load_key(key, passphrase_file)
    event = sign_citation(
        signer,
        cited_paper,
        citing_paper,
        relationship,
        citation_key=citation_key,
        context=context,
    )
    message(summary(event, deliver([event], out, as_json)))


def register(app: typer.Typer) -> None:
    app.command("cite")(cite)
