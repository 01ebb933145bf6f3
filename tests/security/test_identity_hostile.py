"""Hostile proof servers and PDFs: an answer counts only for what was asked.

ORCID and web answers come from local servers (127.0.0.1, real sockets) that hand over another
iD's record, redirect on the same host to another iD, or redirect to another port of the same
host; PDFs glue key ids together. None of them binds the key."""

from __future__ import annotations

import io
import json
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from support.identity_server import IdentityServer, Site, researcher_urls
from support.signer import VECTOR_ORCID, FixedSigner

from pithauthor.identity.proofs import check_identity
from pithauthor.protocol.identity import (
    key_id,
    key_url,
    match_orcid_record,
    match_pdf_keys,
    pdf_key_ids,
)
from pithauthor.protocol.subject import Subject
from pithauthor.protocol.urls import same_origin
from pithauthor.sign import attest_authorship

KEY = key_id(FixedSigner().public_key)
OTHER_ORCID = "0000-0001-5109-3700"
DEAR_SHA = "694dd781d7852a8b0efd2ff12c617f25b959612a7c7a23e12497b4715d745ec0"
RESEARCHER_URLS = f"/v3.0/{VECTOR_ORCID}/researcher-urls"


def subject() -> Subject:
    from pithauthor.protocol.ids import PithNumber

    return Subject(PithNumber.parse("pith:2023:NFG5PAOXQUVIWDX5F7YSYYL7EW"), DEAR_SHA)


def claim(**kwargs: Any) -> dict[str, Any]:
    """A claim by the fixed key under VECTOR_ORCID (whoever holds the key wrote this)."""
    return attest_authorship(
        FixedSigner(), subject(), name="Josiah Carberry", orcid=VECTOR_ORCID, **kwargs
    )


@pytest.fixture
def server() -> Iterator[IdentityServer]:
    with IdentityServer(Site()) as srv:
        yield srv


@pytest.fixture
def other_port() -> Iterator[IdentityServer]:
    """A second server on the same host (127.0.0.1), another port: another person's."""
    with IdentityServer(Site()) as srv:
        yield srv


def bound(server: IdentityServer, event: dict[str, Any] | None = None) -> tuple[bool, Any]:
    report, proofs = check_identity(
        event or claim(), orcid=VECTOR_ORCID, orcid_api=server.orcid_api, timeout=2.0
    )
    checks = {c.name: c for c in report.checks}
    return checks["identity_bound"].status == "passed", proofs[0]


def test_the_honest_record_binds_so_the_hostile_cases_below_can_fail(
    server: IdentityServer,
) -> None:
    server.site.records[VECTOR_ORCID] = [("Pith author key", key_url(KEY))]
    ok, proof = bound(server)
    assert ok and proof.finding.standing == "current"


def test_another_ids_record_served_for_the_id_asked_does_not_bind(server: IdentityServer) -> None:
    # a mirror or proxy answers the record of OTHER_ORCID, whose owner listed the key
    stolen = researcher_urls(OTHER_ORCID, [("Pith author key", key_url(KEY))])
    server.site.files[RESEARCHER_URLS] = ("application/json", json.dumps(stolen).encode())
    ok, proof = bound(server)
    assert not ok
    assert proof.finding.standing == "absent"
    assert f"not the record of {VECTOR_ORCID}" in proof.finding.detail
    assert OTHER_ORCID in proof.finding.detail


def test_one_entry_of_another_record_spliced_in_does_not_bind(server: IdentityServer) -> None:
    # the top-level path is right, but the entry naming the key is another record's
    mine = researcher_urls(VECTOR_ORCID, [("Home", "https://example.org/carberry")])
    theirs = researcher_urls(OTHER_ORCID, [("Pith author key", key_url(KEY))])
    mine["researcher-url"].append(theirs["researcher-url"][0])
    server.site.files[RESEARCHER_URLS] = ("application/json", json.dumps(mine).encode())
    ok, proof = bound(server)
    assert not ok and OTHER_ORCID in proof.finding.detail


