"""The published author-event vectors: reproducible, and each valid/invalid as it says."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from pithauthor.errors import DocumentError
from pithauthor.protocol.canonical_json import JSONFault, parse_json
from pithauthor.protocol.checks.event import check_author_event
from pithauthor.verify import verify_documents, verify_file

VECTORS = Path(__file__).parents[2] / "vectors" / "events"
VALID = sorted((VECTORS / "valid").glob("*.json"))
INDEX = json.loads((VECTORS / "invalid" / "index.json").read_text("utf-8"))


def test_regenerating_the_vectors_gives_identical_bytes(tmp_path: Path) -> None:
    subprocess.run(
        [sys.executable, str(VECTORS / "generate.py"), str(tmp_path)], check=True, timeout=120
    )
    made = sorted(p.relative_to(tmp_path) for p in tmp_path.rglob("*.json"))
    committed = sorted(p.relative_to(VECTORS) for p in VECTORS.rglob("*.json"))
    assert made == committed
    for rel in made:
        assert (tmp_path / rel).read_bytes() == (VECTORS / rel).read_bytes(), rel


def test_every_event_type_has_a_valid_vector_and_a_formal_bridge() -> None:
    events = [json.loads(p.read_text("utf-8")) for p in VALID]
    assert {e["event_type"] for e in events} == {
        "author_attestation",
        "citation_signature",
        "replication_record",
        "timestamp_anchor",
        "storage_attestation",
    }
    assert any(e["payload"].get("kind") == "formal_bridge" for e in events)


@pytest.mark.parametrize("path", VALID, ids=lambda p: p.name)
def test_valid_vector_verifies_with_every_check_passed(path: Path) -> None:
    report = verify_file(path)
    assert report.ok, [c for c in report.checks if c.status != "passed"]
    names = {c.name for c in report.checks}
    assert {"event_id", "signature", "payload_schema", "payload_subject"} <= names
    if "link" in names:  # a correction: its link is checked beside the vector it names
        assert next(c for c in report.checks if c.name == "link").status == "unverifiable"
        event = json.loads(path.read_text("utf-8"))
        named = event["payload"].get("replaces") or event["payload"]["withdraws"]
        (original,) = [
            d for p in VALID if (d := json.loads(p.read_text("utf-8")))["event_id"] == named
        ]
        report = verify_documents([original, event])
        assert "[2].link" in {c.name for c in report.checks}
    assert all(c.status == "passed" for c in report.checks)


def test_invalid_index_lists_exactly_the_invalid_files() -> None:
    files = {p.name for p in (VECTORS / "invalid").glob("*.json")} - {"index.json"}
    assert files == set(INDEX)


CHECKED = sorted(n for n, e in INDEX.items() if e["failed_checks"] != ["strict_json"])
NOT_STRICT = sorted(n for n, e in INDEX.items() if e["failed_checks"] == ["strict_json"])


@pytest.mark.parametrize("name", NOT_STRICT)
def test_invalid_json_vector_is_refused_by_the_reader_before_any_check(name: str) -> None:
    path = VECTORS / "invalid" / name
    with pytest.raises(JSONFault, match=INDEX[name]["json_fault"].replace("*", r"\*")):
        parse_json(path.read_bytes())
    with pytest.raises(DocumentError, match=INDEX[name]["json_fault"].replace("*", r"\*")):
        verify_file(path)


def test_every_strict_json_rule_has_a_vector() -> None:
    faults = {INDEX[n]["json_fault"] for n in NOT_STRICT}
    assert faults == {"NaN", "2**53", "surrogate", "duplicate key", "deeper"}


@pytest.mark.parametrize("name", CHECKED)
def test_invalid_vector_fails_exactly_the_named_checks(name: str) -> None:
    event = parse_json((VECTORS / "invalid" / name).read_bytes())
    report = check_author_event(event)
    assert not report.ok
    assert sorted(c.name for c in report.failed) == sorted(INDEX[name]["failed_checks"])


def test_key_file_is_marked_test_only_and_matches_the_vectors() -> None:
    key = json.loads((VECTORS / "key.json").read_text("utf-8"))
    assert "TEST ONLY" in key["WARNING"]
    event = json.loads((VECTORS / "valid" / "citation_signature.json").read_text("utf-8"))
    assert event["signer"]["public_key_b64"] == key["public_key_b64"]
    assert event["signer"]["key_id"] == key["key_id"]
    assert event["created_at"] == key["created_at"]


def test_docs_name_exactly_the_checks_the_verifier_reports() -> None:
    import re

    docs = (Path(__file__).parents[3] / "docs" / "protocol.md").read_text("utf-8")
    table = docs.split("### Verification", 1)[1].split("Inside a bundle", 1)[0]
    documented = set(re.findall(r"^\| \d+ \| `([a-z_]+)` \|", table, flags=re.MULTILINE))
    reported = {
        c.name
        for path in sorted(VECTORS.glob("*/*.json"))
        if path.name != "index.json" and path.name not in NOT_STRICT
        for c in check_author_event(parse_json(path.read_bytes())).checks
    }
    assert len(documented) == 20
    assert documented == reported
