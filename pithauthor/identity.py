"""Identity proofs for author keys: what to publish, and checking what was published.

    >>> orcid_proof(show("alice"))          # the researcher URL to add on orcid.org
    >>> check_identity(event, orcid="0000-0002-1825-0097")   # a Report of named checks

The rules (what a proof names, how it is matched) live in `pithauthor._core.identity`; the
verdict in `pithauthor._core.identity_verdict`. This module fetches: httpx with short timeouts,
answers capped in size, JSON read strictly, redirects followed only within the same origin
(scheme, host and port). See docs/identity.md.
"""

from __future__ import annotations

import io
import logging
import os
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any
from urllib.parse import urljoin

from pithauthor._core.checks import Report
from pithauthor._core.identity import (
    PDF_INFO_KEY,
    Finding,
    IdentityProof,
    WebDocument,
    WebKey,
    arxiv_pdf_url,
    key_url,
    match_orcid_record,
    match_pdf_keys,
    match_web_document,
    orcid_url_name,
    paper_finding,
    web_document,
    web_origin,
    well_known_url,
)
from pithauthor._core.identity_verdict import (
    ProofCheck,
    event_key_id,
    event_orcid,
    event_proofs,
    identity_report,
    only_network_failed,
)
from pithauthor._core.key_identity import parse_key_id
from pithauthor._core.orcid import normalize_orcid
from pithauthor._core.strict_json import parse_json
from pithauthor._core.subject import Subject
from pithauthor._core.web_url import checked_url, same_origin
from pithauthor._files import MAX_PDF_BYTES, read_user_file
from pithauthor._http import (
    AnswerTooLarge,
    AnswerTooSlow,
    check_url,
    new_client,
    read_capped,
)
from pithauthor._keystore.metadata import retired_here
from pithauthor.errors import InputError, NetworkError, PithError

# httpx and pypdf are imported where a proof is fetched or a PDF read: --offline skips both.

if TYPE_CHECKING:
    import httpx

    from pithauthor._keystore.metadata import KeyRecord

__all__ = [
    "DEFAULT_ORCID_API",
    "IdentityProof",
    "OrcidProof",
    "ProofCheck",
    "check_identity",
    "identity_network_failure",
    "orcid_api_base",
    "orcid_proof",
    "orcid_retirement",
    "proofs_from_specs",
    "read_pdf_author_keys",
    "web_proof_document",
    "well_known_url",
]

DEFAULT_ORCID_API = "https://pub.orcid.org/v3.0"
ORCID_API_ENV = "PITH_ORCID_API"
ARXIV_PDF = "https://arxiv.org/pdf"  # where `--proof paper` locators point (arxiv_pdf_url)
ARXIV_PDF_ENV = "PITH_ARXIV_PDF"  # a mirror (or a local test server) to fetch them from
DEFAULT_TIMEOUT = 5.0
JSON_LIMIT = 1 << 20  # 1 MiB: an ORCID researcher-urls answer or a pith-keys.json is small
PDF_LIMIT = MAX_PDF_BYTES  # a PDF fetched or read: the one limit, in `_files`
PDF_ACCEPT = "application/pdf"
MAX_REDIRECTS = 3
USER_AGENT = "pithauthor (identity proofs; https://pith.science)"


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


def orcid_api_base(given: str | None = None) -> str:
    """The ORCID public API to ask: `given`, else $PITH_ORCID_API, else ORCID's own; checked
    by `checked_url` (an empty `given` is refused, never taken for the default)."""
    if given is not None:
        checked_url(given, "--orcid-api")
        return given.strip().rstrip("/")
    base = os.environ.get(ORCID_API_ENV) or DEFAULT_ORCID_API
    checked_url(base, ORCID_API_ENV)
    return base.strip().rstrip("/")


# --- fetching ---------------------------------------------------------------------------------


class _Unreadable(Exception):
    """A source could not be read; `network` when the cause was the network."""

    def __init__(self, reason: str, *, network: bool) -> None:
        super().__init__(reason)
        self.reason, self.network = reason, network


class _NotFound(Exception):
    """The source answered 404 (or 410): there is nothing there."""


@dataclass(frozen=True, slots=True)
class _Parsed:
    value: Any


