"""Archiving a paper's arXiv version, checked: what `pith archive` does before it signs, and what
`pith verify --archive` does with a registry's storage attestations.

`archive_paper`:

1. download the version's PDF from arXiv (`pithauthor.net.arxiv_pdf_base`: arxiv.org, or the
   mirror PITH_ARXIV_PDF names) and hash it (SHA-1 in base32 as the CDX index writes it, and
   SHA-256);
2. ask Save Page Now to capture the abstract page and the PDF at their arXiv addresses
   (`https://arxiv.org/abs/<id>v<n>`, `https://arxiv.org/pdf/<id>v<n>`), and wait on both jobs
   (bounded: `Polling`);
3. read each capture's CDX row (waiting, bounded, for the index to list it);
4. compare the PDF capture's digest with the SHA-1 of the PDF pith downloaded: equal, or
   VerificationError and nothing is signed;
5. with `code`, ask Software Heritage to save the repository and wait for its snapshot SWHID.

Both checks (the PDF's hash, the CDX row's digest) are kept on this machine (`checked`) as they
are made, whatever the comparison says: they are facts about what was read.
"""

from __future__ import annotations

import base64
import hashlib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from pithauthor.archive.checked import (
    ARXIV_PDF_URL,
    CaptureCheck,
    PdfCheck,
    local_checks,
    record_capture,
    record_pdf,
    storage_verdict,
)
from pithauthor.archive.swh import CodeSnapshot, save_code
from pithauthor.archive.wayback import SavePageNow
from pithauthor.errors import InputError, NetworkError, VerificationError
from pithauthor.fs import MAX_PDF_BYTES
from pithauthor.net import exchange
from pithauthor.protocol.canonical_json import canonical_sha256
from pithauthor.protocol.payloads import PDF_MIMETYPE, pdf_capture
from pithauthor.protocol.subject import Subject
from pithauthor.protocol.verdict import Report

__all__ = [
    "ARXIV_ABS_URL",
    "Archived",
    "archive_paper",
    "archive_report",
    "attested",
    "check_capture",
    "download_pdf",
]

ARXIV_ABS_URL = "https://arxiv.org/abs/"


@dataclass(frozen=True)
class Archived:
    """What `archive_paper` found: the captures as a storage attestation lists them (the
    abstract's, then the PDF's), the code's snapshot when one was asked, and the PDF check."""

    captures: tuple[dict[str, str], ...]
    code: CodeSnapshot | None
    pdf: PdfCheck


def version_of(paper: Subject) -> str:
    """`2302.12445v2`: the record's arXiv version (InputError for a record with none)."""
    if not paper.source_id or paper.source_version is None:
        raise InputError(
            f"the record of {paper.pith_number.full} names no arXiv version: there is no arXiv "
            "PDF to archive"
        )
    return f"{paper.source_id}v{paper.source_version}"


def download_pdf(version: str, base: str, *, timeout: float = 60.0) -> bytes:
    """arXiv's PDF of `version`, from `base` (`arxiv_pdf_base()`): the whole file, at most
    `MAX_PDF_BYTES`. NetworkError when it cannot be had, VerificationError when what arrived
    is no PDF."""
    what = f"arXiv at {base}"
    answer = exchange(
        "GET",
        f"{base}/{version}",
        what=what,
        headers={"Accept": "application/pdf"},
        timeout=timeout,
        limit=MAX_PDF_BYTES,
    )
    if answer.status != 200:
        raise NetworkError(f"{what} answered {answer.status} for the PDF of {version}")
    if not answer.body.startswith(b"%PDF-"):
        raise VerificationError(f"{what} answered something that is not a PDF for {version}")
    return answer.body


def sha1_base32(body: bytes) -> str:
    """The digest the CDX index gives a body: base32 of its SHA-1."""
    return base64.b32encode(hashlib.sha1(body).digest()).decode("ascii")


