"""Archiving a paper's arXiv version against the loopback Internet Archive and Software Heritage
(tests/support/wayback.py, swh.py): the captures pending then done, the CDX digest compared
with the PDF downloaded, this machine's checks kept; and every way it stops before signing."""

from __future__ import annotations

import stat
from collections.abc import Iterator

import pytest
from support.registry import REAL_NUMBER, REAL_SHA
from support.swh import Heritage, snapshot_id, software_heritage
from support.wayback import CAPTURED_AT, Wayback, cdx_digest, fixture_pdf, wayback

from pithauthor.archive.capture import archive_paper
from pithauthor.archive.checked import local_checks
from pithauthor.archive.wayback import IaKeys, Polling, SavePageNow, ia_keys_from_env
from pithauthor.errors import ArchiveRefused, AuthError, InputError, NetworkError, VerificationError
from pithauthor.fs import home_path
from pithauthor.protocol.ids import PithNumber
from pithauthor.protocol.subject import Subject

VERSION = "2302.12445v2"
PAPER = Subject(PithNumber.parse(REAL_NUMBER), REAL_SHA, "2302.12445", 2)
FAST = Polling(interval=0, timeout=5)
KEYS = IaKeys("test-access-key", "test-secret-key")
PDF_URL = f"https://arxiv.org/pdf/{VERSION}"
ABS_URL = f"https://arxiv.org/abs/{VERSION}"


@pytest.fixture
def archive() -> Iterator[Wayback]:
    with wayback(VERSION) as server:
        yield server


@pytest.fixture
def heritage() -> Iterator[Heritage]:
    with software_heritage() as server:
        yield server


def spn(archive: Wayback, keys: IaKeys | None = KEYS, polling: Polling = FAST) -> SavePageNow:
    return SavePageNow(archive.url, keys, polling)


def test_both_pages_are_captured_after_pending_and_the_pdf_capture_matches_the_download(
    archive: Wayback,
) -> None:
    done = archive_paper(PAPER, spn(archive), pdf_base=f"{archive.url}/pdf")
    pdf_digest = "sha1:" + cdx_digest(fixture_pdf(VERSION))
    assert [c["url"] for c in done.captures] == [ABS_URL, PDF_URL]
    pdf = done.captures[1]
    assert pdf["digest"] == pdf_digest and pdf["mimetype"] == "application/pdf"
    assert pdf["timestamp"] == CAPTURED_AT
    assert pdf["capture_url"] == f"{archive.url}/web/{CAPTURED_AT}/{PDF_URL}"
    assert "sha256" in pdf and "sha256" not in done.captures[0]
    assert done.captures[0]["mimetype"] == "text/html"
    # each job was asked while pending, then done: two pending answers and one success each
    assert sum(r.startswith("GET /save/status/") for r in archive.requests) == 6
    assert archive.authorizations == ["LOW test-access-key:test-secret-key"] * 2
    kept = local_checks()
    assert kept.pdf_of(REAL_SHA) is not None and kept.pdf_of(REAL_SHA).digest == pdf_digest  # type: ignore[union-attr]
    assert kept.capture(PDF_URL, CAPTURED_AT).digest == pdf_digest  # type: ignore[union-attr]
    folder = home_path() / "archive-checks"
    assert stat.S_IMODE(folder.stat().st_mode) == 0o700
    assert {stat.S_IMODE(p.stat().st_mode) for p in folder.iterdir()} == {0o600}


def test_anonymous_captures_send_no_authorization(archive: Wayback) -> None:
    archive_paper(PAPER, spn(archive, keys=None), pdf_base=f"{archive.url}/pdf")
    assert archive.authorizations == ["", ""]


def test_a_cdx_digest_other_than_the_downloaded_pdfs_stops_it(archive: Wayback) -> None:
    archive.lie[PDF_URL] = "A" * 32
    with pytest.raises(VerificationError, match=r"has digest sha1:A{32}, the PDF downloaded"):
        archive_paper(PAPER, spn(archive), pdf_base=f"{archive.url}/pdf")


