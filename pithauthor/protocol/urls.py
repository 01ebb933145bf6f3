"""The one URL rule of the network layer, pure (no I/O): every address pith sends a request
to obeys it, whoever named it (a registry's base URL or action link, a proof's locator, the
ORCID API, arXiv's API, a `--paper-pdf` URL): https, or plain http only to this machine (a
loopback address or `localhost`); a host; no spaces or control characters; a port, if any, in
1-65535; no user name or password (they would be sent, and a proof's host is its meaning).

`pithauthor.net` (the one network module) applies it; so does `protocol.checks.record` for
the links a record names. Origins are compared here too, one way for all (`origin_of`).
"""

from __future__ import annotations

import ipaddress
from urllib.parse import SplitResult, urlsplit

from pithauthor.errors import InputError


def is_loopback(host: str) -> bool:
    """True for `localhost` and every loopback address (127.0.0.0/8, ::1)."""
    if host.lower() in ("localhost", "localhost."):
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def checked_url(url: str, what: str) -> SplitResult:
    """The parts of `url` (stripped) when the rule allows it; else an InputError, one line
    starting with `what` (e.g. "--orcid-api")."""
    text = url.strip()
    try:
        parts = urlsplit(text)
        host = parts.hostname or ""
        port = parts.port
    except ValueError as exc:  # "http://[::1", a port beyond 65535
        raise InputError(f"{what} {url!r} is not a URL ({exc})") from None
    odd = any(c.isspace() or not c.isprintable() for c in text)
    if parts.scheme not in ("https", "http") or not host or odd:
        raise InputError(f"{what} {url!r} is not an https:// address")
    if port == 0:
        raise InputError(f"{what} {url!r}: port 0")
    if parts.username is not None or parts.password is not None:
        raise InputError(f"{what} {url!r}: an address with a user name or password is refused")
    # plain http only where no byte leaves the machine: elsewhere anyone on the path could
    # change a record, a proof or an answer in flight (a token would travel in clear too)
    if parts.scheme == "http" and not is_loopback(host):
        raise InputError(f"{what}: refusing plain http to {host} (https, or http only to loopback)")
    return parts


_DEFAULT_PORTS = {"https": 443, "http": 80}


def origin_of(url: str) -> tuple[str, str, int] | None:
    """(scheme, host, port) of an http(s) address, the port made explicit (443, 80); None for
    anything else. Two addresses share an origin when these are equal: another port of the
    same host is another server, and may be another person's."""
    try:
        parts = urlsplit(url.strip())
        # `example.org.` (the root's dot) is `example.org`: one host, one origin
        host, port = (parts.hostname or "").lower().rstrip("."), parts.port
    except ValueError:
        return None
    scheme = parts.scheme.lower()
    if scheme not in _DEFAULT_PORTS or not host:
        return None
    return scheme, host, port if port is not None else _DEFAULT_PORTS[scheme]


def origin(url: str) -> str:
    """`scheme://host[:port]` of an http(s) address in one spelling: lowercased, the default
    port left out, an IPv6 host in brackets; `url` itself when it has no origin. Two addresses
    have one origin exactly when their `origin_of` are equal."""
    found = origin_of(url)
    if found is None:
        return url
    scheme, host, port = found
    host = f"[{host}]" if ":" in host else host
    return f"{scheme}://{host}" + ("" if port == _DEFAULT_PORTS[scheme] else f":{port}")


def same_origin(a: str, b: str) -> bool:
    """True when `a` and `b` are http(s) addresses of one origin (scheme, host and port)."""
    first = origin_of(a)
    return first is not None and first == origin_of(b)
