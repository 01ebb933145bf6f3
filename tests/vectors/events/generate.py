"""Regenerate the author-event test vectors in this folder, byte for byte.

    python tests/vectors/events/generate.py [OUT_DIR]

Deterministic: a fixed TEST-ONLY key (key.json), a fixed created_at, real records from
tests/fixtures as subjects, and Ed25519 (deterministic by design).
`tests/unit/protocol/test_events_vectors.py`
checks that running this again gives exactly the committed files.
"""

from __future__ import annotations

import hashlib
import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
TESTS = HERE.parent.parent
sys.path.insert(0, str(TESTS))

from support.signer import VECTOR_ORCID, VECTOR_SEED, FixedSigner  # noqa: E402

from pithauthor.protocol.canonical_json import b64encode  # noqa: E402
from pithauthor.protocol.events import SIGNED_FIELDS, seal  # noqa: E402
from pithauthor.protocol.identity import fingerprint_hex, key_id  # noqa: E402
from pithauthor.protocol.subject import Subject  # noqa: E402
from pithauthor.sign import (  # noqa: E402
    anchor_record,
    attest_authorship,
    attest_storage,
    record_replication,
    sign_citation,
    withdraw,
)

CREATED_AT = "2026-11-29T12:00:00Z"
LATER = "2026-11-29T13:00:00Z"
OTHER_SEED = hashlib.sha256(b"pithauthor test vector key 2 -- TEST ONLY").digest()
SHA_A = hashlib.sha256(b"artifact A: replication scripts").hexdigest()
SHA_B = hashlib.sha256(b"artifact B: measured results").hexdigest()
SHA_LEAN = hashlib.sha256(b"artifact: Lean 4 development").hexdigest()
CALENDAR = "http://127.0.0.1:9"  # the TEST-ONLY calendar the anchor's proof names
PDF = b"%PDF-1.5 the vectors' stand-in for arXiv 2302.12445v2's PDF"
ABS = b"<html>the vectors' stand-in for arXiv 2302.12445v2's abstract page</html>"
CAPTURED = "20261129120000"
WAYBACK = "https://web.archive.org/web"

Event = dict[str, Any]


def _subjects() -> tuple[Subject, Subject]:
    fixtures = TESTS / "fixtures"
    record = json.loads((fixtures / "record-2302.12445v2.json").read_text("utf-8"))
    state = json.loads((fixtures / "state-2204.10562v1.json").read_text("utf-8"))
    return Subject.from_document(record), Subject.from_document(state)


def valid_events() -> dict[str, Event]:
    """The valid vectors, by file name."""
    plain = _plain_events()
    return {**plain, **correction_events(plain), **checklist_events()}


def _plain_events() -> dict[str, Event]:
    dear, pipeline = _subjects()
    signer = FixedSigner()
    key_signer = FixedSigner(orcid=None)
    return {
        "author_attestation.json": attest_authorship(
            signer,
            dear,
            name="Josiah Carberry",
            orcid=VECTOR_ORCID,
            position=3,
            created_at=CREATED_AT,
        ),
        "author_attestation_identity_proofs.json": attest_authorship(
            signer,
            dear,
            name="Josiah Carberry",
            orcid=VECTOR_ORCID,
            identity_proofs=[
                {"kind": "orcid", "locator": VECTOR_ORCID},
                {"kind": "web", "locator": "https://carberry.example.org"},
                {"kind": "paper", "locator": "https://arxiv.org/pdf/2302.12445v2"},
            ],
            created_at=CREATED_AT,
        ),
        "citation_signature.json": sign_citation(
            signer,
            pipeline,
            dear.pith_number,
            "extends",
            citation_key="li2022pipeline",
            context="We extend the pipelining schedule of [12] to all-reduce; “Schrödinger”-safe.",
            created_at=CREATED_AT,
        ),
        "citation_signature_key_signer.json": sign_citation(
            key_signer, pipeline, dear.pith_number, "cites", created_at=CREATED_AT
        ),
        "replication_record.json": record_replication(
            signer,
            dear,
            kind="replication",
            outcome="partially_reproduced",
            summary="Reproduced the 2.1x speed-up on 16 GPUs; the 64-GPU result was not reached.",
            artifacts=[
                ("https://example.org/dear-replication/scripts.tar.gz", SHA_A),
                ("https://example.org/dear-replication/results.csv", SHA_B),
            ],
            created_at=CREATED_AT,
        ),
        "replication_record_formal_bridge.json": record_replication(
            signer,
            pipeline,
            kind="formal_bridge",
            outcome="partially_formalized",
            proof_system="lean4",
            summary="The convergence lemma (Lemma 2) is formalised in Lean 4; Theorem 1 is not.",
            artifacts=[("https://example.org/pipeline-lean/archive.zip", SHA_LEAN)],
            created_at=CREATED_AT,
        ),
    }


