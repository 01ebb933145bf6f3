"""RFC 3161 tokens (pithauthor/timestamps/rfc3161.py) against a local authority speaking the real
protocol over loopback (tests/support/tsa_server.py): a token it grants is accepted by
rfc3161-client's own verifier and by `check_token`, and every lie the issue lists is refused,
whether met while asking (`request_token`) or later, offline (`check_token`)."""

from __future__ import annotations

import hashlib
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import pytest
from asn1crypto import tsp
from cryptography import x509
from cryptography.x509.oid import ExtendedKeyUsageOID
from rfc3161_client import VerifierBuilder, decode_timestamp_response
from support.cli import skip_backoff
from support.tsa_server import Pki, Tsa, TsaServer, edited_time, response, token_for

from pithauthor.errors import InputError, NetworkError, VerificationError
from pithauthor.timestamps.rfc3161 import check_token, request_token
from pithauthor.timestamps.time_sources import (
    DEFAULT_AUTHORITIES,
    TSA_ENV,
    Authority,
    authorities_from_env,
)

SIGNATURE = b"the signature bytes of an event"
WHEN = datetime(2026, 5, 1, 10, 0, tzinfo=UTC)


@pytest.fixture(scope="module")
def pki() -> Pki:
    return Pki()


@pytest.fixture
def server(pki: Pki) -> Iterator[TsaServer]:
    with TsaServer(Tsa(pki=pki, now=WHEN)) as srv:
        yield srv


def authority(server: TsaServer, pki: Pki | None = None, **window: datetime) -> Authority:
    return Authority(server.url, ((pki or server.tsa.pki).root_der,), **window)


# --- the happy path --------------------------------------------------------------------------


def test_a_granted_token_is_accepted_by_rfc3161_clients_verifier_and_by_check_token(
    server: TsaServer, pki: Pki
) -> None:
    token = request_token(SIGNATURE, authority(server))

    # rfc3161-client's own verifier, given only the pinned root, accepts it as it stands
    verifier = VerifierBuilder().add_root_certificate(x509.load_der_x509_certificate(pki.root_der))
    assert verifier.build().verify_message(decode_timestamp_response(response(token)), SIGNATURE)

    proven = check_token(token, SIGNATURE, [authority(server)])
    assert proven.time == WHEN
    assert proven.by == f"rfc3161 {server.url}"


def test_the_request_is_a_real_timestamp_query_with_sha256_a_nonce_and_cert_req(
    server: TsaServer,
) -> None:
    request_token(SIGNATURE, authority(server))
    [(kind, body)] = server.tsa.requests
    assert kind == "application/timestamp-query"
    query = tsp.TimeStampReq.load(body)
    imprint = query["message_imprint"]
    assert imprint["hash_algorithm"]["algorithm"].native == "sha256"
    assert imprint["hashed_message"].native == hashlib.sha256(SIGNATURE).digest()
    assert query["nonce"].native is not None
    assert query["cert_req"].native is True


def test_two_requests_carry_two_nonces(server: TsaServer) -> None:
    request_token(SIGNATURE, authority(server))
    request_token(SIGNATURE, authority(server))
    nonces = {tsp.TimeStampReq.load(body)["nonce"].native for _, body in server.tsa.requests}
    assert len(nonces) == 2


def test_check_token_names_the_authority_whose_root_the_chain_reaches(
    server: TsaServer, pki: Pki
) -> None:
    token = request_token(SIGNATURE, authority(server))
    stranger = Authority("https://tsa.stranger.example", (Pki("Stranger").root_der,))
    proven = check_token(token, SIGNATURE, [stranger, authority(server)])
    assert proven.by == f"rfc3161 {server.url}"


# --- refused: a token for another message ------------------------------------------------------


def test_a_token_for_another_message_is_refused_offline(server: TsaServer) -> None:
    token = request_token(SIGNATURE, authority(server))
    with pytest.raises(VerificationError, match="stamps another message"):
        check_token(token, SIGNATURE + b"!", [authority(server)])


