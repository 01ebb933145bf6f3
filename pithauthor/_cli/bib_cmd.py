"""`pith bib scan`: what `pith cite` would read from a bibliography, without signing anything.

Its plain forms (files and the options in PLAIN_OPTIONS) are answered by pith's entry point
before Typer is loaded (`pithauthor._cli.entry`): importing Typer and pydantic takes longer
than the whole scan of a 300-entry file. So this module loads Typer only in
`register`, and the Typer command and the entry point run the same `read` and `report`.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any, Final, NamedTuple

from pithauthor._cli.output import data, emit_json, warn

if TYPE_CHECKING:
    import typer

    from pithauthor.bibliography.reading import BibReading

_FAILING = ("parse_error", "invalid_identifier", "invalid_relationship")


class PlainOption(NamedTuple):
    """An option of `pith bib scan` the entry point reads itself: the command's parameter it
    sets, its kind (FLAG, VALUE, or MANY: repeatable), its default and the value's type."""

    parameter: str
    kind: str
    default: Any
    type: type


FLAG, VALUE, MANY = "flag", "value", "many"

#: The options of the plain forms, as the Typer command declares them in `register`
#: (tests/cli/test_bib_scan_fast_path.py compares the two). Every other option (--lookup and
#: its company, --help) is read by Typer.
PLAIN_OPTIONS: Final[dict[str, PlainOption]] = {
    "--only-cited": PlainOption("only_cited", VALUE, None, Path),
    "--relationship": PlainOption("relationship", VALUE, "cites", str),
    "--map": PlainOption("mapping", MANY, (), str),
    "--json": PlainOption("as_json", FLAG, False, bool),
}


def plain_form(
    args: list[str], table: dict[str, PlainOption] = PLAIN_OPTIONS
) -> dict[str, Any] | None:
    """The parameters of `pith bib scan ARGS` (files, then PLAIN_OPTIONS' parameters) when
    ARGS is a plain form, else None: Typer then reads ARGS (and prints their errors). With
    another `table` (`pith cite`'s), the same rules for that command's options.

    Plain: at least one file; no word starting with `-` but the options of PLAIN_OPTIONS
    (`--opt VALUE` or `--opt=VALUE`), each value non-empty and not starting with `-`, an
    option other than --map at most once; every word valid UTF-8. Anything else, though Typer
    might read it alike (`--`, `-h`, a file named `-x`, a repeated option), is left to Typer."""
    values: dict[str, Any] = {
        o.parameter: list(o.default) if o.kind == MANY else o.default for o in table.values()
    }
    files: list[Path] = []
    seen: set[str] = set()
    words = iter(args)
    for word in words:
        if not _plain(word):
            return None
        if not word.startswith("-"):
            files.append(Path(word))
            continue
        name, equals, value = word.partition("=")
        option = table.get(name)
        if option is None or (option.kind != MANY and name in seen):
            return None
        seen.add(name)
        if option.kind == FLAG:
            if equals:
                return None
            values[option.parameter] = True
            continue
        if not equals:
            value = next(words, "")
        if not _plain(value) or value.startswith("-"):
            return None
        if option.kind == MANY:
            values[option.parameter].append(option.type(value))
        else:
            values[option.parameter] = option.type(value)
    return {"files": files, **values} if files else None


def _plain(word: str) -> bool:
    """Non-empty, and valid UTF-8 (a file name that is not arrives with surrogate escapes)."""
    try:
        word.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return bool(word)


def run_plain(files: list[Path], as_json: bool, **reading: Any) -> int:
    """`pith bib scan` of a plain form (`plain_form`'s parameters): its exit code."""
    return report(read(files, **reading), as_json)


def read(
    files: list[Path], only_cited: Path | None, relationship: str, mapping: list[str]
) -> BibReading:
    """Read the bibliographies, with a warning on stderr for each thing worth one."""
    from pithauthor.bibliography.reading import parse_relationship_map, read_bibliographies

    reading = read_bibliographies(
        files,
        default_relationship=relationship,
        relationship_map=parse_relationship_map(mapping),
        only_cited=None if only_cited is None else cited(only_cited),
    )
    for text in reading.warnings:
        warn(text)
    if reading.unknown_map_keys:
        warn(f"--map names keys no entry has: {', '.join(reading.unknown_map_keys)}")
    if reading.missing_cited:
        warn(f"cited but in no bibliography: {', '.join(reading.missing_cited)}")
    return reading


def report(reading: BibReading, as_json: bool, lookup_stats: Any = None) -> int:
    """Print the rows (a table or JSON); the exit code: 1 when some row failed, else 0."""
    from pithauthor.bibliography.reading import (
        render_table,
        rows_as_json,
        source_counts,
        status_counts,
    )

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
    return 1 if any(row.status in _FAILING for row in rows) else 0


def cited(path: Path) -> set[str]:
    """The keys the manuscript cites (`--only-cited MAIN.tex|MAIN.aux`, for `pith cite` and
    `pith bib scan`); a warning names the citation macros it defines that could not be
    followed (their entries may be `skipped`: the .aux is exact)."""
    from pithauthor.bibliography.cited import read_citations

    found = read_citations(Path(path))
    if found.unfollowed:
        names = "; ".join(f"\\{name}: {why}" for name, why in sorted(found.unfollowed.items()))
        warn(
            f"--only-cited {path}: citation macros not followed ({names}); the entries they "
            "cite may be 'skipped': give the .aux (after a LaTeX run) for the exact list"
        )
    return set(found.keys)


def register(app: typer.Typer) -> None:
    """Add the `bib` command group to `app`."""
    import typer  # here, not at the top: the entry point's plain `bib scan` runs without it

    from pithauthor._cli import options
    from pithauthor._cli.access import check_lookup_options
    from pithauthor._cli.app import new_app
    from pithauthor._cli.catalog import summary

    bib = new_app(summary("bib"))
    app.add_typer(bib, name="bib", short_help=summary("bib"))

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
            autocompletion=options.complete_relationship,
            help="Default relationship for every entry.",
        ),
        mapping: list[str] = typer.Option(
            [],
            "--map",
            metavar="KEY=RELATIONSHIP",
            autocompletion=options.complete_mapping,
            help="Relationship for one entry.",
        ),
        as_json: bool = typer.Option(False, "--json", help="Print the rows as JSON."),
        lookup: bool = options.LOOKUP_OPTION,
        offline: bool = options.OFFLINE_OPTION,
        arxiv_api: str | None = options.ARXIV_API_OPTION,
        write_back: bool = options.WRITE_BACK_OPTION,
        choose: bool = options.CHOOSE_OPTION,
    ) -> None:
        """One row per entry: its identifier ('found') or why it has none.

        Exit 0 when no entry is a parse error, an invalid identifier or an invalid
        relationship; 1 when some are; 2 when a file cannot be read or an option is wrong;
        3 when --lookup cannot reach arXiv's API.
        """
        check_lookup_options(lookup, offline, write_back, choose)
        reading = read(files, only_cited, relationship, mapping)
        lookup_stats = None
        if lookup:
            result = options.run_lookup(reading, arxiv_api, offline)
            result = options.settle_ambiguous(result, choose)
            lookup_stats = result.stats()
            reading = result.reading
            if write_back:
                options.write_back(result)
        code = report(reading, as_json, lookup_stats)
        if code:
            raise typer.Exit(code=code)