def test_a_link_added_by_another_orcid_account_does_not_bind() -> None:
    doc = researcher_urls(VECTOR_ORCID, [("Pith author key", key_url(KEY))])
    doc["researcher-url"][0]["source"]["source-orcid"]["path"] = OTHER_ORCID
    finding = match_orcid_record(doc, KEY, VECTOR_ORCID)
    assert finding.standing == "absent" and f"added by '{OTHER_ORCID}'" in finding.detail


def test_an_answer_without_paths_is_not_the_record_asked_for() -> None:
    doc = researcher_urls(VECTOR_ORCID, [("Pith author key", key_url(KEY))])
    del doc["path"]
    assert match_orcid_record(doc, KEY, VECTOR_ORCID).standing == "absent"


def test_a_same_host_redirect_to_another_ids_record_does_not_bind(server: IdentityServer) -> None:
    server.site.records[OTHER_ORCID] = [("Pith author key", key_url(KEY))]
    server.site.redirects[RESEARCHER_URLS] = f"/v3.0/{OTHER_ORCID}/researcher-urls"
    ok, proof = bound(server)
    assert not ok
    assert (f"/v3.0/{OTHER_ORCID}/researcher-urls", "application/json") in server.site.requests
    assert f"not the record of {VECTOR_ORCID}" in proof.finding.detail


def test_a_redirect_to_another_port_of_the_same_host_is_not_followed(
    server: IdentityServer, other_port: IdentityServer
) -> None:
    other_port.site.records[VECTOR_ORCID] = [("Pith author key", key_url(KEY))]
    server.site.redirects[RESEARCHER_URLS] = (
        other_port.orcid_api + f"/{VECTOR_ORCID}/researcher-urls"
    )
    ok, proof = bound(server)
    assert not ok
    assert proof.finding is None and "another origin" in proof.problem
    assert other_port.site.requests == []  # never asked


def test_a_same_origin_redirect_is_still_followed(server: IdentityServer) -> None:
    server.site.records[VECTOR_ORCID] = [("Pith author key", key_url(KEY))]
    old = f"/old/{VECTOR_ORCID}/researcher-urls"
    server.site.redirects[old] = RESEARCHER_URLS  # an API that moved, on the same origin
    report, _ = check_identity(claim(), orcid=VECTOR_ORCID, orcid_api=server.url + "/old")
    assert [path for path, _ in server.site.requests] == [old, RESEARCHER_URLS]
    assert report.ok  # the record asked for, at its new address


@pytest.mark.parametrize(
    ("a", "b", "same"),
    [
        ("https://x.org/a", "https://x.org:443/b", True),
        ("https://X.org/a", "https://x.org./b", True),
        ("http://127.0.0.1:5000/a", "http://127.0.0.1:5001/a", False),
        ("https://x.org/a", "http://x.org/a", False),
        ("http://x.org/a", "https://x.org/a", False),  # up to https is another origin too
        ("https://x.org/a", "https://y.x.org/a", False),
        ("https://x.org/a", "ftp://x.org/a", False),
    ],
)
def test_same_origin_is_scheme_host_and_port(a: str, b: str, same: bool) -> None:
    assert same_origin(a, b) is same


def test_a_web_proof_redirected_to_another_port_is_not_followed(
    server: IdentityServer, other_port: IdentityServer
) -> None:
    doc = {"version": "pith-keys.v1", "orcid": VECTOR_ORCID, "keys": [{"key_id": KEY}]}
    other_port.site.files["/.well-known/pith-keys.json"] = (
        "application/json",
        json.dumps(doc).encode(),
    )
    server.site.redirects["/.well-known/pith-keys.json"] = (
        other_port.url + "/.well-known/pith-keys.json"
    )
    event = claim(identity_proofs=[{"kind": "web", "locator": server.url}])
    report, proofs = check_identity(event, signer=KEY, timeout=2.0)
    (web,) = proofs
    assert web.finding is None and "another origin" in web.problem
    assert {c.name: c.status for c in report.checks}["identity_proof.web"] == "unverifiable"
    assert other_port.site.requests == []


