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
    from pithauthor._cli.output import data, emit_json
    from pithauthor._core.arxiv_id import ArxivId
    from pithauthor._core.pith_number import PithAlias, PithNumber, parse_reference
    from pithauthor.errors import PithNumberError

    info: dict[str, object]
    looks_arxiv = "/" in ref or "." in ref or ref.lower().startswith("arxiv")
    if looks_arxiv and not ref.lower().startswith("pith"):
        aid = ArxivId.parse(ref)
        info = {
            "kind": "arxiv",
            "arxiv_id": str(aid),
            "id": aid.id,
            "version": aid.version,
            "doi": aid.doi,
        }
    else:
        try:
            parsed = parse_reference(ref)
        except PithNumberError:
            raise
        if isinstance(parsed, PithAlias):
            info = {"kind": "alias", "alias": str(parsed), "prefix": parsed.prefix}
        else:
            assert isinstance(parsed, PithNumber)
            info = {
                "kind": "pith_number",
                "pith_number": str(parsed),
                "body": parsed.body,
                "year": parsed.year,
                "short": parsed.short,
                "aliases": [parsed.alias(n) for n in (8, 12, 16)],
                "url": parsed.url(),
            }
    if as_json:
        emit_json(info)
    else:
        for key, value in info.items():
            data(f"{key}: {value}")


def register(app: typer.Typer) -> None:
    app.add_typer(number_app, name="number")