def test_a_refused_url_is_archive_refused(archive: Wayback) -> None:
    archive.refused.add(PDF_URL)
    with pytest.raises(
        ArchiveRefused, match=r"refused to capture .*pdf.* \(403: error:blocked-url"
    ):
        archive_paper(PAPER, spn(archive), pdf_base=f"{archive.url}/pdf")


def test_keys_the_archive_refuses_are_an_auth_error_that_never_shows_them(archive: Wayback) -> None:
    with pytest.raises(AuthError) as caught:
        archive_paper(
            PAPER, spn(archive, IaKeys("wrong-key", "wrong-secret")), pdf_base=f"{archive.url}/pdf"
        )
    assert "wrong-" not in str(caught.value) and "wrong-" not in str(caught.value.hint)
    assert "wrong-" not in repr(IaKeys("wrong-key", "wrong-secret"))


def test_a_job_ending_in_error_is_archive_refused(archive: Wayback) -> None:
    archive.failing.add(ABS_URL)
    with pytest.raises(ArchiveRefused, match=r"could not capture .*abs.*error:bad-gateway"):
        archive_paper(PAPER, spn(archive), pdf_base=f"{archive.url}/pdf")


def test_a_job_pending_past_the_timeout_is_a_network_error(archive: Wayback) -> None:
    archive.pending_polls = 1000
    ticks = iter(range(0, 10_000))
    polling = Polling(interval=1, timeout=10, sleep=lambda _: None, clock=lambda: next(ticks))
    with pytest.raises(NetworkError, match="did not finish within 10 s"):
        archive_paper(PAPER, spn(archive, polling=polling), pdf_base=f"{archive.url}/pdf")
    assert sum(r.startswith("GET /save/status/") for r in archive.requests) < 20


def test_the_code_is_saved_at_software_heritage(archive: Wayback, heritage: Heritage) -> None:
    origin = "https://github.com/lzhangbv/dear_pytorch"
    done = archive_paper(
        PAPER, spn(archive), pdf_base=f"{archive.url}/pdf", code=origin, swh_base=heritage.url
    )
    assert done.code is not None and done.code.swhid == snapshot_id(origin)
    assert heritage.requests[0] == f"POST /api/1/origin/save/git/url/{origin}/"
    assert len(heritage.requests) == 1 + 3  # scheduled, running, then succeeded


def test_an_origin_software_heritage_refuses_is_archive_refused(
    archive: Wayback, heritage: Heritage
) -> None:
    origin = "https://github.com/refused/repo"
    heritage.refused.add(origin)
    with pytest.raises(ArchiveRefused, match=r"refused to save .*\(403: The provided origin"):
        archive_paper(
            PAPER, spn(archive), pdf_base=f"{archive.url}/pdf", code=origin, swh_base=heritage.url
        )


def test_a_record_without_an_arxiv_version_has_nothing_to_archive(archive: Wayback) -> None:
    with pytest.raises(InputError, match="names no arXiv version"):
        archive_paper(Subject(PAPER.pith_number, REAL_SHA), spn(archive), pdf_base=archive.url)


def test_one_key_alone_is_bad_input_naming_the_variable_not_the_value() -> None:
    with pytest.raises(InputError, match="PITH_IA_SECRET_KEY is set but PITH_IA_ACCESS_KEY") as e:
        ia_keys_from_env({"PITH_IA_SECRET_KEY": "s3cret-value"})
    assert "s3cret" not in str(e.value)
    with pytest.raises(InputError, match=r"PITH_IA_ACCESS_KEY is not an archive\.org S3 key") as e:
        ia_keys_from_env({"PITH_IA_ACCESS_KEY": "a:b", "PITH_IA_SECRET_KEY": "s3cret-value"})
    assert "s3cret" not in str(e.value)
    assert ia_keys_from_env({}) is None
