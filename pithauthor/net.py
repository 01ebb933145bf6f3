"""The one network module: every request pithauthor sends goes through here.

What it owns, for the registry client, the identity fetcher (`pithauthor.identity.proofs`) and the
arXiv API client (`pithauthor.bibliography.arxiv_api`) alike:

- the URL policy: `protocol.text`'s one pure rule (https; plain http only to loopback; no
  user name or password; a port in 1-65535), applied by `check_url`, and `origin`;
- the one place an `httpx.Client` is made (`new_client`: no redirects followed, no cookies
  kept; tests/test_layout.py enforces it);
- the capped and time-bound read (`read_capped`): a whole answer within N bytes and T seconds,
  so that neither a flood nor a trickle of bytes holds a command;
- the retry policy and the one loop that applies it (`RetryPolicy`, `RETRY_STATUSES`,
  `parse_retry_after`, `Retry`, `with_retries`);
- the mapping of transport failures to one line (`transport_reason`).

On top of these, `RegistryHttp` talks to one registry:

- Retried: connection errors and timeouts, 429, 500, 502, 503, 504; exponential backoff with
  full jitter, capped; `Retry-After` (seconds or an HTTP date) is honoured on 429 and 503.
- Any other 5xx (501, 505, ...) is the server's fault, never the event's: RegistryResponseError
  at once (exit 3), and the event stays pending.
- The bearer token goes only to the origin of `base_url`, on writes; a read carries it only
  after that registry answered it 401 with `WWW-Authenticate` (the read is then retried once
  with the token, and later reads carry it too).
- 401/403 -> AuthError; other 4xx -> RegistryAnswerError (with the registry's reason), and
  EventRefused when it answers the POST of an event; unreadable JSON -> RegistryResponseError;
  nothing after every attempt -> NetworkError.
"""

from __future__ import annotations

import io
import json
import os
import re
import threading
import time
from collections.abc import Callable, Mapping
from datetime import UTC, datetime
from functools import lru_cache
from typing import TYPE_CHECKING, Any, NamedTuple, TypeVar

from pithauthor._version import __version__
from pithauthor.collector import network_started
from pithauthor.errors import (
    AuthError,
    EventRefused,
    FormatRefused,
    NetworkError,
    RegistryAnswerError,
    RegistryResponseError,
)
from pithauthor.fs import MAX_JSON_BYTES
from pithauthor.progress import Retrying, report
from pithauthor.protocol.canonical_json import JSONFault, parse_json
from pithauthor.protocol.urls import checked_url, origin

MAX_ANSWER_BYTES = MAX_JSON_BYTES
"""The largest answer read from a registry, decoded (a record, state or bundle is JSON)."""

# httpx is imported on the first request: it takes longer to load than Typer.

if TYPE_CHECKING:
    import httpx

T = TypeVar("T")

DEFAULT_REGISTRY = "https://pith.science"
# the statuses that say "not now" rather than "no": overload (429, 503), a gateway between us and
# the registry (502, 504), and 500, most often a passing fault (501, 505... are lasting ones)
RETRY_STATUSES = frozenset({429, 500, 502, 503, 504})
# methods that change nothing: a token is kept off them until the registry asks (`request`)
SAFE_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})


@lru_cache(maxsize=256)  # pure; called for every request (a batch posts to a few URLs)
def check_url(url: str, what: str = "the registry URL") -> str:
    """`url` stripped and without a trailing slash, when the one URL rule
    (`protocol.urls.checked_url`) allows it; else InputError, one line starting with `what`."""
    checked_url(url, what)
    return url.strip().rstrip("/")


ARXIV_PDF = "https://arxiv.org/pdf"
"""Where arXiv serves a version's PDF (`https://arxiv.org/pdf/2302.12445v2`): what a paper proof's
locator and an archived copy name."""

ARXIV_PDF_ENV = "PITH_ARXIV_PDF"
"""A mirror of `ARXIV_PDF` (or a loopback stand-in in tests) to download the PDFs from."""


def arxiv_pdf_base() -> str:
    """Where arXiv PDFs are downloaded from: `$PITH_ARXIV_PDF` (a mirror), else arxiv.org;
    under the URL policy (InputError naming the variable otherwise). Here, in the one network
    module, because both the identity proofs and the archive copies download them."""
    base = os.environ.get(ARXIV_PDF_ENV) or ARXIV_PDF
    return check_url(base, ARXIV_PDF_ENV)


