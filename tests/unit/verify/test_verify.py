"""`pith verify` on what the registry and authors publish: records, merged states, bundles and
author events; genuine ones pass, altered ones fail by the check named for the change.

The real vectors (tests/fixtures, tests/vectors) through `pith verify`, `pith number` and
`verify_document`; the hand-edited documents the field-by-field tamper suites
(tests/security/test_tamper_events.py, tests/security/test_tamper_documents.py) do not make; the
attacks on verdicts (forged events, what "record verified" covers, --record FILE), each
replayed; and a record file handed to
`pith claim --record`, verified as `pith verify` would.
"""

from __future__ import annotations

import base64
import copy
import hashlib
import json
from pathlib import Path
from typing import Any

import pytest
from support.cli import RunPith
from support.paths import FIXTURES, load_fixture
from support.signer import FixedSigner

from pithauthor.errors import EventError
from pithauthor.protocol.canonical_json import canonical_sha256
from pithauthor.protocol.checks.event import check_author_event
from pithauthor.protocol.events import SIGNED_FIELDS, compute_event_id, seal
from pithauthor.protocol.ids import PithNumber
from pithauthor.protocol.record import pith_number_of
from pithauthor.protocol.subject import Subject
from pithauthor.sign import sign_citation
from pithauthor.verify import verify_document

# ================================================================================================
# `pith verify` and `pith number` as a user runs them: real vectors pass, tampered copies fail.

RECORD = load_fixture("record-2302.12445v2.json")
STATE = load_fixture("state-2204.10562v1.json")


def _write(tmp_path: Path, name: str, doc: Any) -> Path:
    path = tmp_path / name
    path.write_text(json.dumps(doc), "utf-8")
    return path


def test_number_from_arxivraw_prints_the_registry_number(pith: RunPith) -> None:
    result = pith("number", "from-arxiv", str(FIXTURES / "arxivraw-2302.12445.xml"))
    assert result.returncode == 0, result.stderr
    assert result.stdout == "pith:2023:NFG5PAOXQUVIWDX5F7YSYYL7EW\n"


def test_number_from_arxiv_reads_stdin_and_prints_json(pith: RunPith) -> None:
    xml = (FIXTURES / "arxivraw-2302.12445.xml").read_text("utf-8")
    result = pith("number", "from-arxiv", "-", "--json", input=xml)
    assert result.returncode == 0, result.stderr
    doc = json.loads(result.stdout)
    assert set(doc) == {"pith_number", "canonical_sha256", "canonical_record"}
    assert doc["canonical_record"] == RECORD["canonical_record"]


def test_from_arxiv_json_output_verifies_as_a_computed_record(
    pith: RunPith, tmp_path: Path
) -> None:
    out = pith("number", "from-arxiv", str(FIXTURES / "arxivraw-2302.12445.xml"), "--json")
    path = tmp_path / "computed.json"
    path.write_text(out.stdout)
    result = pith("verify", str(path), "--json")
    report = json.loads(result.stdout)
    assert result.returncode == 0 and report["kind"] == "computed_record"
    assert {c["name"]: c["status"] for c in report["checks"]}["receipt"] == "unverifiable"


@pytest.mark.parametrize("name", ["record-2302.12445v2.json", "state-2204.10562v1.json"])
def test_real_record_and_state_pass(pith: RunPith, name: str) -> None:
    result = pith("verify", str(FIXTURES / name), "--json")
    assert result.returncode == 0, result.stdout + result.stderr
    report = json.loads(result.stdout)
    assert report["ok"] is True
    statuses = {c["status"] for c in report["checks"]}
    assert statuses <= {"passed", "unverifiable", "not_signed"} and "passed" in statuses


def test_registry_event_ids_and_merge_are_unverifiable_never_passed(pith: RunPith) -> None:
    report = json.loads(pith("verify", str(FIXTURES / "state-2204.10562v1.json"), "--json").stdout)
    by_name = {c["name"]: c["status"] for c in report["checks"]}
    assert by_name["registry_events"] == "unverifiable"
    assert by_name["merge"] == "unverifiable"


@pytest.mark.parametrize("name", ["receipts.jsonl", "canonical_records.jsonl"])
def test_jsonl_vectors_verify_line_by_line(pith: RunPith, name: str) -> None:
    result = pith("verify", str(FIXTURES / name), "--verbose")  # every check, each line's
    assert result.returncode == 0, result.stdout + result.stderr
    assert "[4]." in result.stdout


