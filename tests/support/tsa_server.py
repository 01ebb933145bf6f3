"""A local RFC 3161 time-stamp authority (127.0.0.1, port 0, real sockets) for the trusted-time
tests.

It speaks the real protocol: a `POST` of `application/timestamp-query` (a DER TimeStampReq) is
answered `application/timestamp-reply` (a DER TimeStampResp), its token a CMS SignedData over a
TSTInfo, signed with a TSA certificate (critical EKU id-kp-timeStamping) issued by a root made
here with `cryptography`; asn1crypto (test-only) builds the ASN.1. The token echoes the
request's nonce and carries the chain when the request asks for it (certReq).

It can be told to lie (`Tsa` fields), one way per refusal the issue lists:

- `imprint`: sign a token over that digest, not the one asked for (a token for another message);
- `edit_time`: change genTime's bytes after signing (an edited time: the signature breaks);
- `replay`: answer every request with the first token it issued (a replayed nonce);
- `now`: the time it writes, e.g. outside its certificate's validity window;
- `Pki(...)` with another root: a token that chains to a root nobody pinned.
"""

from __future__ import annotations

import contextlib
import hashlib
import threading
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from asn1crypto import algos, cms, core, tsp, x509
from cryptography import x509 as cx509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

POLICY = "1.3.6.1.4.1.55555.1.1"  # a private policy OID: the test authority's
LONG_AGO = datetime(2020, 1, 1, tzinfo=UTC)
FAR_AHEAD = datetime(2099, 1, 1, tzinfo=UTC)


def _name(common: str) -> cx509.Name:
    return cx509.Name([cx509.NameAttribute(NameOID.COMMON_NAME, common)])


@dataclass
class Pki:
    """A root CA and the TSA certificate it issued (EC P-256: fast to make and to check).
    `tsa_valid` is the TSA certificate's validity window; `critical_eku` and `eku` shape its
    EKU extension for the tests that need a wrong one. With `fixed`, the keys and serial numbers
    come from `name` alone, so the same `Pki` is the same bytes every time (the vectors in
    tests/vectors/rfc3161/; every signature here is deterministic ECDSA, RFC 6979)."""

    name: str = "Pith Test"
    tsa_valid: tuple[datetime, datetime] = (LONG_AGO, FAR_AHEAD)
    critical_eku: bool = True
    eku: tuple[cx509.ObjectIdentifier, ...] = (ExtendedKeyUsageOID.TIME_STAMPING,)
    fixed: bool = False
    root_key: ec.EllipticCurvePrivateKey = field(init=False)
    root: cx509.Certificate = field(init=False)
    tsa_key: ec.EllipticCurvePrivateKey = field(init=False)
    tsa: cx509.Certificate = field(init=False)

    def __post_init__(self) -> None:
        self.root_key = self._key("root")
        root_name = _name(f"{self.name} Root CA")
        self.root = (
            cx509.CertificateBuilder()
            .subject_name(root_name)
            .issuer_name(root_name)
            .public_key(self.root_key.public_key())
            .serial_number(self._serial("root"))
            .not_valid_before(LONG_AGO)
            .not_valid_after(FAR_AHEAD)
            .add_extension(cx509.BasicConstraints(ca=True, path_length=None), critical=True)
            .add_extension(
                cx509.KeyUsage(
                    digital_signature=False,
                    content_commitment=False,
                    key_encipherment=False,
                    data_encipherment=False,
                    key_agreement=False,
                    key_cert_sign=True,
                    crl_sign=True,
                    encipher_only=False,
                    decipher_only=False,
                ),
                critical=True,
            )
            .add_extension(
                cx509.SubjectKeyIdentifier.from_public_key(self.root_key.public_key()),
                critical=False,
            )
            .sign(self.root_key, hashes.SHA256(), ecdsa_deterministic=True)
        )
        self.tsa_key = self._key("tsa")
        builder = (
            cx509.CertificateBuilder()
            .subject_name(_name(f"{self.name} Time-Stamp Authority"))
            .issuer_name(root_name)
            .public_key(self.tsa_key.public_key())
            .serial_number(self._serial("tsa"))
            .not_valid_before(self.tsa_valid[0])
            .not_valid_after(self.tsa_valid[1])
            .add_extension(cx509.BasicConstraints(ca=False, path_length=None), critical=True)
            .add_extension(
                cx509.AuthorityKeyIdentifier.from_issuer_public_key(self.root_key.public_key()),
                critical=False,
            )
        )
        if self.eku:
            builder = builder.add_extension(
                cx509.ExtendedKeyUsage(list(self.eku)), critical=self.critical_eku
            )
        self.tsa = builder.sign(self.root_key, hashes.SHA256(), ecdsa_deterministic=True)

    def _secret(self, role: str) -> int:
        return int.from_bytes(hashlib.sha256(f"{self.name} {role} TEST ONLY".encode()).digest())

    def _key(self, role: str) -> ec.EllipticCurvePrivateKey:
        if not self.fixed:
            return ec.generate_private_key(ec.SECP256R1())
        return ec.derive_private_key(self._secret(role) % (2**255), ec.SECP256R1())

    def _serial(self, role: str) -> int:
        return self._secret(f"{role} serial") >> 100 if self.fixed else cx509.random_serial_number()

    @property
    def root_der(self) -> bytes:
        return self.root.public_bytes(serialization.Encoding.DER)

    @property
    def root_pem(self) -> bytes:
        return self.root.public_bytes(serialization.Encoding.PEM)

    @property
    def tsa_der(self) -> bytes:
        return self.tsa.public_bytes(serialization.Encoding.DER)


