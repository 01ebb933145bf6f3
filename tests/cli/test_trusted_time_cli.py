"""Trusted time end to end, with real `pith` commands, a loopback RFC 3161 authority
(tests/support/tsa_server.py) and a loopback ORCID (tests/support/identity_server.py):

- a key retired in 2026 binds the claim a token proves earlier than the retirement, and neither
  the one whose token is later (though its `created_at` says earlier) nor the one with none;
- `pith claim --submit` with the authority down signs and submits, in one warning line, and the
  next `pith submit` fetches the token;
- `--out FILE` writes the proofs beside the events (FILE.time.jsonl), `--no-timestamp` asks
  nobody, and `pith timestamp FILE` fetches what the file's events lack."""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import httpx
import pytest
from support.cli import RunPith, StartRegistry, error_lines, use_fast_kdf
from support.identity_server import IdentityServer, Site
from support.paths import FIXTURES
from support.tsa_server import Pki, Tsa, TsaServer

from pithauthor.protocol.identity import key_url
from pithauthor.protocol.timestamps import signature_message
from pithauthor.registry.outbox import Outbox
from pithauthor.timestamps.rfc3161 import check_token
from pithauthor.timestamps.time_sources import Authority

VICTIM = "0000-0002-1825-0097"
PAPER = "2302.12445"
DEAR = "pith:2023:NFG5PAOXQUVIWDX5F7YSYYL7EW"
DEAR_RECORD = str(FIXTURES / "record-2302.12445v2.json")
SIGNED_AT = "2026-03-01T10:00:00Z"  # what the signer writes in created_at
RETIRED = "2026-06-01"  # the day the ORCID link marks the key retired
BEFORE = datetime(2026, 3, 1, 10, 0, 5, tzinfo=UTC)
AFTER = datetime(2026, 9, 1, 12, 0, 0, tzinfo=UTC)


@pytest.fixture(scope="module")
def pki() -> Pki:
    return Pki()


@pytest.fixture
def tsa(pki: Pki) -> Iterator[TsaServer]:
    with TsaServer(Tsa(pki=pki, now=BEFORE)) as server:
        yield server


@pytest.fixture
def orcid() -> Iterator[IdentityServer]:
    with IdentityServer(Site()) as server:
        yield server


@pytest.fixture
def author(pith: RunPith, monkeypatch: pytest.MonkeyPatch) -> str:
    """A key for VICTIM (an author of 2302.12445 by that public name); returns its key id."""
    use_fast_kdf(monkeypatch)
    monkeypatch.setenv("PITH_PASSPHRASE", "trusted time tests passphrase")
    made = pith(
        "keys", "generate", "--name", "carberry", "--orcid", VICTIM, "--public-name",
        "Chengjian Liu", "--backend", "file", "--json",
    )  # fmt: skip
    assert made.returncode == 0, made.stderr
    return str(json.loads(made.stdout)["key_id"])


def trust(monkeypatch: pytest.MonkeyPatch, tmp_path: Path, tsa: TsaServer, pki: Pki) -> None:
    """PITH_TSA names the loopback authority and pins its root."""
    root = tmp_path / "tsa-root.pem"
    root.write_bytes(pki.root_pem)
    monkeypatch.setenv("PITH_TSA", f"{tsa.url}={root}")