def _sha1_b32(data: bytes) -> str:
    """A CDX row's digest of `data`, as a storage attestation writes it."""
    import base64

    return "sha1:" + base64.b32encode(hashlib.sha1(data).digest()).decode()


def anchor_proof(digest: bytes) -> tuple[bytes, int, bytes]:
    """A complete OpenTimestamps proof of `digest` from the loopback calendar's code (a fixed
    nonce: byte for byte the same each run), its block height and the block's header (mined at
    test difficulty: the test floor accepts it, the production floor refuses it)."""
    from opentimestamps.core.notary import PendingAttestation
    from opentimestamps.core.serialize import BytesDeserializationContext
    from opentimestamps.core.timestamp import Timestamp
    from support.ots_calendar import TEST_HEIGHT, Calendar, serialize

    calendar = Calendar(url=CALENDAR, nonce=lambda: b"\x42" * 16)
    stamp = Timestamp.deserialize(BytesDeserializationContext(calendar.submit(digest)), digest)
    header = calendar.mine()

    def complete(node: Timestamp) -> None:  # as `ots.upgrade` merges a calendar's answer
        done = calendar.done.get(node.msg)
        if done is not None:
            node.merge(done)
        node.attestations = {a for a in node.attestations if not isinstance(a, PendingAttestation)}
        for child in node.ops.values():
            complete(child)

    complete(stamp)
    return serialize(stamp), TEST_HEIGHT, header


def checklist_events() -> dict[str, Event]:
    """The two events of the record page's checklist (docs/protocol.md "Anchors and archive
    copies"): a timestamp anchor of 2302.12445v2's canonical SHA-256, and a storage attestation
    of its PDF and abstract captures."""
    dear, _ = _subjects()
    signer = FixedSigner()
    proof, height, header = anchor_proof(bytes.fromhex(dear.canonical_sha256))
    pdf_url = "https://arxiv.org/pdf/2302.12445v2"
    abs_url = "https://arxiv.org/abs/2302.12445v2"
    return {
        "timestamp_anchor.json": anchor_record(
            signer,
            dear,
            proofs=[(CALENDAR, b64encode(proof))],
            headers=[(height, header.hex())],
            created_at=CREATED_AT,
        ),
        "storage_attestation.json": attest_storage(
            signer,
            dear,
            captures=[
                {
                    "url": pdf_url,
                    "capture_url": f"{WAYBACK}/{CAPTURED}/{pdf_url}",
                    "timestamp": CAPTURED,
                    "digest": _sha1_b32(PDF),
                    "sha256": hashlib.sha256(PDF).hexdigest(),
                    "mimetype": "application/pdf",
                },
                {
                    "url": abs_url,
                    "capture_url": f"{WAYBACK}/{CAPTURED}/{abs_url}",
                    "timestamp": CAPTURED,
                    "digest": _sha1_b32(ABS),
                    "mimetype": "text/html",
                },
            ],
            code={
                "origin": "https://github.com/lzhangbv/dear_pytorch",
                "swhid": "swh:1:snp:" + hashlib.sha1(b"snapshot").hexdigest(),
            },
            created_at=CREATED_AT,
        ),
    }


