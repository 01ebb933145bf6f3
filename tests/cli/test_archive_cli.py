"""`pith archive` end to end, with real `pith` commands, the local registry, and loopback stand-ins
of the Internet Archive (Save Page Now, CDX, and the "arXiv" the PDF is downloaded from:
tests/support/wayback.py) and of Software Heritage (tests/support/swh.py):

- the captures pending then done, the CDX digest equal to the downloaded PDF's, the storage
  attestation signed, submitted through the record's `attest_storage`, and listed by the local
  registry's merged state, which `pith verify` then checks from this machine's checks;
- a wrong CDX digest, a 403 from the archive, keys it refuses, a capture job ending in error, a
  403 from Software Heritage: each one line on stderr and its exit code, nothing signed, nothing
  submitted; the archive.org keys never in any output."""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from support.cli import LAUNCHER, OnTerminal, RunPith, StartRegistry, error_lines, use_fast_kdf
from support.paths import FIXTURES
from support.swh import Heritage, snapshot_id, software_heritage
from support.wayback import CAPTURED_AT, Wayback, cdx_digest, fixture_pdf, wayback

from pithauthor.registry.local import answers
from pithauthor.registry.outbox import Outbox

PAPER = "2302.12445"
DEAR = "pith:2023:NFG5PAOXQUVIWDX5F7YSYYL7EW"
ACCESS, SECRET = "test-access-key", "test-secret-key"
VERSIONS = tuple(f"{PAPER}v{n}" for n in (1, 2, 3))
ORIGIN = "https://github.com/lzhangbv/dear_pytorch"
DEAR_RECORD = str(FIXTURES / "record-2302.12445v2.json")


@pytest.fixture
def author(pith: RunPith, monkeypatch: pytest.MonkeyPatch) -> str:
    use_fast_kdf(monkeypatch)
    monkeypatch.setenv("PITH_PASSPHRASE", "archive tests passphrase")
    made = pith(
        "keys", "generate", "--name", "liu", "--public-name", "Chengjian Liu",
        "--backend", "file", "--json",
    )  # fmt: skip
    assert made.returncode == 0, made.stderr
    return str(json.loads(made.stdout)["key_id"])


@pytest.fixture
def archive(monkeypatch: pytest.MonkeyPatch) -> Iterator[Wayback]:
    with wayback(*VERSIONS) as server:
        monkeypatch.setenv("PITH_WAYBACK_URL", server.url)
        monkeypatch.setenv("PITH_ARXIV_PDF", f"{server.url}/pdf")
        monkeypatch.setenv("PITH_IA_ACCESS_KEY", ACCESS)
        monkeypatch.setenv("PITH_IA_SECRET_KEY", SECRET)
        yield server


@pytest.fixture
def heritage(monkeypatch: pytest.MonkeyPatch) -> Iterator[Heritage]:
    with software_heritage() as server:
        monkeypatch.setenv("PITH_SWH_URL", server.url)
        yield server


def state_of(url: str) -> dict[str, object]:
    body = DEAR.rsplit(":", 1)[1]
    doc: dict[str, object] = httpx.get(f"{url}/pith/{body}/state.json").json()
    return doc


def storage_events(url: str) -> list[dict[str, object]]:
    current = state_of(url)["current"]
    assert isinstance(current, dict)
    events: list[dict[str, object]] = current["storage_attestations"]
    return events


def failure(stderr: str) -> str:
    """The one line a failure says (the local registry's trust warning aside)."""
    [line] = [line for line in error_lines(stderr) if not line.startswith("pith: warning: ")]
    return line


def no_keys_in(*outputs: str) -> None:
    for text in outputs:
        assert ACCESS not in text and SECRET not in text


def test_pith_archive_captures_checks_signs_submits_and_the_state_lists_it(
    pith: RunPith,
    author: str,
    archive: Wayback,
    heritage: Heritage,
    local_registry: StartRegistry,
    tmp_path: Path,
) -> None:
    server = local_registry(tmp_path / "registry")
    flags = ("--registry", server.url, "--trust-local-registry")
    done = pith("archive", PAPER, "--code", ORIGIN, "--poll", "0", "--submit", "--yes", *flags)
    assert done.returncode == 0, done.stderr
    no_keys_in(done.stdout, done.stderr)
    assert "A storage attestation to sign" in done.stderr
    assert "equal to the PDF downloaded here" in done.stderr
    # each capture job answered pending twice, then success; the keys went to Save Page Now
    assert sum(r.startswith("GET /save/status/") for r in archive.requests) == 6
    assert archive.authorizations == [f"LOW {ACCESS}:{SECRET}"] * 2
    [event] = storage_events(server.url)
    payload = event["payload"]
    assert isinstance(payload, dict)
    [pdf] = [c for c in payload["captures"] if c["mimetype"] == "application/pdf"]
    version = pdf["url"].rsplit("/", 1)[1]
    assert pdf["digest"] == "sha1:" + cdx_digest(fixture_pdf(version))
    assert pdf["timestamp"] == CAPTURED_AT
    assert payload["code"] == {"origin": ORIGIN, "swhid": snapshot_id(ORIGIN)}
    with Outbox() as outbox:
        [entry] = outbox.entries()
    assert entry.state == "accepted" and entry.event_id == event["event_id"]
    # this machine checked it: `pith verify` of the state says the copy is the paper's, offline
    path = tmp_path / "state.json"
    path.write_text(json.dumps(state_of(server.url)), "utf-8")
    verified = pith("verify", str(path), "--verbose", *flags)
    assert verified.returncode == 0, verified.stdout + verified.stderr
    assert any(
        line.startswith("passed") and "archive_copy" in line and "archived: " in line
        for line in verified.stdout.splitlines()
    ), verified.stdout