# --- the parts every client shares -------------------------------------------------------------


class AnswerTooLarge(Exception):
    """An answer grew past its cap (each client says so in its own words)."""


class AnswerTooSlow(Exception):
    """An answer did not arrive whole in time: each read came in time, the whole did not."""


def new_client(
    *,
    headers: Mapping[str, str],
    timeout: float,
    connect_timeout: float | None = None,
    max_connections: int = 16,
    transport: httpx.BaseTransport | None = None,
    trust_env: bool = True,
    plain_http: bool = False,
) -> httpx.Client:
    """The one place an `httpx.Client` is made. Redirects are never followed here: each
    client decides (the registry takes none, the identity fetcher only to the same origin).
    `trust_env=False` where the host is a stranger's word (a proof's locator): then neither
    `~/.netrc` credentials nor proxy settings from the environment are used for it.

    `plain_http=True` for a client that is only ever asked http:// URLs (which the URL policy
    allows to loopback only): it does not load the CA bundle, which costs about 20 ms per
    client (a tenth of `pith verify --orcid` against a local ORCID), and its TLS context trusts
    no certificate at all, so a TLS connection it were ever asked for would fail, never go
    unchecked."""
    network_started()  # requests leave cycles behind (`collector.pause_until_network`)
    import ssl  # here, as httpx (which loads it anyway): a run that asks nothing needs neither

    import httpx

    verify: ssl.SSLContext | bool = True
    if plain_http:
        verify = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)  # CERT_REQUIRED, no CA: trusts nothing
    return httpx.Client(
        verify=verify,
        headers=dict(headers),
        timeout=httpx.Timeout(
            timeout, connect=timeout if connect_timeout is None else connect_timeout
        ),
        limits=httpx.Limits(
            max_connections=max_connections, max_keepalive_connections=max_connections
        ),
        transport=transport,
        follow_redirects=False,
        trust_env=trust_env,
    )


class ClientsByScheme:
    """One `new_client` per URL scheme, each made on first use (thread-safe). An http:// URL,
    which the URL policy allows to loopback only, gets a `plain_http` client: no CA bundle
    (about 20 ms per client, paid by every `pith` run against a local registry) and a TLS
    context that trusts nothing. Any other URL gets the verifying client. `settings` are
    `new_client`'s other arguments, the same for both."""

    def __init__(self, **settings: Any) -> None:
        self._settings = settings
        self._clients: dict[bool, httpx.Client] = {}
        self._lock = threading.Lock()

    def for_url(self, url: str) -> httpx.Client:
        # only a lower-case http:// is plain: anything else (HTTPS, or an odd spelling) takes
        # the verifying client, which can also speak plain http; never the other way round
        plain = url.startswith("http://")
        client = self._clients.get(plain)
        if client is None:
            with self._lock:
                client = self._clients.get(plain)
                if client is None:
                    client = new_client(plain_http=plain, **self._settings)
                    self._clients[plain] = client
        return client

    def close(self) -> None:
        with self._lock:
            clients, self._clients = list(self._clients.values()), {}
        for client in clients:
            client.close()


def read_capped(
    response: httpx.Response,
    limit: int,
    timeout: float,
    clock: Callable[[], float] = time.monotonic,
) -> bytes:
    """The whole (decoded) body of a streamed `response` within `limit` bytes and `timeout`
    seconds; AnswerTooLarge or AnswerTooSlow otherwise. httpx's timeout bounds each read
    only: a server sending one byte a second would never time out, hence the deadline."""
    declared = response.headers.get("Content-Length", "")
    if declared.isdigit() and int(declared) > limit:  # said up front: not even read
        raise AnswerTooLarge(limit)
    deadline = clock() + timeout
    # One buffer, handed over as the answer's bytes without a copy (`getvalue` gives its own
    # bytes object when nothing else holds it). A bytearray copied to bytes at the end, or
    # chunks joined, holds a body of megabytes twice, and the allocator gives both back to the
    # system after each read and faults them in again on the next: a 10 MB state was ~4,700
    # page faults per GET that way, ~2,400 this way.
    body = io.BytesIO()
    size = 0
    for chunk in response.iter_bytes():
        if clock() > deadline:
            raise AnswerTooSlow(timeout)
        size += body.write(chunk)
        if size > limit:
            raise AnswerTooLarge(limit)
    return body.getvalue()