def test_an_authority_that_stamps_another_message_is_refused_when_asked(
    server: TsaServer,
) -> None:
    server.tsa.imprint = hashlib.sha256(b"something else").digest()
    with pytest.raises(VerificationError, match="stamps another message"):
        request_token(SIGNATURE, authority(server))


# --- refused: an untrusted root ----------------------------------------------------------------


def test_a_token_whose_chain_reaches_no_pinned_root_is_refused(server: TsaServer) -> None:
    token = token_for(Pki("Untrusted"), hashlib.sha256(SIGNATURE).digest(), when=WHEN)
    with pytest.raises(VerificationError, match="reaches no pinned root"):
        check_token(token, SIGNATURE, [authority(server)])


def test_an_authority_signing_under_another_root_is_refused_when_asked(
    server: TsaServer,
) -> None:
    pinned_elsewhere = authority(server, Pki("Pinned Elsewhere"))
    with pytest.raises(VerificationError, match="reaches no pinned root"):
        request_token(SIGNATURE, pinned_elsewhere)


# --- refused: an edited time -------------------------------------------------------------------


def test_a_token_whose_time_was_edited_after_signing_is_refused(
    server: TsaServer, pki: Pki
) -> None:
    token = request_token(SIGNATURE, authority(server))
    earlier = edited_time(token, datetime(2026, 1, 1, 10, 0, tzinfo=UTC))
    assert earlier != token
    with pytest.raises(VerificationError, match="changed after signing"):
        check_token(earlier, SIGNATURE, [authority(server)])


def test_an_authority_answering_an_edited_time_is_refused_when_asked(server: TsaServer) -> None:
    server.tsa.edit_time = datetime(2025, 1, 1, 10, 0, tzinfo=UTC)
    with pytest.raises(VerificationError, match="changed after signing"):
        request_token(SIGNATURE, authority(server))


# --- refused: a replayed nonce -----------------------------------------------------------------


def test_a_replayed_token_is_refused_by_its_nonce(server: TsaServer) -> None:
    server.tsa.replay = True
    first = request_token(SIGNATURE, authority(server))
    assert first  # the first answer is a fresh token: granted
    with pytest.raises(VerificationError, match="replayed"):
        request_token(SIGNATURE, authority(server))


# --- refused: outside the authority's validity window ------------------------------------------


def test_a_token_dated_after_its_certificate_expired_is_refused() -> None:
    expired = Pki(
        "Expired", tsa_valid=(datetime(2021, 1, 1, tzinfo=UTC), datetime(2022, 1, 1, tzinfo=UTC))
    )
    with TsaServer(Tsa(pki=expired, now=WHEN)) as srv:
        with pytest.raises(VerificationError, match="not valid at its time 2026-05-01T10:00:00Z"):
            request_token(SIGNATURE, authority(srv))
        token = token_for(expired, hashlib.sha256(SIGNATURE).digest(), when=WHEN)
        with pytest.raises(VerificationError, match="validity window"):
            check_token(token, SIGNATURE, [authority(srv)])
        # the same certificate, a time inside its window: accepted
        inside = datetime(2021, 6, 1, tzinfo=UTC)
        token = token_for(expired, hashlib.sha256(SIGNATURE).digest(), when=inside)
        assert check_token(token, SIGNATURE, [authority(srv)]).time == inside


def test_a_token_dated_before_its_certificate_is_refused() -> None:
    future = Pki(
        "Future", tsa_valid=(datetime(2027, 1, 1, tzinfo=UTC), datetime(2030, 1, 1, tzinfo=UTC))
    )
    token = token_for(future, hashlib.sha256(SIGNATURE).digest(), when=WHEN)
    with pytest.raises(VerificationError, match="not valid at its time"):
        check_token(token, SIGNATURE, [Authority("https://tsa.example", (future.root_der,))])


