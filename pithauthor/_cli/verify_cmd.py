"""`pith verify`: check records, states, bundles, receipts and signed events offline; with
`--orcid`/`--signer`, also that a signed event was made by that identity (docs/identity.md)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

import typer

from pithauthor._cli.catalog import summary
from pithauthor._cli.options import REGISTRY_OPTION, TRUST_LOCAL_OPTION, make_client
from pithauthor._cli.output import data, emit_json, message
from pithauthor.errors import NetworkError
from pithauthor.protocol.text import escaped

if TYPE_CHECKING:
    from pithauthor.archive.wayback import SavePageNow
    from pithauthor.protocol.verdict import Check, Report
    from pithauthor.timestamps.proven import ProvenTime


def verify(
    file: str = typer.Argument(..., help="A JSON or JSONL file; '-' for stdin."),
    as_json: bool = typer.Option(False, "--json", help="Print {ok, kind, checks} as JSON."),
    trust_manifest: list[str] = typer.Option(
        [],
        "--trust-manifest",
        metavar="FILE",
        help="Also trust the keys of this mirror manifest (e.g. a local registry's); "
        "also read from $PITH_TRUST. A manifest naming a trusted key id with another key is "
        "refused (exit 2).",
    ),
    strict: bool = typer.Option(
        False,
        "--strict",
        help="Also fail (exit 1) when a part is unverifiable (registry event ids, its merge).",
    ),
    orcid: str | None = typer.Option(
        None,
        "--orcid",
        metavar="ID",
        help="Succeed only if the signer is this ORCID iD and its ORCID record names the key.",
    ),
    signer: str | None = typer.Option(
        None, "--signer", metavar="KEY_ID", help="Succeed only if this key signed."
    ),
    paper_pdf: str | None = typer.Option(
        None,
        "--paper-pdf",
        metavar="FILE|URL",
        help="Check the paper proof against this PDF (its /PithAuthorKeys).",
    ),
    record: list[str] = typer.Option(
        [],
        "--record",
        metavar="FILE",
        help="The claimed paper's record (registry record or `pith number from-arxiv --json`): "
        "tells which arXiv PDF is the claimed version's, the one paper proof that binds.",
    ),
    offline: bool = typer.Option(
        False, "--offline", help="Fetch no proof: they are reported unverifiable."
    ),
    orcid_api: str | None = typer.Option(
        None,
        "--orcid-api",
        metavar="URL",
        help="ORCID public API (default $PITH_ORCID_API or https://pub.orcid.org/v3.0).",
    ),
    proof_timeout: float = typer.Option(
        5.0, "--proof-timeout", min=0.1, max=120, help="Seconds to wait for each proof."
    ),
    no_time: bool = typer.Option(
        False,
        "--no-trusted-time",
        help="Do not read FILE.time.jsonl (the proofs of the events' time) beside FILE.",
    ),
    archive: bool = typer.Option(
        False,
        "--archive",
        help="Check storage attestations over the network: each PDF capture's CDX row at the "
        "Internet Archive (PITH_WAYBACK_URL) against arXiv's PDF (PITH_ARXIV_PDF), "
        "downloaded here once. Without it, only what this machine checked before counts.",
    ),
    trust_local: bool = TRUST_LOCAL_OPTION,
    registry: str | None = REGISTRY_OPTION,
    verbose: bool = typer.Option(
        False,
        "--verbose",
        "-v",
        help="Print every check (default: each check that did not pass, and the passed ones "
        "counted by name).",
    ),
) -> None:
    """Verify a document; exit 1 when any check fails. Unverifiable checks never pass; fields
    no signature covers are listed as not signed; --strict also fails on unverifiable parts.

    With --orcid, an unreachable ORCID (timeout, refused, 5xx) exits 3; --offline exits 1.
    With --archive, an unreachable archive or arXiv exits 3."""
    from pithauthor.identity.proofs import identity_network_failure, verify_identity
    from pithauthor.protocol.identity import normalize_orcid
    from pithauthor.registry.credentials import default_trust
    from pithauthor.verify import read_documents, verify_documents

    if orcid is not None:  # a malformed iD is bad input (exit 2), not a failed check
        orcid = normalize_orcid(orcid)
    trust = default_trust(trust_manifest)  # pinned key, $PITH_TRUST, --trust-manifest
    if registry is not None:  # a bad address is bad input, also when nothing is fetched
        from pithauthor.registry.client import registry_url

        registry = registry_url(registry)
    if trust_local:  # the one network read: the key a loopback registry publishes
        with make_client(registry, trust_manifest, True, retries=2, timeout=10.0) as client:
            trust = client.trust
    papers = []
    if record:  # bad input (exit 2) before anything is fetched
        from pithauthor.registry.access import read_subject

        papers = [read_subject(path, trust) for path in record]
    spn = _archive_access() if archive and not offline else None  # bad settings: exit 2 first
    docs = read_documents(file)
    report = verify_documents(docs, trust)
    proven = _trusted_time(file, docs, report, no_time)
    _anchors(docs, report, offline)
    proofs = verify_identity(
        docs,
        report,
        orcid=orcid,
        signer=signer,
        paper_pdf=paper_pdf,
        offline=offline,
        orcid_api=orcid_api,
        timeout=proof_timeout,
        papers=papers,
        proven=proven,
    )
    from pithauthor.archive.capture import archive_report

    # storage attestations: from this machine's checks, or read again with --archive
    wayback, pdf_base = spn if spn is not None else (None, None)
    archive_report(docs, report, papers=papers, spn=wayback, pdf_base=pdf_base)
    if as_json:
        emit_json(report.as_dict())
    else:
        for line in check_lines(report.checks, verbose):
            data(line)
        for line in time_lines(docs, proven):
            data(line)
    summary = ", ".join(f"{n} {s.replace('_', ' ')}" for s, n in report.counts().items() if n)
    if not report.ok:
        names = ", ".join(c.name for c in report.failed)
        if not offline and identity_network_failure(report, proofs):
            raise NetworkError(f"identity not established: ORCID could not be reached ({names})")
        message(f"FAILED: {report.kind}: {names}")
        raise typer.Exit(1)
    if strict and not report.strict_ok:
        names = ", ".join(c.name for c in report.with_status("unverifiable"))
        message(f"FAILED (--strict): {report.kind}: unverifiable: {names}")
        raise typer.Exit(1)
    message(f"OK: {report.kind} verified ({summary})")


def _archive_access() -> tuple[SavePageNow, str]:
    """The Internet Archive and arXiv `--archive` reads (no keys: only the CDX index is read)."""
    from pithauthor.archive.wayback import Polling, SavePageNow, wayback_base
    from pithauthor.net import arxiv_pdf_base

    return SavePageNow(wayback_base(), None, Polling()), arxiv_pdf_base()


def _trusted_time(
    file: str, docs: list[Any], report: Report, skip: bool
) -> dict[str, list[ProvenTime]]:
    """The times the sidecar beside FILE proves (docs/protocol.md "Trusted time"), and those
    the sidecars a bundle or state carries prove of its events, their checks added to
    `report`; none with --no-trusted-time (and no file beside stdin)."""
    if skip:
        return {}
    from pithauthor.timestamps.flow import (
        carried_sidecars,
        read_sidecar_file,
        sidecar_path,
        verify_time,
    )

    proven: dict[str, list[ProvenTime]] = {}
    for doc in docs:  # the same checker as for a file's sidecar, over the document's events
        events, carried = carried_sidecars(doc, report)
        if carried:
            proven.update(verify_time(events, report, carried))
    sidecars = read_sidecar_file(sidecar_path(file)) if file != "-" else {}
    if sidecars:
        proven.update(verify_time(docs, report, sidecars))
    return proven


def _anchors(docs: list[Any], report: Report, offline: bool) -> None:
    """One `anchor` check per timestamp anchor the documents hold (docs/protocol.md "Anchors
    and archive copies"): its OpenTimestamps proof from the record's hash to a Bitcoin header
    judged by its proof of work and the difficulty floor; headers shipped in the event first,
    then fetched once and cached (`PITH_BTC_HEADERS`), none fetched with --offline."""
    from pithauthor.timestamps import anchor

    if not any(anchor.document_anchors(d)[1] for d in docs):
        return  # no anchor: nothing to fetch or import further
    from pithauthor.timestamps.headers import headers_from_env

    floor = anchor.FLOOR  # read now: tests set their own
    headers = None if offline else headers_from_env(floor=floor)
    for check in anchor.anchor_checks(docs, headers, floor):
        report.append(check)


def time_lines(docs: Sequence[Any], proven: Mapping[str, Sequence[ProvenTime]]) -> list[str]:
    """One line per event with a proven time: the earliest, and what proved it."""
    from pithauthor.protocol.utc import utc_stamp

    lines = []
    for number, doc in enumerate(docs, start=1):
        times = proven.get(str(doc.get("event_id"))) if isinstance(doc, dict) else None
        if times:
            first = min(times, key=lambda t: t.time)
            where = f"[{number}] " if len(docs) > 1 else ""
            lines.append(f"trusted time {where}{utc_stamp(first.time)} by {first.by}")
        carried = doc.get("trusted_time") if isinstance(doc, dict) else None
        for sidecar in carried if isinstance(carried, list) else []:
            # a bundle's or state's events: named by their id (they have no place in FILE)
            eid = sidecar.get("event_id") if isinstance(sidecar, dict) else None
            times = proven.get(str(eid))
            if times:
                first = min(times, key=lambda t: t.time)
                lines.append(f"trusted time {eid} {utc_stamp(first.time)} by {first.by}")
    return lines


def check_lines(checks: Sequence[Check], verbose: bool) -> list[str]:
    """One line per check with --verbose. Else the same line for each check that did not
    pass, and one per name for those that passed (the same check of every event of a list
    counted as one: `current.citation_signatures[*].signature  1000 checks`): a state of
    1,000 events is some 40 lines, not 18,000; --json and --verbose give every
    check."""
    import re

    width = max((len(c.name) for c in checks), default=0)
    passed: dict[str, list[Check]] = {}
    lines = []
    for c in checks:
        if c.status == "passed" and not verbose:
            # one name for the same check of every event of a list: `...[*].signature`
            name = re.sub(r"\[\d+\]", "[*]", c.name)
            if name not in passed:
                lines.append(name)  # its place, filled in below
            passed.setdefault(name, []).append(c)
            continue
        detail = escaped(c.detail)  # details quote documents and answers pith did not write
        if c.status == "unverifiable" and c.paths:
            more = f" and {len(c.paths) - 6} more" if len(c.paths) > 6 else ""
            detail += " [" + ", ".join(c.paths[:6]) + more + "]"
        lines.append(f"{c.status.replace('_', ' '):<12} {c.name:<{width}}  {detail}")
    for i, line in enumerate(lines):
        same = passed.get(line)
        if same is not None:  # a name's first passed check stands for all of them
            if len(same) == 1:
                lines[i] = f"{'passed':<12} {same[0].name:<{width}}  {escaped(same[0].detail)}"
            else:
                lines[i] = f"{'passed':<12} {line:<{width}}  {len(same)} checks"
    return lines


def register(app: typer.Typer) -> None:
    app.command("verify", short_help=summary("verify"))(verify)
