"""Test helpers for the registry/outbox/submit tests: a test signer, events, and servers.

Until the events branch (pithauthor.sign) is merged, events are built here with the envelope and
the contract payloads. Run as a script to serve a registry in a subprocess (optionally slowed):

    python tests/support/registry.py DATA_DIR PORT [DELAY_SECONDS]
"""

from __future__ import annotations

import hashlib
import json
import os
import socket
import sqlite3
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from nacl.signing import SigningKey

from pithauthor.protocol.checks.merge import merge_state
from pithauthor.protocol.events import seal, signer_block, unsigned_event
from pithauthor.protocol.identity import key_id
from pithauthor.protocol.ids import PithNumber
from pithauthor.protocol.subject import Subject
from pithauthor.protocol.verdict import Trust
from pithauthor.registry.local.answers import (
    bundle_document,
    load_or_create_key,
    record_created,
    source_aliases,
)
from pithauthor.registry.local.run import add_paper, example_papers
from pithauthor.registry.local.server import FaultPlan, RegistryServer
from pithauthor.registry.local.store import RegistryStore
from pithauthor.sign import anchor_record, attest_authorship, attest_storage, sign_citation

REPO = Path(__file__).resolve().parents[2]
REAL_NUMBER = "pith:2023:NFG5PAOXQUVIWDX5F7YSYYL7EW"
REAL_SHA = "694dd781d7852a8b0efd2ff12c617f25b959612a7c7a23e12497b4715d745ec0"
SUBJECT = Subject(PithNumber.parse(REAL_NUMBER), REAL_SHA)


class TestSigner:
    """An Ed25519 key that satisfies envelope.Signer."""

    __test__ = False

    def __init__(self, seed: bytes | None = None) -> None:
        self._key = SigningKey(seed or os.urandom(32))

    @property
    def public_key(self) -> bytes:
        return bytes(self._key.verify_key)

    @property
    def signer_id(self) -> str:
        return key_id(self.public_key)

    def sign_digest(self, digest: bytes) -> bytes:
        return bytes(self._key.sign(digest).signature)


def citing_number(i: int) -> str:
    digest = hashlib.sha256(f"citing paper {i}".encode()).hexdigest()
    return PithNumber.from_digest(digest, 2024).full


def citation(
    signer: TestSigner,
    i: int,
    subject: Subject = SUBJECT,
    relationship: str = "cites",
    created_at: str = "2026-11-29T12:00:00Z",
) -> dict[str, Any]:
    payload = {
        "payload_schema": "pithauthor.citation_signature.v1",
        "canonical_sha256": subject.canonical_sha256,
        "citing_pith_number": citing_number(i),
        "relationship": relationship,
    }
    unsigned = unsigned_event(
        "citation_signature", subject.pith_number, created_at, signer_block(signer), payload
    )
    return seal(unsigned, signer)


def attestation(
    signer: TestSigner, subject: Subject = SUBJECT, position: int = 1, name: str = "Ada Lovelace"
) -> dict[str, Any]:
    payload = {
        "payload_schema": "pithauthor.author_attestation.v1",
        "canonical_sha256": subject.canonical_sha256,
        "author": {"name": name, "position": position},
        "statement": "I am an author of this paper.",
    }
    unsigned = unsigned_event(
        "author_attestation",
        subject.pith_number,
        "2026-11-29T11:00:00Z",
        signer_block(signer),
        payload,
    )
    return seal(unsigned, signer)


def replication(signer: TestSigner, subject: Subject = SUBJECT) -> dict[str, Any]:
    payload = {
        "payload_schema": "pithauthor.replication_record.v1",
        "canonical_sha256": subject.canonical_sha256,
        "kind": "replication",
        "outcome": "reproduced",
        "artifacts": [{"uri": "https://example.org/run.tar.gz", "sha256": "ab" * 32}],
        "summary": "Re-ran the benchmark; speed-ups within 5%.",
    }
    unsigned = unsigned_event(
        "replication_record",
        subject.pith_number,
        "2026-11-29T13:00:00Z",
        signer_block(signer),
        payload,
    )
    return seal(unsigned, signer)


def citations(n: int, signer: TestSigner | None = None) -> list[dict[str, Any]]:
    signer = signer or TestSigner()
    return [citation(signer, i) for i in range(n)]


def start_server(data_dir: Path, **kwargs: Any) -> RegistryServer:
    """A real registry on 127.0.0.1 (free port) in a thread, with the example papers."""
    server = RegistryServer(data_dir, **kwargs)
    for path in example_papers():
        add_paper(server.store, server.key, path)
    server.start()
    return server


