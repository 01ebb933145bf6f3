"""What this machine checked of a paper's archive copies, kept under the data folder, and the
checklist's verdict drawn from it (`storage_verdict`).

Two kinds of entry, each written once and never changed (a later check that differs does not
overwrite the first; `pith doctor` and the author can delete the folder to start again):

- a PDF check, per arXiv id and version: the SHA-1 (base32, as the CDX index writes it) and
  SHA-256 of the PDF pith downloaded from arXiv itself, and the canonical SHA-256 of the record
  it is the PDF of;
- a capture check, per captured URL and capture time: the digest the CDX row pith read said.

`pith archive` writes both before it signs; `pith verify --archive` writes them when it reads
a registry's storage attestations. A registry's attestation is "proven" only against these
(docs/protocol.md, "Anchors and archive copies"): its PDF capture's digest equals the PDF as
this machine hashed it, and the CDX row this machine read for that capture said the same.
Everything is stored through `pithauthor.fs` (folder 0700, files 0600, written atomically).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from pithauthor.fs import create_file, private_dir
from pithauthor.protocol.checklist import Verdict
from pithauthor.protocol.checks.event import check_author_event
from pithauthor.protocol.payloads import pdf_capture
from pithauthor.protocol.utc import utc_now

__all__ = [
    "ARXIV_PDF_URL",
    "CaptureCheck",
    "LocalChecks",
    "PdfCheck",
    "local_checks",
    "record_capture",
    "record_pdf",
    "storage_verdict",
]

FOLDER = "archive-checks"

ARXIV_PDF_URL = "https://arxiv.org/pdf/"
"""What a PDF capture's `url` is: arXiv's own address of the version (`<this><id>v<n>`), the
URL Save Page Now captured, whatever mirror pith downloaded the bytes from."""

_SHA1 = re.compile(r"\A[A-Z2-7]{32}\Z")
_HEX64 = re.compile(r"\A[0-9a-f]{64}\Z")
_STAMP = re.compile(r"\A[0-9]{14}\Z")


@dataclass(frozen=True)
class PdfCheck:
    """The PDF of arXiv `version` (`2302.12445v2`) as this machine downloaded and hashed it."""

    version: str
    canonical_sha256: str
    sha1: str
    sha256: str
    checked_at: str

    @property
    def digest(self) -> str:
        """The SHA-1 as a storage attestation writes a digest: `sha1:<base32>`."""
        return f"sha1:{self.sha1}"


@dataclass(frozen=True)
class CaptureCheck:
    """The digest the CDX row of `url`'s capture at `timestamp` said, as this machine read it."""

    url: str
    timestamp: str
    digest: str
    read_at: str


@dataclass(frozen=True)
class LocalChecks:
    """This machine's checks (`local_checks` reads them; a test builds its own)."""

    pdfs: tuple[PdfCheck, ...] = ()
    captures: tuple[CaptureCheck, ...] = ()

    def pdf_of(self, canonical_sha256: str) -> PdfCheck | None:
        """The PDF check of the record whose canonical SHA-256 this is, if any."""
        return next((p for p in self.pdfs if p.canonical_sha256 == canonical_sha256), None)

    def capture(self, url: str, timestamp: str) -> CaptureCheck | None:
        return next((c for c in self.captures if c.url == url and c.timestamp == timestamp), None)


def _folder() -> Path:
    return private_dir(FOLDER)


def _pdf_path(version: str) -> Path:
    return _folder() / f"pdf-{version.replace('/', '_')}.json"


def _capture_path(url: str, timestamp: str) -> Path:
    name = hashlib.sha256(f"{url}\n{timestamp}".encode()).hexdigest()[:40]
    return _folder() / f"capture-{name}.json"


def _write_once(path: Path, entry: Mapping[str, Any]) -> None:
    # the first check stays: an entry is never changed
    with contextlib.suppress(FileExistsError):
        create_file(path, json.dumps(dict(entry), sort_keys=True) + "\n")


def _read(path: Path) -> Any:
    """One entry's JSON, or None when it cannot be read (a damaged entry is no check)."""
    try:
        with open(path, encoding="utf-8") as handle:
            return json.loads(handle.read(64 * 1024))
    except (OSError, ValueError):
        return None


def record_pdf(version: str, canonical_sha256: str, body: bytes) -> PdfCheck:
    """Hash the PDF `body` of arXiv `version` and keep the check (once); the check kept (the
    first one, when one was)."""
    import base64

    check = PdfCheck(
        version,
        canonical_sha256,
        base64.b32encode(hashlib.sha1(body).digest()).decode("ascii"),
        hashlib.sha256(body).hexdigest(),
        utc_now(),
    )
    path = _pdf_path(version)
    _write_once(path, asdict(check))
    return _pdf_entry(_read(path)) or check


def record_capture(url: str, timestamp: str, digest: str) -> CaptureCheck:
    """Keep (once) the digest the CDX row of `url` at `timestamp` said (`sha1:<base32>`)."""
    check = CaptureCheck(url, timestamp, digest, utc_now())
    path = _capture_path(url, timestamp)
    _write_once(path, asdict(check))
    return _capture_entry(_read(path)) or check