# --- key ids in a PDF are whole tokens ----------------------------------------------------------

GLUED = [
    f"x{KEY}Q",  # the key id inside a longer token
    f"{KEY}Q",
    f"x{KEY}",
    KEY + "ed25519:" + "B" * 26,  # two ids glued together
    "ed25519:" + "B" * 26 + KEY,
    f"<{KEY}>",
]


@pytest.mark.parametrize("value", GLUED)
def test_a_key_id_glued_into_a_longer_token_is_not_named(value: str) -> None:
    assert KEY not in pdf_key_ids(value)
    assert match_pdf_keys(value, KEY).standing == "absent"


@pytest.mark.parametrize("sep", [" ", ",", ", ", "\n", "\t"])
def test_key_ids_separated_by_spaces_or_commas_are_each_named(sep: str) -> None:
    other = "ed25519:" + "B" * 26
    assert pdf_key_ids(f"{other}{sep}{KEY}") == [other, KEY]
    assert match_pdf_keys(f"{other}{sep}{KEY}", KEY).standing == "current"


def _pdf(path: Path, keys: str) -> Path:
    from pypdf import PdfWriter

    writer = PdfWriter()
    writer.add_blank_page(width=200, height=200)
    writer.add_metadata({"/PithAuthorKeys": keys})
    buffer = io.BytesIO()
    writer.write(buffer)
    path.write_bytes(buffer.getvalue())
    return path


@pytest.mark.parametrize("value", GLUED[:4])
def test_a_pdf_with_glued_ids_fails_the_paper_proof(tmp_path: Path, value: str) -> None:
    pdf = _pdf(tmp_path / "glued.pdf", value)
    report, (proof,) = check_identity(claim(), signer=KEY, paper_pdf=str(pdf))
    assert proof.finding is not None and proof.finding.standing == "absent"
    assert {c.name: c.status for c in report.checks}["identity_proof.paper"] == "failed"


# --- a paper proof binds only as the arXiv PDF of the claimed version ---------------------------

DEAR_RECORD = "record-2302.12445v2.json"


@pytest.fixture
def arxiv(server: IdentityServer, monkeypatch: pytest.MonkeyPatch) -> IdentityServer:
    """The local server stands in for arxiv.org/pdf (PITH_ARXIV_PDF, a mirror)."""
    monkeypatch.setenv("PITH_ARXIV_PDF", server.url + "/pdf")
    return server


def _pdf_bytes(keys: str) -> bytes:
    from pypdf import PdfWriter

    writer = PdfWriter()
    writer.add_blank_page(width=200, height=200)
    writer.add_metadata({"/PithAuthorKeys": keys})
    buffer = io.BytesIO()
    writer.write(buffer)
    return buffer.getvalue()


def dear() -> Subject:
    from support.paths import FIXTURES

    return Subject.from_document(json.loads((FIXTURES / DEAR_RECORD).read_text("utf-8")))


def paper_check(locator: str, papers: list[Subject]) -> tuple[str, str]:
    event = claim(identity_proofs=[{"kind": "paper", "locator": locator}])
    report, _ = check_identity(event, signer=KEY, papers=papers, timeout=2.0)
    check = {c.name: c for c in report.checks}["identity_proof.paper"]
    return check.status, check.detail


def test_the_arxiv_pdf_of_the_claimed_version_binds(arxiv: IdentityServer) -> None:
    arxiv.site.files["/pdf/2302.12445v2"] = ("application/pdf", _pdf_bytes(KEY))
    status, detail = paper_check("https://arxiv.org/pdf/2302.12445v2", [dear()])
    assert status == "passed" and detail.startswith(f"current: {arxiv.url}/pdf/2302.12445v2")
    assert detail.endswith("an author of the claimed version put it there")


