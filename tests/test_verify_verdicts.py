"""Verdicts that cannot be fooled: the attacks of issue 12 (findings 1, 4, 5, 6), each replayed.

A hostile registry is a real HTTP server on loopback serving documents the test chose.
"""

from __future__ import annotations

import base64
import copy
import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, ClassVar

import pytest
from conftest import FIXTURES, RunPith, assert_one_line_error, load_fixture

from pithauthor._core.canonical import canonical_sha256
from pithauthor._core.record import pith_number_of
from pithauthor.trust import pinned_trust
from pithauthor.verify import verify_document

RECORD = load_fixture("record-2302.12445v2.json")
STATE = load_fixture("state-2204.10562v1.json")
VECTORS = Path(__file__).parent / "vectors" / "events"
BODY = RECORD["pith_number"].rsplit(":", 1)[1]


def _write(tmp_path: Path, name: str, doc: Any) -> Path:
    path = tmp_path / name
    path.write_text(json.dumps(doc), "utf-8")
    return path


def _reseal(state: dict[str, Any]) -> dict[str, Any]:
    state.pop("state_sha256", None)
    state["state_sha256"] = canonical_sha256(state)
    return state


def _failed(doc: Any) -> set[str]:
    return {c.name for c in verify_document(doc).failed}


def _forged_citation(number: str, digest: str) -> dict[str, Any]:
    """The attack of finding 1: an author-array event that declares a registry signer."""
    return {
        "event_type": "citation_signature",
        "target": "citation",
        "subject_pith_number": number,
        "created_at": "2026-11-29T12:00:00Z",
        "signer": {
            "key_id": "pith-v1-2026-05",
            "public_key_fingerprint": "8d4b5ee74e4693bcd1df2446408b0d54",
            "signer_id": "pith.science",
            "signer_type": "pith_registry",
        },
        "payload": {"canonical_sha256": digest, "relationship": "refutes"},
        "event_id": "sha256:" + "ab" * 32,
    }


def _registry_bundle(*events: dict[str, Any]) -> dict[str, Any]:
    created = dict(STATE["current"]["record_created"])
    canon = STATE["current"]["canonical_record"]
    return {
        "bundle_type": "pith_open_graph_bundle",
        "bundle_version": "1.0",
        "pith_number": STATE["pith_number"],
        "short_pith_number": "pith:" + STATE["pith_number"].split(":")[2][:8],
        "canonical_record": canon,
        "canonical_sha256": created["payload"]["canonical_sha256"],
        "source": canon["source"],
        "source_aliases": STATE["current"]["source_aliases"],
        "events": [created, *events],
    }


# --- finding 1: forged events, bundles without a receipt -------------------------------------


@pytest.mark.parametrize(
    "array", ["author_attestations", "citation_signatures", "replication_records"]
)
def test_a_registry_signed_event_in_an_author_array_fails_the_state(
    pith: RunPith, tmp_path: Path, array: str
) -> None:
    state = copy.deepcopy(STATE)
    digest = state["current"]["record_created"]["payload"]["canonical_sha256"]
    state["current"][array].append(_forged_citation(state["pith_number"], digest))
    result = pith("verify", str(_write(tmp_path, "s.json", _reseal(state))))
    assert result.returncode == 1, result.stdout
    assert f"FAILED: state: current.{array}[0]." in result.stderr


def test_a_registry_signed_author_event_in_a_bundle_fails_it() -> None:
    digest = STATE["current"]["record_created"]["payload"]["canonical_sha256"]
    bundle = _registry_bundle(_forged_citation(STATE["pith_number"], digest))
    assert "events[1].structure" in _failed(bundle)


def test_an_event_signed_by_an_unknown_registry_key_fails_the_state() -> None:
    state = copy.deepcopy(STATE)
    snap = state["current"]["graph_snapshots"][0]
    snap["signer"] = {**snap["signer"], "key_id": "evil-key"}
    assert "current.graph_snapshots[0].signer" in _failed(_reseal(state))


def test_a_bundle_of_a_made_up_paper_without_a_receipt_fails() -> None:
    canon = copy.deepcopy(RECORD["canonical_record"])
    canon["metadata"]["title_canon_sha256"] = "00" * 32
    number = pith_number_of(canon).full
    bundle = {
        "bundle_type": "pith_open_graph_bundle",
        "bundle_version": "1.0",
        "pith_number": number,
        "canonical_record": canon,
        "canonical_sha256": canonical_sha256(canon),
        "source": canon["source"],
        "events": [],
    }
    assert "record_created" in _failed(bundle)
    bundle["events"] = [copy.deepcopy(STATE["current"]["record_created"])]  # another paper's
    failed = _failed(bundle)
    assert {"record.payload_record", "record.receipt_digest"} <= failed