def test_a_token_outside_the_window_the_authority_is_trusted_for_is_refused(
    server: TsaServer,
) -> None:
    token = request_token(SIGNATURE, authority(server))
    retired = authority(server, valid_until=datetime(2026, 1, 1, tzinfo=UTC))
    with pytest.raises(VerificationError, match="outside the window"):
        check_token(token, SIGNATURE, [retired])
    later = authority(server, valid_from=datetime(2026, 6, 1, tzinfo=UTC))
    with pytest.raises(VerificationError, match="outside the window"):
        check_token(token, SIGNATURE, [later])
    inside = authority(
        server,
        valid_from=datetime(2026, 1, 1, tzinfo=UTC),
        valid_until=datetime(2027, 1, 1, tzinfo=UTC),
    )
    assert check_token(token, SIGNATURE, [inside]).time == WHEN


# --- refused: no time-stamping EKU, no chain, not a token ---------------------------------------


@pytest.mark.parametrize(
    "pki",
    [
        Pki("Lax EKU", critical_eku=False),
        Pki("Code signer", eku=(ExtendedKeyUsageOID.CODE_SIGNING,)),
    ],
    ids=["eku-not-critical", "eku-not-timestamping"],
)
def test_a_token_signed_without_the_critical_timestamping_eku_is_refused(pki: Pki) -> None:
    token = token_for(pki, hashlib.sha256(SIGNATURE).digest(), when=WHEN)
    with pytest.raises(VerificationError, match="not a time-stamping one"):
        check_token(token, SIGNATURE, [Authority("https://tsa.example", (pki.root_der,))])


def test_a_token_without_its_certificates_is_refused(pki: Pki) -> None:
    token = token_for(pki, hashlib.sha256(SIGNATURE).digest(), when=WHEN, with_chain=False)
    with pytest.raises(VerificationError, match="no signer certificate"):
        check_token(token, SIGNATURE, [Authority("https://tsa.example", (pki.root_der,))])


@pytest.mark.parametrize("junk", [b"", b"\x30\x00", b"not DER at all", b"\x30\x82" + b"\xff" * 9])
def test_bytes_that_are_no_token_are_refused_in_one_line(junk: bytes, pki: Pki) -> None:
    with pytest.raises(VerificationError, match="not a DER RFC 3161 token"):
        check_token(junk, SIGNATURE, [Authority("https://tsa.example", (pki.root_der,))])


def test_a_token_over_the_size_cap_is_refused_unread(pki: Pki) -> None:
    token = token_for(pki, hashlib.sha256(SIGNATURE).digest(), when=WHEN)
    with pytest.raises(VerificationError, match="over 64 KiB"):
        check_token(
            token + b"\0" * 65536, SIGNATURE, [Authority("https://tsa.example", (pki.root_der,))]
        )


def test_an_answer_over_the_size_cap_is_a_network_error(server: TsaServer) -> None:
    server.tsa.answer = lambda body: b"\0" * (64 * 1024 + 1)  # type: ignore[method-assign]
    with pytest.raises(NetworkError, match="answered more than 65536 bytes"):
        request_token(SIGNATURE, authority(server))


def test_no_authority_trusted_refuses_every_token(server: TsaServer) -> None:
    token = request_token(SIGNATURE, authority(server))
    with pytest.raises(VerificationError, match="no time-stamp authority is trusted"):
        check_token(token, SIGNATURE, [])


# --- the authority down or refusing: NetworkError, the proof fetched later -----------------------


def test_an_authority_that_refuses_to_stamp_is_a_network_error(server: TsaServer) -> None:
    server.tsa.status = 2
    server.tsa.status_text = "bad request"
    with pytest.raises(NetworkError, match=r"refused to stamp \(PKIStatus 2: bad request\)"):
        request_token(SIGNATURE, authority(server))


