"""`pith cite`: sign that your paper cites another (--to), or every reference of a bibliography.

Its plain forms (bibliography files, --from and the options in PLAIN_OPTIONS) are answered by
pith's entry point before Typer is loaded (`pithauthor._cli.entry`), as `pith bib scan`'s are:
Typer and pydantic were about 0.3 s of CPU of a warm 0.7 s `pith cite refs.bib` of 300 entries.
So this module loads Typer only in `register`, and the Typer command and the entry
point run the same `run` (tests/cli/test_cite_fast_path.py runs forms both ways).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final, NamedTuple

from pithauthor._cli.access import check_lookup_options, registry_access
from pithauthor._cli.bib_cmd import FLAG, MANY, VALUE, PlainOption, cited, plain_form
from pithauthor._cli.output import emit_json, message, warn
from pithauthor._cli.signing import Output
from pithauthor.errors import InputError

if TYPE_CHECKING:
    import typer


#: The options of `pith cite`'s plain forms, as the Typer command declares them in `register`
#: (tests/cli/test_cite_fast_path.py compares the two). Every other option (--to and its
#: company, --lookup and its company, --parallel, a short name, --help) is read by Typer.
PLAIN_OPTIONS: Final[dict[str, PlainOption]] = {
    "--from": PlainOption("citing", VALUE, None, str),
    "--relationship": PlainOption("relationship", VALUE, "cites", str),
    "--map": PlainOption("mapping", MANY, (), str),
    "--only-cited": PlainOption("only_cited", VALUE, None, str),
    "--json": PlainOption("as_json", FLAG, False, bool),
    "--yes": PlainOption("yes", FLAG, False, bool),
    "--submit": PlainOption("submit", FLAG, False, bool),
    "--registry": PlainOption("registry", VALUE, None, str),
    "--trust-manifest": PlainOption("trust_manifest", MANY, (), str),
    "--trust-local-registry": PlainOption("trust_local", FLAG, False, bool),
    "--key": PlainOption("key", VALUE, None, str),
    "--passphrase-file": PlainOption("passphrase_file", VALUE, None, str),
    "--out": PlainOption("out", VALUE, None, str),
    "--offline": PlainOption("offline", FLAG, False, bool),
}

#: What the Typer command reads from the environment for an option of PLAIN_OPTIONS when it is
#: not given: a plain form is left to Typer while one is set (the entry point does not read
#: it). (`PITH_ARXIV_API`, --arxiv-api's, is read only with --lookup, which no plain form has.)
TYPER_ENVIRONMENT: Final = ("PITH_TRUST_LOCAL_REGISTRY",)

# the parameters of `run` the plain forms do not set: the Typer command's defaults
_NOT_PLAIN: Final[dict[str, Any]] = {
    "citing_record": None,
    "cited": None,
    "record": None,
    "parallel": 8,
    "citation_key": None,
    "context": None,
    "lookup": False,
    "arxiv_api": None,
    "write_back": False,
    "choose": False,
}


def plain_cite_form(args: list[str]) -> dict[str, Any] | None:
    """The parameters of `run` for `pith cite ARGS` when ARGS is a plain form, else None (Typer
    then reads ARGS and prints their errors): bibliography files, --from, and options of
    PLAIN_OPTIONS only, by `bib_cmd.plain_form`'s rules; and no variable of
    TYPER_ENVIRONMENT set."""
    if any(name in os.environ for name in TYPER_ENVIRONMENT):
        return None
    values = plain_form(args, PLAIN_OPTIONS)
    if values is None or values["citing"] is None:
        return None
    files = values.pop("files")
    return {"bibfiles": [str(f) for f in files], **values, **_NOT_PLAIN}


def run(
    bibfiles: list[str] | None,
    citing: str,
    citing_record: str | None,
    cited: str | None,
    record: str | None,
    relationship: str,
    mapping: list[str],
    only_cited: str | None,
    parallel: int,
    citation_key: str | None,
    context: str | None,
    key: str | None,
    passphrase_file: str | None,
    out: str | None,
    as_json: bool,
    submit: bool,
    yes: bool,
    registry: str | None,
    trust_manifest: list[str],
    trust_local: bool,
    lookup: bool,
    offline: bool,
    arxiv_api: str | None,
    write_back: bool,
    choose: bool,
    no_timestamp: bool = False,
) -> bool:
    """`pith cite` with its parameters (the Typer command's, by name): True when it ends with
    exit 0; False when some entry of a bibliography was not signed (exit 1)."""
    from pithauthor.registry.submit import check_destination

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
        output = Output(
            key,
            passphrase_file,
            out,
            print_events,
            submit,
            access,
            yes=yes,
            timestamp=not no_timestamp,
        )
        if bibfiles:
            lookup_with = _LookupWith(lookup, offline, arxiv_api, write_back, choose)
            ok = _cite_bibliographies(
                bibfiles,
                citing,
                citing_record,
                relationship,
                mapping,
                only_cited,
                parallel,
                as_json,
                output,
                lookup_with,
            )
            return ok
        else:
            assert cited is not None
            _cite_one(
                citing,
                citing_record,
                cited,
                record,
                relationship,
                citation_key,
                context,
                output,
                offline,
            )
    return True


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
    from pithauthor._cli.signing import citation_preview
    from pithauthor.protocol.payloads import normalize_relationship
    from pithauthor.registry.access import citing_number, subject_for
    from pithauthor.sign import sign_citation

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
    from pithauthor.bibliography.cite import (
        RegistryResolver,
        plan_citations,
        resolve_identifiers,
        sign_plan,
    )
    from pithauthor.bibliography.reading import (
        parse_relationship_map,
        read_bibliographies,
        render_table,
    )
    from pithauthor.protocol.payloads import normalize_relationship
    from pithauthor.protocol.subject import Subject
    from pithauthor.registry.access import citing_number
    from pithauthor.registry.client import RecordCache

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
    found = None
    if lookup.on:  # `options` loads Typer: only a form Typer read has --lookup
        from pithauthor._cli import options

        found = options.run_lookup(reading, lookup.api, lookup.offline)
        found = options.settle_ambiguous(found, lookup.choose)
        reading = found.reading
    # With nothing to sign, the citing paper only names the report: a full number is then not
    # checked with the registry (it may be down, and nothing will be published).
    nothing_to_sign = not reading.to_sign()
    citing_paper, citing_note, citing_arxiv = citing_number(
        citing, citing_record, output.registry, offline=nothing_to_sign or lookup.offline
    )
    held = output.held()
    resolved: dict[str, Subject | str] = {}
    if not nothing_to_sign:
        cache = RecordCache()
        try:  # closed here, not left to the collector (the entry point freezes the heap)
            identifiers = (e.identifier for e in reading.to_sign() if e.identifier is not None)
            resolver = RegistryResolver(output.registry.client, cache)
            resolved = resolve_identifiers(identifiers, resolver, parallel=parallel)
        finally:
            cache.close()
    plan = plan_citations(reading, citing_paper, resolved, citing_arxiv=citing_arxiv)
    # the key is opened only when there is something to sign (its passphrase later still: the
    # signatures wait in a `DeferredKey` until the author has seen the preview and said yes)
    key = output.signer() if plan.pending else None
    report = sign_plan(plan, key, held=held)
    # Signed in memory only so far: nothing is stored or sent before the author's yes, and a
    # bibliography whose citations are all signed already asks nothing.
    if report.fresh:
        assert key is not None  # something was signed
        rows = [(e.key, subject, str(e.relationship)) for e, subject in report.fresh]
        output.confirm(
            f"these {len(rows)} citation(s)",
            bibliography_preview(citing_paper, citing_note, rows, key),
        )
    destination = output.deliver(report.events) if report.events else None
    if found is not None and lookup.write_back:
        from pithauthor._cli import options

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
    import typer  # here, not at the top: the entry point's plain `pith cite` runs without it

    from pithauthor._cli.catalog import summary
    from pithauthor._cli.options import (
        ARXIV_API_OPTION,
        CHOOSE_OPTION,
        KEY_OPTION,
        LOOKUP_OPTION,
        NO_TIMESTAMP_OPTION,
        OUT_OPTION,
        PASSPHRASE_FILE_OPTION,
        REGISTRY_OPTION,
        SUBMIT_OPTION,
        TRUST_LOCAL_OPTION,
        TRUST_MANIFEST_OPTION,
        WRITE_BACK_OPTION,
        YES_OPTION,
        complete_mapping,
        complete_relationship,
    )

    def cite(
        bibfiles: list[str] = typer.Argument(
            None,
            metavar="REFS.bib",
            help="Sign a citation for every reference of these bibliographies that has a Pith "
            "Number.",
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
            None,
            "--record",
            help="With --to: the cited paper's record JSON (or from-arxiv --json).",
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
        no_timestamp: bool = NO_TIMESTAMP_OPTION,
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
        ok = run(
            bibfiles=bibfiles,
            citing=citing,
            citing_record=citing_record,
            cited=cited,
            record=record,
            relationship=relationship,
            mapping=mapping,
            only_cited=only_cited,
            parallel=parallel,
            citation_key=citation_key,
            context=context,
            key=key,
            passphrase_file=passphrase_file,
            out=out,
            as_json=as_json,
            submit=submit,
            yes=yes,
            registry=registry,
            trust_manifest=trust_manifest,
            trust_local=trust_local,
            lookup=lookup,
            offline=offline,
            arxiv_api=arxiv_api,
            write_back=write_back,
            choose=choose,
            no_timestamp=no_timestamp,
        )
        if not ok:
            raise typer.Exit(1)

    app.command("cite", short_help=summary("cite"))(cite)