@pytest.mark.parametrize(
    ("locator", "papers", "why"),
    [
        # the claimant's own host: anyone can put any key in a PDF there
        ("{url}/x.pdf", True, "not the arXiv PDF of the claimed version"),
        # another version, or another paper on arXiv (perhaps the claimant's own)
        ("https://arxiv.org/pdf/2302.12445v1", True, "not the arXiv PDF of the claimed version"),
        ("https://arxiv.org/pdf/2101.00001v1", True, "not the arXiv PDF of the claimed version"),
        # the right address, but no record says which version is claimed
        ("https://arxiv.org/pdf/2302.12445v2", False, "which arXiv version is claimed"),
    ],
)
def test_any_other_pdf_naming_the_key_is_reported_as_naming_it_not_bound(
    arxiv: IdentityServer, locator: str, papers: bool, why: str
) -> None:
    for path in ("/x.pdf", "/pdf/2302.12445v1", "/pdf/2101.00001v1", "/pdf/2302.12445v2"):
        arxiv.site.files[path] = ("application/pdf", _pdf_bytes(KEY))
    status, detail = paper_check(locator.format(url=arxiv.url), [dear()] if papers else [])
    assert status == "unverifiable"
    assert detail.startswith("named, not bound") and "this file names the key" in detail
    assert why in detail


def test_a_local_copy_of_the_pdf_only_names_the_key(tmp_path: Path) -> None:
    pdf = _pdf(tmp_path / "copy.pdf", KEY)
    event = claim(
        identity_proofs=[{"kind": "paper", "locator": "https://arxiv.org/pdf/2302.12445v2"}]
    )
    report, _ = check_identity(event, signer=KEY, paper_pdf=str(pdf), papers=[dear()])
    check = {c.name: c for c in report.checks}["identity_proof.paper"]
    assert check.status == "unverifiable" and "a file on this machine" in check.detail
    assert report.ok  # --signer holds; the paper proof is reported, not required


# --- retirement is honoured ---------------------------------------------------------------------


def test_a_claim_after_the_orcid_link_says_retired_is_not_bound(server: IdentityServer) -> None:
    server.site.records[VECTOR_ORCID] = [("Pith author key (retired 2020-01-01)", key_url(KEY))]
    report, _ = check_identity(claim(), orcid=VECTOR_ORCID, orcid_api=server.orcid_api)
    checks = {c.name: c for c in report.checks}
    assert checks["identity_bound"].status == "failed"
    assert "per orcid, 2020-01-01" in checks["identity_bound"].detail
    assert checks["identity.retired"].status == "failed"
    assert not report.ok


@dataclass(frozen=True)
class Proven:
    """A proven time as `pithauthor.timestamps` reports one."""

    time: datetime
    by: str


def test_a_claim_proven_before_the_retirement_stays_bound(server: IdentityServer) -> None:
    server.site.records[VECTOR_ORCID] = [("Pith author key (retired 2099-01-01)", key_url(KEY))]
    proven = [Proven(datetime(2098, 12, 31, 23, 0, tzinfo=UTC), "rfc3161 https://tsa.test/")]
    report, _ = check_identity(
        claim(), orcid=VECTOR_ORCID, orcid_api=server.orcid_api, proven=proven
    )
    checks = {c.name: c for c in report.checks}
    assert report.ok and checks["identity_bound"].detail.endswith("as a retired key")
    assert "identity.retired" not in checks


def test_a_claim_dated_before_the_retirement_without_trusted_time_is_not_bound(
    server: IdentityServer,
) -> None:
    """`created_at` is the signer's word (a leaked key can backdate), so a retired
    key's claim is bound only with a proven time before the retirement, not by its date."""
    server.site.records[VECTOR_ORCID] = [("Pith author key (retired 2099-01-01)", key_url(KEY))]
    report, _ = check_identity(claim(), orcid=VECTOR_ORCID, orcid_api=server.orcid_api)
    checks = {c.name: c for c in report.checks}
    assert not report.ok and checks["identity_bound"].status == "failed"
    assert (
        "no trusted time proves this event was signed before" in checks["identity.retired"].detail
    )


