"""RFC 3161 time-stamp tokens over an event's signature: asked of an authority, checked offline.

DESIGN (docs/protocol.md, "Trusted time"): the token's messageImprint is the SHA-256 of the
event's signature bytes (the base64-decoded `signature.value`), as sigstore binds its
timestamps: the token proves the signature existed at its genTime. What is kept is the token
itself (the CMS ContentInfo of the authority's TimeStampResp), never inside the signed bytes.

Asking (`request_token`): a TimeStampReq with SHA-256, a fresh nonce and certReq (the chain is
then in the token), POSTed as `application/timestamp-query` through the one network module
(`pithauthor.net.exchange`: its URL policy, time-outs, size cap and retry loop). The answer must
be granted, carry the nonce just sent (a replayed token is refused), and pass `check_token`
against the very authority asked: a token pith would refuse later is never stored.

Checking (`check_token`, no network), with rfc3161-client's verifier, as sigstore-python does:
the signature over the TSTInfo holds; the signer's chain reaches one of the authority's pinned
roots, every certificate valid at genTime; the signer certificate has the critical
id-kp-timeStamping EKU; the messageImprint is SHA-256 over the message; genTime falls in the
authority's own validity window when it has one. Each refusal is one line saying which.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import os
import pkgutil
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING

from pithauthor.errors import InputError, NetworkError, VerificationError
from pithauthor.fs import read_user_file
from pithauthor.net import RetryPolicy, check_url, exchange
from pithauthor.timestamps.proven import ProvenTime

if TYPE_CHECKING:
    from rfc3161_client import TimeStampResponse

TSA_ENV = "PITH_TSA"
"""The setting that replaces the default authorities: `URL=ROOTS.pem,...`, or `none`."""

MAX_TOKEN_BYTES = 64 * 1024
"""The largest answer read from an authority, and the largest token checked: a real token with
its chain is a few kilobytes (DigiCert's, three RSA-4096 certificates, about 7 KB)."""

MAX_ROOTS_FILE_BYTES = 1024 * 1024
"""The largest PEM file of roots `PITH_TSA` may name."""

QUERY_TYPE = "application/timestamp-query"
REPLY_TYPE = "application/timestamp-reply"

_PEM = re.compile(
    rb"-----BEGIN CERTIFICATE-----\s*([A-Za-z0-9+/=\s]+?)\s*-----END CERTIFICATE-----"
)


@dataclass(frozen=True)
class Authority:
    """A time-stamp authority pith trusts: where to ask (`url`), the roots its chain must reach
    (`roots`, DER certificates, pinned), and optionally the window its tokens are trusted in
    (`valid_from` <= genTime < `valid_until`, as sigstore's trusted root bounds each authority;
    None: only the certificates' own validity bounds it)."""

    url: str
    roots: tuple[bytes, ...]
    valid_from: datetime | None = None
    valid_until: datetime | None = None


def pem_certificates(data: bytes) -> tuple[bytes, ...]:
    """The DER certificates of the PEM text `data`, in order (other blocks and text ignored);
    ValueError when a certificate block is not base64."""
    found = []
    for block in _PEM.finditer(data):
        try:
            found.append(base64.b64decode(b"".join(block.group(1).split()), validate=True))
        except binascii.Error:
            raise ValueError("a CERTIFICATE block is not base64") from None
    return tuple(found)


# The authorities pith asks by default, each with the root its time-stamping chain ends at,
# shipped in pithauthor/data/tsa/ (taken from certifi's copy of Mozilla's root list; docs/
# protocol.md, "Trusted time", says why these two). Two independent companies: one of them down,
# or one of them distrusted later, still leaves a token from the other.
_SHIPPED = (
    ("https://timestamp.digicert.com", "digicert-trusted-root-g4.pem"),
    ("https://timestamp.sectigo.com", "usertrust-rsa-certification-authority.pem"),
)


def _shipped() -> tuple[Authority, ...]:
    authorities = []
    for url, name in _SHIPPED:
        # the package loader's own read, as verify.pinned_trust reads the pinned registry key
        data = pkgutil.get_data("pithauthor", f"data/tsa/{name}")
        if data is None:  # a loader that cannot read data: the package is broken
            raise FileNotFoundError(f"pithauthor/data/tsa/{name}")
        authorities.append(Authority(url, pem_certificates(data)))
    return tuple(authorities)


DEFAULT_AUTHORITIES: tuple[Authority, ...] = _shipped()
"""The authorities asked when `PITH_TSA` is not set (docs/protocol.md, "Trusted time")."""


def authorities_from_env(env: Mapping[str, str] = os.environ) -> tuple[Authority, ...]:
    """The authorities `PITH_TSA` names, else the defaults. `none` (alone) asks none: no token
    is requested, and none can be checked. Otherwise a comma-separated list, each item
    `URL=FILE` (FILE: PEM, the root or roots that authority's chain must reach) or a bare URL of
    a default authority (its shipped roots). InputError, one line, for anything else."""
    setting = env.get(TSA_ENV, "").strip()
    if not setting:
        return DEFAULT_AUTHORITIES
    if setting.lower() == "none":
        return ()
    shipped = {a.url: a for a in DEFAULT_AUTHORITIES}
    chosen: list[Authority] = []
    for item in (part.strip() for part in setting.split(",")):
        if not item:
            continue
        url, equals, path = item.rpartition("=")
        if not equals:
            url, path = item, ""
        url = check_url(url, f"{TSA_ENV}: the time-stamp authority URL")
        if any(a.url == url for a in chosen):
            # each authority is one source of a sidecar (its tokens are kept by URL)
            raise InputError(f"{TSA_ENV} names {url} twice")
        if not path:
            if url not in shipped:
                raise InputError(
                    f"{TSA_ENV}: {url} is no default authority, so pith has no root for it",
                    hint=f"name its root: {TSA_ENV}={url}=ROOT.pem",
                )
            chosen.append(shipped[url])
            continue
        data = read_user_file(
            path.strip(),
            InputError,
            f"a PEM file of root certificates ({TSA_ENV})",
            limit=MAX_ROOTS_FILE_BYTES,
        )
        try:
            roots = pem_certificates(data)
            _load_certificates(roots)
        except ValueError as exc:
            raise InputError(
                f"{TSA_ENV}: {path.strip()} holds a broken certificate: {exc}"
            ) from None
        if not roots:
            raise InputError(
                f"{TSA_ENV}: {path.strip()} holds no PEM certificate (-----BEGIN CERTIFICATE-----)"
            )
        chosen.append(Authority(url, roots))
    return tuple(chosen)


def _load_certificates(ders: Sequence[bytes]) -> list[object]:
    """`cryptography` certificates of `ders`; ValueError for one that is not a certificate."""
    # cryptography loads in ~30 ms: only a check, a request or a PITH_TSA root file needs it
    from cryptography import x509

    return [x509.load_der_x509_certificate(der) for der in ders]


# --- asking --------------------------------------------------------------------------------------


def request_token(
    message: bytes, authority: Authority, *, timeout: float = 10.0, retry: RetryPolicy | None = None
) -> bytes:
    """A token from `authority` stamping SHA-256(`message`), checked (`check_token`) before it is
    returned: the DER TimeStampToken (CMS ContentInfo). NetworkError when the authority cannot
    be reached, answers an HTTP error or refuses (its PKIStatus); VerificationError when what it
    answered is no token for this request (another nonce: replayed) or would not be accepted."""
    # here: rfc3161-client loads cryptography; only a command that stamps an event asks
    from rfc3161_client import HashAlgorithm, TimestampRequestBuilder, decode_timestamp_response

    where = f"the time-stamp authority at {authority.url}"
    request = (
        TimestampRequestBuilder()
        .data(message)
        .hash_algorithm(HashAlgorithm.SHA256)
        .nonce(nonce=True)
        .cert_request(cert_request=True)
        .build()
    )
    answer = exchange(
        "POST",
        authority.url,
        what=where,
        content=request.as_bytes(),
        headers={"Content-Type": QUERY_TYPE, "Accept": REPLY_TYPE},
        timeout=timeout,
        retry=retry,  # `retry`: the caller's (one attempt right after signing)
        limit=MAX_TOKEN_BYTES,
    )
    if answer.status != 200:
        raise NetworkError(f"{where} answered HTTP {answer.status}, no token")
    try:
        response = decode_timestamp_response(answer.body)
    except ValueError:
        raise VerificationError(f"{where} answered something that is not a TimeStampResp") from None
    if response.status not in (0, 1):  # granted, granted with modifications
        said = "; ".join(response.status_string)[:200] or "no reason given"
        raise NetworkError(f"{where} refused to stamp (PKIStatus {response.status}: {said})")
    if response.tst_info.nonce != request.nonce:
        raise VerificationError(
            f"{where} answered a token for another request (its nonce is not the one sent): "
            "a replayed token, refused"
        )
    token = response.time_stamp_token()
    check_token(token, message, [authority])
    return token


# --- checking ------------------------------------------------------------------------------------


def check_token(token: bytes, message: bytes, authorities: Sequence[Authority]) -> ProvenTime:
    """When `token` proves `message` existed: its genTime, by the first of `authorities` whose
    pinned roots its chain reaches (`rfc3161 <url>`). Offline. VerificationError, one line, for
    a token that is broken, stamps another message, was changed after signing, chains to no
    pinned root, is signed by a certificate without the critical time-stamping EKU or outside
    its validity at genTime, or falls outside the authority's own window."""
    from rfc3161_client import VerificationError as TokenRefused
    from rfc3161_client import VerifierBuilder

    response = _decoded(token)
    info = response.tst_info
    if info.message_imprint.hash_algorithm.dotted_string != _SHA256:
        raise VerificationError("the time-stamp token hashes with another algorithm than SHA-256")
    if info.message_imprint.message != hashlib.sha256(message).digest():
        raise VerificationError("the time-stamp token stamps another message, not this signature")
    when = info.gen_time
    if not authorities:
        raise VerificationError("no time-stamp authority is trusted here (PITH_TSA=none)")
    faults: list[str] = []
    for authority in authorities:
        try:
            roots = _load_certificates(authority.roots)
        except ValueError:
            faults.append(f"the pinned root of {authority.url} is no certificate")
            continue
        builder = VerifierBuilder()
        for root in roots:
            builder = builder.add_root_certificate(root)  # type: ignore[arg-type]
        try:
            builder.build().verify_message(response, message)
        except TokenRefused as exc:
            faults.append(_why(str(exc), when))
            continue
        if (authority.valid_from is not None and when < authority.valid_from) or (
            authority.valid_until is not None and when >= authority.valid_until
        ):
            faults.append(
                f"the time-stamp token's time {_shown(when)} is outside the window "
                f"{authority.url} is trusted for"
            )
            continue
        return ProvenTime(when, f"rfc3161 {authority.url}")
    # a fault of the token itself (its signature, its certificate) is the same whichever root
    # was tried: say that one; only when every authority failed on trust alone, say so
    for fault in faults:
        if fault != _UNTRUSTED:
            raise VerificationError(fault)
    names = ", ".join(a.url for a in authorities)
    raise VerificationError(f"{_UNTRUSTED} (pinned for: {names})")


_SHA256 = "2.16.840.1.101.3.4.2.1"
_UNTRUSTED = "the time-stamp token's chain reaches no pinned root"


def _decoded(token: bytes) -> TimeStampResponse:
    """`token` (a DER ContentInfo) as rfc3161-client's TimeStampResponse: the token wrapped in a
    granted TimeStampResp, the form its verifier takes. VerificationError when it is not one."""
    from rfc3161_client import decode_timestamp_response

    if len(token) > MAX_TOKEN_BYTES:
        raise VerificationError(f"the time-stamp token is over {MAX_TOKEN_BYTES // 1024} KiB")
    granted = b"\x30\x03\x02\x01\x00"  # PKIStatusInfo { status granted }
    try:
        response = decode_timestamp_response(_der_sequence(granted + token))
        # the parts read lazily are read here, so that a token missing one fails as junk
        whole = response.tst_info is not None and response.time_stamp_token() == token
    except ValueError:
        whole = False
    if not whole:
        raise VerificationError("the time-stamp token is not a DER RFC 3161 token")
    return response


def _der_sequence(content: bytes) -> bytes:
    """A DER SEQUENCE holding `content` (definite length, shortest form)."""
    size = len(content)
    if size < 0x80:
        return b"\x30" + bytes([size]) + content
    length = size.to_bytes((size.bit_length() + 7) // 8, "big")
    return b"\x30" + bytes([0x80 | len(length)]) + length + content


def _shown(when: datetime) -> str:
    return when.strftime("%Y-%m-%dT%H:%M:%SZ")


def _why(reason: str, when: datetime) -> str:
    """rfc3161-client's (and OpenSSL's) reason for refusing a token, as one line of ours."""
    if "expired" in reason or "not yet valid" in reason:
        return (
            f"the time-stamp token's certificate was not valid at its time {_shown(when)} "
            "(outside the authority certificate's validity window)"
        )
    if "digest failure" in reason or "signature failure" in reason:
        return (
            "the time-stamp token's signature does not hold: its bytes were changed after signing"
        )
    if "unsuitable certificate purpose" in reason or "EKU" in reason:
        return (
            "the time-stamp token is signed by a certificate that is not a time-stamping one "
            "(no critical id-kp-timeStamping EKU)"
        )
    if "signer certificate not found" in reason or "leaf certificate" in reason.lower():
        return "the time-stamp token carries no signer certificate (it must hold its chain)"
    if "Mismatch between messages" in reason:
        return "the time-stamp token stamps another message, not this signature"
    if "local issuer" in reason or "self-signed certificate" in reason or "verify error" in reason:
        return _UNTRUSTED
    return f"the time-stamp token does not verify ({reason[:160]})"
