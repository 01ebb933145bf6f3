"""`pith bib scan`: what `pith cite` would read from a bibliography, without signing anything."""

from __future__ import annotations

from pathlib import Path

import typer

from pithauthor._cli import options
from pithauthor._cli.app import new_app
from pithauthor._cli.options import (
    ARXIV_API_OPTION,
    CHOOSE_OPTION,
    LOOKUP_OPTION,
    OFFLINE_OPTION,
    WRITE_BACK_OPTION,
    complete_mapping,
    complete_relationship,
)
from pithauthor._cli.output import data, emit_json, warn

_FAILING = ("parse_error", "invalid_identifier", "invalid_relationship")


def register(app: typer.Typer) -> None:
    """Add the `bib` command group to `app`."""
    bib = new_app("Inspect bibliographies: what `pith cite` would read, without signing.")
    app.add_typer(bib, name="bib")

    @bib.command("scan")
    def scan(
        files: list[Path] = typer.Argument(..., metavar="REFS.bib...", help="BibTeX files."),
        only_cited: Path | None = typer.Option(
            None,
            "--only-cited",
            metavar="MAIN.tex|MAIN.aux",
            help="Keep only the entries this manuscript cites (others are 'skipped').",
        ),
        relationship: str = typer.Option(
            "cites",
            "--relationship",
            autocompletion=complete_relationship,
            help="Default relationship for every entry.",
        ),
        mapping: list[str] = typer.Option(
            [],
            "--map",
            metavar="KEY=RELATIONSHIP",
            autocompletion=complete_mapping,
            help="Relationship for one entry.",
        ),
        as_json: bool = typer.Option(False, "--json", help="Print the rows as JSON."),
        lookup: bool = LOOKUP_OPTION,
        offline: bool = OFFLINE_OPTION,
        arxiv_api: str | None = ARXIV_API_OPTION,
        write_back: bool = WRITE_BACK_OPTION,
        choose: bool = CHOOSE_OPTION,
    ) -> None:
        """One row per entry: its identifier ('found') or why it has none.

        Exit 0 when no entry is a parse error, an invalid identifier or an invalid
        relationship; 1 when some are; 2 when a file cannot be read or an option is wrong;
        3 when --lookup cannot reach arXiv's API.
        """
        from pithauthor.bibliography import (
            parse_relationship_map,
            read_bibliographies,
            render_table,
            rows_as_json,
            source_counts,
            status_counts,
        )

        options.check_lookup_options(lookup, offline, write_back, choose)
        reading = read_bibliographies(
            files,
            default_relationship=relationship,
            relationship_map=parse_relationship_map(mapping),
            only_cited=None if only_cited is None else options.cited(only_cited),
        )
        for text in reading.warnings:
            warn(text)
        if reading.unknown_map_keys:
            warn(f"--map names keys no entry has: {', '.join(reading.unknown_map_keys)}")
        if reading.missing_cited:
            warn(f"cited but in no bibliography: {', '.join(reading.missing_cited)}")
        lookup_stats = None
        if lookup:
            result = options.run_lookup(reading, arxiv_api, offline)
            result = options.settle_ambiguous(result, choose)
            lookup_stats = result.stats()
            reading = result.reading
            if write_back:
                options.write_back(result)
        rows = reading.rows()
        if as_json:
            emit_json(
                {
                    "files": [str(path) for path in reading.files],
                    "counts": status_counts(rows),
                    "sources": source_counts(rows),
                    "rows": rows_as_json(rows),
                    **({"lookup": lookup_stats} if lookup_stats else {}),
                }
            )
        else:
            data(render_table(rows))
        if any(row.status in _FAILING for row in rows):
            raise typer.Exit(code=1)