def _flip_signature_bit(doc: dict[str, Any]) -> None:
    receipt = doc["receipt"]
    sig = bytearray(base64.b64decode(receipt["signature_b64"]))
    sig[0] ^= 0x80
    receipt["signature_b64"] = base64.b64encode(bytes(sig)).decode()


def _change_metadata(doc: dict[str, Any]) -> None:
    doc["canonical_record"]["metadata"]["primary_cat"] = "cs.AI"


def _unknown_key(doc: dict[str, Any]) -> None:
    doc["receipt"]["key_id"] = "pith-v2-2027-01"


RECORD_TAMPERS = {
    "flipped_signature_bit": (_flip_signature_bit, "receipt_signature"),
    "changed_metadata_field": (_change_metadata, "canonical_hash"),
    "unknown_key_id": (_unknown_key, "receipt_key"),
}


@pytest.mark.parametrize("tamper", RECORD_TAMPERS)
def test_tampered_record_fails_with_exit_1_naming_the_check(
    pith: RunPith, tmp_path: Path, tamper: str
) -> None:
    mutate, check = RECORD_TAMPERS[tamper]
    doc = copy.deepcopy(RECORD)
    mutate(doc)
    result = pith("verify", str(_write(tmp_path, "r.json", doc)))
    assert result.returncode == 1
    failed = [line.split()[1] for line in result.stdout.splitlines() if line.startswith("failed")]
    assert check in failed
    assert check in result.stderr and "Traceback" not in result.stderr


def test_edited_state_fails_state_sha256(pith: RunPith, tmp_path: Path) -> None:
    doc = copy.deepcopy(STATE)
    doc["event_count"] = 3
    report = json.loads(pith("verify", str(_write(tmp_path, "s.json", doc)), "--json").stdout)
    assert report["ok"] is False
    assert [c["name"] for c in report["checks"] if c["status"] == "failed"] == ["state_sha256"]


def test_state_with_a_resealed_but_forged_record_fails_the_receipt(
    pith: RunPith, tmp_path: Path
) -> None:
    from pithauthor.protocol.canonical_json import canonical_sha256
    from pithauthor.protocol.record import pith_number_of

    doc = copy.deepcopy(STATE)
    payload = doc["current"]["record_created"]["payload"]
    payload["canonical_record"]["metadata"]["license"] = ""
    payload["canonical_sha256"] = canonical_sha256(payload["canonical_record"])
    doc["current"]["canonical_record"] = payload["canonical_record"]
    doc["pith_number"] = pith_number_of(payload["canonical_record"]).full
    doc.pop("state_sha256")
    doc["state_sha256"] = canonical_sha256(doc)
    report = json.loads(pith("verify", str(_write(tmp_path, "s.json", doc)), "--json").stdout)
    failed = {c["name"] for c in report["checks"] if c["status"] == "failed"}
    assert "record.receipt_digest" in failed and "record.receipt_signature" in failed
    assert "state_sha256" not in failed


def test_state_under_an_unknown_registry_key_fails(pith: RunPith, tmp_path: Path) -> None:
    doc = copy.deepcopy(STATE)
    doc["current"]["record_created"]["payload"]["receipt"]["key_id"] = "evil-key"
    result = pith("verify", str(_write(tmp_path, "s.json", doc)), "--json")
    failed = {c["name"] for c in json.loads(result.stdout)["checks"] if c["status"] == "failed"}
    assert result.returncode == 1
    assert {"state_sha256", "record.receipt_key"} <= failed


# ================================================================================================
# Author events through `pith verify` and `verify_document`: JSONL files and bundles.

VECTORS = Path(__file__).parents[2] / "vectors" / "events"


def _vector(kind: str, name: str) -> dict[str, Any]:
    event: dict[str, Any] = json.loads((VECTORS / kind / name).read_text("utf-8"))
    return event


def _bundle(*author_events: dict[str, Any]) -> dict[str, Any]:
    """A bundle as /pith/{body}/bundle.json serves it, for arXiv 2204.10562, with the registry's
    own record_created event (from the real merged state) and the given author events."""
    state = load_fixture("state-2204.10562v1.json")
    created = dict(state["current"]["record_created"])
    created.update(event_type="record_created", subject_pith_number=state["pith_number"])
    number = state["pith_number"]
    canon = state["current"]["canonical_record"]
    return {
        "bundle_type": "pith_open_graph_bundle",
        "bundle_version": "1.0",
        "pith_number": number,
        "short_pith_number": "pith:" + number.split(":")[2][:8],
        "canonical_record": canon,
        "canonical_sha256": created["payload"]["canonical_sha256"],
        "source": canon["source"],
        "source_aliases": state["current"]["source_aliases"],
        "events": [created, *author_events],
    }


