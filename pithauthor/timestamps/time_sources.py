"""Whom trusted time asks (docs/protocol.md, "Trusted time"): the RFC 3161 authorities
(`PITH_TSA`, else the two shipped with their pinned roots) and the OpenTimestamps calendars
(`PITH_OTS_CALENDARS`, else the public ones), read together as `Sources`; `none` for both is
the opt-out.

Apart from the asking and checking (`rfc3161`, `ots`, `flow`) because every signing command
reads these settings before it signs (a bad one is bad input, found first), while most runs
of an author who opted out ask nothing: `pith cite` then loads neither the proofs' modules
nor their block headers (about 5 ms of a warm 300-entry run's imports).
"""

from __future__ import annotations

import base64
import binascii
import os
import pkgutil
import re
from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import NamedTuple

from pithauthor.errors import InputError
from pithauthor.fs import read_user_file
from pithauthor.net import check_url

TSA_ENV = "PITH_TSA"
"""The setting that replaces the default authorities: `URL=ROOTS.pem,...`, or `none`."""

MAX_ROOTS_FILE_BYTES = 1024 * 1024
"""The largest PEM file of roots `PITH_TSA` may name."""

_PEM = re.compile(
    rb"-----BEGIN CERTIFICATE-----\s*([A-Za-z0-9+/=\s]+?)\s*-----END CERTIFICATE-----"
)


class Authority(NamedTuple):
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
            load_certificates(roots)
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


def load_certificates(ders: Sequence[bytes]) -> list[object]:
    """`cryptography` certificates of `ders`; ValueError for one that is not a certificate."""
    # cryptography loads in ~30 ms: only a check, a request or a PITH_TSA root file needs it
    from cryptography import x509

    return [x509.load_der_x509_certificate(der) for der in ders]


CALENDARS_ENV = "PITH_OTS_CALENDARS"
"""The calendars to stamp at: URLs separated by commas or spaces, or `none` to stamp at none."""

DEFAULT_CALENDARS = (
    "https://a.pool.opentimestamps.org",
    "https://a.pool.eternitywall.com",
    "https://ots.btc.catallaxy.com",
)
"""The public calendars, one per operator (Peter Todd's OpenTimestamps, Eternity Wall,
Catallaxy), all among the reference client's defaults: a proof needs one calendar to reach a
block, and three operators do not fail or lie together (docs/protocol.md, "Trusted time")."""


def calendars_from_env(env: Mapping[str, str] | None = None) -> tuple[str, ...]:
    """The calendars `PITH_OTS_CALENDARS` names (`DEFAULT_CALENDARS` when unset; none for
    `none`), each under the URL policy (InputError naming the variable otherwise)."""
    value = (os.environ if env is None else env).get(CALENDARS_ENV, "").strip()
    if not value:
        return DEFAULT_CALENDARS
    if value.lower() == "none":
        return ()
    urls = [part for part in re.split(r"[,\s]+", value) if part]
    return tuple(dict.fromkeys(check_url(url, CALENDARS_ENV) for url in urls))


class Sources(NamedTuple):
    """Whom to ask: the RFC 3161 authorities and the OpenTimestamps calendars."""

    authorities: tuple[Authority, ...] = ()
    calendars: tuple[str, ...] = ()

    @property
    def empty(self) -> bool:
        """True when nothing is to be asked (the opt-out)."""
        return not self.authorities and not self.calendars


def sources_from_env(env: Mapping[str, str] | None = None) -> Sources:
    """The authorities `PITH_TSA` and the calendars `PITH_OTS_CALENDARS` name (the defaults
    when unset; `none` for neither: the opt-out). InputError, one line, for a bad setting."""

    env = os.environ if env is None else env
    return Sources(authorities_from_env(env), calendars_from_env(env))