def test_a_key_retired_in_2026_binds_only_the_claim_a_token_proves_earlier(
    pith: RunPith,
    author: str,
    tsa: TsaServer,
    pki: Pki,
    orcid: IdentityServer,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr("pithauthor.sign.utc_now", lambda: SIGNED_AT)
    trust(monkeypatch, tmp_path, tsa, pki)
    claim = ("claim", DEAR, "--record", DEAR_RECORD)
    early, late, bare = (tmp_path / f"{n}.jsonl" for n in ("early", "late", "bare"))
    # stamped at once, before the retirement
    done = pith(*claim, "--out", str(early))
    assert done.returncode == 0, done.stderr
    assert "warning" not in done.stderr
    # "signed" before the retirement too (its created_at says so), but stamped after it
    tsa.tsa.now = AFTER
    done = pith(*claim, "--statement", "I wrote this paper.", "--out", str(late))
    assert done.returncode == 0, done.stderr
    # no token at all
    done = pith(*claim, "--statement", "I am its author.", "--out", str(bare), "--no-timestamp")
    assert done.returncode == 0, done.stderr
    assert not Path(str(bare) + ".time.jsonl").exists()
    assert len(tsa.tsa.requests) == 2  # --no-timestamp asked nobody
    for path in (early, late, bare):
        assert json.loads(path.read_text("utf-8"))["created_at"] == SIGNED_AT

    orcid.site.records[VICTIM] = [
        (f"Pith author key (retired {RETIRED})", key_url(author))
    ]  # the author retired the key on ORCID
    asked = ("--orcid", VICTIM, "--orcid-api", orcid.orcid_api)

    bound = pith("verify", str(early), *asked)
    assert bound.returncode == 0, bound.stdout + bound.stderr
    assert f"trusted time 2026-03-01T10:00:05Z by rfc3161 {tsa.url}" in bound.stdout
    assert "as a retired key" in bound.stdout

    stamped_late = pith("verify", str(late), *asked)
    assert stamped_late.returncode == 1, stamped_late.stdout
    assert f"trusted time 2026-09-01T12:00:00Z by rfc3161 {tsa.url}" in stamped_late.stdout
    retired = next(x for x in stamped_late.stdout.splitlines() if "identity.retired" in x)
    assert retired.startswith("failed")
    assert f"its earliest proven time, 2026-09-01T12:00:00Z by rfc3161 {tsa.url}" in retired
    assert "is not before it" in retired

    unstamped = pith("verify", str(bare), *asked)
    assert unstamped.returncode == 1, unstamped.stdout
    retired = next(x for x in unstamped.stdout.splitlines() if "identity.retired" in x)
    assert "no trusted time proves this event was signed before" in retired
    assert f"(it says {SIGNED_AT}, which its signer wrote)" in retired


def test_claim_submit_with_the_authority_down_is_submitted_and_the_next_submit_fetches_it(
    pith: RunPith,
    author: str,
    tsa: TsaServer,
    pki: Pki,
    local_registry: StartRegistry,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    server = local_registry(tmp_path / "registry")
    flags = ("--registry", server.url, "--trust-local-registry")
    trust(monkeypatch, tmp_path, tsa, pki)
    tsa.tsa.http_status = 503  # the authority is down
    claimed = pith("claim", PAPER, "--submit", "--yes", *flags)
    assert claimed.returncode == 0, claimed.stderr
    warned = [x for x in claimed.stderr.splitlines() if tsa.url in x]
    assert len(warned) == 1 and warned[0].startswith("warning: no trusted time yet from")
    assert "`pith submit` fetches it later" in warned[0]
    assert len(tsa.tsa.requests) == 1  # asked once: signing does not wait on retries
    assert "Traceback" not in claimed.stderr
    with Outbox() as outbox:
        [entry] = outbox.entries()
        assert entry.state == "accepted"  # signed and submitted all the same
        assert outbox.sidecar(entry.event_id) is None

    tsa.tsa.http_status = 200  # the authority is back
    again = pith("submit", *flags)
    assert again.returncode == 0, again.stderr
    assert "trusted time: 1 proof(s) fetched for 1 event(s)" in again.stderr
    with Outbox() as outbox:
        sidecar = outbox.sidecar(entry.event_id)
    assert sidecar is not None
    [(url, token)] = [(e["authority"], e["token"]) for e in sidecar["rfc3161"]]
    assert url == tsa.url
    import base64

    proven = check_token(
        base64.b64decode(token),
        signature_message(entry.event),
        [Authority(tsa.url, (pki.root_der,))],
    )
    assert proven.time == BEFORE
    # nothing left to fetch: the next submit asks the authority nothing
    asked = len(tsa.tsa.requests)
    assert pith("submit", *flags).returncode == 0
    assert len(tsa.tsa.requests) == asked


def test_pith_timestamp_fetches_what_a_files_events_lack_into_its_sidecar(
    pith: RunPith,
    author: str,
    tsa: TsaServer,
    pki: Pki,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    events = tmp_path / "events.jsonl"
    done = pith("claim", DEAR, "--record", DEAR_RECORD, "--out", str(events))
    assert done.returncode == 0, done.stderr  # PITH_TSA=none: no proof, no sidecar
    sidecar = Path(str(events) + ".time.jsonl")
    assert not sidecar.exists()
    trust(monkeypatch, tmp_path, tsa, pki)
    fetched = pith("timestamp", str(events), "--json")
    assert fetched.returncode == 0, fetched.stderr
    said = json.loads(fetched.stdout)
    assert said["events"] == 1 and [f["kind"] for f in said["fetched"]] == ["rfc3161"]
    [line] = sidecar.read_text("utf-8").splitlines()
    assert json.loads(line)["rfc3161"][0]["authority"] == tsa.url
    verified = pith("verify", str(events))
    assert verified.returncode == 0, verified.stdout
    assert f"trusted time 2026-03-01T10:00:05Z by rfc3161 {tsa.url}" in verified.stdout
    # a token changed in the sidecar fails the event's trusted time
    doc = json.loads(line)
    doc["rfc3161"][0]["token"] = json.loads(Path(str(events)).read_text("utf-8"))["signature"][
        "signature_b64"
    ]  # canonical base64, not a token
    sidecar.write_text(json.dumps(doc) + "\n", "utf-8")
    broken = pith("verify", str(events))
    assert broken.returncode == 1
    assert "failed       trusted_time.rfc3161" in broken.stdout
    # an authority down: exit 3, one line, nothing lost
    sidecar.unlink()
    tsa.tsa.http_status = 503
    down = pith("timestamp", str(events))
    errors = [x for x in error_lines(down.stderr) if x.startswith("pith: error:")]
    assert down.returncode == 3 and len(errors) == 1, down.stderr
    assert "run `pith timestamp` again later" in errors[0]


def test_submit_file_keeps_its_sidecar_and_a_withdrawal_is_stamped_too(
    pith: RunPith,
    author: str,
    tsa: TsaServer,
    pki: Pki,
    local_registry: StartRegistry,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    server = local_registry(tmp_path / "registry")
    flags = ("--registry", server.url, "--trust-local-registry")
    trust(monkeypatch, tmp_path, tsa, pki)
    events = tmp_path / "events.jsonl"
    done = pith("claim", PAPER, "--out", str(events), *flags)
    assert done.returncode == 0, done.stderr
    sidecar = json.loads(Path(str(events) + ".time.jsonl").read_text("utf-8"))
    assert len(tsa.tsa.requests) == 1
    sent = pith("submit", str(events), *flags)
    assert sent.returncode == 0, sent.stderr
    assert f"kept the trusted time of 1 event(s) from {events}.time.jsonl" in sent.stderr
    # and sent on with the event to the registry that keeps proofs (its record names the action)
    assert f"trusted time: sent the proofs of 1 event(s) to {server.url}" in sent.stderr
    body = DEAR.rsplit(":", 1)[1]
    assert httpx.get(f"{server.url}/pith/{body}/bundle.json").json()["trusted_time"] == [sidecar]
    assert len(tsa.tsa.requests) == 1  # the file's token travelled: nothing asked again
    with Outbox() as outbox:
        assert outbox.sidecar(sidecar["event_id"]) == sidecar
    withdrawn = pith("withdraw", sidecar["event_id"], *flags)
    assert withdrawn.returncode == 0, withdrawn.stderr
    assert len(tsa.tsa.requests) == 2  # the withdrawal got its own token
    with Outbox() as outbox:
        rows = [(e.event_id, e.state) for e in outbox.entries()]
        stamped = [eid for eid, _ in rows if eid != sidecar["event_id"]]
        assert stamped, rows
        assert outbox.sidecar(stamped[0]) is not None


def test_doctor_counts_the_stored_events_without_a_token(
    pith: RunPith,
    author: str,
    tsa: TsaServer,
    pki: Pki,
    local_registry: StartRegistry,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    server = local_registry(tmp_path / "registry")
    flags = ("--registry", server.url, "--trust-local-registry")
    assert pith("claim", PAPER, *flags).returncode == 0  # PITH_TSA=none: no token
    quiet = {f["check"] for f in json.loads(pith("doctor", "--offline", "--json").stdout)}
    assert "trusted time" not in quiet  # no authority set: nothing to say
    trust(monkeypatch, tmp_path, tsa, pki)
    found = {f["check"]: f for f in json.loads(pith("doctor", "--offline", "--json").stdout)}
    assert found["trusted time"]["level"] == "warn"
    assert found["trusted time"]["detail"] == "1 stored event(s) have no time-stamp token yet"
    assert found["trusted time"]["next"] == "pith timestamp"
    assert pith("timestamp").returncode == 0
    found = {f["check"]: f for f in json.loads(pith("doctor", "--offline", "--json").stdout)}
    assert "trusted time" not in found


def test_the_proofs_travel_to_the_local_registry_and_verify_in_its_bundle_and_state(
    pith: RunPith,
    author: str,
    tsa: TsaServer,
    pki: Pki,
    local_registry: StartRegistry,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    server = local_registry(tmp_path / "registry")
    flags = ("--registry", server.url, "--trust-local-registry")
    trust(monkeypatch, tmp_path, tsa, pki)
    claimed = pith("claim", PAPER, "--submit", "--yes", *flags)
    assert claimed.returncode == 0, claimed.stderr
    assert f"trusted time: sent the proofs of 1 event(s) to {server.url}" in claimed.stderr
    with Outbox() as outbox:
        [entry] = outbox.entries()
        kept = outbox.sidecar(entry.event_id)
    body = DEAR.rsplit(":", 1)[1]
    for kind in ("bundle", "state"):
        doc = httpx.get(f"{server.url}/pith/{body}/{kind}.json").json()
        assert doc["trusted_time"] == [kept]  # the token travelled with the event
        path = tmp_path / f"{kind}.json"
        path.write_text(json.dumps(doc), "utf-8")
        verified = pith("verify", str(path), *flags)
        assert verified.returncode == 0, verified.stdout + verified.stderr
        said = f"trusted time {entry.event_id} 2026-03-01T10:00:05Z by rfc3161 {tsa.url}"
        assert said in verified.stdout.splitlines(), verified.stdout
        # a token changed in the carried sidecar fails the event's trusted time
        doc["trusted_time"][0]["rfc3161"][0]["token"] = entry.event["signature"]["signature_b64"]
        path.write_text(json.dumps(doc), "utf-8")
        broken = pith("verify", str(path), *flags)
        assert broken.returncode == 1, broken.stdout
        assert "trusted_time.rfc3161" in broken.stdout.split("FAILED")[-1] + broken.stderr


def test_a_registry_whose_record_names_no_trusted_time_action_is_sent_no_proofs(
    pith: RunPith,
    author: str,
    tsa: TsaServer,
    pki: Pki,
    local_registry: StartRegistry,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # as pith.science's records: their agent_actions name no submit_trusted_time
    monkeypatch.setattr("pithauthor.registry.local.answers.TIME_ACTION_NAME", "not_named")
    server = local_registry(tmp_path / "registry")
    flags = ("--registry", server.url, "--trust-local-registry")
    trust(monkeypatch, tmp_path, tsa, pki)
    claimed = pith("claim", PAPER, "--submit", "--yes", *flags)
    assert claimed.returncode == 0, claimed.stderr
    assert "trusted time" not in claimed.stderr  # not sent, and no warning either
    with Outbox() as outbox:
        [entry] = outbox.entries()
        assert outbox.sidecar(entry.event_id) is not None  # kept here all the same
    body = DEAR.rsplit(":", 1)[1]
    assert "trusted_time" not in httpx.get(f"{server.url}/pith/{body}/bundle.json").json()