def test_an_authority_answering_5xx_is_retried_then_a_network_error(
    server: TsaServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    skip_backoff(monkeypatch)
    server.tsa.http_status = 503
    with pytest.raises(NetworkError, match="did not answer"):
        request_token(SIGNATURE, authority(server))
    assert len(server.tsa.requests) == 3  # the retry policy's attempts, each a real POST


def test_an_authority_that_is_down_is_a_network_error(
    server: TsaServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    skip_backoff(monkeypatch)
    gone = authority(server)
    server.__exit__()
    with pytest.raises(NetworkError, match="connection failed"):
        request_token(SIGNATURE, gone, timeout=2.0)


def test_an_answer_that_is_no_timestamp_reply_is_refused(server: TsaServer) -> None:
    server.tsa.content_type = "text/html"
    server.tsa.answer = lambda body: b"<html>captive portal</html>"  # type: ignore[method-assign]
    with pytest.raises(VerificationError, match="not a TimeStampResp"):
        request_token(SIGNATURE, authority(server))


# --- the settings --------------------------------------------------------------------------------


def test_the_default_authorities_are_two_with_real_pinned_roots() -> None:
    assert authorities_from_env({}) == DEFAULT_AUTHORITIES
    urls = [a.url for a in DEFAULT_AUTHORITIES]
    assert urls == ["https://timestamp.digicert.com", "https://timestamp.sectigo.com"]
    subjects = []
    for a in DEFAULT_AUTHORITIES:
        [root] = a.roots
        cert = x509.load_der_x509_certificate(root)
        assert cert.subject == cert.issuer  # a root: self-issued
        assert cert.not_valid_after_utc > datetime(2030, 1, 1, tzinfo=UTC)
        subjects.append(cert.subject.rfc4514_string())
    assert "CN=DigiCert Trusted Root G4" in subjects[0]
    assert "CN=USERTrust RSA Certification Authority" in subjects[1]
    # the very roots docs/protocol.md names, by the SHA-256 of their DER (as Mozilla lists them)
    assert [hashlib.sha256(a.roots[0]).hexdigest() for a in DEFAULT_AUTHORITIES] == [
        "552f7bdcf1a7af9e6ce672017f4f12abf77240c78e761ac203d1d9d20ac89988",
        "e793c9b02fd8aa13e21c31228accb08119643b749c898964b1746d46c3d4cbd2",
    ]


def test_pith_tsa_none_asks_no_authority() -> None:
    assert authorities_from_env({TSA_ENV: "none"}) == ()
    assert authorities_from_env({TSA_ENV: " NONE "}) == ()


def test_pith_tsa_names_authorities_with_their_root_files(tmp_path: Path, pki: Pki) -> None:
    roots = tmp_path / "root.pem"
    roots.write_bytes(b"my test root\n" + pki.root_pem)
    chosen = authorities_from_env(
        {TSA_ENV: f"http://127.0.0.1:8318/tsa={roots}, https://timestamp.digicert.com"}
    )
    assert chosen == (
        Authority("http://127.0.0.1:8318/tsa", (pki.root_der,)),
        DEFAULT_AUTHORITIES[0],
    )


@pytest.mark.parametrize(
    ("setting", "says"),
    [
        ("https://tsa.unknown.example", "no default authority"),
        ("http://tsa.example/={roots}", "https"),
        ("https://tsa.example={missing}", "missing.pem"),
        ("https://tsa.example={empty}", "holds no PEM certificate"),
        ("https://tsa.example={broken}", "broken certificate"),
        ("https://timestamp.digicert.com,https://timestamp.digicert.com/", "names .* twice"),
    ],
)
def test_a_bad_pith_tsa_is_one_input_error(
    tmp_path: Path, pki: Pki, setting: str, says: str
) -> None:
    files = {
        "roots": tmp_path / "root.pem",
        "missing": tmp_path / "missing.pem",
        "empty": tmp_path / "empty.pem",
        "broken": tmp_path / "broken.pem",
    }
    files["roots"].write_bytes(pki.root_pem)
    files["empty"].write_text("no certificate here\n")
    files["broken"].write_text("-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n")
    with pytest.raises(InputError, match=says) as caught:
        authorities_from_env({TSA_ENV: setting.format(**files)})
    assert "\n" not in str(caught.value)