def test_a_retired_link_without_a_date_does_not_bind(server: IdentityServer) -> None:
    server.site.records[VECTOR_ORCID] = [("Pith author key (retired)", key_url(KEY))]
    report, _ = check_identity(claim(), orcid=VECTOR_ORCID, orcid_api=server.orcid_api)
    assert "at an unstated date" in {c.name: c for c in report.checks}["identity_bound"].detail


def test_a_claim_after_the_web_document_retired_the_key_fails(server: IdentityServer) -> None:
    doc = {
        "version": "pith-keys.v1",
        "keys": [{"key_id": KEY, "status": "retired", "retired_at": "2021-05-01T10:00:00Z"}],
    }
    server.site.files["/.well-known/pith-keys.json"] = (
        "application/json",
        json.dumps(doc).encode(),
    )
    event = claim(identity_proofs=[{"kind": "web", "locator": server.url}])
    report, _ = check_identity(event, signer=KEY)
    checks = {c.name: c for c in report.checks}
    assert checks["identity.retired"].status == "failed"
    assert "per web, 2021-05-01T10:00:00Z" in checks["identity.retired"].detail


# --- retirement cannot be undone by the order of entries ---------------------------------

CURRENT_LINK = ("Pith author key", key_url(KEY))
RETIRED_LINK = ("Pith author key (retired 2020-01-01)", key_url(KEY))


@pytest.mark.parametrize(
    "links",
    [[CURRENT_LINK, RETIRED_LINK], [RETIRED_LINK, CURRENT_LINK]],
    ids=["current-first", "retired-first"],
)
def test_an_orcid_record_naming_the_key_current_and_retired_unbinds_in_either_order(
    server: IdentityServer, links: list[tuple[str, str]]
) -> None:
    """The rotation renames the old link; a record that still holds (or re-adds) a current
    link for the key says it was retired all the same: a 2026 claim is not bound."""
    server.site.records[VECTOR_ORCID] = links
    report, _ = check_identity(claim(), orcid=VECTOR_ORCID, orcid_api=server.orcid_api)
    checks = {c.name: c for c in report.checks}
    assert checks["identity_bound"].status == "failed"
    assert checks["identity.retired"].status == "failed"
    assert "per orcid, 2020-01-01" in checks["identity.retired"].detail
    assert not report.ok


def test_of_two_retired_links_the_earliest_date_stands(server: IdentityServer) -> None:
    late = ("Pith author key (retired 2099-01-01)", key_url(KEY))
    for links in ([late, RETIRED_LINK], [RETIRED_LINK, late]):
        server.site.records[VECTOR_ORCID] = links
        report, _ = check_identity(claim(), orcid=VECTOR_ORCID, orcid_api=server.orcid_api)
        checks = {c.name: c for c in report.checks}
        assert "per orcid, 2020-01-01" in checks["identity.retired"].detail


ACTIVE_ENTRY = {"key_id": KEY, "status": "active", "created_at": "2019-01-01T00:00:00Z"}
RETIRED_ENTRY = {"key_id": KEY, "status": "retired", "retired_at": "2020-01-01T00:00:00Z"}


@pytest.mark.parametrize(
    "keys",
    [[ACTIVE_ENTRY, RETIRED_ENTRY], [RETIRED_ENTRY, ACTIVE_ENTRY]],
    ids=["active-first", "retired-first"],
)
def test_a_web_document_listing_the_key_active_and_retired_unbinds_in_either_order(
    server: IdentityServer, keys: list[dict[str, str]]
) -> None:
    doc = {"version": "pith-keys.v1", "keys": keys}
    server.site.files["/.well-known/pith-keys.json"] = (
        "application/json",
        json.dumps(doc).encode(),
    )
    event = claim(identity_proofs=[{"kind": "web", "locator": server.url}])
    report, _ = check_identity(event, signer=KEY)
    checks = {c.name: c for c in report.checks}
    assert checks["identity.retired"].status == "failed"
    assert "per web, 2020-01-01T00:00:00Z" in checks["identity.retired"].detail
    assert not report.ok
