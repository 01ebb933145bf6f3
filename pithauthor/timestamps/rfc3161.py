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

import hashlib
from collections.abc import Sequence
from datetime import datetime
from typing import TYPE_CHECKING

from pithauthor.errors import NetworkError, VerificationError
from pithauthor.net import RetryPolicy, exchange
from pithauthor.timestamps.proven import ProvenTime
from pithauthor.timestamps.time_sources import Authority, load_certificates

if TYPE_CHECKING:
    from rfc3161_client import TimeStampResponse

MAX_TOKEN_BYTES = 64 * 1024
"""The largest answer read from an authority, and the largest token checked: a real token with
its chain is a few kilobytes (DigiCert's, three RSA-4096 certificates, about 7 KB)."""

QUERY_TYPE = "application/timestamp-query"
REPLY_TYPE = "application/timestamp-reply"


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
            roots = load_certificates(authority.roots)
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
