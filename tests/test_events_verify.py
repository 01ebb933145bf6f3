"""Author events through `pith verify` and `verify_document`: JSONL files and bundles."""

from __future__ import annotations

import copy
import hashlib
import json
from pathlib import Path
from typing import Any

import pytest
from conftest import RunPith, load_fixture
from fixed_signer import FixedSigner

from pithauthor._core.author_event import check_author_event
from pithauthor._core.envelope import SIGNED_FIELDS, compute_event_id, seal
from pithauthor._core.pith_number import PithNumber
from pithauthor._core.subject import Subject
from pithauthor.errors import EventError
from pithauthor.sign import sign_citation
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
