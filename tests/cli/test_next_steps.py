"""Refusals with an obvious next step name it at the end of the one error line,
`pith: error: …; next: …` (errors.PithError.hint). The common mistakes of an author, each run
as a real command; the bad-input matrix (tests/security/test_bad_input_matrix.py) requires the
same of every malformed paper reference it feeds."""

from __future__ import annotations

import base64
import json
from pathlib import Path

import pytest
from support.cli import RunPith, assert_one_line_error, next_step, use_fast_kdf
from support.paths import FIXTURES

PASSPHRASE = "next step passphrase"
NUMBER = "pith:2023:NFG5PAOXQUVIWDX5F7YSYYL7EW"
RECORD = str(FIXTURES / "record-2302.12445v2.json")
DEAD = "http://127.0.0.1:9"  # nothing listens


@pytest.fixture
def ada(pith: RunPith, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    """Key "ada" in this test's PITH_HOME; returns a file holding its passphrase."""
    use_fast_kdf(monkeypatch)
    made = pith(
        "keys", "generate", "--name", "ada", "--public-name", "Chengjian Liu",
        env={"PITH_PASSPHRASE": PASSPHRASE},
    )  # fmt: skip
    assert made.returncode == 0, made.stderr
    path = tmp_path / "passphrase.txt"
    path.write_text(PASSPHRASE + "\n", "utf-8")
    path.chmod(0o600)
    return path


def _refused(result: object, code: int, step: str) -> None:
    assert_one_line_error(result, code)  # type: ignore[arg-type]
    got = next_step(result.stderr)  # type: ignore[attr-defined]
    assert got is not None and step in got, result.stderr  # type: ignore[attr-defined]


@pytest.mark.parametrize(
    ("ref", "step"),
    [
        ("pith:2023:NFG5PAOX", "pith number from-arxiv"),
        ("pith:2023:NFG5PAOX!UVIWDX5F7YSYYL7EW", "26 letters and digits"),
        ("2313.12345", "2302.12445"),
        ("hep-th/99", "hep-th/9901001"),
    ],
)
def test_a_malformed_paper_reference_names_its_form(pith: RunPith, ref: str, step: str) -> None:
    _refused(pith("number", "parse", ref), 2, step)


def test_a_registry_that_does_not_answer_points_to_doctor(pith: RunPith) -> None:
    result = pith("fetch", "2302.12445", "--registry", DEAD, "--retries", "1", "--timeout", "1")
    _refused(result, 3, "pith doctor")


def test_a_wrong_passphrase_names_where_the_passphrase_comes_from(
    pith: RunPith, ada: Path, tmp_path: Path
) -> None:
    wrong = tmp_path / "wrong.txt"
    wrong.write_text("not the passphrase\n", "utf-8")
    wrong.chmod(0o600)
    result = pith("claim", NUMBER, "--record", RECORD, "--passphrase-file", str(wrong))
    _refused(result, 4, "PITH_PASSPHRASE")


def test_a_retired_key_points_to_the_key_that_replaced_it(
    pith: RunPith, ada: Path, tmp_path: Path
) -> None:
    old = json.loads(pith("keys", "show", "ada", "--json").stdout)["key_id"]
    rotated = pith("keys", "rotate", "ada", "--passphrase-file", str(ada))
    assert rotated.returncode == 0, rotated.stderr
    result = pith("claim", NUMBER, "--record", RECORD, "--key", old, "--passphrase-file", str(ada))
    _refused(result, 4, "pith keys list")


def test_a_damaged_key_file_points_to_the_backup(
    pith: RunPith, ada: Path, isolated_home: Path
) -> None:
    (key_file,) = (isolated_home / "keys").glob("*.key")
    doc = json.loads(key_file.read_text("utf-8"))
    sealed = base64.b64decode(doc["cipher"]["ciphertext_b64"])
    doc["cipher"]["ciphertext_b64"] = base64.b64encode(bytes(b ^ 1 for b in sealed)).decode()
    key_file.write_text(json.dumps(doc), "utf-8")
    result = pith("keys", "show", "ada", "--check", "--passphrase-file", str(ada))
    _refused(result, 4, "pith keys import")


def test_withdrawing_an_event_the_outbox_does_not_hold_points_to_the_list(
    pith: RunPith, ada: Path
) -> None:
    result = pith(
        "withdraw", "sha256:" + "0" * 64, "--registry", DEAD, "--passphrase-file", str(ada)
    )
    _refused(result, 2, "pith outbox list")


def test_a_refusal_without_an_obvious_next_step_names_none(pith: RunPith, tmp_path: Path) -> None:
    """A missing file: only the author knows where it went, and no line pretends otherwise."""
    result = pith("verify", str(tmp_path / "nope.json"))
    assert_one_line_error(result, 2)
    assert next_step(result.stderr) is None