def test_a_bundle_whose_source_disagrees_with_its_record_fails() -> None:
    bundle = _registry_bundle()
    bundle["source"] = {**bundle["source"], "version": 9}
    assert "source" in _failed(bundle)


def test_a_genuine_registry_bundle_passes_but_not_strictly() -> None:
    report = verify_document(_registry_bundle())
    assert report.ok and not report.strict_ok
    assert [c.name for c in report.with_status("unverifiable")] == ["record.event_id"]


def test_strict_fails_on_unverifiable_parts_and_says_which(pith: RunPith) -> None:
    result = pith("verify", str(FIXTURES / "state-2204.10562v1.json"), "--strict")
    assert result.returncode == 1
    assert "FAILED (--strict): state: unverifiable: record.event_id" in result.stderr
    assert "merge" in result.stderr
    assert pith("verify", str(FIXTURES / "record-2302.12445v2.json"), "--strict").returncode == 0


# --- finding 6: what "record verified" covers ---------------------------------------------------


def _record_with(change: Any) -> dict[str, Any]:
    doc = copy.deepcopy(RECORD)
    change(doc)
    return doc


@pytest.mark.parametrize(
    ("change", "check"),
    [
        (lambda d: d["paper"].__setitem__("title", "A Different Paper"), "paper"),
        (lambda d: d["paper"].__setitem__("primary_cat", "cs.AI"), "paper"),
        (lambda d: d["receipt"].__setitem__("algorithm", "rsa"), "receipt_kind"),
        (lambda d: d["receipt"].__setitem__("kind", "other_receipt"), "receipt_kind"),
        (lambda d: d["aliases"].append({"alias_kind": "isbn", "alias_value": "x"}), "aliases"),
        (lambda d: d["aliases"].pop(), "aliases"),
        (lambda d: d.pop("pith_number"), "required"),
        (
            lambda d: d["agent_actions"]["actions"].__setitem__(
                "sign_citation", f"https://evil.example/pith/{BODY}/action/citation_signature"
            ),
            "agent_actions",
        ),
        (lambda d: d["links"].__setitem__("html", "https://pith.science/pith/OTHER"), "links"),
    ],
)
def test_a_record_field_that_disagrees_fails_naming_the_check(change: Any, check: str) -> None:
    assert check in _failed(_record_with(change))


def test_fields_no_signature_covers_are_listed_as_not_signed(pith: RunPith) -> None:
    result = pith("verify", str(FIXTURES / "record-2302.12445v2.json"), "--json")
    report = json.loads(result.stdout)
    (entry,) = [c for c in report["checks"] if c["status"] == "not_signed"]
    assert {"paper.authors_text", "graph_snapshot", "receipt.signed_at", "links"} <= set(
        entry["paths"]
    )
    assert "paper.title" not in entry["paths"]
    assert "not signed" in pith("verify", str(FIXTURES / "record-2302.12445v2.json")).stderr


# --- finding 4: trust -----------------------------------------------------------------------------


def _evil_manifest(tmp_path: Path, key_id: str = "pith-v1-2026-05") -> Path:
    from nacl.signing import SigningKey

    manifest = load_fixture("pith-mirrors.json")
    pk = bytes(SigningKey(b"\x07" * 32).verify_key)
    entry = manifest["mirrors"][0]["public_key"]
    for name in ("public_key_hex", "fingerprint_sha256_hex", "fingerprint_sha256_b32_first128bits"):
        entry.pop(name)
    entry.update(key_id=key_id, public_key_b64=base64.b64encode(pk).decode())
    return _write(tmp_path, "evil.json", manifest)


def _record_signed_by_evil_key() -> dict[str, Any]:
    from nacl.signing import SigningKey

    doc = copy.deepcopy(RECORD)
    signature = SigningKey(b"\x07" * 32).sign(bytes.fromhex(doc["canonical_sha256"])).signature
    doc["receipt"]["signature_b64"] = base64.b64encode(signature).decode()
    doc["receipt"].pop("public_key_fingerprint")
    return doc


def test_a_manifest_cannot_replace_the_pinned_key(pith: RunPith, tmp_path: Path) -> None:
    evil = _evil_manifest(tmp_path)
    record = _write(tmp_path, "r.json", _record_signed_by_evil_key())
    result = pith("verify", str(record), "--trust-manifest", str(evil))
    assert_one_line_error(result, 2)
    assert "pith-v1-2026-05" in result.stderr and "never replaced" in result.stderr
    result = pith("verify", str(record), env={"PITH_TRUST": str(evil)})
    assert_one_line_error(result, 2)
    assert "PITH_TRUST" in result.stderr


