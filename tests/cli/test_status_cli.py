"""`pith status PAPER` and `pith papers` against two real local registries: claims, citations
and replications by two keys, submitted to one registry, with events still pending for both;
registry text escaped on the terminal; a paper nobody has (one line, exit code)."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from support.cli import RunPith, use_fast_kdf
from support.registry import start_server

from pithauthor.registry.local.server import RegistryServer

PAPER_A = "2101.99901"
PAPER_B = "2101.99902"  # authors: Example Author, Another Example; cites A and DeAR
DEAR = "2302.12445"
REFS = Path(__file__).resolve().parents[2] / "pithauthor" / "data" / "demo" / "refs.bib"
PASSPHRASE = "a passphrase for the status tests"


@pytest.fixture
def world(
    tmp_path: Path, pith: RunPith, monkeypatch: pytest.MonkeyPatch
) -> Iterator[tuple[RegistryServer, RegistryServer, dict[str, str]]]:
    """Registry A holds what two keys submitted; B (and A) hold nothing of what is pending."""
    use_fast_kdf(monkeypatch)
    monkeypatch.setenv("PITH_PASSPHRASE", PASSPHRASE)
    a, b = start_server(tmp_path / "a"), start_server(tmp_path / "b")
    try:
        keys = {}
        for name, public in (("first", "Example Author"), ("second", "Another Example")):
            made = pith("keys", "generate", "--name", name, "--public-name", public,
                        "--backend", "file", "--json")  # fmt: skip
            assert made.returncode == 0, made.stderr
            keys[name] = json.loads(made.stdout)["key_id"]
        on_a = ("--registry", a.url, "--trust-local-registry")
        on_b = ("--registry", b.url, "--trust-local-registry")
        steps: list[tuple[str, ...]] = [
            ("claim", PAPER_B, "--position", "1", "-k", "first", "--submit", "--yes", *on_a),
            ("claim", PAPER_B, "--position", "2", "-k", "second", "--submit", "--yes", *on_a),
            ("cite", str(REFS), "--from", PAPER_B, "-k", "first", "--submit", "--yes", *on_a),
            ("cite", "--from", PAPER_A, "--to", PAPER_B, "--relationship", "extends",
             "-k", "second", "--submit", "--yes", *on_a),
            ("replicate", PAPER_B, "--kind", "replication", "--outcome", "reproduced",
             "--summary", "Re-ran it", "--artifact", "https://example.org/l.txt",
             "--sha256", "ab" * 32, "-k", "second", "--submit", "--yes", *on_a),
            # pending: a claim for registry B, a replication for A, never sent
            ("claim", PAPER_B, "--position", "1", "-k", "first", *on_b),
            ("replicate", PAPER_B, "--kind", "replication", "--outcome", "inconclusive",
             "--summary", "Most of it", "--artifact", "https://example.org/m.txt",
             "--sha256", "cd" * 32, "-k", "first", *on_a),
        ]  # fmt: skip
        for args in steps:
            done = pith(*args)
            assert done.returncode == 0, (args, done.stderr)
        yield a, b, keys
    finally:
        a.stop()
        b.stop()


def _status(pith: RunPith, url: str, *extra: str) -> Any:
    result = pith("status", PAPER_B, "--registry", url, "--trust-local-registry", *extra)
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout) if "--json" in extra else result.stdout


def test_status_shows_claims_citations_and_replications_by_two_keys_and_the_outbox_per_registry(
    world: tuple[RegistryServer, RegistryServer, dict[str, str]], pith: RunPith
) -> None:
    a, b, keys = world
    page = _status(pith, a.url, "--json")
    assert page["registry"] == a.url
    assert page["title"] == "Example paper B: a synthetic record that cites example paper A"
    assert page["authors"] == "Example Author, Another Example"
    assert page["short_pith_number"] == "pith:" + page["pith_number"].rsplit(":", 1)[1][:8]
    assert page["arxiv"] == PAPER_B + "v1" and page["version"] == 1
    assert page["verified"]["record"]["ok"] and page["verified"]["state"]["ok"]
    claims = {(c["position"], c["name"], c["key_id"]) for c in page["claims"]}
    assert claims == {(1, "Example Author", keys["first"]), (2, "Another Example", keys["second"])}
    assert not any(c["identity_bound"] for c in page["claims"])  # no proofs were attached
    (received,) = page["citations_received"]
    assert received["key_id"] == keys["second"] and received["relationship"] == "extends"
    made = {(c["relationship"], c["state"]) for c in page["citations_made"]}
    assert made == {("extends", "accepted"), ("uses_method", "accepted")}  # A and DeAR
    (replication,) = page["replications"]  # the pending one is not on the registry's page
    assert replication["key_id"] == keys["second"] and replication["outcome"] == "reproduced"
    outbox = {g["registry"]: sorted(e["state"] for e in g["events"]) for g in page["outbox"]}
    # on A: 2 claims, the citation received, 1 replication accepted and 1 pending, the 2
    # citations B made; on B: the claim never sent
    assert outbox == {a.url: ["accepted"] * 6 + ["pending"], b.url: ["pending"]}
    # the page of the same paper on B: nothing there yet, the outbox part is the same
    on_b = _status(pith, b.url, "--json")
    assert on_b["claims"] == [] and on_b["replications"] == []
    assert on_b["outbox"] == page["outbox"]
    items = {c["item"]: (c["count"], c["label"]) for c in page["completeness"]}
    assert items == {
        "author_claims": (2, "attested"), "timestamp": (0, "not anchored"),
        "archive_copy": (0, "not stored"), "citations": (1, "cited"),
        "replications": (1, "replicated"), "references": (0, "refs pending"),
    }  # fmt: skip
    assert [c["label"] for c in on_b["completeness"]][:2] == ["not attested", "not anchored"]


def test_status_text_names_every_part_with_its_counts(
    world: tuple[RegistryServer, RegistryServer, dict[str, str]], pith: RunPith
) -> None:
    a, b, keys = world
    text = _status(pith, a.url)
    assert f"#1 Example Author  {keys['first']}  not identity-bound" in text, text
    assert "claims (2)" in text and "citations received (1)" in text, text
    assert "replications (1)" in text and "Re-ran it" in text, text
    assert f"outbox for {a.url}: 1 pending, 6 accepted" in text, text
    assert f"outbox for {b.url}: 1 pending" in text, text
    assert "attested · not anchored · not stored · cited · replicated · refs pending" in text, text
    assert "record: verified" in text and "state: verified" in text, text


def test_status_escapes_the_text_a_registry_sent(tmp_path: Path, pith: RunPith) -> None:
    """The record's author list is not signed: a registry can send anything there; the
    terminal shows its escape codes and bidirectional overrides, never obeys them."""
    server = start_server(tmp_path / "r")
    try:
        body = server.store.find(PAPER_B).body  # type: ignore[union-attr]
        server.store._by_body.clear()  # the test edits the row under the running registry
        hostile = {"title": "Example paper B: a synthetic record that cites example paper A",
                   "authors_text": "Eve \x1b]0;owned\x07\x1b[2J \u202eevE"}  # fmt: skip
        with sqlite3.connect(server.store.path) as conn:
            row = conn.execute("SELECT paper FROM records WHERE body = ?", (body,)).fetchone()
            paper = {**json.loads(row[0]), **hostile}
            conn.execute("UPDATE records SET paper = ? WHERE body = ?", (json.dumps(paper), body))
        result = pith("status", PAPER_B, "--registry", server.url, "--trust-local-registry")
    finally:
        server.stop()
    assert result.returncode == 0, result.stderr
    assert "\x1b" not in result.stdout and "\u202e" not in result.stdout  # not obeyed
    (authors,) = [line for line in result.stdout.splitlines() if line.startswith("Eve ")]
    assert "\\x1b" in authors.lower() and "\\u202e" in authors.lower(), authors  # shown


def test_papers_lists_what_each_key_signed_with_its_state_per_registry(
    world: tuple[RegistryServer, RegistryServer, dict[str, str]], pith: RunPith
) -> None:
    a, b, _ = world
    result = pith("papers", "--json")
    assert result.returncode == 0, result.stderr
    rows = {p["pith_number"]: p for p in json.loads(result.stdout)}
    assert len(rows) == 3  # B (claimed, cited from A, replicated), A and DeAR (cited from B)
    by_roles = {tuple(sorted(p["roles"])): p for p in rows.values()}
    paper_b = by_roles[("cited", "claimed", "replicated")]
    assert paper_b["registries"] == {
        a.url: {"pending": 1, "accepted": 4, "rejected": 0},
        b.url: {"pending": 1, "accepted": 0, "rejected": 0},
    }
    assert len(paper_b["keys"]) == 2
    assert [p for p in rows.values() if p["roles"] == ["cited"]].__len__() == 2
    text = pith("papers")
    assert f"    {b.url}: 1 pending" in text.stdout
    assert "3 paper(s)" in text.stderr


def test_papers_leaves_out_events_of_keys_this_machine_does_not_hold(
    world: tuple[RegistryServer, RegistryServer, dict[str, str]], pith: RunPith
) -> None:
    deleted = pith("keys", "delete", "second", "--yes")
    assert deleted.returncode == 0, deleted.stderr
    rows = json.loads(pith("papers", "--json").stdout)
    assert all(p["keys"] == [world[2]["first"]] for p in rows)


def test_status_of_a_paper_the_registry_does_not_have_is_one_line(
    world: tuple[RegistryServer, RegistryServer, dict[str, str]], pith: RunPith
) -> None:
    a, _, _ = world
    result = pith("status", "pith:2023:AAAAAAAAAAAAAAAAAAAAAAAAAA", "--registry", a.url,
                  "--trust-local-registry")  # fmt: skip
    errors = [line for line in result.stderr.splitlines() if line.startswith("pith: error:")]
    assert errors == [f"pith: error: not found on the registry at {a.url} (404): no record for "
                      "'AAAAAAAAAAAAAAAAAAAAAAAAAA' on this registry"]  # fmt: skip
    assert result.returncode == 1 and result.stdout == "" and "Traceback" not in result.stderr


def test_papers_with_an_empty_outbox_says_how_to_start(pith: RunPith) -> None:
    result = pith("papers")
    assert result.returncode == 0 and result.stdout == ""
    assert "pith claim" in result.stderr