class _Fetcher:
    """GETs with short timeouts, capped answers and a strict redirect rule, over the one
    network layer (`pithauthor._http`). Each address is fetched once per fetcher (one
    `pith verify` run): a JSONL file of claims by one author asks ORCID once, and every claim
    sees the same answer. No retries: a proof is checked now, and an unreachable one is said
    (exit 3), not waited for."""

    def __init__(self, timeout: float, offline: bool) -> None:
        self.timeout, self.offline = timeout, offline
        self._client: httpx.Client | None = None
        self._seen: dict[tuple[str, str], bytes | _Parsed | Exception] = {}

    def close(self) -> None:
        if self._client is not None:
            self._client.close()

    def _once(self, key: tuple[str, str], make: Callable[[], bytes | _Parsed]) -> bytes | _Parsed:
        """`make()` the first time `key` is asked for, then the same answer (or failure)."""
        if key not in self._seen:
            try:
                self._seen[key] = make()
            except (_Unreadable, _NotFound) as exc:
                self._seen[key] = exc
        found = self._seen[key]
        if isinstance(found, Exception):
            raise found
        return found

    def get(self, url: str, accept: str, limit: int) -> bytes:
        found = self._once((url, accept), lambda: self._get(url, accept, limit))
        assert isinstance(found, bytes)
        return found

    def read_file(self, path: str) -> None:
        """Read the PDF file the user named (`--paper-pdf FILE`) now, through the one file
        reader: a missing, unreadable, non-regular or oversized file is an InputError before
        anything is fetched. Later `get(path, PDF_ACCEPT, ...)` answers these bytes."""
        self._seen[(path, PDF_ACCEPT)] = read_user_file(
            path, InputError, "a PDF file", limit=MAX_PDF_BYTES, text_only=False
        )

    def json(self, url: str) -> Any:
        """The strict JSON document at `url` (parsed once per fetcher, like the bytes)."""
        found = self._once(
            (url, "json"), lambda: _Parsed(_json(self.get(url, "application/json", JSON_LIMIT)))
        )
        assert isinstance(found, _Parsed)
        return found.value

    def _get(self, url: str, accept: str, limit: int) -> bytes:
        try:  # a locator from the event: never a local file, never a refused address
            check_url(url, "the proof's address")
        except InputError as exc:
            raise _Unreadable(str(exc), network=False) from None
        if self.offline:
            raise _Unreadable("not fetched (--offline)", network=False)
        import httpx

        if self._client is None:
            # trust_env=False: a proof's host is the event's word, not the user's: no
            # ~/.netrc password or proxy setting of this machine is used for it
            self._client = new_client(
                headers={"User-Agent": USER_AGENT}, timeout=self.timeout, trust_env=False
            )
        current = url
        for _ in range(MAX_REDIRECTS + 1):
            try:
                with self._client.stream("GET", current, headers={"Accept": accept}) as answer:
                    if answer.is_redirect:
                        current = _redirect_target(current, answer.headers.get("location", ""))
                        continue
                    if answer.status_code in (404, 410):
                        raise _NotFound(f"HTTP {answer.status_code}")
                    if answer.status_code >= 500 or answer.status_code == 429:
                        raise _Unreadable(f"HTTP {answer.status_code}", network=True)
                    if answer.status_code != 200:
                        raise _Unreadable(f"HTTP {answer.status_code}", network=False)
                    return read_capped(answer, limit, self.timeout)
            except AnswerTooLarge:
                raise _Unreadable(f"answer larger than {limit} bytes", network=False) from None
            except AnswerTooSlow:
                raise _Unreadable(
                    f"no whole answer within {self.timeout:g} s", network=True
                ) from None
            except httpx.TimeoutException:
                raise _Unreadable(f"no answer within {self.timeout:g} s", network=True) from None
            except httpx.HTTPError as exc:
                reason = str(exc) or type(exc).__name__
                raise _Unreadable(f"cannot connect ({reason})", network=True) from None
        raise _Unreadable(f"more than {MAX_REDIRECTS} redirects", network=False)


def _redirect_target(current: str, location: str) -> str:
    """Where a redirect leads, if allowed: the same origin (scheme, host and port). Another
    port of the same host is another server (maybe another user's), so it is refused too."""
    target = urljoin(current, location)
    if not same_origin(current, target):
        raise _Unreadable(
            f"redirects to {target}, another origin (scheme, host or port)", network=False
        )
    return target


def _json(data: bytes) -> Any:
    try:
        return parse_json(data.decode("utf-8"))
    except (UnicodeDecodeError, ValueError) as exc:
        raise _Unreadable(f"the answer is not strict JSON ({exc})", network=False) from None


# --- the three proofs -------------------------------------------------------------------------


def _check_orcid(fetcher: _Fetcher, api: str, orcid: str, kid: str) -> ProofCheck:
    where = f"{api}/{orcid}/researcher-urls"
    try:
        doc = fetcher.json(where)
    except _NotFound as exc:
        return ProofCheck(
            "orcid", orcid, where, Finding("absent", f"no ORCID record {orcid} ({exc})")
        )
    except _Unreadable as exc:
        return ProofCheck("orcid", orcid, where, problem=exc.reason, network=exc.network)
    return ProofCheck("orcid", orcid, where, match_orcid_record(doc, kid, orcid))


def _check_web(fetcher: _Fetcher, locator: str, kid: str, orcid: str | None) -> ProofCheck:
    try:
        where = well_known_url(locator)
    except InputError as exc:
        return ProofCheck("web", locator, locator, Finding("absent", str(exc)))
    try:
        doc = fetcher.json(where)
    except _NotFound as exc:
        return ProofCheck("web", locator, where, Finding("absent", f"no pith-keys.json ({exc})"))
    except _Unreadable as exc:
        return ProofCheck("web", locator, where, problem=exc.reason, network=exc.network)
    return ProofCheck("web", locator, where, match_web_document(doc, kid, orcid))