def test_the_same_pinned_key_again_is_harmless_and_keeps_its_label(
    pith: RunPith, tmp_path: Path
) -> None:
    result = pith(
        "verify",
        str(FIXTURES / "record-2302.12445v2.json"),
        "--trust-manifest",
        str(FIXTURES / "pith-mirrors.json"),
    )
    assert result.returncode == 0, result.stderr
    assert "pith-v1-2026-05 (pinned manifest)" in result.stdout


def test_an_added_key_is_labelled_with_where_it_came_from(pith: RunPith, tmp_path: Path) -> None:
    evil = _evil_manifest(tmp_path, key_id="another-registry")
    doc = _record_signed_by_evil_key()
    doc["receipt"]["key_id"] = "another-registry"
    record = _write(tmp_path, "r.json", doc)
    result = pith("verify", str(record), "--trust-manifest", str(evil))
    assert f"another-registry (--trust-manifest {evil})" in result.stdout
    assert "(pinned manifest)" not in result.stdout
    # its records may link only to its own base_url (pith.science here, from the manifest)
    assert result.returncode == 0, result.stdout + result.stderr
    result = pith("verify", str(record), env={"PITH_TRUST": str(evil)})
    assert f"another-registry (PITH_TRUST manifest {evil})" in result.stdout


# --- a hostile registry on loopback ------------------------------------------------------------


class _Hostile(BaseHTTPRequestHandler):
    docs: ClassVar[dict[str, Any]] = {}

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def do_GET(self) -> None:
        doc = self.docs.get(self.path.split("?")[0])
        body = json.dumps(doc).encode()
        self.send_response(200 if doc is not None else 404)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


@pytest.fixture
def hostile() -> Iterator[tuple[str, dict[str, Any]]]:
    docs: ClassVar[dict[str, Any]] = {}
    handler = type("Handler", (_Hostile,), {"docs": docs})
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}", docs
    finally:
        server.shutdown()
        server.server_close()


def test_fetch_does_not_save_a_bundle_without_a_receipt(
    pith: RunPith, tmp_path: Path, hostile: tuple[str, dict[str, Any]]
) -> None:
    url, docs = hostile
    docs[f"/pith/{BODY}"] = RECORD
    fake = {k: RECORD[k] for k in ("pith_number", "canonical_record", "canonical_sha256", "source")}
    docs[f"/pith/{BODY}/bundle.json"] = {
        **fake,
        "bundle_type": "pith_open_graph_bundle",
        "events": [],
    }
    out = tmp_path / "bundle.json"
    result = pith("fetch", BODY, "--what", "bundle", "--registry", url, "-o", str(out))
    assert result.returncode == 1, result.stderr
    assert "record_created" in result.stderr
    assert not out.exists()


def test_fetch_refuses_unverifiable_parts_unless_asked(
    pith: RunPith, tmp_path: Path, hostile: tuple[str, dict[str, Any]]
) -> None:
    url, docs = hostile
    body = STATE["pith_number"].rsplit(":", 1)[1]
    record = {
        "pith_number": STATE["pith_number"],
        "canonical_record": STATE["current"]["canonical_record"],
        "canonical_sha256": STATE["current"]["record_created"]["payload"]["canonical_sha256"],
        "receipt": STATE["current"]["record_created"]["payload"]["receipt"],
    }
    page = f"https://pith.science/pith/{body}"
    docs[f"/pith/{body}"] = {
        "record_type": "pith_number_record",
        **record,
        "short_pith_number": "pith:" + body[:8],
        "source": record["canonical_record"]["source"],
        "aliases": STATE["current"]["source_aliases"],
        "agent_actions": {"actions": {"sign_citation": page + "/action/citation_signature"}},
    }
    docs[f"/pith/{body}/state.json"] = STATE
    out = tmp_path / "state.json"
    args = ("fetch", body, "--what", "state", "--registry", url, "-o", str(out))
    result = pith(*args)
    assert result.returncode == 1 and not out.exists()
    assert "--allow-unverifiable" in result.stderr and "merge" in result.stderr
    result = pith(*args, "--allow-unverifiable")
    assert result.returncode == 0, result.stderr
    assert json.loads(out.read_text()) == STATE
    assert "unverifiable" in result.stderr and "verified" not in result.stderr


