"""`pith number`: Pith Numbers from arXiv metadata, and what an identifier is."""

from __future__ import annotations

import typer

from pithauthor._cli.app import new_app

number_app = new_app("Compute and inspect Pith Numbers.")


@number_app.command("from-arxiv")
def from_arxiv(
    file: str = typer.Argument(..., help="arXivRaw XML (OAI-PMH) or JSON metadata; '-' for stdin."),
    as_json: bool = typer.Option(False, "--json", help="Print number, hash and canonical record."),
) -> None:
    """Compute the Pith Number of a paper from its arXiv metadata, offline."""
    from pithauthor._cli.output import data, emit_json
    from pithauthor.records import build_canonical_record, read_arxiv_metadata, summarise

    summary = summarise(build_canonical_record(read_arxiv_metadata(file)))
    if as_json:
        emit_json(summary)
    else:
        data(summary["pith_number"])


@number_app.command("parse")
def parse(
    ref: str = typer.Argument(..., help="A Pith Number, a short alias, or an arXiv identifier."),
    as_json: bool = typer.Option(False, "--json", help="Print the forms as JSON."),
) -> None:
    """Say what an identifier is and print its normal forms."""
    from pithauthor import classify_reference
    from pithauthor._cli.output import data, emit_json

    info: dict[str, object]
    named = classify_reference(ref)
    if named.arxiv is not None:
        aid = named.arxiv
        info = {
            "kind": "arxiv",
            "arxiv_id": str(aid),
            "id": aid.id,
            "version": aid.version,
            "doi": aid.doi,
        }
    elif named.alias is not None:
        info = {"kind": "alias", "alias": str(named.alias), "prefix": named.alias.prefix}
    else:
        number = named.number
        assert number is not None
        info = {
            "kind": "pith_number",
            "pith_number": str(number),
            "body": number.body,
            "year": number.year,
            "short": number.short,
            "aliases": [number.alias(n) for n in (8, 12, 16)],
            "url": number.url(),
        }
    if as_json:
        emit_json(info)
    else:
        for key, value in info.items():
            data(f"{key}: {value}")


def register(app: typer.Typer) -> None:
    app.add_typer(number_app, name="number")