def archive_paper(
    paper: Subject,
    spn: SavePageNow,
    *,
    pdf_base: str,
    code: str | None = None,
    swh_base: str | None = None,
    note: Callable[[str], None] = lambda _: None,
) -> Archived:
    """Capture `paper`'s arXiv abstract and PDF with `spn`, and check the PDF capture against the
    PDF downloaded from `pdf_base` (see the module's steps); with `code` (checked by
    `archive.swh.code_origin`), save it at Software Heritage (`swh_base`) too. `note` hears
    each step in a line. Raises before anything could be signed: AuthError or ArchiveRefused
    (the archive refused, or its job failed), VerificationError (the digests differ),
    NetworkError (a service could not be had in time)."""
    version = version_of(paper)
    pdf_url = ARXIV_PDF_URL + version
    abs_url = ARXIV_ABS_URL + version
    note(f"downloading the PDF of arXiv {version} from {pdf_base}")
    body = download_pdf(version, pdf_base)
    pdf = record_pdf(version, paper.canonical_sha256, body)
    mine = sha1_base32(body)
    jobs = []
    for url in (abs_url, pdf_url):
        note(f"asking {spn.what} to capture {url}")
        jobs.append((url, spn.request_capture(url)))
    captures: list[dict[str, str]] = []
    for url, job in jobs:
        stamp = spn.capture(job, url)
        row = spn.indexed(url, stamp)
        record_capture(url, stamp, f"sha1:{row.digest}")
        is_pdf = url == pdf_url
        if is_pdf and row.mimetype != PDF_MIMETYPE:
            raise VerificationError(
                f"the capture of {url} at {stamp} by {spn.what} is {row.mimetype}, not a PDF; "
                "nothing was signed"
            )
        if is_pdf and row.digest != mine:
            raise VerificationError(
                f"the capture of {url} at {stamp} by {spn.what} has digest sha1:{row.digest}, "
                f"the PDF downloaded from arXiv has sha1:{mine}; nothing was signed"
            )
        note(f"captured {url} at {stamp} (CDX digest sha1:{row.digest})")
        entry = {
            "url": url,
            "capture_url": spn.capture_url(url, stamp),
            "timestamp": stamp,
            "digest": f"sha1:{row.digest}",
            "mimetype": PDF_MIMETYPE if is_pdf else _not_pdf(row.mimetype),
        }
        if is_pdf:
            entry["sha256"] = hashlib.sha256(body).hexdigest()
        captures.append(entry)
    snapshot = None
    if code is not None:
        if swh_base is None:
            raise InputError("--code needs a Software Heritage archive (PITH_SWH_URL)")
        note(f"asking Software Heritage at {swh_base} to save {code}")
        snapshot = save_code(code, swh_base, spn.polling)
        note(f"saved {code}: {snapshot.swhid}")
    return Archived(tuple(captures), snapshot, pdf)


def _not_pdf(mimetype: str) -> str:
    # the abstract page: its row's type, unless the index calls it a PDF (an attestation has
    # exactly one PDF capture, the one whose bytes were compared)
    return "text/html" if mimetype == PDF_MIMETYPE or "/" not in mimetype else mimetype


def check_capture(
    capture: Mapping[str, Any], spn: SavePageNow, pdf: PdfCheck
) -> tuple[bool, str, CaptureCheck | None]:
    """`pith verify --archive` on one PDF capture of a storage attestation: read its CDX row
    at `spn` and compare the row's digest and the capture's with this machine's PDF check.
    (ok, one line saying what was found, the capture check kept)."""
    url, stamp = str(capture.get("url")), str(capture.get("timestamp"))
    claimed = capture.get("digest")
    if url != ARXIV_PDF_URL + pdf.version:
        return False, f"{url} is not arXiv's PDF of {pdf.version}", None
    row = spn.cdx_row(url, stamp)
    if row is None:
        return False, f"the CDX index of {spn.base} lists no capture of {url} at {stamp}", None
    kept = record_capture(url, stamp, f"sha1:{row.digest}")
    if f"sha1:{row.digest}" != claimed:
        return (
            False,
            f"the CDX row of {url} at {stamp} says sha1:{row.digest}, the event {claimed}",
            kept,
        )
    if claimed != pdf.digest:
        return (
            False,
            f"the capture of {url} at {stamp} holds {claimed}, the paper's PDF is {pdf.digest}",
            kept,
        )
    return True, f"{url} at {stamp}: {claimed}, the paper's PDF as downloaded here", kept


def pdf_check_for(
    version: str, canonical_sha256: str, pdf_base: str, known: Sequence[PdfCheck]
) -> PdfCheck:
    """This machine's check of the PDF of `version` (downloaded and hashed now when none is
    kept)."""
    for check in known:
        if check.version == version and check.canonical_sha256 == canonical_sha256:
            return check
    return record_pdf(version, canonical_sha256, download_pdf(version, pdf_base))