def test_bundle_verifies_author_events_and_reports_registry_events_unverifiable() -> None:
    citation = _vector("valid", "citation_signature.json")
    bridge = _vector("valid", "replication_record_formal_bridge.json")
    report = verify_document(_bundle(citation, bridge))
    assert report.kind == "bundle"
    assert report.ok, report.failed
    by_name = {c.name: c for c in report.checks}
    for index in (1, 2):
        prefix = f"events[{index}]."
        for check in ("signature", "event_id", "payload_schema", "subject_matches"):
            assert by_name[prefix + check].status == "passed"
        assert by_name[prefix + "payload_record"].status == "passed"
    assert by_name["record.event_id"].status == "unverifiable"
    assert "preimage is not published" in by_name["record.event_id"].detail
    assert not report.strict_ok


def test_bundle_with_a_tampered_author_event_fails_naming_it() -> None:
    citation = _vector("valid", "citation_signature.json")
    tampered = copy.deepcopy(citation)
    tampered["payload"]["relationship"] = "refutes"
    report = verify_document(_bundle(tampered))
    assert not report.ok
    assert [c.name for c in report.failed] == ["events[1].event_id"]


def test_bundle_with_an_author_event_about_another_paper_fails() -> None:
    attestation = _vector("valid", "author_attestation.json")  # about arXiv 2302.12445
    report = verify_document(_bundle(attestation))
    failed = {c.name.split("].", 1)[1] for c in report.failed}
    assert failed == {"subject_matches", "payload_record"}


def test_pith_verify_accepts_a_bundle(pith: RunPith, tmp_path: Path) -> None:
    path = tmp_path / "bundle.json"
    path.write_text(json.dumps(_bundle(_vector("valid", "citation_signature.json"))), "utf-8")
    result = pith("verify", str(path))
    assert result.returncode == 0, result.stderr
    assert "unverifiable" in result.stdout and "record.event_id" in result.stdout
    assert "OK: bundle verified" in result.stderr


def test_pith_verify_accepts_a_jsonl_file_of_events(
    pith: RunPith, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from support.ots_calendar import TEST_FLOOR

    # the anchor vector's block is mined at test difficulty: judged by the test floor (the
    # production floor fails its `anchor` check, as it must)
    monkeypatch.setattr("pithauthor.timestamps.anchor.FLOOR", TEST_FLOOR)
    path = tmp_path / "events.jsonl"
    lines = [json.dumps(json.loads(p.read_text("utf-8"))) for p in sorted(VECTORS.glob("valid/*"))]
    path.write_text("\n".join(lines) + "\n", "utf-8")
    result = pith("verify", str(path), "--json")
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout)
    assert report["ok"] is True and report["kind"] == "events"
    assert {c["name"].split(".")[0] for c in report["checks"]} == {
        f"[{n}]" for n in range(1, len(lines) + 1)
    }


def test_pith_verify_names_the_failing_line_and_check(pith: RunPith, tmp_path: Path) -> None:
    path = tmp_path / "events.jsonl"
    good = _vector("valid", "citation_signature.json")
    bad = _vector("invalid", "relationship_unknown.json")
    path.write_text(json.dumps(good) + "\n" + json.dumps(bad) + "\n", "utf-8")
    result = pith("verify", str(path))
    assert result.returncode == 1
    assert "FAILED: events: [2].payload_schema" in result.stderr
    assert "payload.relationship must be one of" in result.stdout


# ================================================================================================
# Hand-edited documents the field-by-field tamper suites do not make: verify refuses them.


def _rehashed(state: dict[str, Any]) -> dict[str, Any]:
    """The state with `state_sha256` recomputed, as anyone editing it can."""
    body = {k: v for k, v in state.items() if k != "state_sha256"}
    return {**body, "state_sha256": canonical_sha256(body)}


@pytest.mark.parametrize("event_type", ["author_attestation", "record_created"])
@pytest.mark.parametrize("where", ["graph_snapshots", "mirror_hints"])
def test_a_state_registry_list_holding_an_author_or_record_event_fails(
    event_type: str, where: str
) -> None:
    state = load_fixture("state-2204.10562v1.json")
    forged = copy.deepcopy(state["current"]["graph_snapshots"][0])
    forged.update(event_type=event_type, event_id="sha256:" + "0" * 64, payload={"x": 1})
    state["current"][where].append(forged)
    report = verify_document(_rehashed(state))
    assert not report.ok
    index = len(state["current"][where]) - 1
    failed = [c.name for c in report.checks if c.status == "failed"]
    assert failed == [f"current.{where}[{index}].event_type"]


