"""The one reader of user files (`pithauthor.fs`): what it refuses, and how little it reads."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from support.cli import run_in_process
from support.paths import FIXTURES

from pithauthor.errors import DocumentError, InputError
from pithauthor.fs import check_output_file, read_user_file, read_user_json
from pithauthor.registry.local.answers import KEY_FILE


def test_a_file_of_exactly_the_limit_is_read_and_one_byte_more_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "f.txt"
    path.write_bytes(b"x" * 10)
    assert read_user_file(path, InputError, "a test file", limit=10) == b"x" * 10
    path.write_bytes(b"x" * 11)
    with pytest.raises(InputError, match="larger than 10 bytes, the limit for a test file"):
        read_user_file(path, InputError, "a test file", limit=10)


def test_a_file_whose_size_is_not_known_in_advance_is_cut_at_the_limit() -> None:
    """/proc files say size 0; the reader still stops at limit + 1 bytes and refuses."""
    proc = Path("/proc/self/status")
    if not proc.exists():
        pytest.skip("no /proc")
    with pytest.raises(InputError, match="larger than 16 bytes"):
        read_user_file(proc, InputError, "a test file", limit=16)


def test_fifo_device_and_folder_are_refused_before_reading(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "fifo")  # no writer: reading it would block for ever
    for path, kind in [(tmp_path / "fifo", "FIFO"), ("/dev/zero", "device"), (tmp_path, "folder")]:
        with pytest.raises(InputError, match=kind):
            read_user_file(path, InputError, "JSON", limit=1 << 20)


def test_strict_json_faults_name_the_file(tmp_path: Path) -> None:
    path = tmp_path / "dup.json"
    path.write_bytes(b'{"a": 1, "a": 2}')
    with pytest.raises(DocumentError, match=r"dup\.json is not valid JSON: duplicate key"):
        read_user_json(path, DocumentError, "JSON", limit=1 << 20)


def test_output_paths_that_cannot_take_a_file_are_refused(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "fifo")
    for path in [tmp_path / "fifo", Path("/dev/null"), tmp_path, tmp_path / "no" / "x.jsonl"]:
        with pytest.raises(InputError):
            check_output_file(path, InputError, "a file")
    check_output_file(tmp_path / "new.jsonl", InputError, "a file")  # a new file is fine


@pytest.mark.parametrize(
    "content", [b"", b"\xff\xfe", b"[]", b"null", b'{"seed_hex": "zz", "created_at": "x"}']
)
def test_a_corrupt_registry_key_file_is_exit_2_with_one_line(
    tmp_path: Path, content: bytes
) -> None:
    data = tmp_path / "registry"
    data.mkdir(mode=0o700)
    (data / KEY_FILE).write_bytes(content)
    (data / KEY_FILE).chmod(0o600)
    xml = str(FIXTURES / "arxivraw-2302.12445.xml")
    outcome = run_in_process(["registry", "add", xml, "--data", str(data)])
    assert outcome.returncode == 2, outcome
    lines = outcome.stderr.strip().splitlines()
    assert len(lines) == 1 and KEY_FILE in lines[0], outcome.stderr
