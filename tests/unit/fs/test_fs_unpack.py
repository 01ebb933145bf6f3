"""`fs.unpack_plain_files`: the arXiv proof build's unpacking, safe on every Python 3.11 (no
`tarfile` filter before 3.11.4): regular files inside the folder, nothing else."""

from __future__ import annotations

import io
import os
import tarfile
from pathlib import Path

import pytest

from pithauthor.fs import unpack_plain_files


def _archive(path: Path, *members: tuple[tarfile.TarInfo, bytes]) -> Path:
    with tarfile.open(path, "w:gz") as tar:
        for info, data in members:
            info.size = len(data) if info.isreg() else 0
            tar.addfile(info, io.BytesIO(data) if info.isreg() else None)
    return path


def _file(name: str, mode: int = 0o644) -> tarfile.TarInfo:
    info = tarfile.TarInfo(name)
    info.mode = mode
    return info


def _special(name: str, kind: bytes, target: str = "") -> tarfile.TarInfo:
    info = tarfile.TarInfo(name)
    info.type = kind
    info.linkname = target
    return info


def test_regular_files_in_subfolders_are_unpacked_with_plain_modes(tmp_path: Path) -> None:
    archive = _archive(
        tmp_path / "a.tar.gz",
        (_file("main.tex", 0o4755), b"\\documentclass{article}"),  # setuid: dropped
        (_file("figs/plot.pdf"), b"%PDF-1.5"),
    )
    out = tmp_path / "out"
    out.mkdir()
    assert unpack_plain_files(archive, out) == ["main.tex", "figs/plot.pdf"]
    assert (out / "main.tex").read_bytes() == b"\\documentclass{article}"
    assert (out / "figs" / "plot.pdf").read_bytes() == b"%PDF-1.5"
    assert (out / "main.tex").stat().st_mode & 0o7000 == 0


@pytest.mark.parametrize(
    "member",
    [
        (_special("link.tex", tarfile.SYMTYPE, "/etc/passwd"), b""),
        (_special("hard.tex", tarfile.LNKTYPE, "main.tex"), b""),
        (_special("figs", tarfile.DIRTYPE), b""),
        (_special("null", tarfile.CHRTYPE), b""),
        (_special("pipe", tarfile.FIFOTYPE), b""),
        (_file("../escape.tex"), b"x"),
        (_file("figs/../../escape.tex"), b"x"),
        (_file("/tmp/absolute.tex"), b"x"),
    ],
    ids=["symlink", "hardlink", "folder", "device", "fifo", "dotdot", "inner-dotdot", "absolute"],
)
def test_anything_but_a_plain_file_inside_is_refused_naming_it(
    tmp_path: Path, member: tuple[tarfile.TarInfo, bytes]
) -> None:
    archive = _archive(tmp_path / "a.tar.gz", (_file("main.tex"), b"ok"), member)
    out = tmp_path / "deep" / "out"
    out.mkdir(parents=True)
    with pytest.raises(ValueError, match="not a plain file inside it") as caught:
        unpack_plain_files(archive, out)
    assert repr(member[0].name) in str(caught.value)
    # nothing at all: every member is checked before a byte is written (fs.unpack_archive)
    written = sorted(p.relative_to(tmp_path).as_posix() for p in tmp_path.rglob("*"))
    assert written == ["a.tar.gz", "deep", "deep/out"]


def test_a_link_already_in_the_folder_is_never_written_through(tmp_path: Path) -> None:
    outside = tmp_path / "outside.tex"
    outside.write_text("mine")
    out = tmp_path / "out"
    out.mkdir()
    os.symlink(outside, out / "main.tex")
    (tmp_path / "elsewhere").mkdir()
    os.symlink(tmp_path / "elsewhere", out / "figs")
    # a folder that holds anything is refused: the archive is unpacked beside it and takes
    # the place of an empty folder only, so nothing already there is ever written through
    with pytest.raises(ValueError, match="not an empty folder"):
        unpack_plain_files(_archive(tmp_path / "a.tar.gz", (_file("main.tex"), b"x")), out)
    with pytest.raises(ValueError, match="not an empty folder"):
        unpack_plain_files(_archive(tmp_path / "b.tar.gz", (_file("figs/p.pdf"), b"x")), out)
    assert outside.read_text() == "mine"
    assert list((tmp_path / "elsewhere").iterdir()) == []
