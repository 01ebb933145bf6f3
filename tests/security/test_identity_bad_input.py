"""Identity options fed bad input: `--paper-pdf` goes through the one file reader, addresses
through the one URL rule, `--signer` through the key-id parser. And the matrix's baselines for
these options succeed, so that its failing cases fail because of the one bad value."""

from __future__ import annotations

import io
import json
import os
import subprocess
from pathlib import Path

import pytest
from support.cli import RunPith, assert_one_line_error, use_fast_kdf
from support.paths import FIXTURES

MAX_PDF_BYTES = 64 * 1024 * 1024  # pithauthor.fs.MAX_PDF_BYTES

ORCID = "0000-0002-1825-0097"
NUMBER = "pith:2023:NFG5PAOXQUVIWDX5F7YSYYL7EW"
RECORD = str(FIXTURES / "record-2302.12445v2.json")
DEAD = "http://127.0.0.1:9"


@pytest.fixture
def claim(pith: RunPith, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, str]:
    """A claim without proofs signed by a key with an ORCID iD; (its file, the key id)."""
    use_fast_kdf(monkeypatch)
    monkeypatch.setenv("PITH_PASSPHRASE", "identity bad input")
    monkeypatch.setenv("PITH_ORCID_API", DEAD)  # never the real ORCID
    made = pith(
        "keys", "generate", "--name", "ada", "--orcid", ORCID, "--backend", "file", "--json",
        "--public-name", "Chengjian Liu",  # author 2 of RECORD's paper
    )  # fmt: skip
    assert made.returncode == 0, made.stderr
    out = tmp_path / "claim.jsonl"
    signed = pith("claim", NUMBER, "--record", RECORD, "-o", str(out))
    assert signed.returncode == 0, signed.stderr
    return out, str(json.loads(made.stdout)["key_id"])


def _pdf(path: Path, keys: str) -> Path:
    from pypdf import PdfWriter

    writer = PdfWriter()
    writer.add_blank_page(width=200, height=200)
    writer.add_metadata({"/PithAuthorKeys": keys, "/PithNumber": NUMBER})
    buffer = io.BytesIO()
    writer.write(buffer)
    path.write_bytes(buffer.getvalue())
    return path


def test_the_matrix_baselines_pass_with_good_values(
    pith: RunPith, claim: tuple[Path, str], tmp_path: Path
) -> None:
    event, kid = claim
    assert pith("verify", str(event), "--signer", kid).returncode == 0
    lower = "ed25519:" + kid.split(":")[1].lower()  # typed by hand: the same key id
    assert pith("verify", str(event), "--signer", lower).returncode == 0
    good = _pdf(tmp_path / "paper.pdf", kid)
    checked = pith("verify", str(event), "--paper-pdf", str(good))
    assert checked.returncode == 0, checked.stdout + checked.stderr
    # a local file names the key; only the arXiv PDF of the claimed version binds it
    assert "unverifiable identity_proof.paper    named, not bound" in checked.stdout
    assert pith("keys", "prove", "web", "https://lab.example.org", "--key", "ada").returncode == 0
    proof = pith("claim", NUMBER, "--record", RECORD, "--json", "--proof", "web:https://x.org")
    assert proof.returncode == 0, proof.stderr


@pytest.mark.parametrize(
    ("make", "fault"),
    [
        (lambda p: os.mkfifo(p), "is a FIFO (named pipe), not a PDF file"),
        (lambda p: p.mkdir(), "is a folder, not a PDF file"),
        (lambda p: p.open("wb").truncate(MAX_PDF_BYTES + 1), "is larger than 64 MiB"),
        (lambda p: None, ": no such file"),
    ],
    ids=["fifo", "folder", "huge", "missing"],
)
def test_a_paper_pdf_file_that_cannot_be_read_is_one_line_naming_it_and_exit_2(
    request: pytest.FixtureRequest, claim: tuple[Path, str], tmp_path: Path, make: object,
    fault: str,
) -> None:  # fmt: skip
    """The FIFO in a real process (a hang is what is tested; the bad-input matrix has it
    in-process with a time-out too); the other faults in-process."""
    path = tmp_path / "paper.pdf"
    make(path)  # type: ignore[operator]
    run: RunPith = request.getfixturevalue("pith_process" if path.is_fifo() else "pith")
    try:
        result = run("verify", str(claim[0]), "--paper-pdf", str(path), timeout=30)
    except subprocess.TimeoutExpired:  # pragma: no cover - what is being tested
        pytest.fail("pith verify --paper-pdf hangs")
    assert_one_line_error(result, 2)
    assert f"{path}{'' if fault.startswith(':') else ' '}{fault}" in result.stderr


def test_a_file_that_is_not_a_pdf_fails_the_proof_with_one_line_on_stderr(
    pith_process: RunPith, claim: tuple[Path, str], tmp_path: Path
) -> None:
    """A real process (pypdf's warnings go to the logging's last resort there, not in pytest)."""
    junk = tmp_path / "junk.pdf"
    junk.write_bytes(b"\x00\x01 not a pdf at all")
    result = pith_process("verify", str(claim[0]), "--paper-pdf", str(junk))
    assert result.returncode == 1
    row = next(line for line in result.stdout.splitlines() if "identity_proof.paper" in line)
    assert row.startswith("failed ") and "not a readable PDF" in row
    assert result.stderr.strip().splitlines() == ["FAILED: event: identity_proof.paper"]


@pytest.mark.parametrize(
    ("args", "said"),
    [
        (["--signer", "ed25519:ABC"], "is not a key id"),
        (["--paper-pdf", "http://example.com/p.pdf"], "refusing plain http to example.com"),
        (["--paper-pdf", "https://u:pw@127.0.0.1:9/p.pdf"], "user name or password"),
        (["--paper-pdf", "http://[::1"], "is not a URL"),
        (["--orcid", ORCID, "--orcid-api", ""], "is not an https:// address"),
        (["--orcid", ORCID, "--orcid-api", "https://exa mple.com"], "is not an https://"),
    ],
)
def test_bad_identity_values_are_refused_before_anything_is_fetched(
    pith: RunPith, claim: tuple[Path, str], args: list[str], said: str
) -> None:
    result = pith("verify", str(claim[0]), *args)
    assert_one_line_error(result, 2)
    assert said in result.stderr


@pytest.mark.parametrize(
    "url", ["http://[::1", "https://127.0.0.1:99999", "https://exa mple.com", "http://127.0.0.1:0"]
)
def test_keys_prove_web_refuses_what_is_not_a_site_address(
    pith: RunPith, claim: tuple[Path, str], url: str
) -> None:
    assert_one_line_error(pith("keys", "prove", "web", url), 2)


@pytest.mark.parametrize(
    ("locator", "said"),
    [
        ("/etc/passwd", "is not an https:// address"),
        ("file:///etc/passwd", "is not an https:// address"),
        ("http://example.com/paper.pdf", "refusing plain http to example.com"),
        ("https://user:pw@127.0.0.1:9/paper.pdf", "user name or password"),
    ],
)
def test_a_locator_from_a_hostile_event_is_neither_read_from_disk_nor_fetched(
    locator: str, said: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    from pithauthor import net
    from pithauthor.identity.fetch import Fetcher, Unreadable

    made: list[object] = []
    monkeypatch.setattr(net, "new_client", lambda **kwargs: made.append(kwargs))
    fetcher = Fetcher(timeout=1.0, offline=False)
    with pytest.raises(Unreadable) as caught:
        fetcher.get(locator, "application/pdf", 1 << 20)
    assert said in caught.value.reason and not caught.value.network
    assert made == []  # no HTTP client was even made