# --- `pith verify`: a registry's storage attestations, checked here ---------------------------


def _version(record: object) -> str | None:
    """`2302.12445v2` from a canonical record's `source` ({id, kind, version})."""
    source = record.get("source") if isinstance(record, Mapping) else None
    if not isinstance(source, Mapping) or source.get("kind") != "arxiv":
        return None
    aid, version = source.get("id"), source.get("version")
    if not isinstance(aid, str) or not isinstance(version, int) or isinstance(version, bool):
        return None
    return f"{aid}v{version}"


def attested(
    docs: Sequence[Any], papers: Sequence[Subject] = ()
) -> list[tuple[str, Mapping[str, Any], str | None]]:
    """The storage attestations among `docs` (events, or those a state or bundle carries), each
    as (where it is, the event, its record's arXiv version when known: from the state's or
    bundle's record, or from `papers` for a bare event)."""
    found: list[tuple[str, Mapping[str, Any], str | None]] = []
    by_digest = {
        p.canonical_sha256: f"{p.source_id}v{p.source_version}"
        for p in papers
        if p.source_id and p.source_version is not None
    }
    for number, doc in enumerate(docs, start=1):
        if not isinstance(doc, Mapping):
            continue
        here = f"[{number}]" if len(docs) > 1 else ""
        if doc.get("event_type") == "storage_attestation":
            payload = doc.get("payload")
            digest = payload.get("canonical_sha256") if isinstance(payload, Mapping) else None
            found.append((f"{here}", doc, by_digest.get(str(digest))))
            continue
        current = doc.get("current")
        if isinstance(current, Mapping):  # a merged state
            record, events = current.get("canonical_record"), current.get("storage_attestations")
            where = f"{here}current.storage_attestations"
        else:  # a bundle
            record, events = doc.get("canonical_record"), doc.get("events")
            where = f"{here}events"
        if not isinstance(events, list) or not isinstance(record, Mapping):
            continue
        version = _version(record)
        digest = canonical_sha256(record)
        for i, event in enumerate(events):
            if isinstance(event, Mapping) and event.get("event_type") == "storage_attestation":
                payload = event.get("payload")
                mine = isinstance(payload, Mapping) and payload.get("canonical_sha256") == digest
                found.append((f"{where}[{i}]", event, version if mine else None))
    return found


def archive_report(
    docs: Sequence[Any],
    report: Report,
    *,
    papers: Sequence[Subject] = (),
    spn: SavePageNow | None = None,
    pdf_base: str | None = None,
) -> int:
    """Add to `report` one check per storage attestation among `docs`: its PDF capture's digest
    against the paper's PDF and the capture's CDX row. Offline (`spn` None) from this
    machine's checks alone ("not checked offline" when it has none); with `spn` and `pdf_base`
    (`pith verify --archive`) the CDX row is read and the PDF downloaded when not hashed here
    before, both kept. The number of attestations checked."""
    found = attested(docs, papers)
    if not found:
        return 0
    known = local_checks()
    for where, event, version in found:
        name = f"{where}.archive_copy" if where else "archive_copy"
        payload = event.get("payload")
        capture = pdf_capture(payload) if isinstance(payload, Mapping) else None
        if capture is None or not isinstance(payload, Mapping):
            report.add(name, False, "the attestation holds no one capture of a PDF")
            continue
        digest = str(payload.get("canonical_sha256"))
        if spn is None or pdf_base is None:
            verdict = storage_verdict([event], digest, known)
            if verdict.proven:
                report.add(name, True, verdict.detail)
            elif verdict.detail.startswith("wrong"):
                report.add(name, False, verdict.detail)
            else:
                report.unverifiable(
                    name,
                    "the capture's digest is not checked offline (`pith verify --archive` "
                    "checks it against the CDX index and arXiv's PDF)",
                )
            continue
        if version is None:
            report.unverifiable(
                name,
                "which arXiv version the attested record is, is not known here: give its "
                "record (--record FILE), or verify the paper's state or bundle",
            )
            continue
        pdf = pdf_check_for(version, digest, pdf_base, known.pdfs)
        ok, detail, _ = check_capture(capture, spn, pdf)
        report.add(name, ok, detail)
    return len(found)
