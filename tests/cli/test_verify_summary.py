"""`pith verify` of a big state prints a summary by default (every check that did not pass, and
the passed ones counted by name), and every check with --verbose or --json (a state
of 1,000 events printed 2 MB of check lines). A real state from the local registry."""

from __future__ import annotations

import json
from pathlib import Path

from support.cli import RunPith
from support.registry import SUBJECT, citations, manifest_file, start_server


def test_verify_counts_the_passed_checks_by_name_unless_verbose(
    tmp_path: Path, pith: RunPith
) -> None:
    server = start_server(tmp_path / "registry")
    try:
        for event in citations(40):
            server.store.insert_event(SUBJECT.pith_number.body, event, event["created_at"])  # type: ignore[arg-type]
        manifest = manifest_file(server.url, tmp_path / "registry", tmp_path / "manifest.json")
        state = tmp_path / "state.json"
        fetched = pith("fetch", SUBJECT.pith_number.full, "--what", "state", "-o", str(state),
                       "--registry", server.url, "--trust-manifest", str(manifest))  # fmt: skip
        assert fetched.returncode == 0, fetched.stderr
    finally:
        server.stop()
    trust = ("--trust-manifest", str(manifest))
    short = pith("verify", str(state), *trust)
    verbose = pith("verify", str(state), *trust, "--verbose")
    as_json = pith("verify", str(state), *trust, "--json")
    assert short.returncode == verbose.returncode == as_json.returncode == 0, short.stderr
    checks = json.loads(as_json.stdout)["checks"]
    assert len(checks) > 40 * 5  # every event's checks
    assert len(verbose.stdout.splitlines()) == len(checks)
    lines = short.stdout.splitlines()
    assert len(lines) < 50  # a line per check name, the events' numbered names as one
    signature = "current.citation_signatures[*].signature"
    (counted,) = [line for line in lines if signature in line]
    assert counted.split()[-2:] == ["40", "checks"], lines
    assert short.stderr == verbose.stderr  # the same verdict
