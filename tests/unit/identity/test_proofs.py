"""Identity proofs, piece by piece: what each proof names and how it is matched (pure), and the
fetching edge against a local server answering like ORCID (hostile and broken answers too)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

import pytest
from support.identity_server import IdentityServer, Site, keywords, researcher_urls
from support.signer import VECTOR_ORCID, FixedSigner

from pithauthor.errors import EventError, InputError
from pithauthor.identity.fetch import JSON_LIMIT
from pithauthor.identity.proofs import check_identity, identity_network_failure
from pithauthor.protocol.identity import (
    after_retirement,
    key_id,
    key_url,
    match_orcid_record,
    match_pdf_keys,
    match_web_document,
    orcid_url_name,
    proofs_problem,
    web_origin,
)
from pithauthor.protocol.subject import Subject
from pithauthor.sign import attest_authorship
from pithauthor.verify import verify_document

KEY = key_id(FixedSigner().public_key)
OTHER_KEY = "ed25519:" + "B" * 26
DEAR_SHA = "694dd781d7852a8b0efd2ff12c617f25b959612a7c7a23e12497b4715d745ec0"


def subject() -> Subject:
    from pithauthor.protocol.ids import PithNumber

    return Subject(PithNumber.parse("pith:2023:NFG5PAOXQUVIWDX5F7YSYYL7EW"), DEAR_SHA)


def event(**kwargs: Any) -> dict[str, Any]:
    return attest_authorship(
        FixedSigner(), subject(), name="Josiah Carberry", orcid=VECTOR_ORCID, **kwargs
    )


# --- matching (pure) ---------------------------------------------------------------------------


def test_orcid_researcher_url_naming_the_key_is_found_and_others_are_not() -> None:
    doc = researcher_urls(VECTOR_ORCID, [("Home", "https://example.org"), ("x", key_url(KEY))])
    assert match_orcid_record(doc, KEY, VECTOR_ORCID).standing == "current"
    assert match_orcid_record(doc, OTHER_KEY, VECTOR_ORCID).standing == "absent"
    assert match_orcid_record(doc, KEY[:-1], VECTOR_ORCID).standing == "absent"


@pytest.mark.parametrize(
    "url",
    [
        f"https://evil.example/?k={KEY}",  # in the query, not the path
        f"https://evil.example/{KEY}X",  # a longer id
        f"ftp://pith.science/key/{KEY}",  # not a web address
        f"https://pith.science/key/{KEY.lower()}",  # key ids are upper case base32
    ],
)
def test_a_url_that_only_contains_the_key_id_is_not_a_proof(url: str) -> None:
    doc = researcher_urls(VECTOR_ORCID, [("Pith author key", url)])
    assert match_orcid_record(doc, KEY, VECTOR_ORCID).standing == "absent"


def test_a_trailing_slash_or_another_host_still_names_the_key() -> None:
    for url in (key_url(KEY) + "/", f"https://carberry.example.org/keys/{KEY}"):
        doc = researcher_urls(VECTOR_ORCID, [("Pith author key", url)])
        assert match_orcid_record(doc, KEY, VECTOR_ORCID).standing == "current"


def test_a_retired_name_marks_the_key_retired() -> None:
    name = orcid_url_name("2026-11-30T10:00:00Z")
    assert name == "Pith author key (retired 2026-11-30)"
    doc = researcher_urls(VECTOR_ORCID, [(name, key_url(KEY))])
    assert match_orcid_record(doc, KEY, VECTOR_ORCID).standing == "retired"


def test_a_keyword_naming_the_key_is_not_the_orcid_proof() -> None:
    # the proof is a researcher URL (docs/identity.md says why); keywords are not read
    assert match_orcid_record(keywords(VECTOR_ORCID, [KEY]), KEY, VECTOR_ORCID).standing == "absent"


@pytest.mark.parametrize("doc", [[], "x", {"researcher-url": "x"}, {"researcher-url": [1, None]}])
def test_malformed_orcid_answers_are_no_proof(doc: Any) -> None:
    assert match_orcid_record(doc, KEY, VECTOR_ORCID).standing == "absent"


def test_web_document_rules() -> None:
    listed = {"orcid": VECTOR_ORCID, "keys": [{"key_id": KEY, "status": "active"}]}
    assert match_web_document(listed, KEY, VECTOR_ORCID).standing == "current"
    assert match_web_document(listed, KEY, "0000-0001-5109-3700").standing == "absent"
    assert match_web_document(listed, OTHER_KEY, VECTOR_ORCID).standing == "absent"
    retired = {"keys": [{"key_id": KEY, "status": "retired", "retired_at": "2026-11-30"}]}
    assert match_web_document(retired, KEY, None).standing == "retired"
    assert match_web_document({"keys": "all"}, KEY, None).standing == "absent"


def test_pdf_keys_rules() -> None:
    assert match_pdf_keys(f"{OTHER_KEY} {KEY}", KEY).standing == "current"
    assert match_pdf_keys(OTHER_KEY, KEY).standing == "absent"
    assert match_pdf_keys(None, KEY).standing == "absent"


@pytest.mark.parametrize(
    "url", ["http://example.org", "ftp://example.org", "https://u:p@example.org", "example.org"]
)
def test_web_origin_refuses_what_is_not_an_https_site(url: str) -> None:
    with pytest.raises(InputError):
        web_origin(url)


def test_web_origin_is_the_origin() -> None:
    assert web_origin("https://Lab.Example.org:8443/people/x?y") == "https://lab.example.org:8443"
    assert web_origin("http://127.0.0.1:5000/") == "http://127.0.0.1:5000"  # this machine only


def test_web_origin_has_one_spelling_per_origin_so_one_site_is_one_proof() -> None:
    for same in ("https://example.org:443/", "HTTPS://Example.ORG./x", "https://example.org"):
        assert web_origin(same) == "https://example.org"
    assert web_origin("https://[::1]:443/") == "https://[::1]"


def test_an_orcid_proof_must_name_the_authors_id() -> None:
    proof = [{"kind": "orcid", "locator": "0000-0001-5109-3700"}]
    assert proofs_problem(proof, VECTOR_ORCID) is not None
    assert proofs_problem([{"kind": "orcid", "locator": VECTOR_ORCID}], VECTOR_ORCID) is None
    with pytest.raises(EventError, match="not the author's iD"):
        event(identity_proofs=proof)


def test_proofs_are_signed_with_the_claim() -> None:
    signed = event(identity_proofs=[{"kind": "web", "locator": "https://carberry.example.org"}])
    assert verify_document(signed).ok
    signed["payload"]["identity_proofs"][0]["locator"] = "https://impostor.example.org"
    failed = {c.name for c in verify_document(signed).failed}
    assert failed == {"event_id"}


# --- the fetching edge --------------------------------------------------------------------------


@pytest.fixture
def server() -> Iterator[IdentityServer]:
    with IdentityServer(Site()) as srv:
        yield srv


def orcid_check(server: IdentityServer, **kwargs: Any) -> tuple[Any, Any]:
    report, proofs = check_identity(
        event(), orcid=VECTOR_ORCID, orcid_api=server.orcid_api, timeout=2.0, **kwargs
    )
    return report, proofs[0]


def test_the_orcid_proof_is_fetched_and_matched(server: IdentityServer) -> None:
    server.site.records[VECTOR_ORCID] = [("Pith author key", key_url(KEY))]
    report, proof = orcid_check(server)
    assert report.ok and proof.finding.standing == "current"
    assert proof.where == f"{server.orcid_api}/{VECTOR_ORCID}/researcher-urls"


@pytest.mark.parametrize(
    ("body", "why"),
    [
        (b'{"researcher-url": [], "researcher-url": []}', "not strict JSON"),
        (b'{"researcher-url": [], "x": NaN}', "not strict JSON"),
        (b"<html>maintenance</html>", "not strict JSON"),
        (b"\xff\xfe", "not strict JSON"),
        (b'{"researcher-url": []}' + b" " * JSON_LIMIT, "larger than"),
    ],
)
def test_hostile_or_broken_orcid_answers_are_unverifiable(
    server: IdentityServer, body: bytes, why: str
) -> None:
    server.site.files[f"/v3.0/{VECTOR_ORCID}/researcher-urls"] = ("application/json", body)
    report, proof = orcid_check(server)
    assert proof.finding is None and why in proof.problem
    assert not report.ok  # an identity was asked for: not knowing fails


def test_a_redirect_from_orcid_to_another_host_is_not_followed(server: IdentityServer) -> None:
    path = f"/v3.0/{VECTOR_ORCID}/researcher-urls"
    server.site.redirects[path] = "http://localhost:1/elsewhere"
    _, proof = orcid_check(server)
    assert proof.finding is None and "another origin" in proof.problem


def test_a_refused_connection_is_unverifiable_as_network() -> None:
    report, proofs = check_identity(
        event(), orcid=VECTOR_ORCID, orcid_api="http://127.0.0.1:9/v3.0", timeout=1.0
    )
    assert proofs[0].finding is None and proofs[0].network
    assert "cannot connect" in proofs[0].problem
    assert identity_network_failure(report, proofs)  # the CLI exits 3, not 1


def test_json_report_lists_where_and_what(server: IdentityServer) -> None:
    server.site.records[VECTOR_ORCID] = []
    report, _ = orcid_check(server)
    checks = {c["name"]: c for c in report.as_dict()["checks"]}  # type: ignore[union-attr]
    assert checks["identity_proof.orcid"]["status"] == "failed"
    assert server.orcid_api in checks["identity_proof.orcid"]["detail"]
    assert json.dumps(report.as_dict())


@dataclass(frozen=True)
class Proven:
    """A proven time as `pithauthor.timestamps` reports one."""

    time: datetime
    by: str


def test_a_pdf_proof_of_a_key_retired_on_orcid_is_not_reported_current() -> None:
    from pithauthor.protocol.checks.event import ProofCheck, identity_report
    from pithauthor.protocol.identity import Finding

    pdf = ProofCheck("paper", "https://arxiv.org/pdf/x", "paper.pdf", Finding("current", "names"))
    retired = Finding("retired", "marks it retired", "2099-01-01")  # after the claim
    orcid = ProofCheck("orcid", VECTOR_ORCID, "api", retired)
    # bound as a retired key only with a trusted time before the retirement (trusted time: the
    # claim's own created_at, 2026, no longer counts)
    before = Proven(datetime(2026, 11, 29, 12, 0, 5, tzinfo=UTC), "rfc3161 https://tsa.test/")
    report = identity_report(event(), [orcid, pdf], orcid=VECTOR_ORCID, proven=[before])
    details = {c.name: c.detail for c in report.checks}
    assert details["identity_proof.paper"].startswith("RETIRED key (per orcid): paper.pdf")
    assert details["identity_bound"].endswith("as a retired key")
    assert report.ok
    unproven = identity_report(event(), [orcid, pdf], orcid=VECTOR_ORCID)
    assert not unproven.ok
    assert "no trusted time proves" in {c.name: c.detail for c in unproven.checks}["identity_bound"]
    alone = identity_report(event(), [pdf], signer=KEY)
    assert {c.name: c.detail for c in alone.checks}["identity_proof.paper"].startswith("current")


def test_one_run_asks_orcid_once_yet_judges_each_claims_own_key(server: IdentityServer) -> None:
    """A run derives each ORCID verdict once per (record, key): claims by the named key pass,
    a claim by another key in the same run does not take their verdict."""
    from pithauthor.identity.proofs import verify_identity
    from pithauthor.verify import verify_documents

    server.site.records[VECTOR_ORCID] = [("Pith author key", key_url(KEY))]
    other = FixedSigner(b"\x05" * 32)
    claims = [event(position=1), event(position=2)]
    claims.insert(
        1, attest_authorship(other, subject(), name="Josiah Carberry", orcid=VECTOR_ORCID)
    )
    report = verify_documents(claims)
    proofs = verify_identity(claims, report, orcid=VECTOR_ORCID, orcid_api=server.orcid_api)
    asked = [p for p, _ in server.site.requests if p.endswith("/researcher-urls")]
    assert len(asked) == 1
    assert [p.finding.standing if p.finding else None for p in proofs] == [
        "current",
        "absent",
        "current",
    ]
    failed = {c.name.split(".")[0] for c in report.failed}
    assert failed == {"[2]"}


ARABIC_2020 = "\u0662\u0660\u0662\u0660-\u0660\u0661-\u0660\u0661"  # 2020-01-01 in Arabic-Indic


@pytest.mark.parametrize(
    ("created_at", "retired_at"),
    [
        # a day in other digits sorts after every ASCII day: it must not pass for a later one
        ("2026-01-01T00:00:00Z", ARABIC_2020),
        ("2026-01-01T00:00:00Z", ARABIC_2020 + "T00:00:00Z"),
        ("\u0662\u0660\u0661\u0669-01-01T00:00:00Z", "2025-01-01"),
    ],
)
def test_a_date_in_other_digits_cannot_show_a_claim_predates_retirement(
    created_at: str, retired_at: str
) -> None:
    assert after_retirement("2024-01-01T00:00:00Z", "2025-01-01") is False  # told: before
    assert after_retirement(created_at, retired_at) is True  # cannot be told: not bound


def test_an_orcid_name_retired_in_other_digits_gives_no_day() -> None:
    name = f"Pith author key (retired {ARABIC_2020})"
    doc = researcher_urls(VECTOR_ORCID, [(name, key_url(KEY))])
    found = match_orcid_record(doc, KEY, VECTOR_ORCID)
    assert found.standing == "retired" and found.retired_at is None
