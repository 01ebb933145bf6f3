"""Bad answers and policy: each a clear one-line error with the documented exit code, and the
outbox intact. Faults are injected with an httpx MockTransport only where a real registry cannot
misbehave that way (invalid JSON, a tampered record, 429 with Retry-After)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from support.cli import RunPith, assert_one_line_error
from support.registry import REAL_NUMBER, citations, manifest_file, start_server

from pithauthor.errors import (
    AuthError,
    InputError,
    NetworkError,
    RegistryResponseError,
    VerificationError,
)
from pithauthor.net import (
    RegistryHttp,
    Retry,
    RetryPolicy,
    check_url,
    parse_retry_after,
    with_retries,
)
from pithauthor.protocol.urls import origin
from pithauthor.registry.client import RegistryClient
from pithauthor.registry.local.server import RegistryServer
from pithauthor.registry.outbox import Outbox
from pithauthor.registry.submit import store_in_outbox, submit_pending
from pithauthor.verify import pinned_trust

BODY = REAL_NUMBER.rsplit(":", 1)[1]


@pytest.fixture
def server(tmp_path: Path) -> Iterator[RegistryServer]:
    srv = start_server(tmp_path / "reg")
    yield srv
    srv.stop()


@pytest.mark.parametrize(
    "url",
    [
        "http://example.org",
        "http://10.0.0.1:8080",
        "ftp://127.0.0.1",
        "pith.science",
        "http://127.evil.example",
        # the one URL rule (`protocol.text`) for registries too: a password would be sent
        "https://user:pw@pith.science",
        "http://127.0.0.1:0",
    ],
)
def test_url_policy_refuses_plain_http_off_loopback(url: str) -> None:
    with pytest.raises(InputError):
        check_url(url)


@pytest.mark.parametrize(
    "url", ["https://pith.science/", "http://127.0.0.1:8787", "http://[::1]:80", "http://localhost"]
)
def test_url_policy_allows_https_and_loopback_http(url: str) -> None:
    assert check_url(url) == url.rstrip("/")


def test_an_origin_has_one_spelling_whoever_wrote_it() -> None:
    """Case and an explicit default port do not make another origin; another port does."""
    assert origin("HTTPS://Pith.Science:443/pith/x") == "https://pith.science"
    assert origin("http://[::1]:8787/a") == "http://[::1]:8787"
    assert origin("http://LOCALHOST:80") == "http://localhost"
    assert origin("https://pith.science:8443") != origin("https://pith.science")


def test_retry_after_accepts_seconds_and_http_dates() -> None:
    assert parse_retry_after("7") == 7.0
    when = parse_retry_after("Sun, 29 Nov 2026 14:00:10 GMT", now=1795960800.0)
    assert when == 10.0
    assert parse_retry_after("soon") is None


def test_an_answer_with_a_header_byte_past_ascii_is_read() -> None:
    # found by fuzzing Retry-After: an answer was rebuilt from its headers as text, and a byte
    # past ASCII in any header (HTTP allows them; httpx reads them as Latin-1) could not be
    # encoded again: UnicodeEncodeError out of every registry request ("a bug in pith")
    answer = httpx.Response(200, headers={"X-Note": "caf\u00e9".encode("latin-1")}, json={})
    http = RegistryHttp("https://pith.science", transport=httpx.MockTransport(lambda r: answer))
    response = http.request("GET", "https://pith.science/api/x")
    assert response.status_code == 200 and response.headers.raw[0] == (b"X-Note", b"caf\xe9")


@pytest.mark.parametrize(
    "header",
    [
        "\u00b2",  # byte 0xB2 (httpx reads headers as Latin-1): a superscript two, which
        # str.isdigit() takes for a digit and float() refused (ValueError)
        "Fri, 24 Feb 2023 18446744073709551616:11:18 GMT",  # OverflowError
    ],
)
def test_a_retry_after_that_is_neither_ascii_seconds_nor_a_date_is_ignored(header: str) -> None:
    # found by fuzzing dates: each raised out of a registry request (ValueError: "a bug in
    # pith"; OverflowError: "internal error")
    assert parse_retry_after(header) is None
    retry_after = header.encode("latin-1")  # the bytes a registry would send
    answers = iter([httpx.Response(503, headers={"Retry-After": retry_after}), httpx.Response(200)])
    http = RegistryHttp(
        "https://pith.science",
        transport=httpx.MockTransport(lambda request: next(answers)),
        retry=RetryPolicy(max_attempts=2, base_delay=0.01),
        sleep=lambda seconds: None,
    )
    assert http.request("GET", "https://pith.science/api/x").status_code == 200


def test_429_is_retried_after_the_delay_the_registry_asks() -> None:
    answers = iter(
        [httpx.Response(429, headers={"Retry-After": "3"}), httpx.Response(200, json={})]
    )
    slept: list[float] = []
    http = RegistryHttp(
        "https://pith.science",
        transport=httpx.MockTransport(lambda request: next(answers)),
        retry=RetryPolicy(max_attempts=3, base_delay=0.01),
        sleep=slept.append,
    )
    assert http.get_json("/x") == {}
    assert slept == [3.0]


def test_the_one_retry_loop_stops_at_an_answer_or_the_limit_and_never_sleeps_zero() -> None:
    slept: list[float] = []
    no_backoff = RetryPolicy(max_attempts=5, base_delay=0.0)
    calls = iter([Retry("HTTP 503"), Retry("HTTP 429", 2.0), "answer", Retry("unreached")])
    assert with_retries(lambda: next(calls), no_backoff, slept.append, what="x") == "answer"
    assert slept == [2.0]  # the first retry had nothing to wait for: it went at once
    tries: list[int] = []

    def refused() -> Retry:
        tries.append(1)
        return Retry(f"HTTP 50{len(tries)}")

    last = with_retries(refused, no_backoff, slept.append, 3, what="x")
    assert last == Retry("HTTP 503") and len(tries) == 3


def test_backoff_is_capped_full_jitter() -> None:
    policy = RetryPolicy(base_delay=1.0, max_delay=4.0)
    delays = [policy.delay(10) for _ in range(200)]
    assert all(0 <= d <= 4.0 for d in delays)
    assert max(delays) > 2.0  # jitter spreads up to the cap


@pytest.mark.parametrize(
    "body",
    [
        b"<html>",
        b'{"a": NaN}',
        b'{"n": ' + b"9" * 5000 + b"}",
        b'{"s": "\\ud800"}',
        b'{"a": 1, "a": 2}',
        b"[" * 100_000,
        b'{"a": "\xff"}',
    ],
    ids=["html", "nan", "huge-int", "lone-surrogate", "duplicate-key", "deep", "not-utf8"],
)
def test_an_answer_that_is_not_strict_json_is_a_response_error(body: bytes) -> None:
    http = RegistryHttp(
        "https://pith.science",
        transport=httpx.MockTransport(lambda r: httpx.Response(200, content=body)),
    )
    with pytest.raises(RegistryResponseError, match="not strict JSON"):
        http.get_json("/pith/X")


def test_record_with_a_wrong_hash_or_receipt_is_not_trusted(server: RegistryServer) -> None:
    real = httpx.get(f"{server.url}/pith/{BODY}").json()
    for tamper in ("hash", "receipt"):
        doc = json.loads(json.dumps(real))
        if tamper == "hash":
            doc["canonical_record"]["source"]["version"] = 3
        else:
            doc["receipt"]["signature_b64"] = doc["receipt"]["signature_b64"][::-1]
        transport = httpx.MockTransport(lambda r, d=doc: httpx.Response(200, json=d))
        client = RegistryClient(server.url, trust=pinned_trust())
        client.trust_local_registry()
        client.http = RegistryHttp(server.url, transport=transport)
        with pytest.raises(VerificationError, match="does not verify"):
            client.record(REAL_NUMBER)


def test_unknown_registry_key_is_refused(server: RegistryServer) -> None:
    with (
        RegistryClient(server.url, trust=pinned_trust()) as client,
        pytest.raises(VerificationError, match="not trusted"),
    ):
        client.record(REAL_NUMBER)


def test_401_stops_the_batch_and_keeps_the_outbox(tmp_path: Path) -> None:
    srv = start_server(tmp_path / "reg", token="t0ken")
    try:
        store_in_outbox(citations(3), srv.url)
        with RegistryClient(srv.url, trust=pinned_trust(), token="") as client:
            client.trust_local_registry()
            result = submit_pending(client=client)
        assert isinstance(result.error, AuthError)
        with Outbox() as outbox:
            assert outbox.counts() == {"pending": 3, "accepted": 0, "rejected": 0}
    finally:
        srv.stop()


def test_cli_401_is_exit_4_and_login_fixes_it(tmp_path: Path, pith: RunPith) -> None:
    srv = start_server(tmp_path / "reg", token="t0ken")
    try:
        manifest = manifest_file(srv.url, tmp_path / "reg", tmp_path / "m.json")
        batch = tmp_path / "events.jsonl"
        batch.write_text("\n".join(json.dumps(e) for e in citations(2)), "utf-8")
        common = ["--registry", srv.url, "--trust-manifest", str(manifest)]
        denied = pith("submit", str(batch), *common)
        assert denied.returncode == 4
        assert "wants sign-in (401)" in denied.stderr
        assert "t0ken" not in denied.stderr
        token_file = tmp_path / "token"
        token_file.write_text("t0ken\n", "utf-8")
        login = pith("auth", "login", "--registry", srv.url, "--token-file", str(token_file))
        assert login.returncode == 0, login.stderr
        sent = pith("submit", *common, "--json")
        assert sent.returncode == 0, sent.stderr
        assert len(json.loads(sent.stdout)["accepted"]) == 2
    finally:
        srv.stop()


def test_cli_404_for_an_unknown_number_is_exit_1(
    server: RegistryServer, tmp_path: Path, pith: RunPith
) -> None:
    manifest = manifest_file(server.url, tmp_path / "reg", tmp_path / "m.json")
    result = pith(
        "fetch",
        "pith:2020:" + "A" * 26,
        "--registry",
        server.url,
        "--trust-manifest",
        str(manifest),
    )
    assert_one_line_error(result, 1)
    assert "not found" in result.stderr and "404" in result.stderr


def test_cli_refuses_plain_http_to_a_remote_host(pith: RunPith) -> None:
    result = pith("fetch", REAL_NUMBER, "--registry", "http://pith.science")
    assert_one_line_error(result, 2)


def test_cli_dead_network_is_exit_3_with_the_outbox_intact(tmp_path: Path, pith: RunPith) -> None:
    from support.registry import free_port

    events = citations(2)
    batch = tmp_path / "events.jsonl"
    batch.write_text("\n".join(json.dumps(e) for e in events), "utf-8")
    url = f"http://127.0.0.1:{free_port()}"
    result = pith("submit", str(batch), "--registry", url, "--retries", "2", "--json")
    assert result.returncode == 3
    assert result.stderr.count("pith: error:") == 1 and "Traceback" not in result.stderr
    with Outbox() as outbox:
        assert outbox.counts()["pending"] == 2


def test_network_error_after_every_attempt_names_the_registry() -> None:
    http = RegistryHttp(
        "https://pith.science",
        transport=httpx.MockTransport(lambda r: httpx.Response(503)),
        retry=RetryPolicy(max_attempts=2, base_delay=0.0),
    )
    with pytest.raises(NetworkError, match=r"pith\.science.*HTTP 503.*2 attempts"):
        http.get_json("/x")


def test_unknown_number_during_submit_keeps_the_events_pending(server: RegistryServer) -> None:
    from support.registry import TestSigner, citation

    from pithauthor.protocol.ids import PithNumber
    from pithauthor.protocol.subject import Subject

    unknown = Subject(PithNumber.from_digest("22" * 32, 2022), "22" * 32)
    store_in_outbox([citation(TestSigner(), 1, subject=unknown)], server.url)
    with RegistryClient(server.url, trust=pinned_trust()) as client:
        client.trust_local_registry()
        result = submit_pending(client=client)
    assert result.error is not None and "404" in str(result.error)
    assert result.rejected == {}
    with Outbox() as outbox:
        assert outbox.counts()["pending"] == 1


def test_answer_that_is_not_json_keeps_the_events_pending(server: RegistryServer) -> None:
    store_in_outbox(citations(2), server.url)
    with RegistryClient(server.url, trust=pinned_trust()) as client:
        client.trust_local_registry()
        client.record(REAL_NUMBER)  # cached: verified from the real server
        client.http = RegistryHttp(
            server.url, transport=httpx.MockTransport(lambda r: httpx.Response(201, text="ok!"))
        )
        result = submit_pending(client=client)
    assert isinstance(result.error, RegistryResponseError)
    with Outbox() as outbox:
        assert outbox.counts() == {"pending": 2, "accepted": 0, "rejected": 0}


def test_rejected_event_keeps_the_reason_and_can_be_retried(server: RegistryServer) -> None:
    from support.registry import SUBJECT, TestSigner, citing_number

    from pithauthor.protocol import PithNumber
    from pithauthor.sign import sign_citation

    # a correction of another key's citation: it verifies by itself (pith sends only what
    # verifies), but the registry, which holds the citation it names, refuses it with 422
    citing = PithNumber.parse(citing_number(1))
    theirs = sign_citation(TestSigner(), SUBJECT, citing, "cites")
    server.store.insert_event(SUBJECT.pith_number.body, theirs, theirs["created_at"])  # type: ignore[arg-type]
    event = sign_citation(TestSigner(), SUBJECT, citing, "extends", replaces=theirs["event_id"])
    store_in_outbox([event], server.url)
    with RegistryClient(server.url, trust=pinned_trust()) as client:
        client.trust_local_registry()
        result = submit_pending(client=client)
    assert list(result.rejected) == [event["event_id"]]
    assert "422" in result.rejected[event["event_id"]]
    with Outbox() as outbox:
        entry = outbox.get(event["event_id"])
        assert entry is not None and entry.state == "rejected" and "corrects" in str(entry.reason)
        assert outbox.retry() == 1


def test_a_command_reads_its_trust_manifests_once(server: RegistryServer, tmp_path: Path) -> None:
    """The registry options are read once per command: the manifest is gone after the options
    were checked, and the record files' trust and the client (which then talks to the real
    local registry) still trust its key."""
    from pithauthor.registry.access import RegistryAccess, RegistryOptions

    path = tmp_path / "m.json"
    path.write_text(json.dumps(server.key.manifest(server.url)), "utf-8")
    key_id = server.key.key_id
    with RegistryAccess(RegistryOptions(server.url, (str(path),))) as access:
        path.unlink()
        assert key_id in access.trust().keys
        assert key_id in access.client.trust.keys
        assert access.client.record(REAL_NUMBER)["pith_number"] == REAL_NUMBER


def test_options_for_another_registry_never_carry_the_local_key_to_a_remote_one() -> None:
    from pithauthor.registry.access import RegistryOptions

    options = RegistryOptions("http://127.0.0.1:8787", ("m.json",), trust_local=True, retries=2)
    remote = options.for_registry("https://mirror.example")
    assert (remote.registry, remote.trust_local, remote.retries) == (
        "https://mirror.example",
        False,
        2,
    )
    assert options.for_registry("http://localhost:9").trust_local is True


@pytest.mark.parametrize("encoding", ["identity", "gzip"])
def test_an_answer_of_megabytes_arrives_byte_for_byte_plain_or_compressed(encoding: str) -> None:
    # the read fills one buffer and hands it over without a copy (net.read_capped): every byte
    # of a 1 MB answer, in order, whether its length is the body's or the compressed one's
    import gzip
    import os
    import threading
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

    doc = json.dumps({"blob": os.urandom(500_000).hex()}).encode()
    sent = gzip.compress(doc) if encoding == "gzip" else doc

    class Big(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Encoding", encoding)
            self.send_header("Content-Length", str(len(sent)))
            self.end_headers()
            self.wfile.write(sent)

        def log_message(self, *args: object) -> None:
            pass

    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Big)
    threading.Thread(target=httpd.serve_forever, args=(0.05,), daemon=True).start()
    http = RegistryHttp(f"http://127.0.0.1:{httpd.server_address[1]}")
    try:
        response = http.request("GET", http.url("/big"))
        assert response.content == doc
        assert http.get_json("/big") == json.loads(doc)
    finally:
        http.close()
        httpd.shutdown()
        httpd.server_close()
