"""Publishing needs the author's yes: `--submit` on a terminal asks before anything is signed,
`--yes` skips the question, and without a terminal `--submit` is refused unless `--yes` is given
(exit 2, one line, nothing signed, nothing sent). Against a real local registry over loopback,
with a real key store; the terminal is a real pseudo-terminal."""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from support.cli import LAUNCHER, OnTerminal, RunPith, assert_one_line_error, use_fast_kdf
from support.paths import FIXTURES
from support.registry import REAL_NUMBER, free_port, manifest_file, start_server

RECORD = str(FIXTURES / "record-2302.12445v2.json")
EXAMPLE = "2101.99901"  # an example paper of the local registry


@pytest.fixture
def author(monkeypatch: pytest.MonkeyPatch) -> str:
    """A real key in this test's PITH_HOME (test-only cheap KDF), unlocked by PITH_PASSPHRASE."""
    from pithauthor.keys.author import generate

    use_fast_kdf(monkeypatch)
    monkeypatch.setenv("PITH_PASSPHRASE", "confirm tests passphrase")
    # author 2 of the DeAR record; the local registry's records list no authors
    return generate("ada", public_name="Chengjian Liu", backend="file", note=lambda _: None).key_id


@pytest.fixture
def registry(tmp_path: Path) -> Iterator[list[str]]:
    """A local registry with the example papers: the options that name and trust it."""
    server = start_server(tmp_path / "registry")
    manifest = manifest_file(server.url, tmp_path / "registry", tmp_path / "manifest.json")
    try:
        yield ["--registry", server.url, "--trust-manifest", str(manifest)]
    finally:
        server.stop()


def _outbox(pith: RunPith) -> list[dict[str, Any]]:
    listed = pith("outbox", "list", "--all", "--json")
    assert listed.returncode == 0, listed.stderr
    rows: list[dict[str, Any]] = json.loads(listed.stdout)
    return rows


SIGNING_COMMANDS = {
    "claim": ["claim", REAL_NUMBER, "--record", RECORD, "--position", "6"],
    "replicate": ["replicate", REAL_NUMBER, "--record", RECORD, "--kind", "replication",
                  "--outcome", "reproduced", "--summary", "Re-ran it."],
    "cite --to": ["cite", "--from", REAL_NUMBER, "--to", REAL_NUMBER, "--record", RECORD],
    "cite REFS.bib": ["cite", "{bib}", "--from", REAL_NUMBER],
}  # fmt: skip


@pytest.mark.parametrize("command", SIGNING_COMMANDS)
def test_submit_without_a_terminal_is_refused_without_yes_before_anything_is_signed(
    command: str, pith: RunPith, author: str, tmp_path: Path
) -> None:
    bib = tmp_path / "refs.bib"
    bib.write_text("@misc{a, title = {A}, eprint = {2101.99901}, archivePrefix = {arXiv}}\n")
    args = [a.replace("{bib}", str(bib)) for a in SIGNING_COMMANDS[command]]
    dead = f"http://127.0.0.1:{free_port()}"  # refused before any look-up: exit 2, not 3
    result = pith(*args, "--submit", "--registry", dead)
    assert_one_line_error(result, 2)
    assert "--yes" in result.stderr and "nothing was signed or sent" in result.stderr
    assert _outbox(pith) == []


def test_without_submit_no_terminal_signs_into_the_outbox_without_asking(
    pith: RunPith, author: str
) -> None:
    result = pith("claim", REAL_NUMBER, "--record", RECORD, "--position", "6")
    assert result.returncode == 0, result.stderr
    assert "[y/N]" not in result.stderr
    assert [row["state"] for row in _outbox(pith)] == ["pending"]


DEAR_TITLE = "DeAR: Accelerating Distributed Deep Learning with Fine-Grained All-Reduce Pipelining"
# arXiv's order (the tests' stand-in for arXiv's API), the signer's place marked; not the
# record's list (sorted by given name)
DEAR_AUTHORS = (
    "1 Lin Zhang, 2 Shaohuai Shi, 3 Xiaowen Chu, 4 Wei Wang, 5 Bo Li, 6 Chengjian Liu (you) "
    "(arXiv's order)"
)


