"""The local registry keeps every version of a paper: records of v1 and v2 of one arXiv id
coexist, a bare id resolves to the latest (as pith.science does), `IDvN` to that version, and
`pith claim IDv1` signs for v1. Over HTTP, against the project's own server on loopback."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from support.cli import RunPith, use_fast_kdf
from support.registry import start_server

from pithauthor.protocol.record import build_canonical_record, parse_arxiv_metadata, pith_number_of
from pithauthor.registry.local.server import RegistryServer

ARXIV = "2101.99901"  # an example paper the local registry ships (v1 only)
EXAMPLES = Path(__file__).resolve().parents[3] / "pithauthor" / "data" / "examples"
V1_XML = (EXAMPLES / f"example-{ARXIV}.xml").read_text("utf-8")
V2_XML = V1_XML.replace(
    "</version>",
    '</version>\n  <version version="v2"><date>Mon, 1 Mar 2021 09:00:00 GMT</date>'
    "<size>12kb</size><source_type>D</source_type></version>",
    1,
).replace("Example paper A:", "Example paper A, revised:")


def _number(xml: str) -> str:
    return pith_number_of(build_canonical_record(parse_arxiv_metadata(xml.encode()))).full


V1, V2 = _number(V1_XML), _number(V2_XML)


@pytest.fixture
def data(tmp_path: Path, pith: RunPith) -> Path:
    """A registry data folder with the examples and v2 of ARXIV, added by `pith registry add`."""
    folder = tmp_path / "reg"
    v2 = tmp_path / f"{ARXIV}v2.xml"
    v2.write_text(V2_XML, "utf-8")
    added = pith("registry", "add", str(v2), "--examples", "--data", str(folder), "--json")
    assert added.returncode == 0, added.stderr
    assert V2 in added.stdout
    return folder


@pytest.fixture
def server(data: Path) -> Iterator[RegistryServer]:
    srv = start_server(data)  # adds the examples again: v1 is kept, nothing is duplicated
    try:
        yield srv
    finally:
        srv.stop()


def _resolve(server: RegistryServer, arxiv: str) -> httpx.Response:
    return httpx.get(
        f"{server.url}/api/pith-number/resolve", params={"arxiv": arxiv, "json": "true"}
    )


def test_both_versions_are_kept_and_resolved_as_pith_science_does(server: RegistryServer) -> None:
    assert V1 != V2
    numbers = {r.pith_number for r in server.store.records()}
    assert {V1, V2} <= numbers
    latest = _resolve(server, ARXIV)
    assert latest.status_code == 200, latest.text
    assert latest.json()["pith_number"] == V2  # unversioned: the latest version
    assert _resolve(server, f"{ARXIV}v1").json()["pith_number"] == V1
    assert _resolve(server, f"{ARXIV}v2").json()["pith_number"] == V2
    assert _resolve(server, f"{ARXIV}v3").status_code == 404  # a version it does not hold


def test_records_by_versioned_id_name_their_own_version(server: RegistryServer) -> None:
    for arxiv, number in ((f"{ARXIV}v1", V1), (f"{ARXIV}v2", V2), (ARXIV, V2)):
        got = httpx.get(f"{server.url}/pith/{arxiv}")
        assert got.status_code == 200, (arxiv, got.text)
        assert got.json()["pith_number"] == number, arxiv
        assert got.json()["source"]["version"] == (1 if number == V1 else 2)


def test_adding_a_version_twice_keeps_one_record(data: Path, tmp_path: Path, pith: RunPith) -> None:
    v2 = tmp_path / f"{ARXIV}v2.xml"
    again = pith("registry", "add", str(v2), "--data", str(data), "--json")
    assert again.returncode == 0, again.stderr
    srv = RegistryServer(data)
    try:
        assert [r.pith_number for r in srv.store.records()].count(V2) == 1
    finally:
        srv.store.close()


def test_claim_of_a_versioned_id_signs_for_that_version(
    server: RegistryServer, pith: RunPith, monkeypatch: pytest.MonkeyPatch
) -> None:
    from pithauthor.keys.author import generate

    use_fast_kdf(monkeypatch)
    monkeypatch.setenv("PITH_PASSPHRASE", "versions test passphrase")
    generate("ex", backend="file", public_name="Example Author", note=lambda _: None)
    common = ["--registry", server.url, "--trust-local-registry", "--json", "--yes"]
    for arxiv, number in ((f"{ARXIV}v1", V1), (ARXIV, V2)):
        signed = pith("claim", arxiv, "--position", "1", *common)
        assert signed.returncode == 0, signed.stderr
        event = json.loads(signed.stdout.splitlines()[-1])
        assert event["subject_pith_number"] == number, arxiv


def test_badge_of_a_versioned_id_prints_that_versions_number(
    server: RegistryServer, pith: RunPith
) -> None:
    common = ["--registry", server.url, "--trust-local-registry", "--format", "latex"]
    for arxiv, number, other in ((f"{ARXIV}v1", V1, V2), (ARXIV, V2, V1), (f"{ARXIV}v2", V2, V1)):
        got = pith("badge", arxiv, *common)
        assert got.returncode == 0, (arxiv, got.stderr)
        assert number.split(":")[2] in got.stdout, arxiv
        assert other.split(":")[2] not in got.stdout, arxiv
    missing = pith("badge", f"{ARXIV}v3", *common)  # a version the registry does not hold
    assert missing.returncode == 1, missing.stderr
    assert missing.stdout == ""  # no badge of another version
    errors = [line for line in missing.stderr.splitlines() if not line.startswith("pith: warn")]
    assert errors == [f"pith: error: the registry resolves {ARXIV} to v2 ({V2}), not to v3"]


def test_inject_of_a_versioned_id_writes_that_versions_number(
    server: RegistryServer, pith: RunPith, tmp_path: Path
) -> None:
    paper = "\\documentclass{article}\n\\begin{document}\nHello.\n\\end{document}\n"
    for arxiv, number, other in ((f"{ARXIV}v1", V1, V2), (ARXIV, V2, V1)):
        main = tmp_path / arxiv / "main.tex"
        main.parent.mkdir()
        main.write_text(paper, "utf-8")
        got = pith(
            "latex", "inject", str(main), "--pith", arxiv,
            "--registry", server.url, "--trust-local-registry",
        )  # fmt: skip
        assert got.returncode == 0, (arxiv, got.stderr)
        written = main.read_text("utf-8")
        assert number in written, arxiv
        assert other not in written, arxiv
    main = tmp_path / "v3" / "main.tex"
    main.parent.mkdir()
    main.write_text(paper, "utf-8")
    refused = pith(
        "latex", "inject", str(main), "--pith", f"{ARXIV}v3",
        "--registry", server.url, "--trust-local-registry",
    )  # fmt: skip
    assert refused.returncode == 1, refused.stderr
    assert main.read_text("utf-8") == paper  # nothing written
    assert "not to v3" in refused.stderr.splitlines()[-1]
    assert "Traceback" not in refused.stderr


def test_a_citation_between_two_versions_of_one_paper_is_refused(
    server: RegistryServer, pith: RunPith, monkeypatch: pytest.MonkeyPatch
) -> None:
    from pithauthor.keys.author import generate

    use_fast_kdf(monkeypatch)
    monkeypatch.setenv("PITH_PASSPHRASE", "versions test passphrase")
    generate("ex", backend="file", public_name="Example Author", note=lambda _: None)
    common = ["--registry", server.url, "--trust-local-registry", "--json", "--yes"]
    # the citing paper by arXiv id, by versioned id, and by full number (its record fetched)
    for citing, cited in ((ARXIV, f"{ARXIV}v1"), (f"{ARXIV}v1", ARXIV), (V2, f"{ARXIV}v1")):
        refused = pith("cite", "--from", citing, "--to", cited, *common)
        assert refused.returncode != 0, (citing, cited, refused.stdout)
        assert refused.stdout == ""
        assert refused.stderr.splitlines()[-1].endswith("a paper cannot cite itself"), citing
    other = pith("cite", "--from", ARXIV, "--to", "2101.99902", *common)  # another paper: fine
    assert other.returncode == 0, other.stderr
    assert json.loads(other.stdout.splitlines()[-1])["payload"]["citing_pith_number"] == V2


def test_a_bibliography_entry_naming_another_version_of_the_citing_paper_is_skipped(
    server: RegistryServer, pith: RunPith, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    from pithauthor.keys.author import generate

    use_fast_kdf(monkeypatch)
    monkeypatch.setenv("PITH_PASSPHRASE", "versions test passphrase")
    generate("ex", backend="file", public_name="Example Author", note=lambda _: None)
    bib = tmp_path / "refs.bib"
    bib.write_text(
        "@article{mine, title={Mine}, year={2021}, eprint={2101.99901v2}}\n"
        "@article{theirs, title={Theirs}, year={2021}, eprint={2101.99902}}\n",
        "utf-8",
    )
    got = pith(
        "cite", str(bib), "--from", f"{ARXIV}v1", "--registry", server.url,
        "--trust-local-registry", "--json", "--yes",
    )  # fmt: skip
    assert got.returncode == 0, got.stderr
    report = json.loads(got.stdout)
    status = {row["key"]: row["status"] for row in report["rows"]}
    assert status == {"mine": "skipped", "theirs": "signed"}, report
    assert report["events"] == 1
