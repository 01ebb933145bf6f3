"""Refusals with an obvious next step name it at the end of the one error line,
`pith: error: …; next: …` (errors.PithError.hint). The common mistakes of an author, each run
as a real command; the bad-input matrix (tests/security/test_bad_input_matrix.py) requires the
same of every malformed paper reference it feeds."""

from __future__ import annotations

import base64
import json
import shlex
from pathlib import Path

import pytest
from support.cli import RunPith, StartRegistry, assert_one_line_error, next_step, use_fast_kdf
from support.paths import FIXTURES
from support.registry import manifest_file

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


# --- every `next:` line a command prints works as printed ---------------------------------------


def _next_commands(stderr: str) -> list[list[str]]:
    """The commands of the `next: `CMD` …` lines in `stderr`, split as a POSIX shell would."""
    found = []
    for line in stderr.splitlines():
        if line.startswith("next: `"):
            command = line.removeprefix("next: `").split("`", 1)[0]
            words = shlex.split(command)
            assert words[0] == "pith", line
            found.append(words[1:])
    return found


@pytest.mark.parametrize(
    ("how", "extra"),
    [
        ("trust the local registry", ()),
        ("a manifest", ("manifest",)),
        ("an events file", ("out",)),
        ("a replication", ("replicate",)),
    ],
)
def test_each_next_line_after_signing_runs_as_printed(
    pith: RunPith,
    ada: Path,
    local_registry: StartRegistry,
    tmp_path: Path,
    how: str,
    extra: tuple[str, ...],
) -> None:
    """Signed against a local registry (its key trusted by --trust-local-registry or by its
    manifest), into the outbox or a file: the `next:` line names the `pith submit` that sends
    it, with the registry and the trust it needs; run as printed, it publishes the event."""
    server = local_registry(tmp_path / "registry")
    if "manifest" in extra:
        manifest = manifest_file(server.url, tmp_path / "registry", tmp_path / "m.json")
        trust: tuple[str, ...] = ("--trust-manifest", str(manifest))
    else:
        trust = ("--trust-local-registry",)
    flags = ("--registry", server.url, *trust, "--passphrase-file", str(ada))
    if "replicate" in extra:
        args: tuple[str, ...] = ("replicate", "2302.12445", "--kind", "replication",
                                 "--outcome", "reproduced", "--summary", "Re-ran it",
                                 "--artifact", "https://example.org/r.txt",
                                 "--sha256", "ab" * 32)  # fmt: skip
    else:
        args = ("claim", "2302.12445")
    if "out" in extra:
        args += ("-o", str(tmp_path / "my events.jsonl"))  # a space: the line must quote it
    signed = pith(*args, *flags, cwd=tmp_path)
    assert signed.returncode == 0, signed.stderr
    commands = _next_commands(signed.stderr)
    assert len(commands) == 1, (how, signed.stderr)
    ran = pith(*commands[0], cwd=tmp_path)
    assert ran.returncode == 0, (how, commands[0], ran.stderr)
    assert "accepted 1," in ran.stdout, ran.stdout
    assert not _next_commands(ran.stderr)


def test_submit_without_the_trust_of_a_local_registry_names_the_flag(
    pith: RunPith, ada: Path, local_registry: StartRegistry
) -> None:
    server = local_registry()
    signed = pith("claim", "2302.12445", "--registry", server.url, "--trust-local-registry",
                  "--passphrase-file", str(ada))  # fmt: skip
    assert signed.returncode == 0, signed.stderr
    result = pith("submit", "--registry", server.url)
    assert result.returncode == 1, result.stderr
    step = next_step(result.stderr)  # its one error line ends with the flag to add
    assert step is not None and "--trust-local-registry" in step, result.stderr
