"""`pith cite REFS.bib --from CITING`: every reference with a Pith Number signed once, against a
real local registry over loopback, with a real key store; every entry's fate reported."""

from __future__ import annotations

import json
import socket
from pathlib import Path
from typing import Any

import pytest
from support.cite import BIB, REAL_BIB_IDS, number_of, run_cite, write_bib
from support.cli import RunPith, assert_one_line_error
from support.registry import REAL_NUMBER, arxiv_metadata, free_port

from pithauthor.protocol.record import ArxivMetadata, build_canonical_record, pith_number_of
from pithauthor.verify import (
    read_documents,
    verify_file,
)


def test_every_entry_gets_a_row_and_each_cited_paper_one_verified_event(
    pith: RunPith, cite_registry: dict[str, Any], cite_author: str, tmp_path: Path
) -> None:
    out = tmp_path / "citations.jsonl"
    result = run_cite(pith, cite_registry, str(write_bib(tmp_path)), "--out", str(out), "--json")
    assert result.returncode == 1, result.stderr  # `missing` and `badrel` were not signed
    report = json.loads(result.stdout)
    status = {row["key"]: row["status"] for row in report["rows"]}
    assert status == {
        "real": "signed",
        "byurl": "signed",
        "bydoi": "signed",
        "again": "duplicate",
        "bypith": "signed",
        "missing": "unresolved",
        "nothing": "no_identifier",
        "badrel": "invalid_relationship",
        "self": "skipped",
    }
    events = read_documents(out)
    assert len(events) == report["events"] == 4
    assert verify_file(out).ok
    by_key = {e["payload"]["citation_key"]: e for e in events}
    assert by_key["real"]["subject_pith_number"] == REAL_NUMBER
    assert by_key["real"]["payload"]["relationship"] == "uses_method"
    assert by_key["byurl"]["subject_pith_number"] == number_of("2101.99903")
    assert by_key["bypith"]["subject_pith_number"] == number_of("hep-th/9901001")
    assert {e["payload"]["citing_pith_number"] for e in events} == {report["citing"]}
    assert {e["signer"]["key_id"] for e in events} == {cite_author}
    assert "missing" in result.stderr and "unresolved" in result.stderr  # the table


