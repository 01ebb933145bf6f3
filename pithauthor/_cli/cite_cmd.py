"""`pith cite`: sign that your paper cites another (--to), or every reference of a bibliography."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, NamedTuple

import typer

from pithauthor._cli import options
from pithauthor._cli.bib_cmd import cited
from pithauthor._cli.catalog import summary
from pithauthor._cli.options import (
    ARXIV_API_OPTION,
    CHOOSE_OPTION,
    KEY_OPTION,
    LOOKUP_OPTION,
    OUT_OPTION,
    PASSPHRASE_FILE_OPTION,
    REGISTRY_OPTION,
    SUBMIT_OPTION,
    TRUST_LOCAL_OPTION,
    TRUST_MANIFEST_OPTION,
    WRITE_BACK_OPTION,
    YES_OPTION,
    check_lookup_options,
    complete_mapping,
    complete_relationship,
    registry_access,
)
from pithauthor._cli.output import emit_json, message, warn
from pithauthor._cli.signing import Output
from pithauthor.errors import InputError

if TYPE_CHECKING:
    from collections.abc import Sequence

    from pithauthor.protocol import Signer


def cite(
    bibfiles: list[str] = typer.Argument(
        None,
        metavar="REFS.bib",
        help="Sign a citation for every reference of these bibliographies that has a Pith Number.",
    ),
    citing: str = typer.Option(
        ..., "--from", help="Your (citing) paper: a Pith Number or an arXiv id."
    ),
    citing_record: str | None = typer.Option(
        None, "--from-record", help="The citing paper's record JSON, instead of a look-up."
    ),
    cited: str | None = typer.Option(
        None, "--to", help="One cited paper: a Pith Number or an arXiv id."
    ),
    record: str | None = typer.Option(
        None, "--record", help="With --to: the cited paper's record JSON (or from-arxiv --json)."
    ),
    relationship: str = typer.Option(
        "cites",
        "--relationship",
        autocompletion=complete_relationship,
        help="supports, refutes, extends, uses_method, depends_on, replaces, compares or cites "
        "(with bibliographies: the default for entries without their own).",
    ),
    mapping: list[str] = typer.Option(
        [],
        "--map",
        metavar="KEY=RELATIONSHIP",
        autocompletion=complete_mapping,
        help="The relationship of one entry; repeatable.",
    ),
    only_cited: str | None = typer.Option(
        None,
        "--only-cited",
        metavar="MAIN.tex|MAIN.aux",
        help="Keep only the entries this manuscript cites.",
    ),
    parallel: int = typer.Option(8, "--parallel", min=1, max=64, help="Look-ups in flight."),
    citation_key: str | None = typer.Option(
        None, "--citation-key", help="With --to: the key your paper cites it by."
    ),
    context: str | None = typer.Option(
        None, "--context", help="With --to: where and how it is cited (at most 500 characters)."
    ),
    key: str | None = KEY_OPTION,
    passphrase_file: str | None = PASSPHRASE_FILE_OPTION,
    out: str | None = OUT_OPTION,
    as_json: bool = typer.Option(
        False,
        "--json",
        help="Print the signed event (--to), or the report's rows (bibliographies).",
    ),
    submit: bool = SUBMIT_OPTION,
    yes: bool = YES_OPTION,
    registry: str | None = REGISTRY_OPTION,
    trust_manifest: list[str] = TRUST_MANIFEST_OPTION,
    trust_local: bool = TRUST_LOCAL_OPTION,
    lookup: bool = LOOKUP_OPTION,
    offline: bool = typer.Option(
        False,
        "--offline",
        help="A full --from number is checked with a cached record only, and signed unchecked "
        "when none is cached (without it, a number no record checks is refused); with "
        "--lookup: use only answers cached by earlier runs.",
    ),
    arxiv_api: str | None = ARXIV_API_OPTION,
    write_back: bool = WRITE_BACK_OPTION,
    choose: bool = CHOOSE_OPTION,
) -> None:
    """Sign a citation of one paper (--to) by yours (--from), or of every paper your
    bibliography cites. With bibliographies: exit 0 when every entry with an identifier was
    signed, 1 when some were not (unresolved, invalid, unparsable)."""
    from pithauthor.registry import check_destination

    if bibfiles and cited is not None:
        raise InputError("give bibliography files or --to CITED, not both")
    if not bibfiles and cited is None:
        raise InputError("give --to CITED (the paper your paper cites), or bibliography files")
    if not bibfiles and (mapping or only_cited):
        raise InputError("--map and --only-cited go with bibliography files")
    if bibfiles and (record or citation_key or context):
        raise InputError("--record, --citation-key and --context go with --to")
    if not bibfiles and lookup:
        raise InputError("--lookup goes with bibliography files")
    # --offline alone is allowed here: it also lets a --from number go unchecked
    check_lookup_options(lookup, offline and lookup, write_back, choose)
    check_destination(out)
    with registry_access(registry, trust_manifest, trust_local) as access:
        print_events = as_json and not bibfiles
        output = Output(key, passphrase_file, out, print_events, submit, access, yes=yes)
        if bibfiles:
            lookup_with = _LookupWith(lookup, offline, arxiv_api, write_back, choose)
            ok = _cite_bibliographies(bibfiles, citing, citing_record, relationship, mapping,
                                      only_cited, parallel, as_json, output,
                                      lookup_with)  # fmt: skip
            if not ok:
                raise typer.Exit(1)
        else:
            assert cited is not None
            _cite_one(citing, citing_record, cited, record, relationship, citation_key, context,
                      output, offline)  # fmt: skip


def _cite_one(
    citing: str,
    citing_record: str | None,
    cited: str,
    record: str | None,
    relationship: str,
    citation_key: str | None,
    context: str | None,
    output: Output,
    offline: bool,
) -> None:
    from pithauthor import sign_citation
    from pithauthor._cli.signing import citation_preview
    from pithauthor.protocol import normalize_relationship
    from pithauthor.registry import citing_number, subject_for

    relationship = normalize_relationship(relationship)
    citing_paper, citing_note, citing_arxiv = citing_number(
        citing, citing_record, output.registry, offline=offline
    )
    cited_paper = subject_for(cited, record, output.registry)
    signer = output.signer()
    event = sign_citation(
        signer,
        cited_paper,
        citing_paper,
        relationship,
        citation_key=citation_key,
        context=context,
        settle=output.settle("auto"),  # a changed citation replaces the old one
        citing_arxiv=citing_arxiv,
    )
    # Signed in memory only: until the author says yes, nothing is stored or sent.
    if not output.reused(event):  # nothing new to publish: nothing to ask
        preview = citation_preview(citing_paper, citing_note, cited_paper, relationship, signer)
        output.confirm("this citation", preview)
    output.one(event)


class _LookupWith(NamedTuple):
    on: bool
    offline: bool
    api: str | None
    write_back: bool
    choose: bool


def _cite_bibliographies(
    bibfiles: list[str],
    citing: str,
    citing_record: str | None,
    relationship: str,
    mapping: list[str],
    only_cited: str | None,
    parallel: int,
    as_json: bool,
    output: Output,
    lookup: _LookupWith,
) -> bool:
    from pithauthor._cli.signing import bibliography_preview
    from pithauthor.bibliography import (
        BibEntry,
        RegistryResolver,
        Resolver,
        parse_relationship_map,
        read_bibliographies,
        render_table,
        sign_bibliography,
    )
    from pithauthor.keys import DeferredKey
    from pithauthor.protocol import Subject, normalize_relationship
    from pithauthor.registry import RecordCache, citing_number

    reading = read_bibliographies(
        [Path(f) for f in bibfiles],
        default_relationship=normalize_relationship(relationship),
        relationship_map=parse_relationship_map(mapping),
        only_cited=cited(Path(only_cited)) if only_cited else None,
    )
    for note in reading.warnings:
        warn(note)
    for name in reading.unknown_map_keys:
        warn(f"--map {name}: no entry has this key")
    found = options.run_lookup(reading, lookup.api, lookup.offline) if lookup.on else None
    if found is not None:
        found = options.settle_ambiguous(found, lookup.choose)
        reading = found.reading
    # With nothing to sign, the citing paper only names the report: a full number is then not
    # checked with the registry (it may be down, and nothing will be published).
    nothing_to_sign = not reading.to_sign()
    citing_paper, citing_note, citing_arxiv = citing_number(
        citing, citing_record, output.registry, offline=nothing_to_sign or lookup.offline
    )
    resolver: Resolver | dict[str, Subject | str] = {}
    if not nothing_to_sign:
        resolver = RegistryResolver(output.registry.client, RecordCache())

    def confirm(key: Signer, to_sign: Sequence[tuple[BibEntry, Subject]]) -> None:
        assert isinstance(key, DeferredKey)
        rows = [(e.key, subject, str(e.relationship)) for e, subject in to_sign]
        output.confirm(
            f"these {len(rows)} citation(s)",
            bibliography_preview(citing_paper, citing_note, rows, key),
        )

    report = sign_bibliography(
        reading,
        citing_paper,
        output.signer,
        resolver,
        parallel=parallel,
        confirm=confirm,
        held=output.held(),
        citing_arxiv=citing_arxiv,
    )
    destination = output.deliver(report.events) if report.events else None
    if found is not None and lookup.write_back:
        options.write_back(found)
    message(render_table(report.rows))
    counts = ", ".join(f"{n} {s}" for s, n in report.counts().items() if n)
    where = f" -> {destination}" if destination else ""
    message(f"{len(report.events)} citation(s) signed for {citing_paper.full}{where} ({counts})")
    if as_json:
        extra = {"lookup": found.stats()} if found is not None else {}
        emit_json({**report.as_dict(), "destination": destination, **extra})
    if report.events or (output.submit and report.reused):
        # only what this run showed (signed now, or reused: an earlier run may have left it
        # pending); other pending rows stay for `pith submit`
        output.send([*(e["event_id"] for e in report.events), *report.reused])
    return report.ok


def register(app: typer.Typer) -> None:
    app.command("cite", short_help=summary("cite"))(cite)
