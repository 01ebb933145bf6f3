"""`pith number`: Pith Numbers from arXiv metadata, and what an identifier is."""

from __future__ import annotations

import typer

from pithauthor._cli.app import new_app
from pithauthor._cli.catalog import summary
from pithauthor._cli.output import data, emit_json, message
from pithauthor.errors import InputError

number_app = new_app(summary("number"))


@number_app.command("from-arxiv")
def from_arxiv(
    file: str = typer.Argument(..., help="arXivRaw XML (OAI-PMH) or JSON metadata; '-' for stdin."),
    as_json: bool = typer.Option(False, "--json", help="Print number, hash and canonical record."),
    next_version: bool = typer.Option(
        False, "--next-version", help="The number the next version will get (not yet on arXiv)."
    ),
    title: str | None = typer.Option(None, "--title", help="With --next-version: its title."),
    abstract_file: str | None = typer.Option(
        None, "--abstract-file", metavar="FILE", help="With --next-version: its abstract."
    ),
    categories: str | None = typer.Option(
        None, "--categories", metavar="'PRIMARY OTHER...'", help="With --next-version."
    ),
    license: str | None = typer.Option(
        None, "--license", metavar="URL", help="With --next-version."
    ),
) -> None:
    """Compute the Pith Number of a paper from its arXiv metadata, offline."""
    from pithauthor.fs import MAX_METADATA_BYTES, read_user_text
    from pithauthor.protocol.record import build_canonical_record, next_version_metadata, summarise
    from pithauthor.verify import read_arxiv_metadata

    meta = read_arxiv_metadata(file)
    changes = (title, abstract_file, categories, license)
    if next_version:
        abstract = None
        if abstract_file is not None:
            abstract = read_user_text(
                abstract_file, InputError, "an abstract (text)", limit=MAX_METADATA_BYTES
            )
            if not abstract.strip():
                raise InputError(f"{abstract_file} is empty, not an abstract")
        meta = next_version_metadata(
            meta,
            title=title,
            abstract=abstract,
            categories=categories.split() if categories is not None else None,
            license=license,
        )
        message(
            f"v{meta.latest_version} of arXiv:{meta.arxiv_id.id}, once arXiv has it with this "
            "metadata (v1's submission time is kept)"
        )
    elif any(c is not None for c in changes):
        raise InputError("--title, --abstract-file, --categories, --license go with --next-version")
    summary = summarise(build_canonical_record(meta))
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
    from pithauthor.protocol.ids import classify_reference

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
    app.add_typer(number_app, name="number", short_help=summary("number"))
