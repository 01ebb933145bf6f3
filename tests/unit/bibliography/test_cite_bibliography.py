"""`pith cite REFS.bib --from CITING`: every reference with a Pith Number signed once, against a
real local registry over loopback, with a real key store; every entry's fate reported."""

from __future__ import annotations

import json
import socket
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from conftest import RunPith, assert_one_line_error, use_fast_kdf
from registry_helpers import REAL_NUMBER, free_port, manifest_file, start_server

from pithauthor.registry.local.papers import add_paper
from pithauthor.registry.local.server import RegistryServer
from pithauthor.verify import (
    ArxivMetadata,
    build_canonical_record,
    pith_number_of,
    read_documents,
    verify_file,
)

PASSPHRASE = "cite tests passphrase"
EXTRA_IDS = ["2101.99903", "2101.99904", "hep-th/9901001"]
# the arXiv papers cited by biblatex's own example bibliography (TeX Live), registered here with
# synthetic metadata: the registry only has to know them
REAL_BIB_IDS = ["math/0307200", "hep-th/9603067", "1008.2849"]


def _metadata(arxiv_id: str) -> dict[str, Any]:
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


def _number(arxiv_id: str) -> str:
    meta = ArxivMetadata.from_json(_metadata(arxiv_id))
    return pith_number_of(build_canonical_record(meta)).full


@pytest.fixture
def registry(tmp_path: Path) -> Iterator[dict[str, Any]]:
    server: RegistryServer = start_server(tmp_path / "registry")
    for aid in EXTRA_IDS + REAL_BIB_IDS:
        path = tmp_path / f"{aid.replace('/', '_')}.json"
        path.write_text(json.dumps(_metadata(aid)), "utf-8")
        add_paper(server.store, server.key, path)
    manifest = manifest_file(server.url, tmp_path / "registry", tmp_path / "manifest.json")
    try:
        yield {"url": server.url, "manifest": str(manifest), "server": server}
    finally:
        server.stop()


@pytest.fixture
def author(monkeypatch: pytest.MonkeyPatch) -> str:
    """A real key in this test's PITH_HOME (test-only cheap KDF), unlocked by PITH_PASSPHRASE."""
    from pithauthor.keys.author import generate

    use_fast_kdf(monkeypatch)
    monkeypatch.setenv("PITH_PASSPHRASE", PASSPHRASE)
    # author 2 of the DeAR record, author 1 of the records the registry fixture adds
    return generate("ada", public_name="Chengjian Liu", backend="file", note=lambda _: None).key_id


CITING = "2101.99901"  # an example paper of the local registry

BIB = r"""
@article{real, title = {DeAR}, eprint = {2302.12445v1}, archivePrefix = {arXiv},
  pith-relationship = {uses_method}}
@misc{byurl, title = {B}, url = {https://arxiv.org/abs/2101.99903v1}}
@misc{bydoi, title = {C}, doi = {10.48550/arXiv.2101.99904}}
@article{again, title = {C again}, journal = {arXiv preprint arXiv:2101.99904}}
@misc{bypith, title = {D}, pith = {%(PITH)s}}
@misc{missing, title = {Not registered}, eprint = {2101.99999}, archivePrefix = {arXiv}}
@book{nothing, title = {A book without any identifier}, publisher = {P}, year = {2001}}
@misc{badrel, title = {E}, eprint = {2101.99902}, archivePrefix = {arXiv},
  pith-relationship = {likes}}
@misc{self, title = {Our own paper}, eprint = {2101.99901}, archivePrefix = {arXiv}}
"""


def _bib(tmp_path: Path, text: str = BIB) -> Path:
    path = tmp_path / "refs.bib"
    path.write_text(text % {"PITH": _number("hep-th/9901001")}, "utf-8")
    return path


def _cite(pith: RunPith, registry: dict[str, Any], *args: str) -> Any:
    return pith(
        "cite", *args, "--from", CITING, "--registry", registry["url"],
        "--trust-manifest", registry["manifest"],
    )  # fmt: skip


def test_every_entry_gets_a_row_and_each_cited_paper_one_verified_event(
    pith: RunPith, registry: dict[str, Any], author: str, tmp_path: Path
) -> None:
    out = tmp_path / "citations.jsonl"
    result = _cite(pith, registry, str(_bib(tmp_path)), "--out", str(out), "--json")
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
    assert by_key["byurl"]["subject_pith_number"] == _number("2101.99903")
    assert by_key["bypith"]["subject_pith_number"] == _number("hep-th/9901001")
    assert {e["payload"]["citing_pith_number"] for e in events} == {report["citing"]}
    assert {e["signer"]["key_id"] for e in events} == {author}
    assert "missing" in result.stderr and "unresolved" in result.stderr  # the table


def test_map_and_default_relationship_apply_and_exit_0_when_all_signed(
    pith: RunPith, registry: dict[str, Any], author: str, tmp_path: Path
) -> None:
    bib = _bib(tmp_path, BIB.split("@misc{missing")[0])
    out = tmp_path / "c.jsonl"
    result = _cite(
        pith, registry, str(bib), "--relationship", "extends", "--map", "byurl=refutes",
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
    pith: RunPith, registry: dict[str, Any], author: str, tmp_path: Path
) -> None:
    tex = tmp_path / "main.tex"
    tex.write_text(
        "\\documentclass{article}\\begin{document}\\citep{real} % \\cite{byurl}\n"
        "\\citet[p.~2]{bydoi,again}\\end{document}\n",
        "utf-8",
    )
    out = tmp_path / "c.jsonl"
    result = _cite(pith, registry, str(_bib(tmp_path)), "--only-cited", str(tex), "--out",
                   str(out), "--json")  # fmt: skip
    assert result.returncode == 0, result.stderr
    status = {row["key"]: row["status"] for row in json.loads(result.stdout)["rows"]}
    assert status["real"] == status["bydoi"] == "signed"
    assert status["byurl"] == status["missing"] == status["bypith"] == "skipped"
    assert len(read_documents(out)) == 2