def test_map_and_default_relationship_apply_and_exit_0_when_all_signed(
    pith: RunPith, cite_registry: dict[str, Any], cite_author: str, tmp_path: Path
) -> None:
    bib = write_bib(tmp_path, BIB.split("@misc{missing")[0])
    out = tmp_path / "c.jsonl"
    result = run_cite(
        pith, cite_registry, str(bib), "--relationship", "extends", "--map", "byurl=refutes",
        "--out", str(out),
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    rel = {e["payload"]["citation_key"]: e["payload"]["relationship"] for e in read_documents(out)}
    assert rel == {
        "real": "uses_method",
        "byurl": "refutes",
        "bydoi": "extends",
        "bypith": "extends",
    }


def test_only_cited_keeps_the_entries_the_manuscript_cites(
    pith: RunPith, cite_registry: dict[str, Any], cite_author: str, tmp_path: Path
) -> None:
    tex = tmp_path / "main.tex"
    tex.write_text(
        "\\documentclass{article}\\begin{document}\\citep{real} % \\cite{byurl}\n"
        "\\citet[p.~2]{bydoi,again}\\end{document}\n",
        "utf-8",
    )
    out = tmp_path / "c.jsonl"
    bib = str(write_bib(tmp_path))
    result = run_cite(
        pith, cite_registry, bib, "--only-cited", str(tex), "--out", str(out), "--json"
    )
    assert result.returncode == 0, result.stderr
    status = {row["key"]: row["status"] for row in json.loads(result.stdout)["rows"]}
    assert status["real"] == status["bydoi"] == "signed"
    assert status["byurl"] == status["missing"] == status["bypith"] == "skipped"
    assert len(read_documents(out)) == 2


def test_submit_sends_the_citations_and_the_registry_state_holds_them_once(
    pith: RunPith, cite_registry: dict[str, Any], cite_author: str, tmp_path: Path
) -> None:
    bib = write_bib(tmp_path, BIB.split("@misc{missing")[0])
    first = run_cite(pith, cite_registry, str(bib), "--submit", "--yes")
    assert first.returncode == 0, first.stderr
    assert "accepted 4" in first.stderr
    # signed anew: new created_at, new ids
    again = run_cite(pith, cite_registry, str(bib), "--submit", "--yes")
    assert again.returncode == 0, again.stderr
    state = pith("fetch", REAL_NUMBER, "--what", "state", "--registry", cite_registry["url"],
                 "--trust-manifest", cite_registry["manifest"])  # fmt: skip
    assert state.returncode == 0, state.stderr
    doc = json.loads(state.stdout)
    ids = doc["applied_event_ids"]
    assert len(ids) == len(set(ids))
    assert len(doc["current"]["citation_signatures"]) >= 1


def test_the_on_disk_cache_resolves_again_with_the_registry_gone(
    pith: RunPith, cite_registry: dict[str, Any], cite_author: str, tmp_path: Path, no_backoff: None
) -> None:
    bib = write_bib(tmp_path, BIB.split("@misc{missing")[0])
    # a full number no registry has (synthetic metadata): used unchecked with --offline, so
    # that only the cited papers need the registry
    citing = number_of("2101.99902")
    base = ("cite", str(bib), "--from", citing, "--offline",
            "--trust-manifest", cite_registry["manifest"])  # fmt: skip
    first = pith(*base, "--registry", cite_registry["url"], "--out", str(tmp_path / "a.jsonl"))
    assert first.returncode == 0, first.stderr
    cite_registry["server"].stop()
    second = pith(*base, "--registry", cite_registry["url"], "--out", str(tmp_path / "b.jsonl"))
    assert second.returncode == 0, second.stderr
    assert len(read_documents(tmp_path / "b.jsonl")) == 4


def test_a_dead_registry_exits_3_with_one_line_and_writes_nothing(
    pith: RunPith, cite_author: str, tmp_path: Path, no_backoff: None
) -> None:
    out = tmp_path / "c.jsonl"
    dead = f"http://127.0.0.1:{free_port()}"
    result = pith(
        "cite", str(write_bib(tmp_path)), "--from", number_of("2101.99902"), "--registry", dead,
        "--out", str(out),
    )  # fmt: skip
    assert_one_line_error(result, 3)
    assert not out.exists()


def test_nothing_to_sign_opens_no_key_and_no_registry(pith: RunPith, tmp_path: Path) -> None:
    bib = tmp_path / "refs.bib"
    bib.write_text("@book{b, title = {No identifier}, publisher = {P}, year = {2001}}\n", "utf-8")
    # a registry that listens but never answers: any connection to it is seen afterwards
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen(8)
        url = f"http://127.0.0.1:{listener.getsockname()[1]}"
        result = pith("cite", str(bib), "--from", REAL_NUMBER, "--registry", url, "--json")
        listener.settimeout(0)
        with pytest.raises(BlockingIOError):
            listener.accept()  # nobody connected
    assert result.returncode == 0, result.stderr  # no key exists, the registry is unused
    assert json.loads(result.stdout)["rows"][0]["status"] == "no_identifier"


def test_a_real_bibliography_from_tex_live_signs_its_arxiv_references(
    pith: RunPith, cite_registry: dict[str, Any], cite_author: str, tmp_path: Path
) -> None:
    from support.paths import FIXTURES

    out = tmp_path / "c.jsonl"
    bib = FIXTURES / "bib" / "biblatex-examples.bib"
    result = run_cite(pith, cite_registry, str(bib), "--out", str(out), "--json")
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout)
    assert report["counts"] == {"signed": 3, "no_identifier": 88, "duplicate": 1}
    cited = {e["subject_pith_number"] for e in read_documents(out)}
    assert cited == {number_of(aid) for aid in REAL_BIB_IDS}


def test_claim_and_replicate_with_submit_reach_the_registry_state(
    pith: RunPith, cite_registry: dict[str, Any], cite_author: str
) -> None:
    trust = ("--registry", cite_registry["url"], "--trust-manifest", cite_registry["manifest"])
    claim = pith("claim", "2101.99903", "--position", "1", "--submit", "--yes", *trust)
    assert claim.returncode == 0, claim.stderr
    assert "accepted 1, rejected 0, pending 0" in claim.stderr
    replicate = pith(
        "replicate", "2101.99903", "--kind", "formal_bridge", "--outcome", "formalized",
        "--proof-system", "lean4", "--summary", "Stated and proved in Lean 4.",
        "--submit", "--yes", *trust,
    )  # fmt: skip
    assert replicate.returncode == 0, replicate.stderr
    state = json.loads(pith("fetch", "2101.99903", "--what", "state", *trust).stdout)
    current = state["current"]
    assert [e["signer"]["key_id"] for e in current["author_attestations"]] == [cite_author]
    assert current["replication_records"][0]["payload"]["proof_system"] == "lean4"


