"""Bearer tokens: sent only to the origin they belong to, on reads only when the registry asks,
stored in the OS keyring when one works (else a 0600 file). Checked against small local HTTP
servers that record every request's Authorization header."""

from __future__ import annotations

import json
import stat
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import keyring
import pytest
from keyring.backends import fail
from pith_test_keyrings import MemoryKeyring
from support.cli import RunPith
from support.keys import subprocess_env

from pithauthor.errors import AuthError
from pithauthor.net import RegistryHttp
from pithauthor.registry.client import RegistryClient
from pithauthor.registry.credentials import forget_token, store_token, stored_registries, token_for

TOKEN = "tok-3f9a1c"


class Recorder(ThreadingHTTPServer):
    """Answers JSON; `/private` wants a bearer token (401 + WWW-Authenticate without one),
    `/private-quiet` answers 401 without saying how to sign in. Records (method, path, auth)."""

    daemon_threads = True

    def __init__(self) -> None:
        self.seen: list[tuple[str, str, str | None]] = []
        super().__init__(("127.0.0.1", 0), _Recording)
        threading.Thread(target=self.serve_forever, args=(0.05,), daemon=True).start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}"


class _Recording(BaseHTTPRequestHandler):
    server: Recorder

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def _answer(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        self.rfile.read(length)
        auth = self.headers.get("Authorization")
        self.server.seen.append((self.command, self.path, auth))
        status, extra = 200, {}
        if self.path.startswith("/private") and auth != f"Bearer {TOKEN}":
            status = 401
            if self.path == "/private":
                extra = {"WWW-Authenticate": 'Bearer realm="test"'}
        body = json.dumps({"ok": status == 200}).encode()
        self.send_response(status)
        for name, value in extra.items():
            self.send_header(name, value)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    do_GET = do_POST = _answer


@pytest.fixture
def servers() -> Iterator[tuple[Recorder, Recorder]]:
    a, b = Recorder(), Recorder()
    try:
        yield a, b
    finally:
        for srv in (a, b):
            srv.shutdown()
            srv.server_close()


def _auth(srv: Recorder) -> list[tuple[str, str | None]]:
    return [(f"{m} {p}", a) for m, p, a in srv.seen]


def test_pith_token_goes_only_to_the_origin_of_pith_registry(
    servers: tuple[Recorder, Recorder], monkeypatch: pytest.MonkeyPatch
) -> None:
    a, b = servers
    monkeypatch.setenv("PITH_TOKEN", TOKEN)
    monkeypatch.setenv("PITH_REGISTRY", a.url)
    assert token_for(a.url + "/any/path") == TOKEN
    assert token_for(b.url) is None
    assert token_for("https://pith.science") is None
    for srv in (a, b):
        with RegistryClient(srv.url) as client:
            client.http.get_json("/open")
            client.http.post_json("/submit", {"x": 1})
    assert _auth(a) == [("GET /open", None), ("POST /submit", f"Bearer {TOKEN}")]
    assert _auth(b) == [("GET /open", None), ("POST /submit", None)]


def test_pith_token_without_pith_registry_is_for_pith_science_only(
    monkeypatch: pytest.MonkeyPatch, servers: tuple[Recorder, Recorder]
) -> None:
    monkeypatch.setenv("PITH_TOKEN", TOKEN)
    assert token_for("https://pith.science/pith/x") == TOKEN
    assert token_for(servers[0].url) is None


def test_a_read_carries_the_token_only_after_the_registry_asked(
    servers: tuple[Recorder, Recorder],
) -> None:
    a, _ = servers
    with RegistryHttp(a.url, token=TOKEN) as http:
        http.get_json("/open")
        assert http.get_json("/private") == {"ok": True}
        http.get_json("/open")  # it asked once: reads carry the token from now on
    assert _auth(a) == [
        ("GET /open", None),
        ("GET /private", None),
        ("GET /private", f"Bearer {TOKEN}"),
        ("GET /open", f"Bearer {TOKEN}"),
    ]


def test_a_401_that_does_not_ask_for_a_bearer_token_is_not_answered_with_it(
    servers: tuple[Recorder, Recorder],
) -> None:
    a, _ = servers
    with RegistryHttp(a.url, token=TOKEN) as http, pytest.raises(AuthError, match="401"):
        http.get_json("/private-quiet")
    assert _auth(a) == [("GET /private-quiet", None)]


def test_an_absolute_url_at_another_origin_never_gets_the_token(
    servers: tuple[Recorder, Recorder],
) -> None:
    a, b = servers
    with RegistryHttp(a.url, token=TOKEN) as http:
        http.post_json(b.url + "/submit", {"x": 1})
        with pytest.raises(AuthError):
            http.get_json(b.url + "/private")  # b asks, but the token is a's
    assert _auth(b) == [("POST /submit", None), ("GET /private", None)]
    assert a.seen == []


def test_a_stored_token_is_bound_to_its_origin(servers: tuple[Recorder, Recorder]) -> None:
    a, b = servers
    store_token(a.url + "/some/path", TOKEN)
    assert token_for(a.url) == TOKEN and token_for(a.url + "/other") == TOKEN
    assert token_for(b.url) is None
    assert token_for(a.url.replace("127.0.0.1", "localhost")) is None  # another origin
    assert stored_registries() == [a.url]
    assert forget_token(a.url + "/") and token_for(a.url) is None


@pytest.fixture
def memory_keyring() -> Iterator[MemoryKeyring]:
    ring = MemoryKeyring()
    keyring.set_keyring(ring)
    try:
        yield ring
    finally:
        keyring.set_keyring(fail.Keyring())


def test_a_token_goes_to_the_keyring_when_one_works(
    memory_keyring: MemoryKeyring, isolated_home: Path, servers: tuple[Recorder, Recorder]
) -> None:
    a, _ = servers
    where = store_token(a.url, TOKEN)
    assert where == "the OS keyring"
    assert memory_keyring.entries == {("pithauthor", f"token:{a.url}"): TOKEN}
    file = isolated_home / "auth" / "tokens.json"
    assert TOKEN not in file.read_text("utf-8")
    assert token_for(a.url) == TOKEN
    assert forget_token(a.url) and memory_keyring.entries == {}


def test_without_a_keyring_a_token_is_kept_in_a_private_file(
    isolated_home: Path, servers: tuple[Recorder, Recorder]
) -> None:
    a, _ = servers
    keyring.set_keyring(fail.Keyring())
    where = store_token(a.url, TOKEN)
    file = isolated_home / "auth" / "tokens.json"
    assert where == str(file)
    assert stat.S_IMODE(file.stat().st_mode) == 0o600
    assert stat.S_IMODE(file.parent.stat().st_mode) == 0o700
    assert json.loads(file.read_text("utf-8"))["tokens"][a.url]["token"] == TOKEN
    assert token_for(a.url) == TOKEN


def test_a_token_file_of_the_first_format_still_works(
    isolated_home: Path, servers: tuple[Recorder, Recorder]
) -> None:
    a, _ = servers
    folder = isolated_home / "auth"
    folder.mkdir(parents=True, mode=0o700)
    file = folder / "tokens.json"
    file.write_text(json.dumps({a.url + "/": TOKEN}), "utf-8")
    file.chmod(0o600)
    assert token_for(a.url) == TOKEN


def test_auth_login_through_the_cli_uses_the_keyring(
    pith: RunPith, tmp_path: Path, isolated_home: Path, servers: tuple[Recorder, Recorder]
) -> None:
    a, _ = servers
    ring = tmp_path / "ring.json"
    env = subprocess_env(
        PYTHON_KEYRING_BACKEND="pith_test_keyrings.FileKeyring", PITH_TEST_KEYRING_FILE=str(ring)
    )
    token_file = tmp_path / "token"
    token_file.write_text(TOKEN + "\n", "utf-8")
    login = pith("auth", "login", "--registry", a.url, "--token-file", str(token_file), env=env)
    assert login.returncode == 0, login.stderr
    assert "OS keyring" in login.stderr and TOKEN not in login.stderr
    assert TOKEN in ring.read_text("utf-8")
    assert TOKEN not in (isolated_home / "auth" / "tokens.json").read_text("utf-8")
    status = pith("auth", "status", env=env)
    assert status.stdout.split() == [a.url]
