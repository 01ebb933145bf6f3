"""`pith claim`, `pith cite`, `pith replicate`, signing with a real key store.

Each test that signs gets a real key in its own PITH_HOME (an encrypted key file with the
test-only cheap KDF, unlocked through PITH_PASSPHRASE). Input errors that must come before any key
is opened are run with no key at all: opening one would fail with exit 4, not the expected 2.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from support.cli import RunPith, assert_one_line_error, use_fast_kdf
from support.paths import FIXTURES
from support.signer import VECTOR_ORCID

from pithauthor._cli.main import main
from pithauthor.verify import read_documents, verify_file

# a command that asks the default (dead) registry first retries without the back-off waits
pytestmark = pytest.mark.usefixtures("no_backoff")

DEAR = "pith:2023:NFG5PAOXQUVIWDX5F7YSYYL7EW"  # arXiv 2302.12445
PIPELINE = "pith:2022:4O7LE3EHU3JQ243TWCKWFFFE3G"  # arXiv 2204.10562
DEAR_RECORD = str(FIXTURES / "record-2302.12445v2.json")
PIPELINE_STATE = str(FIXTURES / "state-2204.10562v1.json")
SHA = "0123456789abcdef" * 4


PASSPHRASE = "test passphrase for the events CLI"


class RealKeys:
    """A real key store in this test's PITH_HOME, holding one active key."""

    def __init__(self) -> None:
        from pithauthor.keys.author import generate

        self.record = generate(
            "carberry",
            orcid=VECTOR_ORCID,
            public_name="Chengjian Liu",  # author 2 of DEAR_RECORD's paper
            backend="file",
            note=lambda _: None,
        )


@pytest.fixture
def keys(monkeypatch: pytest.MonkeyPatch) -> RealKeys:
    use_fast_kdf(monkeypatch)
    monkeypatch.setenv("PITH_PASSPHRASE", PASSPHRASE)
    return RealKeys()


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    with pytest.raises(SystemExit) as exit_info:
        main(list(args))
    out, err = capsys.readouterr()
    return int(exit_info.value.code or 0), out, err