def transport_reason(exc: Exception) -> str:
    """A transport failure (httpx's, or a too slow answer) in a few words."""
    import httpx

    if isinstance(exc, httpx.TimeoutException | AnswerTooSlow):
        return "timed out"
    if isinstance(exc, httpx.ConnectError):
        return "connection failed"
    return f"connection broken: {type(exc).__name__}"


class RetryPolicy(NamedTuple):
    """How often and how long to retry. Delays: uniform(0, min(cap, base * 2**n))."""

    max_attempts: int = 6
    base_delay: float = 0.5
    max_delay: float = 30.0
    max_retry_after: float = 120.0

    def delay(self, attempt: int, retry_after: float | None = None) -> float:
        # full jitter: `pith submit --parallel 8` threads that all met one 503 would otherwise
        # come back at the same instant and meet it again. A Retry-After is a floor, capped:
        # a registry asking for an hour is asked again after `max_retry_after`, and after the
        # last attempt NetworkError ends the command (the outbox keeps the event pending).
        import random  # here: only a retried request waits

        jitter = random.uniform(0, min(self.max_delay, self.base_delay * 2**attempt))
        if retry_after is None:
            return jitter
        return min(max(retry_after, jitter), self.max_retry_after)

    def most_waited(self, first: int, limit: int) -> float:
        """The longest the waits after attempts `first`..`limit - 2` (0-based) can add up to
        (without a Retry-After): what an author may still wait before the last attempt."""
        return float(
            sum(min(self.max_delay, self.base_delay * 2.0**n) for n in range(first, limit - 1))
        )


class Retry(NamedTuple):
    """One attempt's answer that is worth another: why (`HTTP 503`, `timed out`), and how many
    seconds the server asked to be left alone (its Retry-After), when it asked."""

    reason: str
    retry_after: float | None = None


def with_retries(
    attempt: Callable[[], T | Retry],
    policy: RetryPolicy,
    sleep: Callable[[float], None],
    limit: int | None = None,
    *,
    what: str,
) -> T | Retry:
    """The one retry loop: `attempt()` until it answers anything but a `Retry`, at most `limit`
    calls (the policy's `max_attempts` when None; the first call is always made), waiting
    `policy.delay` between calls; the last `Retry` when every call asked for another, for the
    caller to raise its own error. `what` (`the registry at https://…`) names the service in
    the `Retrying` report sent before each wait."""
    tries = policy.max_attempts if limit is None else limit
    done = 0
    while True:
        result = attempt()
        done += 1
        if not isinstance(result, Retry) or done >= tries:
            return result
        wait = policy.delay(done - 1, result.retry_after)
        if wait > 0:  # never sleep(0): a retry with nothing to wait for goes at once, unannounced
            # a registry that is down holds a command for up to 15 s of back-off: the author
            # is told what is retried and for how long (`pithauthor.progress`)
            left = wait + policy.most_waited(done, tries)
            report(Retrying(what, result.reason, done + 1, tries, wait, left))
            sleep(wait)


def parse_retry_after(value: str | None, now: float | None = None) -> float | None:
    """Seconds to wait from a Retry-After header (delta seconds or an HTTP date)."""
    if not value:
        return None
    value = value.strip()
    if value.isascii() and value.isdigit():  # str.isdigit alone takes "²" (float() does not)
        return float(value)
    from email.utils import parsedate_to_datetime  # here: socket, calendar; rarely needed

    try:
        when = parsedate_to_datetime(value)
        if when.tzinfo is None:
            when = when.replace(tzinfo=UTC)
        stamp = when.timestamp()
    # OverflowError: a date with a field past C's integers (an hour of 2**64)
    except (TypeError, ValueError, IndexError, OverflowError):
        return None
    current = datetime.now(UTC).timestamp() if now is None else now
    return max(0.0, stamp - current)


