"""Moderation is a state, not an error: a registry that holds a submission (202
`held_for_moderation`, as pith.science's forms hold what no signed-in author confirmed) leaves
the row `held`, said in one line, exit 0; it is never POSTed again, and becomes accepted once
the paper's merged state lists it. A registry that refuses the body's format (415) stops the
submission with its own line and exit code, and every row stays pending. All against the
project's own local registry on loopback (`moderate=True`), or a stand-in that answers 415."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from support.cli import RunPith, StartRegistry, use_fast_kdf

from pithauthor.registry.local.server import FaultPlan, RegistryServer
from pithauthor.registry.outbox import Outbox

PAPER = "2302.12445"
NUMBER = "pith:2023:NFG5PAOXQUVIWDX5F7YSYYL7EW"
PASSPHRASE = "a passphrase for the held tests"


@pytest.fixture
def author(pith: RunPith, monkeypatch: pytest.MonkeyPatch) -> str:
    """Key "ada" (an author of 2302.12445) in this test's PITH_HOME; returns its key id."""
    use_fast_kdf(monkeypatch)
    monkeypatch.setenv("PITH_PASSPHRASE", PASSPHRASE)
    made = pith("keys", "generate", "--name", "ada", "--public-name", "Chengjian Liu",
                "--backend", "file", "--json")  # fmt: skip
    assert made.returncode == 0, made.stderr
    return str(json.loads(made.stdout)["key_id"])


def _posts(server: RegistryServer) -> int:
    """How many POSTs the registry has answered (its FaultPlan counts them, faulting none)."""
    assert server.faults is not None
    return server.faults._count


def _rows() -> list[tuple[str, str]]:
    with Outbox() as outbox:
        return [(e.event_id, e.state) for e in outbox.entries()]


def test_a_held_claim_is_said_once_never_resent_and_accepted_once_the_state_lists_it(
    pith: RunPith, author: str, local_registry: StartRegistry, tmp_path: Path
) -> None:
    data = tmp_path / "registry"
    server = local_registry(data, moderate=True, faults=FaultPlan(every=0, kinds=()))
    flags = ("--registry", server.url, "--trust-local-registry")
    claimed = pith("claim", PAPER, "--submit", "--yes", *flags)
    assert claimed.returncode == 0, claimed.stderr
    assert f"held for moderation at {server.url}" in claimed.stderr
    assert "sign in there to confirm it" in claimed.stderr
    assert "unreachable" not in claimed.stderr
    [(eid, state)] = _rows()
    assert state == "held"
    assert _posts(server) == 1

    again = pith("submit", *flags)
    assert again.returncode == 0, again.stderr
    assert _posts(server) == 1  # a held row is never POSTed again
    assert "held 1" in again.stdout
    listed = pith("outbox", "list")
    assert listed.stdout.startswith("held "), listed.stdout
    assert "1 held" in listed.stderr
    only_held = pith("outbox", "list", "--state", "held", "--json")
    assert [r["event_id"] for r in json.loads(only_held.stdout)] == [eid]
    page = pith("status", PAPER, *flags)
    assert page.returncode == 0, page.stderr
    assert f"outbox for {server.url}: 1 held" in page.stdout
    papers = pith("papers")
    assert f"{server.url}: 1 held" in papers.stdout

    # the author signed in there and confirmed it (another process, the registry running)
    approved = pith("registry", "approve", eid[:19], "--data", str(data))
    assert approved.returncode == 0, approved.stderr
    assert "approved 1 held event(s); 0 still held" in approved.stderr
    confirmed = pith("submit", "--trust-local-registry")  # every registry with rows
    assert confirmed.returncode == 0, confirmed.stderr
    assert "1 confirmed since held" in confirmed.stdout
    assert _posts(server) == 1  # read from the state, not sent again
    assert _rows() == [(eid, "accepted")]


def test_a_signed_in_submission_to_a_moderating_registry_is_accepted_at_once(
    pith: RunPith, author: str, local_registry: StartRegistry, tmp_path: Path
) -> None:
    server = local_registry(moderate=True, token="the-registry-token")
    token = tmp_path / "token.txt"
    token.write_text("the-registry-token\n", "utf-8")
    token.chmod(0o600)
    signed_in = pith("auth", "login", "--registry", server.url, "--token-file", str(token))
    assert signed_in.returncode == 0, signed_in.stderr
    flags = ("--registry", server.url, "--trust-local-registry")
    claimed = pith("claim", PAPER, "--submit", "--yes", *flags)
    assert claimed.returncode == 0, claimed.stderr
    assert "held" not in claimed.stderr
    assert [state for _, state in _rows()] == ["accepted"]


class _RefusesTheFormat(BaseHTTPRequestHandler):
    """A stand-in registry whose reads are the local registry's and whose every POST is
    answered 415: it does not read the format pithauthor sends."""

    upstream = ""
    posts: list[str]

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def do_GET(self) -> None:
        import httpx

        answer = httpx.get(self.upstream + self.path)
        body = answer.content.replace(self.upstream.encode(), self._me().encode())
        self.send_response(answer.status_code)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers.get("Content-Length", "0")))
        self.posts.append(self.path)
        body = json.dumps({"error": "unsupported media type: send application/ld+json"}).encode()
        self.send_response(415)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def _me(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}"


@pytest.fixture
def refuses_format(local_registry: StartRegistry) -> Iterator[tuple[str, list[str]]]:
    upstream = local_registry()
    posts: list[str] = []
    handler = type("H", (_RefusesTheFormat,), {"upstream": upstream.url, "posts": posts})
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}", posts
    finally:
        server.shutdown()
        server.server_close()


def test_a_refused_body_format_is_one_line_exit_5_and_every_row_stays_pending(
    pith: RunPith, author: str, refuses_format: tuple[str, list[str]], tmp_path: Path
) -> None:
    url, posts = refuses_format
    flags = ("--registry", url, "--trust-local-registry")
    for statement in ("I wrote it.", "I am an author."):
        # two events in the outbox: a claim, then its correction
        signed = pith("claim", PAPER, "--statement", statement,
                      *(("--replace",) if posts or _rows() else ()), *flags)  # fmt: skip
        assert signed.returncode == 0, signed.stderr
    assert len(_rows()) == 2
    sent = pith("submit", "--parallel", "1", *flags)
    assert sent.returncode == 5, sent.stderr
    errors = [line for line in sent.stderr.splitlines() if line.startswith("pith: error: ")]
    assert len(errors) == 1 and "Traceback" not in sent.stderr, sent.stderr
    assert "refuses the format" in sent.stderr and "415" in sent.stderr
    assert "pith outbox list --state pending" in sent.stderr
    assert [state for _, state in _rows()] == ["pending", "pending"]
    assert len(posts) == 1  # the first refusal stops the submission: the rest would fare alike