def correction_events(valid: dict[str, Event]) -> dict[str, Event]:
    """Corrections (docs/protocol.md, Corrections): the first claim replaced an hour later by
    one naming position 2, and the first citation withdrawn."""
    dear, _ = _subjects()
    signer = FixedSigner()
    return {
        "author_attestation_replacement.json": attest_authorship(
            signer,
            dear,
            name="Josiah Carberry",
            orcid=VECTOR_ORCID,
            position=2,
            created_at=LATER,
            replaces=valid["author_attestation.json"]["event_id"],
        ),
        "citation_signature_withdrawal.json": withdraw(
            signer, valid["citation_signature.json"], created_at=LATER
        ),
    }


def _reseal(event: Event, signer: FixedSigner | None = None) -> Event:
    """Sign the (changed) signed fields again, so only the intended rule is broken."""
    return seal({k: event[k] for k in SIGNED_FIELDS}, signer or FixedSigner())


def _copy(event: Event) -> Event:
    copied: Event = json.loads(json.dumps(event))
    return copied


def _edit(event: Event, change: Callable[[Event], None], *, reseal: bool = True) -> Event:
    copied = _copy(event)
    change(copied)
    return _reseal(copied) if reseal else copied


def invalid_events() -> dict[str, tuple[Event, list[str], str]]:
    """The invalid vectors: file name -> (event, the checks that fail, why)."""
    valid = valid_events()
    att, cit = valid["author_attestation.json"], valid["citation_signature.json"]
    proved = valid["author_attestation_identity_proofs.json"]
    rep = valid["replication_record.json"]
    bridge = valid["replication_record_formal_bridge.json"]
    anchor = valid["timestamp_anchor.json"]
    storage = valid["storage_attestation.json"]
    other = FixedSigner(OTHER_SEED)
    other_pk = other.public_key
    dear, _ = _subjects()

    def sign_with_other(e: Event) -> None:
        digest = bytes.fromhex(e["event_id"][7:])
        e["signature"]["signature_b64"] = b64encode(other.sign_digest(digest))

    def sign_hex_string(e: Event) -> None:
        e["signature"]["signature_b64"] = b64encode(
            FixedSigner().sign_digest(e["event_id"][7:].encode())
        )

    def setp(path: str, value: Any) -> Callable[[Event], None]:
        def change(e: Event) -> None:
            *parents, last = path.split(".")
            target = e
            for p in parents:
                target = target[int(p)] if isinstance(target, list) else target[p]
            if isinstance(target, list):
                target[int(last)] = value
            else:
                target[last] = value

        return change

    def delp(path: str) -> Callable[[Event], None]:
        def change(e: Event) -> None:
            *parents, last = path.split(".")
            target = e
            for p in parents:
                target = target[p]
            del target[last]

        return change

    cases: dict[str, tuple[Event, list[str], str]] = {
        "signature_by_other_key.json": (
            _edit(cit, sign_with_other, reseal=False),
            ["signature"],
            "signed by a key other than the one in signer.public_key_b64",
        ),
        "signature_over_hex_string.json": (
            _edit(cit, sign_hex_string, reseal=False),
            ["signature"],
            "signed the 64 hex characters of event_id instead of its 32 raw digest bytes",
        ),
        "signature_algorithm.json": (
            _edit(cit, setp("signature.algorithm", "ed448"), reseal=False),
            ["signature"],
            "signature.algorithm is not ed25519",
        ),
        "event_id_stale.json": (
            _edit(cit, setp("payload.context", "We refute [12]."), reseal=False),
            ["event_id"],
            "payload.context changed after signing: event_id no longer matches the fields",
        ),
        "fingerprint_of_other_key.json": (
            _edit(cit, setp("signer.public_key_fingerprint", fingerprint_hex(other_pk))),
            ["public_key_fingerprint"],
            "signer.public_key_fingerprint is not that of signer.public_key_b64",
        ),
        "key_id_of_other_key.json": (
            _edit(cit, setp("signer.key_id", key_id(other_pk))),
            ["key_id"],
            "signer.key_id is not that of signer.public_key_b64",
        ),
        "signer_id_bad_orcid.json": (
            _edit(cit, setp("signer.signer_id", "orcid:0000-0002-1825-0098")),
            ["signer_id"],
            "signer.signer_id is an ORCID iD with a wrong check digit",
        ),
        "public_key_short.json": (
            _edit(cit, setp("signer.public_key_b64", b64encode(bytes(31)))),
            ["public_key"],
            "signer.public_key_b64 is not 32 bytes",
        ),
        "signer_type_registry.json": (
            _edit(cit, setp("signer.signer_type", "pith_registry")),
            ["signer_type"],
            "an author event must have signer_type author",
        ),
        "created_at_fraction.json": (
            _edit(cit, setp("created_at", "2026-11-29T12:00:00.500Z")),
            ["created_at"],
            "created_at has a fraction of a second",
        ),
        "created_at_offset.json": (
            _edit(cit, setp("created_at", "2026-11-29T12:00:00+00:00")),
            ["created_at"],
            "created_at is not written with Z",
        ),
        "created_at_impossible.json": (
            _edit(cit, setp("created_at", "2026-02-30T12:00:00Z")),
            ["created_at"],
            "created_at names no real day",
        ),
        "event_type_unknown.json": (
            _edit(att, setp("event_type", "author_claim")),
            ["event_type", "target"],
            "unknown event_type (so its target cannot be right either)",
        ),
        "target_wrong.json": (
            _edit(cit, setp("target", "author")),
            ["target"],
            "target author for a citation_signature",
        ),
        "subject_short_form.json": (
            _edit(cit, setp("subject_pith_number", "pith:4O7LE3EH")),
            ["subject"],
            "subject_pith_number is a short alias, not pith:YYYY:BODY",
        ),
        "missing_signature.json": (
            _edit(cit, delp("signature"), reseal=False),
            ["structure"],
            "no signature object",
        ),
        "relationship_unknown.json": (
            _edit(cit, setp("payload.relationship", "agrees")),
            ["payload_schema"],
            "payload.relationship is not one of the eight",
        ),
        "context_too_long.json": (
            _edit(cit, setp("payload.context", "x" * 501)),
            ["payload_schema"],
            "payload.context is longer than 500 characters",
        ),
        "citation_key_null.json": (
            _edit(cit, setp("payload.citation_key", None)),
            ["payload_schema"],
            "an optional key is null instead of omitted",
        ),
        "payload_extra_key.json": (
            _edit(cit, setp("payload.note", "extra")),
            ["payload_schema"],
            "payload.note is not in the schema",
        ),
        "replaces_and_withdraws.json": (
            _edit(
                valid["citation_signature_withdrawal.json"],
                setp("payload.replaces", att["event_id"]),
            ),
            ["payload_schema"],
            "one event cannot both replace and withdraw (replaces added to a withdrawal)",
        ),
        "replaces_not_an_event_id.json": (
            _edit(att, setp("payload.replaces", att["event_id"][7:])),
            ["payload_schema"],
            "payload.replaces is not sha256:<64 hex>",
        ),
        "position_zero.json": (
            _edit(att, setp("payload.author.position", 0)),
            ["payload_schema"],
            "payload.author.position is 1-based",
        ),
        "formal_bridge_without_proof_system.json": (
            _edit(bridge, delp("payload.proof_system")),
            ["payload_schema"],
            "a formal_bridge needs payload.proof_system",
        ),
        "replication_with_proof_system.json": (
            _edit(rep, setp("payload.proof_system", "coq")),
            ["payload_schema"],
            "payload.proof_system is only for a formal_bridge",
        ),
        "outcome_of_other_kind.json": (
            _edit(rep, setp("payload.outcome", "falsified")),
            ["payload_schema"],
            "falsified is an outcome of a falsification, not of a replication",
        ),
        "artifact_sha256_upper_case.json": (
            _edit(rep, setp("payload.artifacts.0.sha256", SHA_A.upper())),
            ["payload_schema"],
            "payload.artifacts[0].sha256 must be lower-case hex",
        ),
        "payload_subject_mismatch.json": (
            _edit(cit, setp("payload.canonical_sha256", dear.canonical_sha256)),
            ["payload_subject"],
            "payload.canonical_sha256 is another paper's than subject_pith_number",
        ),
        "orcid_check_digit.json": (
            _edit(att, setp("payload.author.orcid", "0000-0002-1825-0098")),
            ["payload_orcid"],
            "payload.author.orcid has a wrong check digit",
        ),
        "orcid_not_signer.json": (
            _edit(att, setp("payload.author.orcid", "0000-0001-5109-3700")),
            ["payload_orcid"],
            "payload.author.orcid is a valid iD, but not the signer's (signer_id orcid:...)",
        ),
        "identity_proof_kind_unknown.json": (
            _edit(proved, setp("payload.identity_proofs.1.kind", "keybase")),
            ["payload_schema"],
            "payload.identity_proofs[1].kind is not orcid, web or paper",
        ),
        "identity_proof_locator_not_web.json": (
            _edit(proved, setp("payload.identity_proofs.1.locator", "ftp://carberry.example.org")),
            ["payload_schema"],
            "a web proof's locator must be an http(s) address",
        ),
        "identity_proof_orcid_of_another.json": (
            _edit(proved, setp("payload.identity_proofs.0.locator", "0000-0001-5109-3700")),
            ["payload_identity_proofs"],
            "the ORCID proof names a valid iD that is not the author's",
        ),
        "identity_proof_extra_key.json": (
            _edit(proved, setp("payload.identity_proofs.2.verified", True)),
            ["payload_schema"],
            "a proof holds only kind and locator (a claim cannot say it was verified)",
        ),
        "extra_top_level_field.json": (
            _edit(cit, setp("note", "unsigned text anyone could add"), reseal=False),
            ["structure"],
            "a top-level field outside the event: event_id does not cover it, so it is refused",
        ),
        "extra_signer_field.json": (
            _edit(cit, setp("signer.display_name", "J. Carberry")),
            ["structure"],
            "signer has a sixth field (signed again): the signer object is exactly five fields",
        ),
        "extra_signature_field.json": (
            _edit(cit, setp("signature.comment", "unsigned text anyone could add"), reseal=False),
            ["structure"],
            "signature has a fourth field: nothing signs it, so it is refused",
        ),
        "position_with_fraction.json": (
            _edit(att, setp("payload.author.position", 3.0)),
            ["payload_schema"],
            "payload.author.position is 3.0 (signed again): JSON Schema's integer admits it, but "
            "canonical JSON writes it 3.0 in Python and 3 elsewhere; integers only",
        ),
        "payload_author_extra_key.json": (
            _edit(att, setp("payload.author.affiliation", "Brown University")),
            ["payload_schema"],
            "payload.author.affiliation is not in the schema (every level is closed)",
        ),
        "anchor_proof_not_base64.json": (
            _edit(anchor, setp("payload.opentimestamps.0.proof", "AAB=")),
            ["payload_proofs"],
            "payload.opentimestamps[1].proof has non-zero unused bits: not canonical base64",
        ),
        "anchor_proof_pending.json": (
            _edit(anchor, setp("payload.opentimestamps.0.complete", False)),
            ["payload_schema"],
            "an anchor carries complete proofs only (complete is always true)",
        ),
        "anchor_without_headers.json": (
            _edit(anchor, setp("payload.bitcoin_headers", [])),
            ["payload_schema"],
            "an anchor ships the header of every block its proofs name: at least one",
        ),
        "storage_capture_url_elsewhere.json": (
            _edit(storage, setp("payload.captures.0.capture_url", f"{WAYBACK}/{CAPTURED}/x")),
            ["payload_captures"],
            "the PDF's capture URL is not the Wayback form of its url at its timestamp",
        ),
        "storage_without_pdf.json": (
            _edit(storage, lambda e: e["payload"]["captures"].pop(0)),
            ["payload_captures"],
            "no capture of the PDF: a storage attestation is about the paper's PDF",
        ),
        "storage_digest_hex.json": (
            _edit(storage, setp("payload.captures.0.digest", "sha1:" + "ab" * 20)),
            ["payload_schema"],
            "the digest is the CDX row's base32 SHA-1 (sha1:<32 base32>), not hex",
        ),
        "signature_b64_padding_bits.json": (
            _edit(cit, _padding_bits, reseal=False),
            ["signature"],
            "signature_b64 decodes to the genuine 64 bytes, but its last character has non-zero "
            "unused bits: only the canonical base64 spelling is accepted",
        ),
    }
    return cases


