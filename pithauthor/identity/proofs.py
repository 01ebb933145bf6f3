"""Identity proofs for author keys: what to publish, and checking what was published.

    >>> orcid_proof(show("alice"))          # the researcher URL to add on orcid.org
    >>> check_identity(event, orcid="0000-0002-1825-0097")   # a Report of named checks

The rules (what a proof names, how it is matched) live in `pithauthor.protocol.identity`; the
verdict in `pithauthor.protocol.checks.event`. This module checks the three proofs (an ORCID
record's researcher URLs, a site's pith-keys.json, a paper's PDF) over `fetch.Fetcher`: short
timeouts, answers capped in size, JSON read strictly, redirects followed only within the same
origin (scheme, host and port). See docs/identity.md.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from functools import partial
from typing import TYPE_CHECKING, Any

from pithauthor.errors import InputError, NetworkError, PithError
from pithauthor.fs import MAX_PDF_BYTES
from pithauthor.identity.fetch import DEFAULT_TIMEOUT, PDF_ACCEPT, Fetcher, NotFound, Unreadable
from pithauthor.keys.storage import retired_here
from pithauthor.latex.pdf import pdf_author_keys
from pithauthor.net import ARXIV_PDF, arxiv_pdf_base
from pithauthor.protocol.checks.event import (
    ProofCheck,
    identity_report,
    only_network_failed,
)
from pithauthor.protocol.identity import (
    Finding,
    IdentityProof,
    WebDocument,
    WebKey,
    arxiv_pdf_url,
    event_key_id,
    event_orcid,
    event_proofs,
    key_url,
    match_orcid_record,
    match_pdf_keys,
    match_web_document,
    normalize_orcid,
    orcid_url_name,
    paper_finding,
    parse_key_id,
    web_document,
    web_origin,
    well_known_url,
)
from pithauthor.protocol.subject import Subject
from pithauthor.protocol.timestamps import Proven
from pithauthor.protocol.urls import checked_url
from pithauthor.protocol.verdict import Report

if TYPE_CHECKING:
    from pithauthor.keys.storage import KeyRecord

__all__ = [
    "DEFAULT_ORCID_API",
    "OrcidProof",
    "check_identity",
    "identity_network_failure",
    "orcid_api_base",
    "orcid_proof",
    "orcid_retirement",
    "proofs_from_specs",
    "web_proof_document",
]


DEFAULT_ORCID_API = "https://pub.orcid.org/v3.0"


ORCID_API_ENV = "PITH_ORCID_API"


def orcid_api_base(given: str | None = None) -> str:
    """The ORCID public API to ask: `given`, else $PITH_ORCID_API, else ORCID's own; checked
    by `checked_url` (an empty `given` is refused, never taken for the default)."""
    if given is not None:
        checked_url(given, "--orcid-api")
        return given.strip().rstrip("/")
    base = os.environ.get(ORCID_API_ENV) or DEFAULT_ORCID_API
    checked_url(base, ORCID_API_ENV)
    return base.strip().rstrip("/")


@dataclass(frozen=True, slots=True)
class OrcidProof:
    """What to add to an ORCID record: a researcher URL (Websites & social links)."""

    orcid: str | None
    key_id: str
    url_name: str
    url: str


def orcid_proof(record: KeyRecord) -> OrcidProof:
    """The researcher URL naming this key (marked retired for a retired key)."""
    retired = record.retired_at if record.status == "retired" else None
    return OrcidProof(record.orcid, record.key_id, orcid_url_name(retired), key_url(record.key_id))


def web_proof_document(records: Iterable[KeyRecord], orcid: str | None) -> WebDocument:
    """The `pith-keys.json` listing these keys (active and retired) and the ORCID iD."""
    keys: list[WebKey] = []
    for r in records:
        entry: WebKey = {"key_id": r.key_id, "status": r.status, "created_at": r.created_at}
        if r.status == "retired" and r.retired_at:
            entry["retired_at"] = r.retired_at
        keys.append(entry)
    return web_document(keys, orcid)


def proofs_from_specs(
    specs: Sequence[str], orcid: str | None, subject: Subject
) -> list[IdentityProof]:
    """The identity proofs an author names (`pith claim --proof`): `orcid` (the author's iD),
    `web:URL` (the site's origin), `paper` (the subject's arXiv PDF) or `paper:URL`;
    InputError for anything else, or for the same proof twice."""
    proofs: list[IdentityProof] = []
    for spec in specs:
        kind, _, rest = spec.partition(":")
        kind = kind.strip().lower()
        if kind == "orcid" and not rest:
            if orcid is None:
                raise InputError("--proof orcid needs an ORCID iD (--orcid, or a key that has one)")
            proofs.append({"kind": "orcid", "locator": orcid})
        elif kind == "web" and rest:
            proofs.append({"kind": "web", "locator": web_origin(rest)})
        elif kind == "paper" and rest:
            web_origin(rest)  # refuses what is not an https address
            proofs.append({"kind": "paper", "locator": rest.strip()})
        elif kind == "paper":
            if subject.source_id is None:
                raise InputError("--proof paper: the record names no arXiv id; give paper:URL")
            url = arxiv_pdf_url(subject.source_id, subject.source_version)
            proofs.append({"kind": "paper", "locator": url})
        else:
            raise InputError(
                f"--proof {spec!r}: use orcid, web:https://your.site or paper[:https://...pdf]"
            )
    if len({(p["kind"], p["locator"]) for p in proofs}) != len(proofs):
        raise InputError("--proof: the same proof is given twice")
    return proofs


# --- the three proofs -------------------------------------------------------------------------


def _check_orcid(fetcher: Fetcher, api: str, orcid: str, kid: str) -> ProofCheck:
    # researcher URLs, not keywords: docs/identity.md, "Why a researcher URL and not a keyword"
    where = f"{api}/{orcid}/researcher-urls"
    try:
        doc = fetcher.json(where)
    except NotFound as exc:
        return ProofCheck(
            "orcid", orcid, where, Finding("absent", f"no ORCID record {orcid} ({exc})")
        )
    except Unreadable as exc:
        return ProofCheck("orcid", orcid, where, problem=exc.reason, network=exc.network)
    return ProofCheck("orcid", orcid, where, match_orcid_record(doc, kid, orcid))


def _check_web(fetcher: Fetcher, locator: str, kid: str, orcid: str | None) -> ProofCheck:
    try:
        where = well_known_url(locator)
    except InputError as exc:
        return ProofCheck("web", locator, locator, Finding("absent", str(exc)))
    try:
        doc = fetcher.json(where)
    except NotFound as exc:
        return ProofCheck("web", locator, where, Finding("absent", f"no pith-keys.json ({exc})"))
    except Unreadable as exc:
        return ProofCheck("web", locator, where, problem=exc.reason, network=exc.network)
    return ProofCheck("web", locator, where, match_web_document(doc, kid, orcid))


def _pdf_address(locator: str, base: str) -> str:
    """Where the PDF a paper locator names is fetched: an arXiv PDF from `base`."""
    prefix = ARXIV_PDF + "/"
    return base + "/" + locator[len(prefix) :] if locator.startswith(prefix) else locator


def claimed_pdf(paper: Subject | None, base: str) -> str | None:
    """Where the arXiv PDF of the claimed version is fetched (None when the record, or its
    version, is not known): the one PDF whose keys an author of that paper put there."""
    if paper is None or paper.source_id is None or paper.source_version is None:
        return None
    return _pdf_address(arxiv_pdf_url(paper.source_id, paper.source_version), base)


def _check_paper(
    fetcher: Fetcher,
    source: str,
    locator: str,
    kid: str,
    subject: str | None,
    claimed: str | None = None,
) -> ProofCheck:
    """The paper proof from the PDF at `source`: a URL, or the file `--paper-pdf` named (read
    beforehand by `_Fetcher.read_file`: a file that cannot be read is bad input). It binds the
    key to the paper's authors only when `source` is `claimed` (`paper_finding`)."""
    try:  # a PDF fetched or read has one size limit, `fs`'s
        keys, number = pdf_author_keys(fetcher.get(source, PDF_ACCEPT, MAX_PDF_BYTES))
    except NotFound as exc:
        return ProofCheck("paper", locator, source, Finding("absent", f"no PDF there ({exc})"))
    except Unreadable as exc:
        return ProofCheck("paper", locator, source, problem=exc.reason, network=exc.network)
    except InputError as exc:  # not a readable PDF: what is there proves nothing
        return ProofCheck("paper", locator, source, Finding("absent", str(exc)))
    if number is not None and subject is not None and number != subject:
        return ProofCheck(
            "paper", locator, source, Finding("absent", f"the PDF is of {number}, not {subject}")
        )
    found = paper_finding(match_pdf_keys(keys, kid), source, claimed)
    return ProofCheck("paper", locator, source, found)


# --- the verdict ------------------------------------------------------------------------------


def check_identity(
    event: Mapping[str, Any],
    *,
    orcid: str | None = None,
    signer: str | None = None,
    paper_pdf: str | None = None,
    offline: bool = False,
    orcid_api: str | None = None,
    timeout: float = DEFAULT_TIMEOUT,
    papers: Sequence[Subject] = (),
    proven: Sequence[Proven] = (),
) -> tuple[Report, list[ProofCheck]]:
    """Check the event's identity proofs (and, for `orcid`, the ORCID record itself).

    Proofs are fetched only when asked for: an identity (`orcid`, `signer`) or `paper_pdf`.
    `papers` are records the verifier holds (`pith verify --record`): the claimed paper's
    tells which arXiv PDF is its own. `proven`: the times the event's trusted-time sidecar
    proves (a retired key binds only events proven before its retirement). Returns the report
    and every proof as checked (where it was fetched, what was found)."""
    with _asked(timeout, offline, signer, paper_pdf, orcid_api) as (fetcher, signer):
        return _check_identity(event, orcid, signer, paper_pdf, orcid_api, fetcher, papers, proven)


@contextmanager
def _asked(
    timeout: float, offline: bool, signer: str | None, paper_pdf: str | None, api: str | None
) -> Iterator[tuple[Fetcher, str | None]]:
    """A fetcher for one run, once what the user named is checked (bad input, exit 2, before
    anything is fetched): the key id `signer` (returned normalised), the `--orcid-api` URL, and
    `--paper-pdf` (a URL by `checked_url`, a file read now by the one file reader)."""
    key = parse_key_id(signer) if signer is not None else None
    if api is not None:
        orcid_api_base(api)
    arxiv_pdf_base()  # a bad $PITH_ARXIV_PDF is bad input too
    fetcher = Fetcher(timeout, offline)
    try:
        if paper_pdf is not None and "://" in paper_pdf:
            checked_url(paper_pdf, "--paper-pdf")
        elif paper_pdf is not None:
            fetcher.read_file(paper_pdf)
        yield fetcher, key
    finally:
        fetcher.close()


def _check_identity(
    event: Mapping[str, Any],
    orcid: str | None,
    signer: str | None,
    paper_pdf: str | None,
    orcid_api: str | None,
    fetcher: Fetcher,
    papers: Sequence[Subject] = (),
    proven: Sequence[Proven] = (),
) -> tuple[Report, list[ProofCheck]]:
    expected = normalize_orcid(orcid) if orcid is not None else None
    kid = event_key_id(event)
    asked = expected is not None or signer is not None or paper_pdf is not None
    proofs: list[ProofCheck] = []
    local = None
    if asked and kid is not None:
        number = event.get("subject_pith_number")
        paper = next((p for p in papers if p.pith_number.full == number), None)
        proofs = _fetch_all(event, kid, expected, paper_pdf, orcid_api, fetcher, paper)
        # this machine's key store may know the key retired (read once per run and key)
        local = fetcher.memo(("retired_here", kid), lambda: retired_here(kid))
    report = identity_report(
        event, proofs, orcid=expected, signer=signer, local_retired=local, proven=proven
    )
    return report, proofs


def _fetch_all(
    event: Mapping[str, Any],
    kid: str,
    expected: str | None,
    paper_pdf: str | None,
    orcid_api: str | None,
    fetcher: Fetcher,
    paper: Subject | None,
) -> list[ProofCheck]:
    named = event_orcid(event)
    listed = event_proofs(event)
    orcids = [str(p["locator"]) for p in listed if p.get("kind") == "orcid"]
    if expected is not None and expected not in orcids:
        orcids.append(expected)  # the record of the iD asked for is always consulted
    subject = event.get("subject_pith_number")
    subject = subject if isinstance(subject, str) else None
    papers = [str(p["locator"]) for p in listed if p.get("kind") == "paper"]
    out: list[ProofCheck] = []
    # the settings and each ORCID record's verdict on this key are the same for every event
    # of the run: derived once (`_Fetcher.memo`; a ProofCheck is immutable, so it is shared)
    api = (
        fetcher.memo(("orcid_api", orcid_api), lambda: orcid_api_base(orcid_api)) if orcids else ""
    )
    out += [
        fetcher.memo(("orcid", api, o, kid), partial(_check_orcid, fetcher, api, o, kid))
        for o in _unique(orcids)
    ]
    for p in listed:
        if p.get("kind") == "web":
            web = str(p["locator"])
            out.append(
                fetcher.memo(
                    ("web", web, kid, named), partial(_check_web, fetcher, web, kid, named)
                )
            )
    base = (
        fetcher.memo(("arxiv_pdf",), arxiv_pdf_base)
        if papers or paper_pdf is not None
        else ARXIV_PDF
    )
    claimed = claimed_pdf(paper, base)
    if paper_pdf is not None:
        # the user's copy of the PDF stands in for the event's paper proof (one fetch fewer)
        locator = papers[0] if papers else paper_pdf
        out.append(_check_paper(fetcher, paper_pdf, locator, kid, subject, claimed))
    else:
        out += [
            _check_paper(fetcher, _pdf_address(p, base), p, kid, subject, claimed)
            for p in _unique(papers)
        ]
    return out


def _unique(items: Sequence[str]) -> list[str]:
    return list(dict.fromkeys(items))


def identity_network_failure(report: Report, proofs: Sequence[ProofCheck]) -> bool:
    """True when only an unreachable ORCID stands between the event and the identity."""
    return only_network_failed(report, proofs)


def verify_identity(
    docs: Sequence[Any],
    report: Report,
    *,
    orcid: str | None = None,
    signer: str | None = None,
    paper_pdf: str | None = None,
    offline: bool = False,
    orcid_api: str | None = None,
    timeout: float = DEFAULT_TIMEOUT,
    papers: Sequence[Subject] = (),
    proven: Mapping[str, Sequence[Proven]] | None = None,
) -> list[ProofCheck]:
    """Add the identity checks of every signed event in `docs` to `report` (prefixed `[n].`
    when there are several, as `verify_documents` does); return every proof as checked.
    `papers` (records the verifier holds) and the records among `docs` tell a paper proof
    which arXiv PDF is the claimed version's. `proven`: by event id, the times its sidecar
    proves (`pithauthor.timestamps.flow.verify_time`).

    When an identity is asked for, a document that is not a signed event fails it."""
    asked = orcid is not None or signer is not None
    checked: list[ProofCheck] = []
    papers = [*papers, *_records_among(docs)]
    with _asked(timeout, offline, signer, paper_pdf, orcid_api) as (fetcher, signer):
        for number, doc in enumerate(docs, start=1):
            prefix = f"[{number}]." if len(docs) > 1 else ""
            is_event = isinstance(doc, Mapping) and "event_type" in doc and "signature" in doc
            if not is_event:
                if asked:
                    report.add(prefix + "identity", False, "not a signed event: it has no signer")
                continue
            # unasked, only a claim's own proofs are fetched: a citation or replication carries
            # none, and fetching is never done for an event nobody asked about
            if not asked and paper_pdf is None and doc.get("event_type") != "author_attestation":
                continue
            times = (proven or {}).get(str(doc.get("event_id")), ())
            found, proofs = _check_identity(
                doc, orcid, signer, paper_pdf, orcid_api, fetcher, papers, times
            )
            report.extend(found, prefix=prefix)
            checked += proofs
    return checked


def _records_among(docs: Sequence[Any]) -> list[Subject]:
    """The papers of the records (or bundles, states) in a verified file; `verify_documents`
    has checked them, and their report fails when they do not verify."""
    found: list[Subject] = []
    for doc in docs:
        if isinstance(doc, Mapping) and "event_type" not in doc:
            try:
                found.append(Subject.from_document(doc))
            except PithError:
                continue
    return found


def check_key_on_orcid(
    record: KeyRecord, orcid_api: str | None = None, timeout: float = DEFAULT_TIMEOUT
) -> ProofCheck:
    """Ask the ORCID public API whether the record of `record.orcid` names the key yet."""
    if record.orcid is None:
        raise InputError(f"key {record.name!r} has no ORCID iD")
    fetcher = Fetcher(timeout, offline=False)
    try:
        return _check_orcid(fetcher, orcid_api_base(orcid_api), record.orcid, record.key_id)
    finally:
        fetcher.close()


def orcid_retirement(
    record: KeyRecord, orcid_api: str | None = None, timeout: float = DEFAULT_TIMEOUT
) -> str | None:
    """What the ORCID record of `record.orcid` says of the key's retirement: its `retired_at`
    (the end of the link's `retired YYYY-MM-DD` day, the last moment a claim counts as before
    it; `""` when the link does not say when), or None when the record names the key as current
    or not at all. NetworkError when the record could not be read: then nobody can tell."""
    proof = check_key_on_orcid(record, orcid_api, timeout)
    if proof.finding is None:
        raise NetworkError(
            f"cannot tell whether key {record.key_id} was retired: {proof.where}: {proof.problem}"
        )
    if proof.finding.standing != "retired":
        return None
    day = proof.finding.retired_at
    return f"{day}T23:59:59Z" if day else ""