def manifest_file(server_url: str, data_dir: Path, dest: Path) -> Path:
    """The local registry's manifest written to `dest` (for PITH_TRUST / --trust-manifest)."""
    from pithauthor.registry.local.answers import load_or_create_key

    dest.write_text(json.dumps(load_or_create_key(data_dir).manifest(server_url)), "utf-8")
    return dest


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def spawn_server(data_dir: Path, port: int, delay: float = 0.0) -> subprocess.Popen[bytes]:
    """The registry in a subprocess (so it can be killed); waits until it answers."""
    proc = subprocess.Popen(
        [sys.executable, str(Path(__file__).resolve()), str(data_dir), str(port), str(delay)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.2):
                return proc
        except OSError:
            time.sleep(0.05)
    proc.kill()
    raise RuntimeError("the registry subprocess did not start")


if __name__ == "__main__":
    data, port_text, delay_text = sys.argv[1], sys.argv[2], sys.argv[3]
    faults = FaultPlan(every=0, delay_seconds=float(delay_text)) if float(delay_text) else None
    srv = RegistryServer(Path(data), "127.0.0.1", int(port_text), faults=faults)
    for p in example_papers():
        add_paper(srv.store, srv.key, p)
    srv.serve_forever()


def make_state(tmp_path: Path, events: list[dict[str, Any]]) -> tuple[dict[str, Any], Trust]:
    """The state the local registry merges from `events` for the example paper 2302.12445,
    with the trust of that registry's key (a fresh key and store under `tmp_path`)."""
    data = tmp_path / "reg"
    key = load_or_create_key(data)
    store = RegistryStore(data)
    rec, _ = add_paper(store, key, next(p for p in example_papers() if "2302" in p.name))
    state = merge_state(
        pith_number=rec.pith_number,
        canonical_record=rec.canonical_record,
        record_created=record_created(rec, key),
        source_aliases=source_aliases(rec),
        events=events,
    )
    manifest = key.manifest("http://127.0.0.1:1")
    return state, Trust.from_manifest(manifest, local=True)


def make_bundle(tmp_path: Path, events: list[dict[str, Any]]) -> tuple[dict[str, Any], Trust]:
    """The bundle the local registry serves holding `events` for the example paper 2302.12445
    (as `make_state`), with the trust of that registry's key."""
    data = tmp_path / "reg"
    key = load_or_create_key(data)
    rec, _ = add_paper(
        RegistryStore(data), key, next(p for p in example_papers() if "2302" in p.name)
    )
    bundle = bundle_document(rec, key, events)  # type: ignore[arg-type]
    return dict(bundle), Trust.from_manifest(key.manifest("http://127.0.0.1:1"), local=True)


CITING = PithNumber.parse("pith:2022:4O7LE3EHU3JQ243TWCKWFFFE3G")
"""A paper that cites SUBJECT in the correction tests."""
T0, T1, T2 = "2026-11-29T12:00:00Z", "2026-11-29T12:05:00Z", "2026-11-29T12:10:00Z"


def claim_event(signer: TestSigner, position: int, when: str = T0, **kw: Any) -> dict[str, Any]:
    """An authorship claim of SUBJECT by `signer` (Ada Lovelace, at `position`)."""
    event = attest_authorship(
        signer, SUBJECT, name="Ada Lovelace", position=position, created_at=when, **kw
    )
    return dict(event)


def cite_event(signer: TestSigner, relationship: str, when: str = T0, **kw: Any) -> dict[str, Any]:
    """A citation of SUBJECT by CITING, signed by `signer`."""
    return dict(sign_citation(signer, SUBJECT, CITING, relationship, created_at=when, **kw))


def anchor_event(signer: TestSigner, proof: bytes, when: str = T0) -> dict[str, Any]:
    """A timestamp anchor of SUBJECT by `signer` carrying `proof` as its one proof (shape only:
    whether a proof reaches the hash is the anchor verdict's, not the merge's)."""
    import base64

    header = hashlib.sha256(proof).hexdigest() * 2 + "00" * 16
    event = anchor_record(
        signer,
        SUBJECT,
        proofs=[("https://calendar.example", base64.b64encode(proof).decode())],
        headers=[(950_000, header)],
        created_at=when,
    )
    return dict(event)


def storage_event(
    signer: TestSigner, pdf: bytes, when: str = T0, stamp: str = "20261129120000"
) -> dict[str, Any]:
    """A storage attestation of SUBJECT by `signer`: a Wayback capture at `stamp` of its PDF,
    whose bytes are `pdf`."""
    import base64

    url = "https://arxiv.org/pdf/2302.12445v2"
    capture = {
        "url": url,
        "capture_url": f"https://web.archive.org/web/{stamp}/{url}",
        "timestamp": stamp,
        "digest": "sha1:" + base64.b32encode(hashlib.sha1(pdf).digest()).decode(),
        "sha256": hashlib.sha256(pdf).hexdigest(),
        "mimetype": "application/pdf",
    }
    return dict(attest_storage(signer, SUBJECT, captures=[capture], created_at=when))


def event_ids(events: list[dict[str, Any]]) -> list[str]:
    return [e["event_id"] for e in events]


def arxiv_metadata(arxiv_id: str) -> dict[str, Any]:
    """Synthetic arXiv metadata for `arxiv_id`, as the local registry registers a paper from:
    the cite tests' first author (Chengjian Liu) listed first."""
    return {
        "arxiv_id": arxiv_id,
        "latest_version": 1,
        "title": f"Example paper {arxiv_id} for the cite tests",
        # the `author` key's public name first: claims check it against this list
        "authors": "Chengjian Liu, Another Example",
        "abstract": "An example abstract.",
        "categories": "hep-th" if "/" in arxiv_id else "cs.DL",
        "license": "",
        "v1_date_rfc2822": "Mon, 4 Jan 1999 10:00:00 GMT"
        if "/" in arxiv_id
        else "Mon, 4 Jan 2021 10:00:00 GMT",
    }


def drop_untimed_mark(conn: sqlite3.Connection) -> None:
    """An outbox file as pithauthor made it before the mark of events lacking a proof of time
    (schema 8): its table and the triggers that keep it, gone."""
    triggers = conn.execute(
        "SELECT name FROM sqlite_master WHERE type = 'trigger' AND name LIKE 'untimed_%'"
    ).fetchall()
    for (name,) in triggers:
        conn.execute(f"DROP TRIGGER {name}")
    conn.execute("DROP TABLE untimed")