def _text(doc: Mapping[str, Any], name: str, rule: re.Pattern[str] | None = None) -> str | None:
    value = doc.get(name)
    if not isinstance(value, str) or (rule is not None and not rule.match(value)):
        return None
    return value


def _pdf_entry(doc: Any) -> PdfCheck | None:
    if not isinstance(doc, dict):
        return None
    fields = (
        _text(doc, "version"),
        _text(doc, "canonical_sha256", _HEX64),
        _text(doc, "sha1", _SHA1),
        _text(doc, "sha256", _HEX64),
        _text(doc, "checked_at"),
    )
    if any(f is None for f in fields):
        return None
    return PdfCheck(*(str(f) for f in fields))


def _capture_entry(doc: Any) -> CaptureCheck | None:
    if not isinstance(doc, dict):
        return None
    fields = (
        _text(doc, "url"),
        _text(doc, "timestamp", _STAMP),
        _text(doc, "digest"),
        _text(doc, "read_at"),
    )
    if any(f is None for f in fields):
        return None
    return CaptureCheck(*(str(f) for f in fields))


def local_checks() -> LocalChecks:
    """Every check this machine kept (a damaged entry is left out, never an error)."""
    folder = _folder()
    pdfs: list[PdfCheck] = []
    captures: list[CaptureCheck] = []
    for path in sorted(folder.glob("*.json")):
        if path.name.startswith("pdf-"):
            found = _pdf_entry(_read(path))
            if found is not None:
                pdfs.append(found)
        elif path.name.startswith("capture-"):
            capture = _capture_entry(_read(path))
            if capture is not None:
                captures.append(capture)
    return LocalChecks(tuple(pdfs), tuple(captures))


# --- the verdict (pure: the checks are given) -----------------------------------------------


def capture_verdict(
    capture: Mapping[str, Any], checked: LocalChecks, canonical_sha256: str
) -> Verdict:
    """One PDF capture against this machine's checks of the record `canonical_sha256`."""
    where = f"{capture.get('capture_url')}"
    pdf = checked.pdf_of(canonical_sha256)
    if pdf is None:
        return Verdict(
            False,
            f"claimed, not checked: {where} (this machine has not hashed the "
            "paper's PDF: `pith verify --archive` checks it)",
        )
    if capture.get("url") != ARXIV_PDF_URL + pdf.version:
        return Verdict(
            False, f"claimed, not checked: {where} is not a capture of {ARXIV_PDF_URL}{pdf.version}"
        )
    if capture.get("digest") != pdf.digest:
        return Verdict(
            False,
            f"wrong: {where} holds {capture.get('digest')}, the paper's PDF "
            f"is {pdf.digest} (hashed here)",
        )
    row = checked.capture(str(capture.get("url")), str(capture.get("timestamp")))
    if row is None:
        return Verdict(
            False,
            f"claimed, not checked: the CDX row of {where} was not read here "
            "(`pith verify --archive` reads it)",
        )
    if row.digest != pdf.digest:
        return Verdict(
            False,
            f"wrong: the CDX row of {where} says {row.digest}, the paper's PDF "
            f"is {pdf.digest} (both read here)",
        )
    return Verdict(
        True, f"archived: {where} ({pdf.digest}, the PDF as hashed here; its CDX row read here)"
    )


def storage_verdict(
    events: Iterable[Mapping[str, Any]], canonical_sha256: str, checked: LocalChecks
) -> Verdict:
    """The checklist's row 2 (an archive copy) for the record `canonical_sha256`, from the
    paper's `storage_attestation` events (others are skipped, and so is one whose envelope or
    signature does not check: `protocol.checks.event.check_author_event`) and this
    machine's `checked` (`local_checks()`). Proven when some attestation's PDF capture has the
    digest of the paper's PDF as this machine computed it and the CDX row this machine read for
    that capture says the same; else "claimed, not checked" (or "wrong", when a check here
    disagrees), never done."""
    verdicts: list[Verdict] = []
    for event in events:
        if event.get("event_type") != "storage_attestation":
            continue
        payload = event.get("payload")
        if not isinstance(payload, Mapping) or payload.get("canonical_sha256") != canonical_sha256:
            continue
        capture = pdf_capture(payload)
        if capture is None or not check_author_event(event).ok:
            continue  # no PDF capture, or not a valid signed event: it proves nothing
        verdicts.append(capture_verdict(capture, checked, canonical_sha256))
    for verdict in verdicts:
        if verdict.proven:
            return verdict
    if verdicts:
        return verdicts[0]
    return Verdict(False, "no archive copy attested (`pith archive` makes one)")


def versions(events: Sequence[Mapping[str, Any]]) -> list[str]:
    """The arXiv versions whose PDF the storage attestations among `events` captured."""
    found: list[str] = []
    for event in events:
        payload = event.get("payload")
        capture = pdf_capture(payload) if isinstance(payload, Mapping) else None
        url = capture.get("url") if capture is not None else None
        if isinstance(url, str) and url.startswith(ARXIV_PDF_URL):
            found.append(url.removeprefix(ARXIV_PDF_URL))
    return list(dict.fromkeys(found))
