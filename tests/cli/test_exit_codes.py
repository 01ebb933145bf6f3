"""Exit codes that mean what they say: a bug in pith is exit 70 and says where to
report it, never 2 (bad input: the script's fault) or 1; an output that cannot be written (a
full disk, a read-only folder) is exit 74, OutputError, never 2 either."""

from __future__ import annotations

import errno
import os
import sqlite3
from pathlib import Path

import pytest
from support.cli import RunPith, assert_one_line_error

from pithauthor.errors import EXIT_BUG, EXIT_OUTPUT, REPORT_BUGS, OutputError

REPO = Path(__file__).resolve().parents[2]
METADATA = str(REPO / "tests" / "fixtures" / "arxivraw-2302.12445.xml")


def _raising(exc: BaseException) -> object:
    def fault(*args: object, **kwargs: object) -> object:
        raise exc

    return fault


@pytest.mark.parametrize(
    "exc", [ZeroDivisionError("boom"), ValueError("unmapped"), KeyError("x"), RecursionError()]
)
def test_a_bug_is_exit_70_naming_where_to_report_it(
    pith: RunPith, monkeypatch: pytest.MonkeyPatch, exc: Exception
) -> None:
    import pithauthor.protocol.record

    monkeypatch.setattr(pithauthor.protocol.record, "build_canonical_record", _raising(exc))
    result = pith("number", "from-arxiv", METADATA)
    assert_one_line_error(result, EXIT_BUG)
    assert EXIT_BUG == 70
    assert "bug in pith" in result.stderr
    assert REPORT_BUGS in result.stderr
    assert type(exc).__name__ in result.stderr


def test_the_same_input_without_the_fault_passes(pith: RunPith) -> None:
    """The fault above is what failed: the command itself is fine."""
    result = pith("number", "from-arxiv", METADATA)
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("pith:2023:")


def test_a_full_disk_under_a_write_is_exit_74_and_leaves_nothing(
    pith: RunPith, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """ENOSPC injected where the file system refuses it on a full disk: at the fsync that
    makes the written data durable (a file-system fault; /dev/full takes no new files)."""
    folder = tmp_path / "project"
    folder.mkdir()
    monkeypatch.setattr(os, "fsync", _raising(OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))))
    result = pith("latex", "sty", "--copy", str(folder))
    assert_one_line_error(result, EXIT_OUTPUT)
    assert EXIT_OUTPUT == 74
    assert "the disk is full" in result.stderr
    assert str(folder) in result.stderr
    assert list(folder.iterdir()) == []  # no half-written file, no temp file
    monkeypatch.undo()
    assert pith("latex", "sty", "--copy", str(folder)).returncode == 0  # with room: it works


def test_a_read_only_target_folder_is_exit_74(pith: RunPith, tmp_path: Path) -> None:
    """A real read-only folder (by its mode bits: refused for root too), before any write."""
    folder = tmp_path / "read-only"
    folder.mkdir()
    folder.chmod(0o555)
    try:
        result = pith("latex", "sty", "--copy", str(folder))
    finally:
        folder.chmod(0o755)
    assert_one_line_error(result, EXIT_OUTPUT)
    assert "not writable" in result.stderr
    assert list(folder.iterdir()) == []


@pytest.mark.parametrize("code", [errno.EROFS, errno.EACCES])
def test_a_write_the_file_system_refuses_is_output_error_naming_the_file(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, code: int
) -> None:
    """What a read-only mount (EROFS) or a folder root cannot write (EACCES) answers, at the
    open of the temp file; the library's own error, with the file named."""
    from pithauthor.fs import replace_file

    real_open = os.open

    def refusing(path: object, flags: int, *args: object) -> int:
        if flags & os.O_CREAT:
            raise OSError(code, os.strerror(code), str(path))
        return real_open(path, flags, *args)  # type: ignore[arg-type]

    monkeypatch.setattr(os, "open", refusing)
    with pytest.raises(OutputError, match=r"cannot write .*out\.txt: ") as caught:
        replace_file(tmp_path / "out.txt", b"x")
    assert caught.value.exit_code == EXIT_OUTPUT
    assert os.strerror(code) in str(caught.value)


@pytest.mark.parametrize(
    "exc",
    [
        OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), "paper.tar.gz"),
        OSError(errno.EROFS, os.strerror(errno.EROFS), "paper.tar.gz"),
    ],
    ids=["enospc", "erofs"],
)
def test_an_output_failure_raised_outside_fs_is_exit_74_too(
    pith: RunPith, monkeypatch: pytest.MonkeyPatch, exc: OSError
) -> None:
    """The catch site's safety net: an OSError of a full disk or read-only file system that
    no module turned into OutputError (e.g. a tar written in place) is still 74, not 2."""
    import pithauthor.protocol.record

    monkeypatch.setattr(pithauthor.protocol.record, "build_canonical_record", _raising(exc))
    result = pith("number", "from-arxiv", METADATA)
    assert_one_line_error(result, EXIT_OUTPUT)
    assert "cannot write paper.tar.gz" in result.stderr


def test_sqlite_refusing_to_write_is_exit_74_not_a_bug(
    pith: RunPith, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The outbox is an SQLite database: on a full disk SQLite says SQLITE_FULL."""
    import pithauthor.protocol.record

    full = sqlite3.OperationalError("database or disk is full")
    full.sqlite_errorcode = 13  # SQLITE_FULL, as sqlite3 sets it
    monkeypatch.setattr(pithauthor.protocol.record, "build_canonical_record", _raising(full))
    result = pith("number", "from-arxiv", METADATA)
    assert_one_line_error(result, EXIT_OUTPUT)
    assert "disk is full" in result.stderr


def test_an_unreadable_input_is_still_bad_input(pith: RunPith, tmp_path: Path) -> None:
    """Only writes moved: a file named to read that is not there stays exit 2."""
    result = pith("number", "from-arxiv", str(tmp_path / "missing.xml"))
    assert_one_line_error(result, 2)