def test_submit_to_a_dead_registry_keeps_the_event_pending_and_exits_3(
    pith: RunPith, cite_author: str, tmp_path: Path, no_backoff: None
) -> None:
    record = str(Path(__file__).parents[2] / "fixtures" / "record-2302.12445v2.json")
    dead = f"http://127.0.0.1:{free_port()}"
    result = pith("claim", REAL_NUMBER, "--record", record, "--submit", "--yes", "--registry", dead)
    assert result.returncode == 3
    assert "stay in the outbox" in result.stderr and "Traceback" not in result.stderr
    listed = json.loads(pith("outbox", "list", "--all", "--json").stdout)
    assert [e["state"] for e in listed] == ["pending"]


def test_an_arxiv_id_and_a_pith_field_naming_the_same_paper_give_one_event(
    pith: RunPith, cite_registry: dict[str, Any], cite_author: str, tmp_path: Path
) -> None:
    bib = tmp_path / "same.bib"
    bib.write_text(
        "@misc{viaarxiv, title = {B}, eprint = {2101.99903}, archivePrefix = {arXiv}}\n"
        f"@misc{{viapith, title = {{B again}}, pith = {{{number_of('2101.99903')}}}}}\n",
        "utf-8",
    )
    out = tmp_path / "c.jsonl"
    result = run_cite(pith, cite_registry, str(bib), "--out", str(out), "--json")
    assert result.returncode == 0, result.stderr
    rows = {r["key"]: r for r in json.loads(result.stdout)["rows"]}
    assert rows["viaarxiv"]["status"] == "signed"
    assert rows["viapith"]["status"] == "duplicate"
    assert "viaarxiv" in rows["viapith"]["detail"]
    assert len(read_documents(out)) == 1


def _add_version(registry: dict[str, Any], tmp_path: Path, arxiv_id: str, version: int) -> str:
    """Registers `version` of the synthetic paper `arxiv_id` beside those held; its number."""
    from pithauthor.registry.local.run import add_paper

    meta = {**arxiv_metadata(arxiv_id), "latest_version": version}
    path = tmp_path / f"v{version}.json"
    path.write_text(json.dumps(meta), "utf-8")
    add_paper(registry["server"].store, registry["server"].key, path)
    return pith_number_of(build_canonical_record(ArxivMetadata.from_json(meta))).full


def test_an_entry_naming_a_version_cites_that_versions_record_when_the_registry_holds_it(
    pith: RunPith, cite_registry: dict[str, Any], cite_author: str, tmp_path: Path
) -> None:
    v2 = _add_version(cite_registry, tmp_path, "2101.99903", 2)
    v1 = number_of("2101.99903")
    assert v1 != v2  # each version is its own record
    out = tmp_path / "c.jsonl"
    bib = write_bib(
        tmp_path, "@misc{old, title = {B}, url = {https://arxiv.org/abs/2101.99903v1}}\n"
    )
    result = run_cite(pith, cite_registry, str(bib), "--out", str(out), "--json")
    assert result.returncode == 0, result.stderr
    (event,) = read_documents(out)
    assert event["subject_pith_number"] == v1  # not the latest version's number
    assert f"(2101.99903v1, {v1[10:18]}…)" in result.stderr  # the preview names the version
    bare = write_bib(tmp_path, "@misc{new, title = {B}, eprint = {2101.99903}}\n")
    result = run_cite(pith, cite_registry, str(bare), "--out", str(tmp_path / "d.jsonl"))
    assert result.returncode == 0, result.stderr
    (event,) = read_documents(tmp_path / "d.jsonl")
    assert event["subject_pith_number"] == v2  # no version named: the latest held


def test_an_entry_naming_a_version_the_registry_lacks_cites_the_latest_and_its_row_says_so(
    pith: RunPith, cite_registry: dict[str, Any], cite_author: str, tmp_path: Path
) -> None:
    out = tmp_path / "c.jsonl"
    bib = write_bib(tmp_path, "@misc{later, title = {C}, eprint = {2101.99904v3}}\n")
    result = run_cite(pith, cite_registry, str(bib), "--out", str(out), "--json")
    assert result.returncode == 0, result.stderr
    (event,) = read_documents(out)
    assert event["subject_pith_number"] == number_of("2101.99904")  # v1, all the registry has
    (row,) = json.loads(result.stdout)["rows"]
    assert row["status"] == "signed"
    assert "cites v1: the registry holds no v3 record" in row["detail"]
    assert "(2101.99904v1, " in result.stderr  # the preview showed the version signed
