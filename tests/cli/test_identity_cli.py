"""Identity proofs end to end: real key stores, `pith keys prove`, `pith claim --proof`, and
`pith verify --orcid/--signer` against a local server answering like ORCID's public API v3.0
and like an author's web site (127.0.0.1, port 0, real sockets)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from support.cli import use_fast_kdf
from support.identity_server import IdentityServer, Site
from support.paths import FIXTURES

from pithauthor._cli.main import main
from pithauthor.verify import read_documents

VICTIM = "0000-0002-1825-0097"  # Josiah Carberry, ORCID's test researcher
OTHER = "0000-0001-5109-3700"
DEAR_RECORD = str(FIXTURES / "record-2302.12445v2.json")
DEAR = "pith:2023:NFG5PAOXQUVIWDX5F7YSYYL7EW"


@pytest.fixture
def server() -> Iterator[IdentityServer]:
    with IdentityServer(Site(delay=2.0)) as srv:
        yield srv


@pytest.fixture(autouse=True)
def fast_keys(monkeypatch: pytest.MonkeyPatch) -> None:
    use_fast_kdf(monkeypatch)  # test-only: cheap argon2id (in this process too)
    monkeypatch.setenv("PITH_PASSPHRASE", "identity tests passphrase")


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    with pytest.raises(SystemExit) as exit_info:
        main(list(args))
    out, err = capsys.readouterr()
    return int(exit_info.value.code or 0), out, err


def make_author(
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    home: Path,
    name: str,
    orcid: str,
) -> str:
    """A key store at `home` with one key for `orcid`; returns the key id."""
    monkeypatch.setenv("PITH_HOME", str(home))
    code, out, err = run(
        capsys, "keys", "generate", "--name", name, "--orcid", orcid, "--backend", "file", "--json",
        "--public-name", "Chengjian Liu",  # author 2 of DEAR_RECORD's paper
    )  # fmt: skip
    assert code == 0, err
    return str(json.loads(out)["key_id"])


def claim(capsys: pytest.CaptureFixture[str], out: Path, *extra: str) -> dict[str, object]:
    code, _, err = run(capsys, "claim", DEAR, "--record", DEAR_RECORD, "--out", str(out), *extra)
    assert code == 0, err
    (event,) = read_documents(out)
    return dict(event)


def publish_orcid_proof(
    capsys: pytest.CaptureFixture[str], server: IdentityServer, orcid: str
) -> None:
    """Do what `pith keys prove orcid` says, on the local ORCID record of `orcid`."""
    code, out, err = run(capsys, "keys", "prove", "orcid", "--json")
    assert code == 0, err
    proof = json.loads(out)
    assert proof["orcid"] == orcid
    server.site.records.setdefault(orcid, []).append((proof["url_name"], proof["url"]))


def verify(
    capsys: pytest.CaptureFixture[str], server: IdentityServer, event: Path, *extra: str
) -> tuple[int, str, str]:
    return run(capsys, "verify", str(event), "--orcid-api", server.orcid_api, *extra)


def test_key_signing_under_someone_elses_orcid_fails_while_the_authors_key_passes(
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
    server: IdentityServer,
) -> None:
    # the real author: a key for their iD, proved on their ORCID record
    real_key = make_author(capsys, monkeypatch, tmp_path / "author", "carberry", VICTIM)
    publish_orcid_proof(capsys, server, VICTIM)
    server.site.records[VICTIM].insert(0, ("Lab page", "https://example.org/carberry"))
    real = tmp_path / "real.jsonl"
    claim(capsys, real, "--proof", "orcid")
    # someone else: a key of their own, claiming the same iD (nothing stops them signing)
    fake_key = make_author(capsys, monkeypatch, tmp_path / "impostor", "carberry", VICTIM)
    assert fake_key != real_key
    fake = tmp_path / "fake.jsonl"
    event = claim(capsys, fake, "--proof", "orcid")
    assert event["signer"]["signer_id"] == f"orcid:{VICTIM}"  # type: ignore[index]

    code, out, err = verify(capsys, server, real, "--orcid", VICTIM)
    assert code == 0, out + err
    assert "passed       identity_bound" in out
    assert f"{server.orcid_api}/{VICTIM}/researcher-urls" in out  # where it was fetched
    assert f"https://pith.science/key/{real_key}" in out  # what was found

    code, out, err = verify(capsys, server, fake, "--orcid", VICTIM)
    assert code == 1
    assert "failed       identity_proof.orcid" in out
    assert f"none of its 2 researcher URL(s) names {fake_key}" in out
    assert "failed       identity_bound" in out
    assert "FAILED: event: identity_proof.orcid, identity_bound" in err
    # the event itself is well signed: only the identity fails
    assert "passed       signature" in out


def test_verify_signer_accepts_only_that_key(
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
    server: IdentityServer,
) -> None:
    kid = make_author(capsys, monkeypatch, tmp_path / "a", "carberry", VICTIM)
    other = make_author(capsys, monkeypatch, tmp_path / "b", "someone", OTHER)
    monkeypatch.setenv("PITH_HOME", str(tmp_path / "a"))
    event = tmp_path / "e.jsonl"
    claim(capsys, event)
    code, out, _ = verify(capsys, server, event, "--signer", kid)
    assert code == 0 and f"signer.key_id {kid}, expected {kid}" in out
    code, out, err = verify(capsys, server, event, "--signer", other)
    assert code == 1 and "failed       identity.signer" in out
    assert "identity.signer" in err


def test_verify_orcid_refuses_an_event_naming_another_id(
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
    server: IdentityServer,
) -> None:
    make_author(capsys, monkeypatch, tmp_path / "a", "someone", OTHER)
    publish_orcid_proof(capsys, server, OTHER)
    event = tmp_path / "e.jsonl"
    claim(capsys, event)
    code, out, _ = verify(capsys, server, event, "--orcid", VICTIM)
    assert code == 1
    assert "failed       identity.orcid" in out and f"the event names {OTHER}" in out


@pytest.fixture
def proved(
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
    server: IdentityServer,
) -> tuple[str, Path]:
    """An author whose ORCID record names the key, and a claim carrying the ORCID proof."""
    kid = make_author(capsys, monkeypatch, tmp_path / "a", "carberry", VICTIM)
    publish_orcid_proof(capsys, server, VICTIM)
    event = tmp_path / "e.jsonl"
    claim(capsys, event, "--proof", "orcid")
    return kid, event


def test_offline_reports_the_proof_unverifiable_and_fails(
    capsys: pytest.CaptureFixture[str], server: IdentityServer, proved: tuple[str, Path]
) -> None:
    _, event = proved
    code, out, _err = verify(capsys, server, event, "--orcid", VICTIM, "--offline")
    assert code == 1
    assert "unverifiable identity_proof.orcid" in out and "not fetched (--offline)" in out
    assert "failed       identity_bound" in out and "is unverifiable" in out
    assert server.site.requests == []  # nothing was fetched


def test_slow_orcid_times_out_with_exit_3(
    capsys: pytest.CaptureFixture[str], server: IdentityServer, proved: tuple[str, Path]
) -> None:
    _, event = proved
    server.site.slow.add(VICTIM)
    code, out, err = verify(capsys, server, event, "--orcid", VICTIM, "--proof-timeout", "0.3")
    assert code == 3
    assert "unverifiable identity_proof.orcid" in out and "no answer within 0.3 s" in out
    assert "ORCID could not be reached" in err and "Traceback" not in err


def test_failing_orcid_is_unverifiable_with_exit_3(
    capsys: pytest.CaptureFixture[str], server: IdentityServer, proved: tuple[str, Path]
) -> None:
    _, event = proved
    server.site.failing.add(VICTIM)
    code, out, _err = verify(capsys, server, event, "--orcid", VICTIM)
    assert code == 3
    assert "unverifiable identity_proof.orcid" in out and "HTTP 500" in out


def test_orcid_record_that_does_not_exist_fails(
    capsys: pytest.CaptureFixture[str], server: IdentityServer, proved: tuple[str, Path]
) -> None:
    _, event = proved
    del server.site.records[VICTIM]
    code, out, _ = verify(capsys, server, event, "--orcid", VICTIM)
    assert code == 1
    assert f"no ORCID record {VICTIM} (HTTP 404)" in out


def test_removing_the_link_from_orcid_revokes_the_proof(
    capsys: pytest.CaptureFixture[str], server: IdentityServer, proved: tuple[str, Path]
) -> None:
    _, event = proved
    assert verify(capsys, server, event, "--orcid", VICTIM)[0] == 0
    server.site.records[VICTIM] = [("Homepage", "https://example.org/")]
    assert verify(capsys, server, event, "--orcid", VICTIM)[0] == 1


def test_orcid_api_from_environment_and_json_accept_header(
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    server: IdentityServer,
    proved: tuple[str, Path],
) -> None:
    _, event = proved
    monkeypatch.setenv("PITH_ORCID_API", server.orcid_api)
    code, out, _ = run(capsys, "verify", str(event), "--orcid", VICTIM, "--json")
    assert code == 0
    doc = json.loads(out)
    assert doc["ok"] is True
    assert {c["name"] for c in doc["checks"]} >= {"identity_proof.orcid", "identity_bound"}
    assert server.site.requests == [(f"/v3.0/{VICTIM}/researcher-urls", "application/json")]


def test_claim_without_proofs_is_reported_not_identity_bound(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    make_author(capsys, monkeypatch, tmp_path / "a", "carberry", VICTIM)
    event = tmp_path / "e.jsonl"
    data = claim(capsys, event)
    assert "identity_proofs" not in data["payload"]  # type: ignore[operator]
    code, out, _err = run(capsys, "verify", str(event))
    assert code == 0
    assert "unverifiable identity" in out and "not identity-bound" in out


def test_web_proof_lists_key_and_orcid_and_is_checked_on_the_site(
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
    server: IdentityServer,
) -> None:
    kid = make_author(capsys, monkeypatch, tmp_path / "a", "carberry", VICTIM)
    code, out, err = run(capsys, "keys", "prove", "web", server.url)
    assert code == 0, err
    doc = json.loads(out)
    assert doc["orcid"] == VICTIM and [k["key_id"] for k in doc["keys"]] == [kid]
    assert f"{server.url}/.well-known/pith-keys.json" in err
    event = tmp_path / "e.jsonl"
    claim(capsys, event, "--proof", f"web:{server.url}/people/carberry")
    # not yet published: the proof fails
    code, out, _ = verify(capsys, server, event, "--signer", kid)
    assert code == 1 and "failed       identity_proof.web" in out and "HTTP 404" in out
    server.site.files["/.well-known/pith-keys.json"] = ("application/json", out_bytes(doc))
    code, out, _ = verify(capsys, server, event, "--signer", kid)
    assert code == 0, out
    assert "passed       identity_proof.web" in out
    assert f"current: {server.url}/.well-known/pith-keys.json: lists {kid} for {VICTIM}" in out


def out_bytes(doc: object) -> bytes:
    return json.dumps(doc).encode()


def test_web_proof_naming_another_orcid_fails(
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
    server: IdentityServer,
) -> None:
    kid = make_author(capsys, monkeypatch, tmp_path / "a", "carberry", VICTIM)
    event = tmp_path / "e.jsonl"
    claim(capsys, event, "--proof", f"web:{server.url}")
    doc = {"version": "pith-keys.v1", "orcid": OTHER, "keys": [{"key_id": kid}]}
    server.site.files["/.well-known/pith-keys.json"] = ("application/json", out_bytes(doc))
    code, out, _ = verify(capsys, server, event, "--signer", kid)
    assert code == 1 and f"the site names ORCID iD {OTHER}, not {VICTIM}" in out


def test_web_proof_redirect_to_another_host_is_not_followed(
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
    server: IdentityServer,
) -> None:
    kid = make_author(capsys, monkeypatch, tmp_path / "a", "carberry", VICTIM)
    event = tmp_path / "e.jsonl"
    claim(capsys, event, "--proof", f"web:{server.url}")
    elsewhere = server.url.replace("127.0.0.1", "localhost") + "/keys.json"
    server.site.redirects["/.well-known/pith-keys.json"] = elsewhere
    code, out, _ = verify(capsys, server, event, "--signer", kid)
    assert "unverifiable identity_proof.web" in out and "another origin" in out
    assert all(path != "/keys.json" for path, _ in server.site.requests)
    assert code == 0  # --signer holds; the web proof is reported, not required


def test_claim_refuses_a_malformed_proof_option(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    make_author(capsys, monkeypatch, tmp_path / "a", "carberry", VICTIM)
    for bad in ("web:ftp://example.org", "keybase", "web:http://example.org"):
        code, _, err = run(capsys, "claim", DEAR, "--record", DEAR_RECORD, "--proof", bad, "--json")
        assert code == 2, bad
        assert len(err.strip().splitlines()) == 1 and "Traceback" not in err


def test_claim_proof_paper_names_the_arxiv_pdf_of_the_version(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    make_author(capsys, monkeypatch, tmp_path / "a", "carberry", VICTIM)
    event = claim(capsys, tmp_path / "e.jsonl", "--proof", "paper", "--proof", "orcid")
    assert event["payload"]["identity_proofs"] == [  # type: ignore[index]
        {"kind": "paper", "locator": "https://arxiv.org/pdf/2302.12445v2"},
        {"kind": "orcid", "locator": VICTIM},
    ]


def test_rotation_says_what_to_update_and_the_old_proof_reads_retired(
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
    server: IdentityServer,
    proved: tuple[str, Path],
) -> None:
    old_key, event = proved
    code, out, err = run(capsys, "keys", "rotate", "--backend", "file", "--json")
    assert code == 0, err
    new_key = json.loads(out)["active"]["key_id"]
    assert "update your identity proofs" in err
    assert f"https://pith.science/key/{old_key}" in err and "(retired " in err
    assert f"https://pith.science/key/{new_key}" in err
    # the author does as told: the old link renamed retired, the new one added
    code, out, _ = run(capsys, "keys", "prove", "orcid", "--key", old_key, "--json")
    retired = json.loads(out)
    assert retired["url_name"].startswith("Pith author key (retired ")
    server.site.records[VICTIM] = [(retired["url_name"], retired["url"])]
    publish_orcid_proof(capsys, server, VICTIM)
    code, out, _ = verify(capsys, server, event, "--orcid", VICTIM)
    assert "RETIRED key" in out and "current:" not in out
    # signed before the rotation but with no trusted time (no authority is configured in the
    # tests): its date is the signer's word, so it is not bound; with a token it is
    # (tests/cli/test_trusted_time_cli.py)
    assert code == 1, out
    assert "no trusted time proves this event was signed before" in out


def test_keys_prove_orcid_check_asks_the_record(
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
    server: IdentityServer,
) -> None:
    make_author(capsys, monkeypatch, tmp_path / "a", "carberry", VICTIM)
    server.site.records[VICTIM] = []
    code, out, err = run(
        capsys, "keys", "prove", "orcid", "--check", "--orcid-api", server.orcid_api
    )
    assert code == 1 and "none of its 0 researcher URL(s)" in err
    assert out.startswith(
        "Link name: Pith author key\nURL:       https://pith.science/key/ed25519:"
    )
    publish_orcid_proof(capsys, server, VICTIM)
    code, _, err = run(capsys, "keys", "prove", "orcid", "--check", "--orcid-api", server.orcid_api)
    assert code == 0 and "researcher URL 'Pith author key'" in err


def test_keys_prove_orcid_with_a_bad_orcid_api_is_one_line_before_any_instruction(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    make_author(capsys, monkeypatch, tmp_path / "a", "carberry", VICTIM)
    for bad in ("http://orcid.example.org", "https://user:pw@pub.orcid.org", ""):
        code, out, err = run(capsys, "keys", "prove", "orcid", "--check", "--orcid-api", bad)
        assert code == 2 and out == "", (bad, out)
        assert len(err.strip().splitlines()) == 1 and "--orcid-api" in err, (bad, err)


def test_a_malformed_orcid_is_bad_input(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    make_author(capsys, monkeypatch, tmp_path / "a", "carberry", VICTIM)
    event = tmp_path / "e.jsonl"
    claim(capsys, event)
    code, out, err = run(capsys, "verify", str(event), "--orcid", "0000-0002-1825-0098")
    assert code == 2 and out == ""
    assert err.strip().splitlines() == [
        "pith: error: '0000-0002-1825-0098' is not a valid ORCID iD: check digit 8, expected 7"
    ]


def test_a_file_of_claims_asks_orcid_once_and_checks_each_claim(
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
    server: IdentityServer,
) -> None:
    make_author(capsys, monkeypatch, tmp_path / "a", "carberry", VICTIM)
    publish_orcid_proof(capsys, server, VICTIM)
    events = tmp_path / "claims.jsonl"
    for i in range(3):  # three files: into the same file the same claim is reused, not written
        one = tmp_path / f"claim{i}.jsonl"
        run(capsys, "claim", DEAR, "--record", DEAR_RECORD, "--out", str(one))
        with events.open("a", encoding="utf-8") as joined:
            joined.write(one.read_text("utf-8"))
    code, out, err = verify(capsys, server, events, "--orcid", VICTIM, "--verbose")
    assert code == 0, out + err
    assert [ln.split()[1] for ln in out.splitlines() if "identity_bound" in ln] == [
        "[1].identity_bound",
        "[2].identity_bound",
        "[3].identity_bound",
    ]
    assert len(server.site.requests) == 1
    # without --verbose, the three passed checks are one line
    code, out, err = verify(capsys, server, events, "--orcid", VICTIM)
    assert code == 0 and "[*].identity_bound" in out and "3 checks" in out, out + err