def _digest(message: bytes) -> bytes:
    return hashlib.sha256(message).digest()


def token_for(
    pki: Pki,
    digest: bytes,
    *,
    when: datetime,
    nonce: int | None = None,
    serial: int = 1,
    with_chain: bool = True,
) -> bytes:
    """A DER TimeStampToken (CMS ContentInfo of SignedData over a TSTInfo) stamping the SHA-256
    `digest` at `when`, signed by `pki`'s TSA key."""
    info = tsp.TSTInfo(
        {
            "version": "v1",
            "policy": POLICY,
            "message_imprint": {
                "hash_algorithm": {"algorithm": "sha256"},
                "hashed_message": digest,
            },
            "serial_number": serial,
            "gen_time": when.astimezone(UTC).replace(microsecond=0),
            "nonce": nonce,
        }
    )
    content = info.dump()
    tsa_cert = x509.Certificate.load(pki.tsa_der)
    attributes = cms.CMSAttributes(
        [
            {"type": "content_type", "values": ["tst_info"]},
            {"type": "message_digest", "values": [_digest(content)]},
            {
                # ESS signing-certificate-v2 (RFC 5816): names the TSA certificate, as real
                # authorities do
                "type": "signing_certificate_v2",
                "values": [{"certs": [{"cert_hash": _digest(pki.tsa_der)}]}],
            },
        ]
    )
    signature = pki.tsa_key.sign(
        attributes.dump(), ec.ECDSA(hashes.SHA256(), deterministic_signing=True)
    )
    signer = cms.SignerInfo(
        {
            "version": "v1",
            "sid": cms.SignerIdentifier(
                name="issuer_and_serial_number",
                value={
                    "issuer": tsa_cert.issuer,
                    "serial_number": tsa_cert.serial_number,
                },
            ),
            "digest_algorithm": {"algorithm": "sha256"},
            "signed_attrs": attributes,
            "signature_algorithm": algos.SignedDigestAlgorithm({"algorithm": "sha256_ecdsa"}),
            "signature": signature,
        }
    )
    signed = cms.SignedData(
        {
            "version": "v3",
            "digest_algorithms": [{"algorithm": "sha256"}],
            "encap_content_info": {
                "content_type": "tst_info",
                "content": core.ParsableOctetString(content),
            },
            "certificates": [tsa_cert, x509.Certificate.load(pki.root_der)] if with_chain else [],
            "signer_infos": [signer],
        }
    )
    return bytes(cms.ContentInfo({"content_type": "signed_data", "content": signed}).dump())


