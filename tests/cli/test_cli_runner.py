"""The in-process `pith` fixture answers as the real process does, and leaves nothing behind:
environment, working directory, standard streams and the keyring backend choice."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest
from support.cli import RunPith
from support.keys import subprocess_env
from support.paths import REPO

RECORD = REPO / "tests" / "fixtures" / "record-2302.12445v2.json"
RAW = REPO / "tests" / "fixtures" / "arxivraw-2302.12445.xml"

# Data on stdout, a usage error, a missing file, bad input on stdin, a key-less command.
SAMPLES = [
    (["number", "from-arxiv", str(RAW), "--next-version"], None),
    (["verify", str(RECORD), "--json"], None),
    (["claim", "--no-such-option"], None),
    (["verify", "/nonexistent/record.json"], None),
    (["verify", "-"], '{"a": 1, "a": 2}'),
    (["keys", "list", "--json"], None),
    (["keys", "delete", "nobody"], "y\n"),
]


@pytest.mark.parametrize(("args", "stdin"), SAMPLES, ids=[" ".join(a[:2]) for a, _ in SAMPLES])
def test_in_process_run_gives_the_same_code_stdout_and_stderr_as_the_real_process(
    pith: RunPith, pith_process: RunPith, args: list[str], stdin: str | None
) -> None:
    inside = pith(*args, input=stdin)
    real = pith_process(*args, input=stdin)
    assert (inside.returncode, inside.stdout, inside.stderr) == (
        real.returncode,
        real.stdout,
        real.stderr,
    )


def test_in_process_run_restores_environment_directory_and_streams(
    pith: RunPith, tmp_path: Path
) -> None:
    before = (dict(os.environ), os.getcwd(), sys.stdin, sys.stdout, sys.stderr, list(sys.path))
    result = pith(
        "verify", "missing.json", env={"PITH_DEBUG": "1", "PYTHONPATH": "/x"}, cwd=tmp_path
    )
    assert result.returncode == 2 and "Traceback" in result.stderr  # PITH_DEBUG was seen
    assert str(tmp_path / "missing.json") in result.stderr or "missing.json" in result.stderr
    after = (dict(os.environ), os.getcwd(), sys.stdin, sys.stdout, sys.stderr, list(sys.path))
    assert after == before


def test_keyring_backend_chosen_in_one_run_is_not_reused_by_the_next(
    pith: RunPith, tmp_path: Path
) -> None:
    ring = tmp_path / "ring.json"
    env = subprocess_env(
        PYTHON_KEYRING_BACKEND="pith_test_keyrings.FileKeyring",
        PITH_TEST_KEYRING_FILE=str(ring),
        PITH_TEST_FAST_KDF="1",
    )
    with_ring = pith("doctor", "--offline", "--json", env=env)
    assert "FileKeyring" in with_ring.stdout, with_ring.stderr
    without = pith("doctor", "--offline", "--json", env={"PITH_TEST_FAST_KDF": "1"})
    assert "FileKeyring" not in without.stdout and "fail.Keyring" in without.stdout


def test_httpx_clients_in_tests_read_a_one_certificate_ca_bundle_from_the_environment() -> None:
    """What keeps an in-process run cheap without patching httpx: SSL_CERT_FILE (conftest's
    `one_ca_bundle`) names one CA, and httpx's own context builder (what every Client with
    trust_env calls) reads it; certifi's bundle, the default, holds about 150."""
    import httpx

    assert os.environ["SSL_CERT_FILE"].endswith("one-ca.pem")
    assert len(httpx.create_ssl_context().get_ca_certs()) == 1
    assert len(httpx.create_ssl_context(trust_env=False).get_ca_certs()) > 100