def _padding_bits(event: Event) -> None:
    """Set the unused low bits of the last base64 character (64 bytes leave 4 of them)."""
    text = event["signature"]["signature_b64"]
    alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
    last = text.rstrip("=")[-1]
    spare = alphabet[alphabet.index(last) | 0b1111]
    event["signature"]["signature_b64"] = text.rstrip("=")[:-1] + spare + "=="


def invalid_texts() -> dict[str, tuple[str, str, str]]:
    """Vectors whose text is not strict JSON: file name -> (text, fault, why).

    Each starts from a valid event; the strict reader refuses the text before any check runs.
    """
    valid = valid_events()
    att, cit = valid["author_attestation.json"], valid["citation_signature.json"]
    genuine = _dump(cit)

    def resealed(change: Callable[[Event], None]) -> str:
        return _dump(_edit(att, change))

    def deep(e: Event) -> None:
        value: Any = "bottom"
        for _ in range(70):
            value = [value]
        e["payload"]["note"] = value

    def setpos(value: Any) -> Callable[[Event], None]:
        return lambda e: e["payload"]["author"].__setitem__("position", value)

    return {
        "nan.json": (
            resealed(setpos(float("nan"))),
            "NaN",
            "payload.author.position is NaN (signed again by a lax JSON writer): not JSON",
        ),
        "big_integer.json": (
            resealed(setpos(2**53 + 1)),
            "2**53",
            "payload.author.position is 2**53 + 1 (signed again): beyond the integers every "
            "reader represents exactly",
        ),
        "lone_surrogate.json": (
            genuine.replace("to all-reduce;", "to all-reduce\\ud800;", 1),
            "surrogate",
            "payload.context holds the escape of a lone UTF-16 surrogate: no UTF-8 text has it",
        ),
        "duplicate_key.json": (
            genuine.replace(
                '"relationship": "extends"',
                '"relationship": "extends",\n    "relationship": "refutes"',
            ),
            "duplicate key",
            "payload.relationship given twice (extends, then refutes): readers disagree on which "
            "one counts",
        ),
        "too_deep.json": (
            _dump(_edit(cit, deep)),
            "deeper",
            "payload.note holds arrays nested 70 deep (72 levels in all; the limit is 64), "
            "signed again",
        ),
    }