def edited_time(token: bytes, when: datetime) -> bytes:
    """`token` with its genTime's bytes changed to `when` (same length) after signing: what a
    forger who edits a token's time has. Only the GeneralizedTime's digits change."""
    stamp = token_time_bytes(token)
    new = when.astimezone(UTC).strftime("%Y%m%d%H%M%SZ").encode()
    assert len(new) == len(stamp) and token.count(stamp) == 1
    return token.replace(stamp, new)


def token_time_bytes(token: bytes) -> bytes:
    """The digits of `token`'s genTime as its DER holds them (`YYYYMMDDHHMMSSZ`)."""
    signed = cms.ContentInfo.load(token)["content"]
    info = signed["encap_content_info"]["content"].parsed
    return bytes(info["gen_time"].contents)


def response(token: bytes | None, status: int = 0, text: str | None = None) -> bytes:
    """A DER TimeStampResp: `status` (0 granted, 2 rejection) and the token, if any."""
    status_info: dict[str, Any] = {"status": status}
    if text:
        status_info["status_string"] = [text]
    if token:
        return bytes(
            tsp.TimeStampResp(
                {"status": status_info, "time_stamp_token": cms.ContentInfo.load(token)}
            ).dump()
        )
    # asn1crypto's TimeStampResp will not leave the (optional) token out: the SEQUENCE by hand
    return bytes(core.Sequence(contents=tsp.PKIStatusInfo(status_info).dump()).dump())


@dataclass
class Tsa:
    """What the authority does, and what it saw. Fields set by a test change its answers."""

    pki: Pki = field(default_factory=Pki)
    now: datetime | None = None  # the time it stamps; None: the clock
    imprint: bytes | None = None  # stamp this digest instead of the one asked for
    edit_time: datetime | None = None  # edit genTime to this after signing
    replay: bool = False  # answer with the first token it issued
    status: int = 0  # 2: refuse (rejection), with `status_text`
    status_text: str = "request refused"
    http_status: int = 200
    content_type: str = "application/timestamp-reply"
    requests: list[tuple[str, bytes]] = field(default_factory=list)  # (Content-Type, body)
    issued: list[bytes] = field(default_factory=list)

    def answer(self, body: bytes) -> bytes:
        request = tsp.TimeStampReq.load(body)
        if self.status:
            return response(None, self.status, self.status_text)
        if self.replay and self.issued:
            return response(self.issued[0])
        digest = self.imprint or bytes(request["message_imprint"]["hashed_message"].native)
        nonce = request["nonce"].native
        token = token_for(
            self.pki,
            digest,
            when=self.now or datetime.now(UTC),
            nonce=nonce,
            serial=len(self.issued) + 1,
            with_chain=bool(request["cert_req"].native),
        )
        if self.edit_time is not None:
            token = edited_time(token, self.edit_time)
        self.issued.append(token)
        return response(token)


class _Handler(BaseHTTPRequestHandler):
    tsa: Tsa

    def log_message(self, *args: Any) -> None:
        pass

    def do_POST(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length)
        kind = self.headers.get("Content-Type", "")
        self.tsa.requests.append((kind, body))
        if kind != "application/timestamp-query":
            self._send(415, "text/plain", b"application/timestamp-query only")
            return
        try:
            answer = self.tsa.answer(body)
        except ValueError:
            self._send(400, "text/plain", b"not a TimeStampReq")
            return
        self._send(self.tsa.http_status, self.tsa.content_type, answer)

    def _send(self, status: int, kind: str, body: bytes) -> None:
        self.send_response(status)
        self.send_header("Content-Type", kind)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        with contextlib.suppress(BrokenPipeError, ConnectionResetError):
            self.wfile.write(body)


class TsaServer:
    """Serve `tsa` on 127.0.0.1 (port 0) in a thread; `url` is where to POST queries."""

    def __init__(self, tsa: Tsa | None = None) -> None:
        self.tsa = tsa or Tsa()
        handler = type("Handler", (_Handler,), {"tsa": self.tsa})
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self._server.daemon_threads = True
        self._thread = threading.Thread(
            target=self._server.serve_forever, args=(0.05,), daemon=True
        )

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}/tsa"

    def __enter__(self) -> TsaServer:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()


def an_hour_before(when: datetime) -> datetime:
    return when - timedelta(hours=1)