def test_claim_by_arxiv_id_writes_a_verifying_event(
    keys: RealKeys, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    out = tmp_path / "out.jsonl"
    code, stdout, stderr = run(
        capsys, "claim", "arXiv:2302.12445v2", "--record", DEAR_RECORD, "--position", "6",
        "--out", str(out),
    )  # fmt: skip
    assert code == 0, stderr
    assert stdout == ""
    assert "signed author_attestation sha256:" in stderr
    assert "pith:2023:NFG5PAOX…" in stderr and str(out) in stderr
    (event,) = read_documents(out)
    assert verify_file(out).ok
    assert event["subject_pith_number"] == DEAR
    assert event["payload"]["author"] == {
        "name": "Chengjian Liu",  # the public name, not the key label
        "orcid": VECTOR_ORCID,
        "position": 6,  # arXiv's order (the record's list, sorted by given name, has him 2nd)
    }


def test_claim_json_prints_jsonl_and_out_appends(
    keys: RealKeys, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    out = tmp_path / "events.jsonl"
    out.write_text('{"earlier": "line"}\n', "utf-8")  # appended to, never rewritten
    for _ in range(2):  # the second run reuses the claim the file holds: printed, not appended
        code, stdout, _ = run(
            capsys, "claim", DEAR, "--record", DEAR_RECORD, "--name", "C. Liu", "--json",
            "--out", str(out),
        )  # fmt: skip
        assert code == 0
    printed = json.loads(stdout)
    assert printed["payload"]["author"]["name"] == "C. Liu"
    lines = out.read_text("utf-8").splitlines()
    assert len(lines) == 2 and lines[0] == '{"earlier": "line"}'
    assert json.loads(lines[1]) == printed
    out.write_text(lines[1] + "\n", "utf-8")
    assert verify_file(out).ok


def test_out_file_without_final_newline_is_not_glued(
    keys: RealKeys, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    out = tmp_path / "events.jsonl"
    out.write_text('{"partial": true}', "utf-8")
    code, _, _ = run(capsys, "claim", DEAR, "--record", DEAR_RECORD, "--out", str(out))
    assert code == 0
    lines = out.read_text("utf-8").splitlines()
    assert lines[0] == '{"partial": true}'
    assert json.loads(lines[1])["event_type"] == "author_attestation"


def test_claim_signs_with_the_named_key_unlocked_by_the_passphrase_file(
    keys: RealKeys,
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from pithauthor.keys.author import generate
    from pithauthor.keys.passphrase import passphrase_source

    secret = tmp_path / "pass.txt"
    secret.write_text("correct horse\n", "utf-8")
    work = generate(
        "work",
        public_name="Chengjian Liu",
        backend="file",
        passphrase=passphrase_source(str(secret)),
        note=lambda _: None,
    )
    monkeypatch.delenv("PITH_PASSPHRASE")
    code, stdout, stderr = run(
        capsys, "claim", DEAR, "--record", DEAR_RECORD, "--key", "work",
        "--passphrase-file", str(secret), "--json",
    )  # fmt: skip
    assert code == 0, stderr
    event = json.loads(stdout)
    assert event["signer"]["key_id"] == work.key_id != keys.record.key_id
    assert event["payload"]["author"]["name"] == "Chengjian Liu"  # not the label "work"


def test_a_wrong_passphrase_file_fails_with_exit_4_and_writes_nothing(
    keys: RealKeys, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    secret = tmp_path / "wrong.txt"
    secret.write_text("not the passphrase\n", "utf-8")
    out = tmp_path / "out.jsonl"
    code, stdout, stderr = run(
        capsys, "claim", DEAR, "--record", DEAR_RECORD, "--passphrase-file", str(secret),
        "--out", str(out),
    )  # fmt: skip
    assert code == 4
    assert "wrong passphrase" in stderr
    assert stdout == "" and not out.exists()


def test_claim_with_another_orcid_than_the_keys_is_refused(
    keys: RealKeys, capsys: pytest.CaptureFixture[str]
) -> None:
    code, stdout, stderr = run(
        capsys, "claim", DEAR, "--record", DEAR_RECORD, "--orcid", "0000-0001-5109-3700", "--json"
    )
    assert code == 2
    assert stdout == ""
    assert "is not the key's ORCID iD" in stderr


def test_claim_takes_the_orcid_url_form_that_keys_generate_takes(
    keys: RealKeys, capsys: pytest.CaptureFixture[str]
) -> None:
    url = f"https://orcid.org/{VECTOR_ORCID}"
    code, stdout, stderr = run(
        capsys, "claim", DEAR, "--record", DEAR_RECORD, "--orcid", url, "--json"
    )
    assert code == 0, stderr
    assert json.loads(stdout)["payload"]["author"]["orcid"] == VECTOR_ORCID


def test_claim_with_a_retired_key_is_refused(
    keys: RealKeys, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    from pithauthor.keys.author import rotate

    retired, _new = rotate(backend="file", note=lambda _: None)
    out = tmp_path / "out.jsonl"
    code, _, stderr = run(
        capsys, "claim", DEAR, "--record", DEAR_RECORD, "--key", retired.key_id, "--out", str(out)
    )
    assert code == 4
    assert "retired" in stderr
    assert not out.exists()


def test_cite_signs_the_cited_paper_as_subject(
    keys: RealKeys, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    out = tmp_path / "cites.jsonl"
    code, _, stderr = run(
        capsys, "cite", "--from", DEAR, "--from-record", DEAR_RECORD, "--to", "2204.10562",
        "--record", PIPELINE_STATE,
        "--relationship", "uses_method", "--citation-key", "li2022", "--context", "We use it.",
        "--out", str(out),
    )  # fmt: skip
    assert code == 0, stderr
    (event,) = read_documents(out)
    assert verify_file(out).ok
    assert event["subject_pith_number"] == PIPELINE
    assert event["payload"]["citing_pith_number"] == DEAR
    assert event["payload"]["relationship"] == "uses_method"
    assert event["payload"]["citation_key"] == "li2022"


def test_cite_from_an_arxiv_id_uses_the_citing_record(
    keys: RealKeys, capsys: pytest.CaptureFixture[str]
) -> None:
    code, stdout, _ = run(
        capsys, "cite", "--from", "2302.12445", "--from-record", DEAR_RECORD,
        "--to", PIPELINE, "--record", PIPELINE_STATE, "--json",
    )  # fmt: skip
    assert code == 0
    event = json.loads(stdout)
    assert event["payload"]["citing_pith_number"] == DEAR
    assert event["payload"]["relationship"] == "cites"


def test_replicate_formal_bridge_with_artifacts(
    keys: RealKeys, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    out = tmp_path / "rep.jsonl"
    code, _, stderr = run(
        capsys, "replicate", PIPELINE, "--record", PIPELINE_STATE, "--kind", "formal_bridge",
        "--outcome", "formalized", "--proof-system", "lean4",
        "--artifact", "https://example.org/a.zip", "--sha256", SHA,
        "--artifact", "swh:1:dir:94a9ed024d3859793618152ea559a168bbcbb5e2", "--sha256", SHA.upper(),
        "--summary", "Lemma 2 in Lean 4.", "--out", str(out),
    )  # fmt: skip
    assert code == 0, stderr
    (event,) = read_documents(out)
    assert verify_file(out).ok
    assert event["payload"]["proof_system"] == "lean4"
    assert [a["uri"] for a in event["payload"]["artifacts"]] == [
        "https://example.org/a.zip",
        "swh:1:dir:94a9ed024d3859793618152ea559a168bbcbb5e2",
    ]
    assert {a["sha256"] for a in event["payload"]["artifacts"]} == {SHA}


def test_replicate_artifact_file_signs_the_sha256_of_its_bytes(
    keys: RealKeys, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    import hashlib

    log = tmp_path / "run.log"
    log.write_bytes(b"epoch 1: loss 0.31\n" * 100_000)  # 1.9 MB: read in chunks
    out = tmp_path / "rep.jsonl"
    code, _, stderr = run(
        capsys, "replicate", PIPELINE, "--record", PIPELINE_STATE, "--kind", "replication",
        "--outcome", "reproduced", "--summary", "Re-ran it.",
        "--artifact", "https://example.org/run.log", "--artifact-file", str(log), "--out", str(out),
    )  # fmt: skip
    assert code == 0, stderr
    (event,) = read_documents(out)
    assert verify_file(out).ok
    assert event["payload"]["artifacts"] == [
        {
            "uri": "https://example.org/run.log",
            "sha256": hashlib.sha256(log.read_bytes()).hexdigest(),
        }
    ]


@pytest.mark.parametrize(
    ("extra", "says"),
    [
        (["--artifact-file", "missing.log"], "missing.log: cannot read the artifact file"),
        (["--artifact-file", "."], ".: cannot read the artifact file"),
        (["--sha256", SHA, "--artifact-file", "x"], "not both kinds"),
        (["--artifact", "https://example.org/b", "--artifact-file", "x"], "2 --artifact but 1"),
    ],
)
def test_replicate_artifact_file_mistakes_are_one_line_before_any_key(
    pith: RunPith, tmp_path: Path, extra: list[str], says: str
) -> None:
    (tmp_path / "x").write_text("x")
    result = pith(
        "replicate", PIPELINE, "--record", PIPELINE_STATE, "--kind", "replication",
        "--outcome", "reproduced", "--summary", "s", "--artifact", "https://example.org/a",
        *extra, "--json", cwd=tmp_path,
    )  # fmt: skip
    assert_one_line_error(result, 2)
    assert says in result.stderr


def test_replicate_wrong_outcome_for_kind_names_the_field(
    keys: RealKeys, capsys: pytest.CaptureFixture[str]
) -> None:
    code, _, stderr = run(
        capsys, "replicate", PIPELINE, "--record", PIPELINE_STATE, "--kind", "replication",
        "--outcome", "formalized", "--summary", "s", "--json",
    )  # fmt: skip
    assert code == 2
    assert "payload.outcome must be one of" in stderr


# --- real subprocesses: input errors found before any key is needed -------------------------


def test_claim_record_of_another_paper_is_refused(pith: RunPith) -> None:
    result = pith("claim", PIPELINE, "--record", DEAR_RECORD, "--json")
    assert_one_line_error(result, 2)
    assert f"is the record of {DEAR}, not of {PIPELINE}" in result.stderr
    result = pith("claim", "2204.10562", "--record", DEAR_RECORD, "--json")
    assert_one_line_error(result, 2)
    assert "arXiv 2302.12445" in result.stderr


def test_claim_tampered_record_is_refused(pith: RunPith, tmp_path: Path) -> None:
    record = json.loads(Path(DEAR_RECORD).read_text("utf-8"))
    record["canonical_record"]["metadata"]["primary_cat"] = "cs.AI"
    path = tmp_path / "record.json"
    path.write_text(json.dumps(record), "utf-8")
    assert_one_line_error(pith("claim", DEAR, "--record", str(path), "--json"), 2)


def test_cite_with_a_missing_bibliography_file_exits_2(pith: RunPith) -> None:
    result = pith("cite", "refs.bib", "--from", DEAR)
    assert_one_line_error(result, 2)
    assert "refs.bib" in result.stderr


def test_cite_of_a_bibliography_with_nothing_to_sign_opens_no_key(
    pith: RunPith, tmp_path: Path
) -> None:
    # no key exists: had the command opened one for a plan with nothing pending, it would exit 4
    bib = tmp_path / "refs.bib"
    bib.write_text("@misc{lonely, title = {A paper with no identifier}}\n", "utf-8")
    result = pith("cite", str(bib), "--from", DEAR)
    assert result.returncode == 0, result.stderr
    assert f"0 citation(s) signed for {DEAR} (1 no_identifier)" in result.stderr


def test_cite_with_both_bibliography_and_to_is_refused(pith: RunPith) -> None:
    result = pith("cite", "refs.bib", "--from", DEAR, "--to", DEAR)
    assert_one_line_error(result, 2)
    assert "not both" in result.stderr


def test_cite_needs_to_and_a_known_relationship(pith: RunPith) -> None:
    assert "give --to" in pith("cite", "--from", DEAR).stderr
    result = pith("cite", "--from", DEAR, "--to", PIPELINE, "--relationship", "agrees")
    assert_one_line_error(result, 2)
    assert "uses_method" in result.stderr


def test_replicate_artifacts_need_one_sha256_each(pith: RunPith) -> None:
    result = pith(
        "replicate", PIPELINE, "--record", PIPELINE_STATE, "--kind", "replication",
        "--outcome", "reproduced", "--summary", "s", "--artifact", "https://x.org/a",
    )  # fmt: skip
    assert_one_line_error(result, 2)
    assert "--sha256" in result.stderr


def test_without_any_key_signing_fails_with_the_key_exit_code(pith: RunPith) -> None:
    result = pith("claim", DEAR, "--record", DEAR_RECORD, "--json")
    assert_one_line_error(result, 4)
    assert "pith keys generate" in result.stderr


def test_out_in_a_missing_folder_is_refused_before_the_key(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    # no key exists: had the command opened one first, it would exit 4, not 2
    out = tmp_path / "nowhere" / "out.jsonl"
    code, _, stderr = run(capsys, "claim", DEAR, "--record", DEAR_RECORD, "--out", str(out))
    assert code == 2
    assert "does not exist" in stderr
