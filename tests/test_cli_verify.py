"""`pith verify` and `pith number` as a user runs them: real vectors pass, tampered copies fail."""

from __future__ import annotations

import base64
import copy
import json
from pathlib import Path
from typing import Any

import pytest
from conftest import FIXTURES, RunPith, load_fixture

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
    result = pith("verify", str(FIXTURES / name))
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
    from pithauthor._core.canonical import canonical_sha256
    from pithauthor._core.record import pith_number_of

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