def read_pdf_author_keys(data: bytes) -> tuple[str | None, str | None]:
    """(`/PithAuthorKeys`, `/PithNumber`) from a PDF's Info dictionary; InputError if the
    bytes are not a readable PDF."""
    from pypdf import PdfReader

    logger = logging.getLogger("pypdf")  # a hostile PDF's warnings are noise on stderr
    level = logger.level  # its child loggers (pypdf._reader, ...) inherit the level
    logger.setLevel(logging.CRITICAL + 1)
    try:
        info: Mapping[str, Any] = PdfReader(io.BytesIO(data)).metadata or {}
        keys, number = info.get(PDF_INFO_KEY), info.get("/PithNumber")
    except Exception as exc:  # pypdf raises many kinds on hostile input; all mean "unreadable"
        raise InputError(f"not a readable PDF ({type(exc).__name__})") from None
    finally:
        logger.setLevel(level)
    return (str(keys) if keys is not None else None, str(number) if number is not None else None)


def arxiv_pdf_base() -> str:
    """Where arXiv PDFs are fetched from: `$PITH_ARXIV_PDF` (a mirror), else arxiv.org."""
    base = os.environ.get(ARXIV_PDF_ENV) or ARXIV_PDF
    checked_url(base, ARXIV_PDF_ENV)
    return base.strip().rstrip("/")


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
    fetcher: _Fetcher,
    source: str,
    locator: str,
    kid: str,
    subject: str | None,
    claimed: str | None = None,
) -> ProofCheck:
    """The paper proof from the PDF at `source`: a URL, or the file `--paper-pdf` named (read
    beforehand by `_Fetcher.read_file`: a file that cannot be read is bad input). It binds the
    key to the paper's authors only when `source` is `claimed` (`paper_finding`)."""
    try:
        keys, number = read_pdf_author_keys(fetcher.get(source, PDF_ACCEPT, PDF_LIMIT))
    except _NotFound as exc:
        return ProofCheck("paper", locator, source, Finding("absent", f"no PDF there ({exc})"))
    except _Unreadable as exc:
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
) -> tuple[Report, list[ProofCheck]]:
    """Check the event's identity proofs (and, for `orcid`, the ORCID record itself).

    Proofs are fetched only when asked for: an identity (`orcid`, `signer`) or `paper_pdf`.
    `papers` are records the verifier holds (`pith verify --record`): the claimed paper's
    tells which arXiv PDF is its own. Returns the report and every proof as checked (where it
    was fetched, what was found)."""
    with _asked(timeout, offline, signer, paper_pdf, orcid_api) as (fetcher, signer):
        return _check_identity(event, orcid, signer, paper_pdf, orcid_api, fetcher, papers)


@contextmanager
def _asked(
    timeout: float, offline: bool, signer: str | None, paper_pdf: str | None, api: str | None
) -> Iterator[tuple[_Fetcher, str | None]]:
    """A fetcher for one run, once what the user named is checked (bad input, exit 2, before
    anything is fetched): the key id `signer` (returned normalised), the `--orcid-api` URL, and
    `--paper-pdf` (a URL by `checked_url`, a file read now by the one file reader)."""
    key = parse_key_id(signer) if signer is not None else None
    if api is not None:
        orcid_api_base(api)
    arxiv_pdf_base()  # a bad $PITH_ARXIV_PDF is bad input too
    fetcher = _Fetcher(timeout, offline)
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
    fetcher: _Fetcher,
    papers: Sequence[Subject] = (),
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
        local = retired_here(kid)  # this machine's key store may know the key retired
    report = identity_report(event, proofs, orcid=expected, signer=signer, local_retired=local)
    return report, proofs


def _fetch_all(
    event: Mapping[str, Any],
    kid: str,
    expected: str | None,
    paper_pdf: str | None,
    orcid_api: str | None,
    fetcher: _Fetcher,
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
    api = orcid_api_base(orcid_api) if orcids else ""
    out += [_check_orcid(fetcher, api, o, kid) for o in _unique(orcids)]
    for p in listed:
        if p.get("kind") == "web":
            out.append(_check_web(fetcher, str(p["locator"]), kid, named))
    base = arxiv_pdf_base() if papers or paper_pdf is not None else ARXIV_PDF
    claimed = claimed_pdf(paper, base)
    if paper_pdf is not None:
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
) -> list[ProofCheck]:
    """Add the identity checks of every signed event in `docs` to `report` (prefixed `[n].`
    when there are several, as `verify_documents` does); return every proof as checked.
    `papers` (records the verifier holds) and the records among `docs` tell a paper proof
    which arXiv PDF is the claimed version's.

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
            if not asked and paper_pdf is None and doc.get("event_type") != "author_attestation":
                continue
            found, proofs = _check_identity(
                doc, orcid, signer, paper_pdf, orcid_api, fetcher, papers
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
    fetcher = _Fetcher(timeout, offline=False)
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