def test_a_claim_on_a_terminal_shows_title_and_authors_and_waits_for_the_answer(
    pith: RunPith, author: str, registry: list[str], terminal: OnTerminal
) -> None:
    argv = [sys.executable, LAUNCHER, "claim", REAL_NUMBER, "--record", RECORD, "--position", "6",
            "--submit", *registry]  # fmt: skip
    code, shown = terminal(argv, [b"n"])
    assert code == 2, shown
    question = shown.index("[y/N]")
    preview = shown[:question]
    for expected in (REAL_NUMBER, "arXiv 2302.12445v2", DEAR_TITLE, DEAR_AUTHORS,
                     f"signer     Chengjian Liu · no ORCID iD · key {author}",
                     "position   6 of 6 on arXiv (Chengjian Liu)",
                     f"submit to {registry[1]}"):  # fmt: skip
        assert expected in preview, (expected, shown)
    assert "nothing was stored or sent (answered no)" in shown and "Traceback" not in shown
    assert _outbox(pith) == []

    code, shown = terminal(argv, [b"y"])
    assert code == 0, shown
    assert "accepted 1, rejected 0, pending 0" in shown
    assert [row["state"] for row in _outbox(pith)] == ["accepted"]


def test_signing_into_the_outbox_on_a_terminal_asks_too(
    pith: RunPith, author: str, terminal: OnTerminal
) -> None:
    argv = [sys.executable, LAUNCHER, "claim", REAL_NUMBER, "--record", RECORD, "--position", "6"]
    code, shown = terminal(argv, [b""])  # Enter: the default answer is no
    assert code == 2, shown
    assert "into the outbox" in shown and DEAR_TITLE in shown
    assert _outbox(pith) == []


def test_yes_on_a_terminal_signs_and_submits_without_asking_but_still_shows_the_preview(
    pith: RunPith, author: str, registry: list[str], terminal: OnTerminal
) -> None:
    # the key is Chengjian Liu's: --force signs another name (this test is about the terminal)
    argv = [sys.executable, LAUNCHER, "claim", EXAMPLE, "--name", "E. Author", "--position", "1",
            "--force", "--submit", "--yes", *registry]  # fmt: skip
    code, shown = terminal(argv, [])
    assert code == 0, shown
    assert "An author claim to sign" in shown
    # the local registry displays the title and authors with its record, as pith.science does
    assert "title      Example paper A: a synthetic record for the pithauthor demo" in shown
    assert "authors    1 Example Author (you), 2 Another Example (arXiv's order)" in shown
    assert "position   1 of 2 on arXiv (Example Author)" in shown
    assert "accepted 1, rejected 0, pending 0" in shown


def test_a_bibliography_shows_a_table_of_reference_cited_paper_and_relationship_first(
    pith: RunPith, author: str, registry: list[str], tmp_path: Path
) -> None:
    from pithauthor.registry.access import RegistryAccess, RegistryOptions

    bib = tmp_path / "refs.bib"
    bib.write_text(
        "@misc{first, title = {A}, eprint = {2101.99901}, archivePrefix = {arXiv}}\n"
        "@misc{second, title = {B}, eprint = {2101.99902}, archivePrefix = {arXiv},\n"
        "  pith-relationship = {extends}}\n",
        "utf-8",
    )
    with RegistryAccess(RegistryOptions(registry[1], (registry[3],))) as access:
        numbers = [access.client.resolve(aid) for aid in ("2101.99901", "2101.99902")]
    out = tmp_path / "events.jsonl"
    result = pith("cite", str(bib), "--from", REAL_NUMBER, "-o", str(out), *registry)
    assert result.returncode == 0, result.stderr
    lines = result.stderr.splitlines()
    header = lines.index("2 citation(s) by " + REAL_NUMBER + " to sign (public and permanent "
                         "once submitted):")  # fmt: skip
    checked = f"  {REAL_NUMBER} is the record of arXiv 2302.12445v2 (checked with {registry[1]})"
    assert lines[header + 1] == checked  # --from as a full number: checked with its record
    table = lines[header + 2 : header + 5]
    assert table[0].split() == ["reference", "cited", "paper", "relationship"]
    assert table[1].split()[0] == "first" and table[1].split()[-1] == "cites"
    assert f"{numbers[0].alias(8)}…" in table[1]
    assert table[2].split()[0] == "second" and table[2].split()[-1] == "extends"
    assert f"{numbers[1].alias(8)}…" in table[2]
    assert lines[header + 5].startswith("  signer     Chengjian Liu")
    assert len(out.read_text("utf-8").splitlines()) == 2  # the table came before the signing