def _dump(obj: Any) -> str:
    return json.dumps(obj, indent=2, ensure_ascii=False) + "\n"


def key_document() -> dict[str, Any]:
    signer = FixedSigner()
    pk = signer.public_key
    return {
        "WARNING": "TEST ONLY. This seed is public; never sign anything real with it.",
        "seed_hex": VECTOR_SEED.hex(),
        "seed_derivation": 'sha256(b"pithauthor test vector key 1 -- TEST ONLY")',
        "public_key_hex": pk.hex(),
        "public_key_b64": b64encode(pk),
        "public_key_fingerprint": fingerprint_hex(pk),
        "key_id": key_id(pk),
        "orcid": VECTOR_ORCID,
        "signer_id": signer.signer_id,
        "created_at": CREATED_AT,
    }


def files() -> dict[str, str]:
    """Every generated file, relative path -> text."""
    out = {"key.json": _dump(key_document())}
    for name, event in valid_events().items():
        out[f"valid/{name}"] = _dump(event)
    index: dict[str, Any] = {}
    for name, (event, failing, why) in invalid_events().items():
        out[f"invalid/{name}"] = _dump(event)
        index[name] = {"failed_checks": failing, "why": why}
    for name, (text, fault, why) in invalid_texts().items():
        out[f"invalid/{name}"] = text
        index[name] = {"failed_checks": ["strict_json"], "json_fault": fault, "why": why}
    out["invalid/index.json"] = _dump(index)
    return out


def write(folder: Path) -> None:
    for rel, text in files().items():
        path = folder / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(text.encode("utf-8"))


if __name__ == "__main__":
    write(Path(sys.argv[1]) if len(sys.argv) > 1 else HERE)