def test_submit_sends_the_citations_and_the_registry_state_holds_them_once(
    pith: RunPith, registry: dict[str, Any], author: str, tmp_path: Path
) -> None:
    bib = _bib(tmp_path, BIB.split("@misc{missing")[0])
    first = _cite(pith, registry, str(bib), "--submit", "--yes")
    assert first.returncode == 0, first.stderr
    assert "accepted 4" in first.stderr
    # signed anew: new created_at, new ids
    again = _cite(pith, registry, str(bib), "--submit", "--yes")
    assert again.returncode == 0, again.stderr
    state = pith("fetch", REAL_NUMBER, "--what", "state", "--registry", registry["url"],
                 "--trust-manifest", registry["manifest"])  # fmt: skip
    assert state.returncode == 0, state.stderr
    doc = json.loads(state.stdout)
    ids = doc["applied_event_ids"]
    assert len(ids) == len(set(ids))
    assert len(doc["current"]["citation_signatures"]) >= 1


def test_the_on_disk_cache_resolves_again_with_the_registry_gone(
    pith: RunPith, registry: dict[str, Any], author: str, tmp_path: Path
) -> None:
    bib = _bib(tmp_path, BIB.split("@misc{missing")[0])
    citing = _number("2101.99902")  # a full number: no look-up needed for the citing paper
    base = ("cite", str(bib), "--from", citing, "--trust-manifest", registry["manifest"])
    first = pith(*base, "--registry", registry["url"], "--out", str(tmp_path / "a.jsonl"))
    assert first.returncode == 0, first.stderr
    registry["server"].stop()
    second = pith(*base, "--registry", registry["url"], "--out", str(tmp_path / "b.jsonl"))
    assert second.returncode == 0, second.stderr
    assert len(read_documents(tmp_path / "b.jsonl")) == 4


def test_a_dead_registry_exits_3_with_one_line_and_writes_nothing(
    pith: RunPith, author: str, tmp_path: Path, no_backoff: None
) -> None:
    out = tmp_path / "c.jsonl"
    dead = f"http://127.0.0.1:{free_port()}"
    result = pith(
        "cite", str(_bib(tmp_path)), "--from", _number("2101.99902"), "--registry", dead,
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
    pith: RunPith, registry: dict[str, Any], author: str, tmp_path: Path
) -> None:
    from conftest import FIXTURES

    out = tmp_path / "c.jsonl"
    bib = FIXTURES / "bib" / "biblatex-examples.bib"
    result = _cite(pith, registry, str(bib), "--out", str(out), "--json")
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout)
    assert report["counts"] == {"signed": 3, "no_identifier": 88, "duplicate": 1}
    cited = {e["subject_pith_number"] for e in read_documents(out)}
    assert cited == {_number(aid) for aid in REAL_BIB_IDS}


def test_claim_and_replicate_with_submit_reach_the_registry_state(
    pith: RunPith, registry: dict[str, Any], author: str
) -> None:
    trust = ("--registry", registry["url"], "--trust-manifest", registry["manifest"])
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
    assert [e["signer"]["key_id"] for e in current["author_attestations"]] == [author]
    assert current["replication_records"][0]["payload"]["proof_system"] == "lean4"


def test_submit_to_a_dead_registry_keeps_the_event_pending_and_exits_3(
    pith: RunPith, author: str, tmp_path: Path, no_backoff: None
) -> None:
    record = str(Path(__file__).parents[2] / "fixtures" / "record-2302.12445v2.json")
    dead = f"http://127.0.0.1:{free_port()}"
    result = pith("claim", REAL_NUMBER, "--record", record, "--submit", "--yes", "--registry", dead)
    assert result.returncode == 3
    assert "stay in the outbox" in result.stderr and "Traceback" not in result.stderr
    listed = json.loads(pith("outbox", "list", "--json").stdout)
    assert [e["state"] for e in listed] == ["pending"]


def test_an_arxiv_id_and_a_pith_field_naming_the_same_paper_give_one_event(
    pith: RunPith, registry: dict[str, Any], author: str, tmp_path: Path
) -> None:
    bib = tmp_path / "same.bib"
    bib.write_text(
        "@misc{viaarxiv, title = {B}, eprint = {2101.99903}, archivePrefix = {arXiv}}\n"
        f"@misc{{viapith, title = {{B again}}, pith = {{{_number('2101.99903')}}}}}\n",
        "utf-8",
    )
    out = tmp_path / "c.jsonl"
    result = _cite(pith, registry, str(bib), "--out", str(out), "--json")
    assert result.returncode == 0, result.stderr
    rows = {r["key"]: r for r in json.loads(result.stdout)["rows"]}
    assert rows["viaarxiv"]["status"] == "signed"
    assert rows["viapith"]["status"] == "duplicate"
    assert "viaarxiv" in rows["viapith"]["detail"]
    assert len(read_documents(out)) == 1
