"""Author events through `pith verify` and `verify_document`: JSONL files and bundles."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

from conftest import RunPith, load_fixture

from pithauthor.verify import verify_document

VECTORS = Path(__file__).parent / "vectors" / "events"


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


def test_pith_verify_accepts_a_jsonl_file_of_events(pith: RunPith, tmp_path: Path) -> None:
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