class RegistryHttp:
    """One registry, over one pooled httpx client. Thread-safe."""

    def __init__(
        self,
        base_url: str = DEFAULT_REGISTRY,
        *,
        token: str | None = None,
        timeout: float = 20.0,
        connect_timeout: float = 5.0,
        retry: RetryPolicy | None = None,
        max_connections: int = 16,
        transport: httpx.BaseTransport | None = None,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        self.base_url = check_url(base_url)
        self.retry = retry or RetryPolicy()
        self._timeout = timeout
        self._sleep = sleep
        headers = {
            "User-Agent": f"pithauthor/{__version__}",
            # pith.science serves a record's JSON only to `application/ld+json` (PROTOCOL.md
            # section 4, OBSERVED); plain JSON is what the rest of its answers are
            "Accept": "application/ld+json, application/json",
        }
        self._token = token or None
        self._token_origin = origin(self.base_url)
        self._reads_need_token = False
        self._http = ClientsByScheme(
            headers=headers,
            timeout=timeout,
            connect_timeout=connect_timeout,
            max_connections=max_connections,
            transport=transport,
        )

    def close(self) -> None:
        self._http.close()

    def __enter__(self) -> RegistryHttp:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def url(self, path_or_url: str) -> str:
        """An absolute URL under the policy; relative paths are joined to the base."""
        if path_or_url.startswith(("http://", "https://")):
            return check_url(path_or_url)
        return self.base_url + "/" + path_or_url.lstrip("/")

    # --- requests ------------------------------------------------------------------------

    def get_json(self, path_or_url: str, *, attempts: int | None = None) -> Any:
        """GET and parse JSON (with retries and error mapping); `attempts` caps the policy's."""
        response = self.request("GET", self.url(path_or_url), attempts=attempts)
        return _json(response)

    def get_if_changed(
        self, path_or_url: str, etag: str | None, *, attempts: int | None = None
    ) -> tuple[bytes, str | None]:
        """GET the raw body, revalidating a copy held under `etag` (`If-None-Match`): b"" when
        the answer is 304 Not Modified (the copy is current); else (the body, its ETag).
        `attempts` caps the policy's, as for `get_json`."""
        headers = {"If-None-Match": etag} if etag else {}
        response = self.request("GET", self.url(path_or_url), headers=headers, attempts=attempts)
        if response.status_code == 304:
            return b"", etag
        return response.content, response.headers.get("ETag")

    def post_json(
        self, url: str, doc: Mapping[str, Any], headers: Mapping[str, str] | None = None
    ) -> tuple[int, Any]:
        """POST a JSON document; returns (status, parsed answer) for a 2xx answer. A 4xx
        (not 401/403) is the registry's verdict on this very document: EventRefused."""
        body = json.dumps(doc, ensure_ascii=False, separators=(",", ":")).encode("utf-8")
        try:
            response = self.request(
                "POST",
                self.url(url),
                content=body,
                headers={"Content-Type": "application/json", **(headers or {})},
            )
        except RegistryAnswerError as exc:
            if refuses_format(exc.status, exc.answer):
                # no verdict on this document: the registry cannot read any body of this
                # format, so every event would be refused alike (errors.FormatRefused)
                raise FormatRefused(
                    f"the registry at {origin(url)} refuses the format of the events "
                    f"pithauthor sends ({exc.status}: {_reason(exc.answer)}); "
                    "nothing was rejected, the events stay pending",
                    exc.status,
                ) from None
            # known only here: this refusal answers the document itself (a 4xx to a read,
            # such as the record's 404, says nothing about an event and stays as it is)
            raise EventRefused(str(exc), exc.status, exc.answer) from None
        return response.status_code, _json(response)

    def request(
        self, method: str, url: str, *, attempts: int | None = None, **kwargs: Any
    ) -> httpx.Response:
        """One request with the retry policy (at most `attempts` tries when given); raises the
        package's errors, never httpx's."""
        import httpx

        where = origin(url)
        mine = self._token is not None and where == self._token_origin
        authorize = mine and (method not in SAFE_METHODS or self._reads_need_token)
        # A POST is retried like a GET after a time-out or a 5xx: the event's POST carries
        # `Idempotency-Key: <event_id>` (docs/protocol.md, "Files and submission", DESIGN), so
        # a second delivery of one event is answered 200 and never makes a second event.
        limit = (
            self.retry.max_attempts if attempts is None else min(attempts, self.retry.max_attempts)
        )

        def once() -> httpx.Response | Retry:
            nonlocal authorize
            while True:  # at most twice: the second send is the read the registry asked a token for
                try:
                    response = self._send(method, url, self._with_token(kwargs, authorize))
                except (httpx.TransportError, AnswerTooSlow) as exc:
                    return Retry(transport_reason(exc))
                status = response.status_code
                if status == 304 and "If-None-Match" in (kwargs.get("headers") or {}):
                    return response  # the copy the request named is current (`get_if_changed`)
                if 300 <= status < 400:  # no redirect is followed, nor taken for an answer
                    raise RegistryResponseError(
                        f"the registry at {where} answered {status} (a redirect, not followed); "
                        "nothing was lost"
                    )
                if status < 400:
                    return response
                # only a Bearer challenge from the token's own origin earns the token: a bare
                # 401, or one from another origin, is an AuthError below
                if status == 401 and mine and not authorize and _asks_for_token(response):
                    # A read went without the token (it is sent only where needed, so a
                    # registry that serves reads openly never sees it). This registry asks
                    # for it: the same read once more with it, within this attempt
                    # (`authorize` is now set, so this branch cannot loop), and every later
                    # read carries it from the start.
                    authorize = self._reads_need_token = True
                    continue
                if status >= 500 and status not in RETRY_STATUSES:
                    raise RegistryResponseError(
                        f"the registry at {where} answered {status} "
                        f"({response.reason_phrase}); nothing was lost, try again later"
                    )
                if status not in RETRY_STATUSES:
                    raise _answer_error(response, url)
                retry_after = None
                if status in (429, 503):
                    retry_after = parse_retry_after(response.headers.get("Retry-After"))
                return Retry(f"HTTP {status}", retry_after)

        result = with_retries(once, self.retry, self._sleep, limit, what=f"the registry at {where}")
        if isinstance(result, Retry):
            raise NetworkError(
                f"the registry at {where} did not answer ({result.reason}) after "
                f"{limit} attempts; nothing was lost, try again later"
            )
        return result

    def _send(self, method: str, url: str, kwargs: dict[str, Any]) -> httpx.Response:
        """One exchange, its answer read whole within `timeout` seconds (a trickle of bytes is a
        time-out) and MAX_ANSWER_BYTES (decoded; more is RegistryResponseError)."""
        import httpx

        with self._http.for_url(url).stream(method, url, **kwargs) as streamed:
            try:
                body = read_capped(streamed, MAX_ANSWER_BYTES, self._timeout)
            except AnswerTooLarge:
                raise RegistryResponseError(
                    f"the registry at {origin(url)} answered more than "
                    f"{MAX_ANSWER_BYTES // 2**20} MiB; nothing was lost"
                ) from None
        # the body is already decoded and whole: the rebuilt Response must not decode it a
        # second time or check it against the length of the compressed one. The headers go
        # across as the bytes received: as text (decoded as Latin-1) a byte past ASCII in any
        # header, which HTTP allows, could not be encoded again (UnicodeEncodeError)
        headers = [
            (k, v)
            for k, v in streamed.headers.raw
            if k.lower() not in (b"content-encoding", b"content-length", b"transfer-encoding")
        ]
        return httpx.Response(
            streamed.status_code,
            headers=headers,
            content=body,
            request=streamed.request,
            extensions=streamed.extensions,
        )

    def _with_token(self, kwargs: dict[str, Any], authorize: bool) -> dict[str, Any]:
        if not authorize:
            return kwargs
        headers = {**(kwargs.get("headers") or {}), "Authorization": f"Bearer {self._token}"}
        return {**kwargs, "headers": headers}


# a 422 whose reason says the body's format, not its content, is refused (DESIGN,
# docs/protocol.md "Files and submission"): `format` as a word, not inside a check's name
_FORMAT_WORDS = re.compile(
    r"unsupported|media[ _-]?type|content[ _-]?type|\bformat\b", re.IGNORECASE
)


def refuses_format(status: int, answer: object) -> bool:
    """True when a 4xx to a POST refuses the body's format, not the document: 415, or a 422
    whose `error` names the format or content type."""
    if status == 415:
        return True
    return status == 422 and bool(_FORMAT_WORDS.search(_reason(answer)))


def _reason(answer: object) -> str:
    """The registry's `error` text, on one short line (it ends up in ours)."""
    reason = answer.get("error") if isinstance(answer, Mapping) else None
    return " ".join(str(reason or "no reason given").split())[:200]


def _asks_for_token(response: httpx.Response) -> bool:
    return "bearer" in response.headers.get("WWW-Authenticate", "").lower()


def _json(response: httpx.Response) -> Any:
    return json_answer(response.content, str(response.url), response.status_code)


def json_answer(content: bytes, url: str, status: int = 200) -> Any:
    """A registry's answer `content` parsed by the one strict reader; else RegistryResponseError."""
    try:
        return parse_json(content)
    except JSONFault as exc:
        raise RegistryResponseError(
            f"the registry at {origin(url)} answered {status} "
            f"with something that is not strict JSON ({exc})"
        ) from None


def _answer_error(response: httpx.Response, url: str) -> Exception:
    status = response.status_code
    try:
        answer: Any = parse_json(response.content)
    except JSONFault:
        answer = None
    reason = answer.get("error") if isinstance(answer, Mapping) else None
    # the registry's words end up in our one stderr line: no newlines (nothing that could pass
    # for a line of ours), and short enough to stay one line
    reason = " ".join(str(reason or response.reason_phrase or "").split())[:300]
    where = origin(url)
    if status == 401:
        return AuthError(
            f"the registry at {where} wants sign-in (401): {reason}; "
            "run `pith auth login` or set PITH_TOKEN"
        )
    if status == 403:
        return AuthError(
            f"the registry at {where} refused the token (403): {reason}",
            hint=f"sign in again: pith auth login --registry {where} --token-file FILE",
        )
    if status == 404:
        return RegistryAnswerError(f"not found on the registry at {where} (404): {reason}", 404)
    return RegistryAnswerError(
        f"the registry at {where} refused ({status}): {reason}", status, answer
    )


# --- services other than the registry ----------------------------------------------------------


class ServiceAnswer(NamedTuple):
    """A service's whole answer: its status and body (read within the caller's cap)."""

    status: int
    body: bytes


def exchange(
    method: str,
    url: str,
    *,
    what: str,
    content: bytes | None = None,
    headers: Mapping[str, str] | None = None,
    timeout: float = 10.0,
    limit: int = 64 * 1024,
    retry: RetryPolicy | None = None,
    sleep: Callable[[float], None] = time.sleep,
) -> ServiceAnswer:
    """One request to a service that is not the registry (an OpenTimestamps calendar, a block
    explorer, a timestamp authority), under the same rules: the URL policy (`check_url`), no
    redirect followed, no credentials or proxies from the environment (the service is named by
    configuration, and nothing of ours is owed to it), a whole answer within `limit` bytes and
    `timeout` seconds, and the one retry loop for connection failures, time-outs and
    429/500/502/503/504. Any other status is returned as it is: each service's protocol says what
    its 404 means (a calendar's "still pending"). `what` names the service in our messages
    ("the OpenTimestamps calendar at https://..."). NetworkError when no attempt got an answer,
    or the answer was too large or a redirect."""
    import httpx

    check_url(url, what)
    # sent as given (bar surrounding space): `check_url` drops a trailing slash, which some
    # APIs need (Software Heritage's, whose paths end in one)
    target = url.strip()
    policy = retry or RetryPolicy(max_attempts=3, base_delay=0.5, max_delay=2.0)
    client = _service_clients(timeout).for_url(target)
    sent = dict(headers or {})

    def once() -> ServiceAnswer | Retry:
        try:
            with client.stream(method, target, content=content, headers=sent) as streamed:
                body = read_capped(streamed, limit, timeout)
                status = streamed.status_code
                retry_after = streamed.headers.get("Retry-After")
        except (httpx.TransportError, AnswerTooSlow) as exc:
            return Retry(transport_reason(exc))
        except AnswerTooLarge:
            raise NetworkError(f"{what} answered more than {limit} bytes") from None
        if 300 <= status < 400:
            raise NetworkError(f"{what} answered {status} (a redirect, not followed)")
        if status in RETRY_STATUSES:
            wait = parse_retry_after(retry_after) if status in (429, 503) else None
            return Retry(f"HTTP {status}", wait)
        return ServiceAnswer(status, body)

    result = with_retries(once, policy, sleep, what=what)
    if isinstance(result, Retry):
        raise NetworkError(
            f"{what} did not answer ({result.reason}) after {policy.max_attempts} attempts"
        )
    return result


_services: dict[float, ClientsByScheme] = {}
_services_lock = threading.Lock()


def _service_clients(timeout: float) -> ClientsByScheme:
    """The clients `exchange` shares, one set per timeout, kept for the process: `pith submit`
    asks three calendars for each of many events, and a new verifying client loads the CA
    bundle each time (40-90 ms), where a kept one also keeps its connections."""
    with _services_lock:
        clients = _services.get(timeout)
        if clients is None:
            clients = ClientsByScheme(
                headers={"User-Agent": f"pithauthor/{__version__}"},
                timeout=timeout,
                trust_env=False,
                max_connections=8,
            )
            _services[timeout] = clients
        return clients
