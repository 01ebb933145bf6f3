"""A client made for plain http:// (net.new_client's plain_http, which loads no CA bundle) must
fail closed if it is ever asked for TLS: its context trusts no certificate, so a TLS server is
refused, never talked to unchecked. And every client that picks one by scheme
(net.ClientsByScheme: the registry client, the identity fetcher) gives it only http:// URLs."""

from __future__ import annotations

import shutil
import ssl
import subprocess
import threading
from http.server import BaseHTTPRequestHandler, HTTPServer
from pathlib import Path
from typing import Any

import httpx
import pytest

from pithauthor import net
from pithauthor.errors import NetworkError
from pithauthor.identity import fetch as fetch_module
from pithauthor.net import ClientsByScheme, RegistryHttp, RetryPolicy, new_client


class _Answer(BaseHTTPRequestHandler):
    def log_message(self, *args: Any) -> None:
        pass

    def do_GET(self) -> None:
        body = b'{"ok": true}'
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


def _serve(server: HTTPServer) -> str:
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return f"127.0.0.1:{server.server_address[1]}"


@pytest.fixture
def tls_server(tmp_path: Path) -> Any:
    """A loopback HTTPS server with a self-signed certificate (openssl)."""
    if shutil.which("openssl") is None:
        pytest.skip("openssl is not installed")
    key, cert = tmp_path / "key.pem", tmp_path / "cert.pem"
    subprocess.run(
        [
            *("openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1"),
            *("-subj", "/CN=127.0.0.1", "-addext", "subjectAltName=IP:127.0.0.1"),
            *("-keyout", str(key), "-out", str(cert)),
        ],
        check=True,
        capture_output=True,
    )
    server = HTTPServer(("127.0.0.1", 0), _Answer)
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(cert, key)
    server.socket = context.wrap_socket(server.socket, server_side=True)
    address = _serve(server)
    yield address, cert
    server.shutdown()
    server.server_close()


def test_a_plain_http_client_refuses_a_tls_server_it_would_otherwise_reach(
    tls_server: Any,
) -> None:
    address, cert = tls_server
    # the server is reachable over TLS by a client that trusts its certificate ...
    with httpx.Client(verify=ssl.create_default_context(cafile=str(cert))) as trusting:
        assert trusting.get(f"https://{address}/").json() == {"ok": True}
    # ... and the plain-http client, which trusts nothing, refuses it
    with (
        new_client(headers={}, timeout=5, plain_http=True) as client,
        pytest.raises(httpx.ConnectError, match="CERTIFICATE_VERIFY_FAILED"),
    ):
        client.get(f"https://{address}/")


def test_a_plain_http_client_reads_http_from_loopback() -> None:
    server = HTTPServer(("127.0.0.1", 0), _Answer)
    address = _serve(server)
    try:
        with new_client(headers={}, timeout=5, plain_http=True) as client:
            assert client.get(f"http://{address}/").json() == {"ok": True}
    finally:
        server.shutdown()
        server.server_close()


@pytest.fixture
def made(monkeypatch: pytest.MonkeyPatch) -> list[bool]:
    """Records `plain_http` of every client net.new_client makes."""
    made: list[bool] = []
    real = net.new_client

    def recording(**kwargs: Any) -> httpx.Client:
        made.append(bool(kwargs.get("plain_http")))
        return real(**kwargs)

    monkeypatch.setattr(net, "new_client", recording)
    return made


@pytest.mark.parametrize(
    ("url", "plain"),
    [
        ("http://127.0.0.1:8787/x", True),
        ("https://pith.science/x", False),
        ("HTTP://127.0.0.1:8787/x", False),  # an odd spelling takes the verifying client
        ("https://127.0.0.1/http://", False),
    ],
)
def test_clients_by_scheme_gives_the_plain_client_only_to_lower_case_http_urls(
    url: str, plain: bool, made: list[bool]
) -> None:
    clients = ClientsByScheme(headers={}, timeout=5)
    try:
        client = clients.for_url(url)
        assert made == [plain]
        assert clients.for_url(url) is client  # made once, then reused
        assert made == [plain]
    finally:
        clients.close()


def test_the_registry_client_reads_a_loopback_registry_without_the_ca_bundle(
    made: list[bool],
) -> None:
    server = HTTPServer(("127.0.0.1", 0), _Answer)
    address = _serve(server)
    registry = RegistryHttp(f"http://{address}", retry=RetryPolicy(max_attempts=1))
    try:
        assert registry.get_json("/a") == {"ok": True}
        assert made == [True]
        with pytest.raises(NetworkError):  # nothing listens there
            registry.get_json("https://127.0.0.1:1/b", attempts=1)
        assert made == [True, False]  # an https:// URL got its own, verifying client
    finally:
        registry.close()
        server.shutdown()
        server.server_close()


def test_the_identity_fetcher_makes_a_plain_http_client_only_for_http_urls(
    made: list[bool],
) -> None:
    server = HTTPServer(("127.0.0.1", 0), _Answer)
    address = _serve(server)
    fetcher = fetch_module.Fetcher(timeout=2, offline=False)  # the class behind verify_identity
    try:
        assert fetcher.json(f"http://{address}/a") == {"ok": True}
        assert made == [True]
        with pytest.raises(fetch_module.Unreadable):  # nothing listens there
            fetcher.get("https://127.0.0.1:1/b", "application/json", 1000)
        assert made == [True, False]  # https got its own, verifying client
    finally:
        fetcher.close()
        server.shutdown()
        server.server_close()