def test_replicate_and_cite_show_what_they_sign_before_it_is_stored(
    pith: RunPith, author: str, tmp_path: Path
) -> None:
    out = tmp_path / "events.jsonl"
    digest = "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08"
    replicate = pith("replicate", REAL_NUMBER, "--record", RECORD, "--kind", "replication",
                     "--outcome", "partially_reproduced", "--summary", "Re-ran table 2.",
                     "--artifact", "https://example.org/log.txt", "--sha256", digest,
                     "-o", str(out))  # fmt: skip
    assert replicate.returncode == 0, replicate.stderr
    for expected in ("A replication record to sign", DEAR_TITLE, "outcome    partially_reproduced",
                     "summary    Re-ran table 2.",
                     "artifact   https://example.org/log.txt (sha256 9f86d081884c…)"):  # fmt: skip
        assert expected in replicate.stderr, (expected, replicate.stderr)
    cite = pith("cite", "--from", "pith:2024:ABCDEFGHIJKLMNOPQRSTUVWXYZ", "--to", REAL_NUMBER,
                "--record", RECORD, "--relationship", "extends", "-o", str(out), "--offline",
                "--registry", f"http://127.0.0.1:{free_port()}")  # fmt: skip
    assert cite.returncode == 0, cite.stderr
    for expected in ("A citation to sign", "citing     pith:2024:ABCDEFGHIJKLMNOPQRSTUVWXYZ",
                     "no record of pith:2024:ABCDEFGHIJKLMNOPQRSTUVWXYZ at hand: its year is "
                     "unchecked",
                     "cited      " + REAL_NUMBER, DEAR_TITLE,
                     "relation   extends"):  # fmt: skip
        assert expected in cite.stderr, (expected, cite.stderr)
    assert cite.stderr.index("A citation to sign") < cite.stderr.index("signed citation_")


def test_a_hostile_author_list_cannot_write_to_the_terminal(
    pith: RunPith, author: str, tmp_path: Path
) -> None:
    """Nothing signs a record's author list: control characters in it are shown escaped."""
    doc = json.loads(Path(RECORD).read_text("utf-8"))
    del doc["receipt"]  # a computed record: taken, and said so
    doc["paper"]["authors_text"] = "Bo Li, Chengjian Liu\x1b[2J\x1b]0,pwned\x07, Lin Zhang"
    hostile = tmp_path / "record.json"
    hostile.write_text(json.dumps(doc), "utf-8")
    # arXiv's API away: the record's list is what the preview shows
    result = pith("claim", REAL_NUMBER, "--record", str(hostile), "--name", "Lin Zhang",
                  "--position", "1", "--force", "-o", str(tmp_path / "c.jsonl"),
                  env={"PITH_ARXIV_API": f"http://127.0.0.1:{free_port()}/api/query"})  # fmt: skip
    assert result.returncode == 0, result.stderr
    assert "\x1b" not in result.stderr and "\x07" not in result.stderr
    assert "Chengjian Liu\\x1b[2J\\x1b]0, pwned\\x07" in result.stderr
