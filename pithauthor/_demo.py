"""`make demo`: the main job end to end, on this machine, in a throwaway folder.

Starts the local registry (real `pith registry serve`, free loopback port, example papers),
makes a throwaway key in a temporary PITH_HOME, claims a paper, signs citations, records a
replication, submits them with `pith submit`, fetches the merged states with `pith fetch`,
verifies them with `pith verify`, prints a summary, then stops everything. Exit 0 on success.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from pithauthor._core.pith_number import PithNumber
from pithauthor._core.subject import Subject

PAPER_A = "2101.99901"  # synthetic example paper A
PAPER_B = "2101.99902"  # synthetic example paper B: "our" paper, citing A and DeAR
DEAR = "2302.12445"  # a real paper (DeAR), from the protocol's test vector


class DemoSigner:
    """A throwaway Ed25519 key (never written anywhere)."""

    status = "active"

    def __init__(self) -> None:
        from nacl.signing import SigningKey

        self._key = SigningKey.generate()

    @property
    def public_key(self) -> bytes:
        return bytes(self._key.verify_key)

    @property
    def signer_id(self) -> str:
        from pithauthor._core.key_identity import key_id

        return key_id(self.public_key)

    def sign_digest(self, digest: bytes) -> bytes:
        return bytes(self._key.sign(digest).signature)


def _say(text: str) -> None:
    sys.stdout.write(text + "\n")
    sys.stdout.flush()


def _pith(args: Sequence[str], env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    result = subprocess.run(
        [sys.executable, "-m", "pithauthor", *args],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )
    if result.returncode != 0:
        raise RuntimeError(f"pith {' '.join(args[:2])} failed: {result.stderr.strip()}")
    return result


def _events(signer: DemoSigner, subjects: dict[str, Subject]) -> list[dict[str, Any]]:
    """A claim on paper B, citations from B to A and to DeAR, a replication of DeAR."""
    from importlib import import_module

    try:
        sign: Any = import_module("pithauthor.sign")
    except ImportError:  # the events branch is not merged: build them with the envelope
        return _envelope_events(signer, subjects)
    b = subjects[PAPER_B].pith_number
    return [
        sign.attest_authorship(signer, subjects[PAPER_B], name="Demo Author", position=1),
        sign.sign_citation(signer, subjects[PAPER_A], b, "extends", citation_key="exampleA"),
        sign.sign_citation(signer, subjects[DEAR], b, "uses_method", citation_key="li2023dear"),
        sign.record_replication(
            signer,
            subjects[DEAR],
            kind="replication",
            outcome="reproduced",
            summary="Demo: re-ran the pipelining schedule on a toy model.",
        ),
    ]


def _envelope_events(signer: DemoSigner, subjects: dict[str, Subject]) -> list[dict[str, Any]]:
    from pithauthor._core.envelope import seal, signer_block, unsigned_event

    now = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    block = signer_block(signer)
    b = subjects[PAPER_B].pith_number.full

    def event(kind: str, subject: Subject, payload: dict[str, Any]) -> dict[str, Any]:
        schema = {"payload_schema": f"pithauthor.{kind}.v1"}
        body = {**schema, "canonical_sha256": subject.canonical_sha256, **payload}
        return seal(unsigned_event(kind, subject.pith_number, now, block, body), signer)

    return [
        event(
            "author_attestation",
            subjects[PAPER_B],
            {
                "author": {"name": "Demo Author", "position": 1},
                "statement": "I am an author of this paper.",
            },
        ),
        event(
            "citation_signature",
            subjects[PAPER_A],
            {"citing_pith_number": b, "relationship": "extends", "citation_key": "exampleA"},
        ),
        event(
            "citation_signature",
            subjects[DEAR],
            {"citing_pith_number": b, "relationship": "uses_method", "citation_key": "li2023dear"},
        ),
        event(
            "replication_record",
            subjects[DEAR],
            {
                "kind": "replication",
                "outcome": "reproduced",
                "artifacts": [],
                "summary": "Demo: re-ran the pipelining schedule on a toy model.",
            },
        ),
    ]


def _start_registry(data: Path, env: dict[str, str]) -> tuple[subprocess.Popen[str], str]:
    proc = subprocess.Popen(
        [
            *(sys.executable, "-m", "pithauthor", "registry", "serve", "--port", "0"),
            *("--examples", "--data", str(data)),
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
        env=env,
    )
    assert proc.stdout is not None
    url = proc.stdout.readline().strip()
    if not url.startswith("http://127.0.0.1:"):
        proc.kill()
        raise RuntimeError("the local registry did not start")
    return proc, url


def run() -> int:
    """The demo; returns the exit code."""
    started = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="pith-demo-") as tmp:
        root = Path(tmp)
        env = {**os.environ, "PITH_HOME": str(root / "home")}
        for name in ("PITH_REGISTRY", "PITH_TOKEN", "PITH_TRUST"):
            env.pop(name, None)
        proc, url = _start_registry(root / "registry", env)
        try:
            _main(root, url, env)
        finally:
            proc.terminate()
            try:
                proc.wait(10)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
    _say(
        f"\nDone in {time.monotonic() - started:.1f} s; the registry is stopped and the "
        "temporary folder removed."
    )
    return 0


def _main(root: Path, url: str, env: dict[str, str]) -> None:
    import httpx

    from pithauthor.submit import RegistryClient
    from pithauthor.trust import pinned_trust

    _say("pithauthor demo: a local registry, a throwaway key, signed events, a verified state")
    _say(f"\n1. Local registry at {url} (example papers; NOT pith.science)")
    manifest = httpx.get(url + "/pith-mirrors.json").json()
    manifest_path = root / "local-manifest.json"
    manifest_path.write_text(json.dumps(manifest), "utf-8")
    key = manifest["mirrors"][0]["public_key"]["key_id"]
    _say(f"   registry key {key}, trusted for this demo only (--trust-manifest)")
    with RegistryClient(url, trust=pinned_trust()) as client:
        client.trust_local_registry()
        subjects = {ref: Subject.from_document(client.record(ref)) for ref in (PAPER_A, PAPER_B)}
        subjects[DEAR] = Subject.from_document(client.record(DEAR))
    for ref, subject in subjects.items():
        _say(f"   {ref:<11} -> {subject.pith_number.full}")

    signer = DemoSigner()
    _say(f"\n2. Throwaway author key {signer.signer_id} (PITH_HOME={root / 'home'})")
    events = _events(signer, subjects)
    batch = root / "events.jsonl"
    batch.write_text("".join(json.dumps(e) + "\n" for e in events), "utf-8")
    for e in events:
        what = e["payload"].get("relationship") or e["payload"].get("kind") or "author claim"
        _say(f"   signed {e['event_type']:<19} {what:<12} on {e['subject_pith_number']}")

    trust = ["--registry", url, "--trust-manifest", str(manifest_path)]
    _say("\n3. pith submit (outbox first, then the action links of each verified record)")
    sent = json.loads(_pith(["submit", str(batch), *trust, "--json"], env).stdout)
    _say(
        f"   accepted {len(sent['accepted'])}, rejected {len(sent['rejected'])}, "
        f"pending {len(sent['pending'])}"
    )
    again = json.loads(_pith(["submit", str(batch), *trust, "--json"], env).stdout)
    _say(f"   submitted again: {len(again['accepted'])} sent (nothing pending: exactly once)")

    _say("\n4. Merged states, fetched and verified (pith fetch, then pith verify)")
    for ref in (PAPER_B, PAPER_A, DEAR):
        out = root / f"state-{ref}.json"
        _pith(["fetch", ref, "--what", "state", "-o", str(out), *trust], env)
        report = json.loads(
            _pith(
                ["verify", str(out), "--trust-manifest", str(manifest_path), "--json"], env
            ).stdout
        )
        state = json.loads(out.read_text("utf-8"))
        cur = state["current"]
        passed = sum(1 for c in report["checks"] if c["status"] == "passed")
        _say(
            f"   {PithNumber.parse(state['pith_number']).full}  claims "
            f"{len(cur['author_attestations'])}, citations {len(cur['citation_signatures'])}, "
            f"replications {len(cur['replication_records'])}; events "
            f"{state['valid_event_count']}/{state['event_count']} valid; "
            f"verify: {'OK' if report['ok'] else 'FAILED'} ({passed} checks passed)"
        )
        if not report["ok"]:
            raise RuntimeError(f"the state of {ref} does not verify")


def main() -> None:
    try:
        code = run()
    except Exception as exc:  # the demo reports, never shows a traceback
        sys.stderr.write(f"demo failed: {exc}\n")
        code = 1
    sys.exit(code)


if __name__ == "__main__":
    main()
