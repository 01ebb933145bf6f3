"""`fs.publishing`: a file is written and checked under a temporary name and replaces its
target only when the check passes."""

from __future__ import annotations

import stat
from pathlib import Path

import pytest

from pithauthor.fs import publishing


def test_the_target_changes_only_when_the_block_succeeds(tmp_path: Path) -> None:
    target = tmp_path / "upload.tar.gz"
    target.write_bytes(b"old")
    with publishing(target, mode=0o640) as tmp:
        assert tmp.parent == tmp_path and tmp != target
        tmp.write_bytes(b"new, checked")
        assert target.read_bytes() == b"old"  # nothing is published while it is checked
    assert target.read_bytes() == b"new, checked"
    assert stat.S_IMODE(target.stat().st_mode) == 0o640
    assert list(tmp_path.iterdir()) == [target]


def test_a_failed_check_keeps_the_old_file_and_leaves_no_temporary_file(tmp_path: Path) -> None:
    target = tmp_path / "upload.tar.gz"
    target.write_bytes(b"old")
    with pytest.raises(ValueError, match="proof failed"), publishing(target) as tmp:
        tmp.write_bytes(b"half-written")
        raise ValueError("proof failed")
    assert target.read_bytes() == b"old"
    assert list(tmp_path.iterdir()) == [target]


def test_a_new_file_appears_only_after_success(tmp_path: Path) -> None:
    target = tmp_path / "new.bin"
    with pytest.raises(KeyboardInterrupt), publishing(target) as tmp:
        tmp.write_bytes(b"x")
        raise KeyboardInterrupt
    assert list(tmp_path.iterdir()) == []
    with publishing(target) as tmp:
        tmp.write_bytes(b"x")
    assert target.read_bytes() == b"x" and stat.S_IMODE(target.stat().st_mode) == 0o600


def test_a_cache_answer_is_written_without_fsync_and_a_durable_file_with_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import os

    from pithauthor.bibliography.lookup import LookupCache
    from pithauthor.bibliography.matching import Candidate
    from pithauthor.fs import replace_file

    synced: list[int] = []
    real = os.fsync
    monkeypatch.setattr(os, "fsync", lambda fd: synced.append(fd) or real(fd))
    cache = LookupCache(tmp_path)
    paper = Candidate("2302.12445", "A title", ("A. Smith",), 2023, None)
    cache.put("https://export.arxiv.org/api/query", "ti:a title", (paper,), True)
    assert cache.get("https://export.arxiv.org/api/query", "ti:a title") == ((paper,), True)
    assert synced == []  # rebuildable: atomic, not durable
    replace_file(tmp_path / "key.json", b"{}")
    assert len(synced) == 2  # the file, then its folder


def test_replace_files_syncs_every_file_and_their_folder_once_then_renames(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import os

    from pithauthor.fs import replace_files

    synced: list[str] = []
    real = os.fsync
    monkeypatch.setattr(
        os, "fsync", lambda fd: synced.append(os.readlink(f"/proc/self/fd/{fd}")) or real(fd)
    )
    main = tmp_path / "main.tex"
    main.write_bytes(b"old paper")
    backup = tmp_path / "main.tex.pith-backup"
    replace_files(
        [
            (main, b"new paper", 0o640, backup),
            (tmp_path / "pith.sty", b"sty", 0o644, None),
            (tmp_path / "pith.def", "def", 0o644, None),
        ]
    )
    assert main.read_bytes() == b"new paper" and backup.read_bytes() == b"old paper"
    assert (tmp_path / "pith.sty").read_bytes() == b"sty"
    assert (tmp_path / "pith.def").read_bytes() == b"def"
    assert stat.S_IMODE(main.stat().st_mode) == 0o640
    assert stat.S_IMODE((tmp_path / "pith.sty").stat().st_mode) == 0o644
    # three temp files (synced before any rename, under their temp names) and the folder once
    assert len(synced) == 4 and synced.count(str(tmp_path)) == 1
    assert all(Path(name).name.startswith(".tmp-") for name in synced if name != str(tmp_path))
    assert sorted(p.name for p in tmp_path.iterdir()) == [
        "main.tex",
        "main.tex.pith-backup",
        "pith.def",
        "pith.sty",
    ]


def test_replace_files_renames_nothing_and_leaves_no_temp_when_one_write_fails(
    tmp_path: Path,
) -> None:
    from pithauthor.fs import replace_files

    main = tmp_path / "main.tex"
    main.write_bytes(b"old paper")
    missing = tmp_path / "no-such-folder" / "pith.sty"
    with pytest.raises(FileNotFoundError):
        replace_files([(main, b"new paper", 0o644, None), (missing, b"sty", 0o644, None)])
    assert main.read_bytes() == b"old paper"
    assert list(tmp_path.iterdir()) == [main]


def test_a_file_given_in_pieces_is_written_as_their_bytes_in_order(tmp_path: Path) -> None:
    """`inject` gives a manuscript as its new head and a view of its untouched body."""
    from pithauthor.fs import replace_file

    body = b"\\begin{document}\nbody\n"
    target = tmp_path / "main.tex"
    replace_file(target, [b"head\n", memoryview(b"xx" + body)[2:], b""], mode=0o644)
    assert target.read_bytes() == b"head\n" + body
    replace_file(target, [])
    assert target.read_bytes() == b""


def test_replacing_no_files_writes_nothing_and_raises_nothing(tmp_path: Path) -> None:
    """`pith latex inject` with nothing to change replaces an empty list (it raised IndexError
    once the writes learnt to name their file: README's `inject --check` on a badged paper)."""
    from pithauthor.fs import replace_files

    replace_files([])
    assert list(tmp_path.iterdir()) == []