def test_another_machine_says_not_checked_offline_and_checks_it_with_archive(
    pith: RunPith,
    author: str,
    archive: Wayback,
    local_registry: StartRegistry,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    server = local_registry(tmp_path / "registry")
    flags = ("--registry", server.url, "--trust-local-registry")
    done = pith("archive", PAPER, "--poll", "0", "--submit", "--yes", *flags)
    assert done.returncode == 0, done.stderr
    path = tmp_path / "state.json"
    path.write_text(json.dumps(state_of(server.url)), "utf-8")
    monkeypatch.setenv("PITH_HOME", str(tmp_path / "another-machine"))
    offline = pith("verify", str(path), "--verbose", *flags)
    assert offline.returncode == 0, offline.stdout + offline.stderr
    assert any(
        line.startswith("unverifiable") and "archive_copy" in line and "not checked offline" in line
        for line in offline.stdout.splitlines()
    ), offline.stdout
    online = pith("verify", str(path), "--archive", "--verbose", *flags)
    assert online.returncode == 0, online.stdout + online.stderr
    assert any(
        line.startswith("passed") and "archive_copy" in line for line in online.stdout.splitlines()
    ), online.stdout
    # a CDX index that now says another digest fails the check
    for capture in archive.captures:
        archive.lie[capture.original] = "A" * 32
    monkeypatch.setenv("PITH_HOME", str(tmp_path / "a-third-machine"))
    lied = pith("verify", str(path), "--archive", *flags)
    assert lied.returncode == 1, lied.stdout
    assert "archive_copy" in lied.stdout


@pytest.mark.parametrize(
    ("fault", "code", "said"),
    [
        ("wrong digest", 1, "has digest sha1:AAAA"),
        ("refused url", 1, "(403: error:blocked-url"),
        ("refused keys", 4, "refused your archive.org keys (403"),
        ("job error", 1, "could not capture https://arxiv.org/pdf/"),
    ],
)
def test_each_archive_failure_is_one_line_and_nothing_is_signed_or_submitted(
    pith: RunPith,
    author: str,
    archive: Wayback,
    local_registry: StartRegistry,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    fault: str,
    code: int,
    said: str,
) -> None:
    server = local_registry(tmp_path / "registry")
    flags = ("--registry", server.url, "--trust-local-registry")
    pdfs = [f"https://arxiv.org/pdf/{v}" for v in VERSIONS]
    if fault == "wrong digest":
        archive.lie.update(dict.fromkeys(pdfs, "A" * 32))
    elif fault == "refused url":
        archive.refused.update(pdfs)
    elif fault == "refused keys":
        archive.keys = ("another-key", "another-secret")
    else:
        archive.failing.update(pdfs)
    failed = pith("archive", PAPER, "--poll", "0", "--submit", "--yes", *flags)
    assert failed.returncode == code, failed.stderr
    line = failure(failed.stderr)
    assert line.startswith("pith: error: ") and said in line, line
    assert "nothing was signed" in line
    no_keys_in(failed.stdout, failed.stderr)
    with Outbox() as outbox:
        assert outbox.entries() == []
    assert storage_events(server.url) == []


def test_a_403_from_software_heritage_is_one_line_and_nothing_is_signed(
    pith: RunPith,
    author: str,
    archive: Wayback,
    heritage: Heritage,
    local_registry: StartRegistry,
    tmp_path: Path,
) -> None:
    server = local_registry(tmp_path / "registry")
    flags = ("--registry", server.url, "--trust-local-registry")
    refused = "https://github.com/refused/repo"
    heritage.refused.add(refused)
    failed = pith("archive", PAPER, "--code", refused, "--poll", "0", "--submit", "--yes", *flags)
    assert failed.returncode == 1, failed.stderr
    line = failure(failed.stderr)
    assert f"refused to save {refused} (403: The provided origin" in line
    with Outbox() as outbox:
        assert outbox.entries() == []
    assert storage_events(server.url) == []


def test_anonymous_without_keys_and_one_key_alone_is_bad_input(
    pith: RunPith,
    author: str,
    archive: Wayback,
    local_registry: StartRegistry,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    server = local_registry(tmp_path / "registry")
    flags = ("--registry", server.url, "--trust-local-registry")
    monkeypatch.delenv("PITH_IA_ACCESS_KEY")
    alone = pith("archive", PAPER, "--poll", "0", "-o", str(tmp_path / "a.jsonl"), *flags)
    assert alone.returncode == 2, alone.stderr
    line = failure(alone.stderr)
    assert "PITH_IA_SECRET_KEY is set but PITH_IA_ACCESS_KEY is not" in line
    no_keys_in(alone.stderr)
    assert archive.requests == []  # refused before anything was asked
    monkeypatch.delenv("PITH_IA_SECRET_KEY")
    out = tmp_path / "archive.jsonl"
    done = pith("archive", PAPER, "--poll", "0", "-o", str(out), *flags)
    assert done.returncode == 0, done.stderr
    assert archive.authorizations == ["", ""]
    [event] = [json.loads(line) for line in out.read_text("utf-8").splitlines()]
    assert event["event_type"] == "storage_attestation"


def test_submit_to_a_record_naming_no_attest_storage_is_refused_before_any_capture(
    pith: RunPith,
    author: str,
    archive: Wayback,
    local_registry: StartRegistry,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # as a registry whose records take no storage attestation
    actions = {
        name: etype for name, etype in answers.ACTIONS.items() if etype != "storage_attestation"
    }
    monkeypatch.setattr(answers, "ACTIONS", actions)
    server = local_registry(tmp_path / "registry")
    flags = ("--registry", server.url, "--trust-local-registry")
    refused = pith("archive", PAPER, "--poll", "0", "--submit", "--yes", *flags)
    assert refused.returncode == 2, refused.stderr
    assert "names no attest_storage action" in failure(refused.stderr)
    assert archive.requests == []  # nothing was captured
    with Outbox() as outbox:
        assert outbox.entries() == []


def test_keys_from_a_file_are_sent_and_a_bad_file_never_shows_what_it_holds(
    pith: RunPith,
    author: str,
    archive: Wayback,
    local_registry: StartRegistry,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    server = local_registry(tmp_path / "registry")
    flags = ("--registry", server.url, "--trust-local-registry")
    monkeypatch.delenv("PITH_IA_ACCESS_KEY")
    monkeypatch.delenv("PITH_IA_SECRET_KEY")
    bad = tmp_path / "bad-keys.txt"
    bad.write_text("only-one-secret-token\n", "utf-8")
    refused = pith("archive", PAPER, "--ia-keys", str(bad), "-o", str(tmp_path / "a.jsonl"), *flags)
    assert refused.returncode == 2, refused.stderr
    assert "holds no archive.org keys" in failure(refused.stderr)
    assert "only-one-secret-token" not in refused.stderr + refused.stdout
    assert archive.requests == []
    keys = tmp_path / "ia-keys.txt"
    keys.write_text(f"{ACCESS}\n{SECRET}\n", "utf-8")
    done = pith(
        "archive", PAPER, "--ia-keys", str(keys), "--poll", "0", "-o", str(tmp_path / "b.jsonl"),
        *flags,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert archive.authorizations == [f"LOW {ACCESS}:{SECRET}"] * 2
    no_keys_in(done.stdout, done.stderr)


def test_on_a_terminal_it_says_what_it_waits_on_shows_the_attestation_and_asks_first(
    author: str,
    archive: Wayback,
    local_registry: StartRegistry,
    tmp_path: Path,
    terminal: OnTerminal,
) -> None:
    server = local_registry(tmp_path / "registry")
    argv = [
        sys.executable, LAUNCHER, "archive", PAPER, "--poll", "0", "--submit",
        "--registry", server.url, "--trust-local-registry",
    ]  # fmt: skip
    code, shown = terminal(argv, [b"n"])
    assert code == 2, shown  # answered no: Declined
    assert (
        "asking the Internet Archive at" in shown and "to capture https://arxiv.org/pdf/" in shown
    )
    assert shown.index("A storage attestation to sign") < shown.index("[y/N]")
    assert "nothing was stored or sent" in shown
    no_keys_in(shown)
    with Outbox() as outbox:
        assert outbox.entries() == []
    assert storage_events(server.url) == []


def test_verify_archive_checks_an_event_file_given_its_record(
    pith: RunPith,
    author: str,
    archive: Wayback,
    local_registry: StartRegistry,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    server = local_registry(tmp_path / "registry")
    flags = ("--registry", server.url, "--trust-local-registry")
    out = tmp_path / "archive.jsonl"
    done = pith("archive", PAPER, "--poll", "0", "-o", str(out), *flags)
    assert done.returncode == 0, done.stderr
    monkeypatch.setenv("PITH_HOME", str(tmp_path / "another-machine"))
    unknown = pith("verify", str(out), "--archive", "--verbose")
    assert unknown.returncode == 0, unknown.stdout + unknown.stderr
    assert "which arXiv version the attested record is" in unknown.stdout
    assert archive.requests.count("GET /pdf/2302.12445v2") == 1  # only `pith archive`'s
    checked = pith("verify", str(out), "--archive", "--verbose", "--record", DEAR_RECORD)
    assert checked.returncode == 0, checked.stdout + checked.stderr
    assert any(
        line.startswith("passed") and "archive_copy" in line for line in checked.stdout.splitlines()
    ), checked.stdout