def test_a_local_registry_cannot_claim_the_pinned_key_id(
    pith: RunPith, hostile: tuple[str, dict[str, Any]], tmp_path: Path
) -> None:
    url, docs = hostile
    manifest = json.loads(_evil_manifest(tmp_path).read_text())
    manifest["mirrors"][0]["mirror_type"] = "local"
    docs["/pith-mirrors.json"] = manifest
    docs[f"/pith/{BODY}"] = _record_signed_by_evil_key()
    result = pith("fetch", BODY, "--registry", url, "--trust-local-registry")
    assert_one_line_error(result, 2)
    assert "never replaced" in result.stderr


# --- finding 5: --record FILE -------------------------------------------------------------------


@pytest.fixture
def author(monkeypatch: pytest.MonkeyPatch) -> dict[str, str]:
    """A real key in this test's PITH_HOME (test-only cheap KDF), unlocked by PITH_PASSPHRASE."""
    from conftest import use_fast_kdf

    from pithauthor.keys import generate

    use_fast_kdf(monkeypatch)
    monkeypatch.setenv("PITH_PASSPHRASE", "test passphrase for verdicts")
    generate("carberry", public_name="Chengjian Liu", backend="file", note=lambda _: None)
    return {}


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str]:
    from pithauthor._cli.main import main

    with pytest.raises(SystemExit) as exit_info:
        main(list(args))
    return int(exit_info.value.code or 0), capsys.readouterr().err


def test_record_file_whose_receipt_fails_is_refused(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, author: dict[str, str]
) -> None:
    doc = copy.deepcopy(RECORD)
    doc["canonical_record"]["metadata"]["primary_cat"] = "cs.AI"  # another paper now
    doc["canonical_sha256"] = canonical_sha256(doc["canonical_record"])
    doc["pith_number"] = pith_number_of(doc["canonical_record"]).full
    doc.pop("short_pith_number")
    path = _write(tmp_path, "r.json", doc)
    out = tmp_path / "events.jsonl"
    code, err = run(capsys, "claim", doc["pith_number"], "--record", str(path), "--out", str(out))
    assert code == 1, err
    assert "does not verify" in err and "receipt" in err
    assert not out.exists()


def test_record_file_without_a_receipt_is_taken_and_said(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, author: dict[str, str]
) -> None:
    computed = {k: RECORD[k] for k in ("pith_number", "canonical_sha256", "canonical_record")}
    path = _write(tmp_path, "r.json", computed)
    out = tmp_path / "events.jsonl"
    number = RECORD["pith_number"]
    # without `paper` it lists no authors: --force (refused without it, tests/test_claim_authors.py)
    code, err = run(capsys, "claim", number, "--record", str(path), "--out", str(out), "--force")
    assert code == 0, err
    assert "has no registry receipt" in err
    assert out.exists()
    real = str(FIXTURES / "record-2302.12445v2.json")
    code, err = run(capsys, "claim", number, "--record", real, "--out", str(out))
    assert code == 0 and "no registry receipt" not in err


def test_the_pinned_trust_has_one_labelled_key() -> None:
    (key,) = pinned_trust().keys.values()
    assert (key.key_id, key.source, key.base_url) == (
        "pith-v1-2026-05",
        "pinned manifest",
        "https://pith.science",
    )


def test_local_registry_bundles_and_states_fetch_and_verify_strictly(
    pith: RunPith, tmp_path: Path
) -> None:
    from registry_helpers import TestSigner, citation, manifest_file, start_server

    srv = start_server(tmp_path / "reg")
    try:
        import httpx

        event = citation(TestSigner(), 1)
        httpx.post(
            f"{srv.url}/pith/{BODY}/action/citation_signature",
            json=event,
            headers={"Idempotency-Key": event["event_id"]},
        ).raise_for_status()
        manifest = manifest_file(srv.url, tmp_path / "reg", tmp_path / "m.json")
        for what in ("bundle", "state"):
            out = tmp_path / f"{what}.json"
            result = pith(
                "fetch", BODY, "--what", what, "--registry", srv.url,
                "--trust-local-registry", "-o", str(out),
            )  # fmt: skip
            assert result.returncode == 0, result.stderr
            assert f"verified {what} of {RECORD['pith_number']}" in result.stderr
            result = pith("verify", str(out), "--strict", "--trust-manifest", str(manifest))
            assert result.returncode == 0, result.stdout + result.stderr
            assert "unverifiable" not in result.stdout
            assert f"(--trust-manifest {manifest})" in result.stdout
    finally:
        srv.stop()