# ================================================================================================
# Verdicts that cannot be fooled: each known attack on a verdict, replayed.

BODY = RECORD["pith_number"].rsplit(":", 1)[1]


def _reseal(state: dict[str, Any]) -> dict[str, Any]:
    state.pop("state_sha256", None)
    state["state_sha256"] = canonical_sha256(state)
    return state


def _failed(doc: Any) -> set[str]:
    return {c.name for c in verify_document(doc).failed}


def _forged_citation(number: str, digest: str) -> dict[str, Any]:
    """The forged event: an author-array event that declares a registry signer."""
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


# --- forged events, bundles without a receipt -------------------------------------


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


# --- what "record verified" covers ---------------------------------------------------


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


# --- --record FILE -------------------------------------------------------------------


@pytest.fixture
def author(monkeypatch: pytest.MonkeyPatch) -> dict[str, str]:
    """A real key in this test's PITH_HOME (test-only cheap KDF), unlocked by PITH_PASSPHRASE."""
    from support.cli import use_fast_kdf

    from pithauthor.keys.author import generate

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
    # without `paper` it lists no authors: --force (refused without it,
    # tests/unit/protocol/test_record_claimant.py)
    code, err = run(capsys, "claim", number, "--record", str(path), "--out", str(out), "--force")
    assert code == 0, err
    assert "has no registry receipt" in err
    assert out.exists()
    real = str(FIXTURES / "record-2302.12445v2.json")
    code, err = run(capsys, "claim", number, "--record", real, "--out", str(out))
    assert code == 0 and "no registry receipt" not in err


# --- the fast paths of verifying keep every check -------------------------------------------------


def _sealed(payload_changes: dict[str, Any], signer: FixedSigner) -> dict[str, Any]:
    """A citation pithauthor would never sign, signed as a hostile client could: the payload is
    changed and the event sealed again, so event_id and signature are right."""
    event = sign_citation(signer, _SUBJECT, PithNumber.parse(_CITING), "extends", citation_key="k")
    unsigned: dict[str, Any] = {k: copy.deepcopy(event[k]) for k in SIGNED_FIELDS}
    unsigned["payload"].update(payload_changes)
    return dict(seal(unsigned, signer))  # type: ignore[arg-type]  # hostile on purpose


_SHA = hashlib.sha256(b"a paper verified in a loop").hexdigest()
_SUBJECT = Subject(PithNumber.from_digest(_SHA, 2023), _SHA)
_CITING = PithNumber.from_digest(hashlib.sha256(b"the citing paper").hexdigest(), 2024).full


def test_a_validly_signed_hostile_payload_is_refused_after_many_good_events() -> None:
    # the fast paths (cached key names, VerifyKey and stamp verdicts, the direct check used when
    # signing) must not carry a verdict from the good events of the same key to a hostile one
    signer = FixedSigner()
    for i in range(50):
        good = sign_citation(signer, _SUBJECT, PithNumber.parse(_CITING), "extends")
        assert check_author_event(good).ok, i
    hostile: list[dict[str, Any]] = [
        {"relationship": "endorses"},
        {"citation_key": "two words"},
        {"extra": "unsigned meaning"},
        {"context": 3.0},
        {"replaces": "sha256:" + "1" * 64, "withdraws": "sha256:" + "2" * 64},
    ]
    for changes in hostile:
        event = _sealed(changes, signer)
        assert compute_event_id(event) == event["event_id"]  # its envelope is sound
        failed = [c.name for c in check_author_event(event).failed]
        assert failed == ["payload_schema"], (changes, failed)


def test_a_key_named_wrongly_is_refused_after_the_key_was_seen_and_cached() -> None:
    signer = FixedSigner()
    good = sign_citation(signer, _SUBJECT, PithNumber.parse(_CITING), "extends")
    assert check_author_event(good).ok  # its names are cached now
    forged = copy.deepcopy(good)
    forged["signer"]["public_key_fingerprint"] = "0" * 32
    forged["signer"]["key_id"] = "ed25519:" + "A" * 26
    forged = dict(seal({k: forged[k] for k in SIGNED_FIELDS}, signer))  # type: ignore[arg-type]
    failed = {c.name for c in check_author_event(forged).failed}
    assert {"public_key_fingerprint", "key_id"} <= failed


def test_signing_refuses_a_citation_key_the_schema_refuses() -> None:
    for key in ("two words", "k" * 201, "tab\tkey"):
        with pytest.raises(EventError):
            sign_citation(
                FixedSigner(), _SUBJECT, PithNumber.parse(_CITING), "extends", citation_key=key
            )
