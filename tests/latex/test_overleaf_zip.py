"""Overleaf in, Overleaf out: a project's source zip, as Overleaf's "Download → Source"
gives it, goes through `pith latex inject` (badged, written back as a zip ready to upload) and
`pith latex arxiv` (packed and proven), and `pith latex sty --zip` hands over every file pith.sty
needs in one upload. Every zip is unpacked under one set of rules (pithauthor/latex/archives.py,
shared with the arXiv proof build): a `../` name, a link, a bomb or too many files is refused in
one line, and nothing is written outside, nor left half-unpacked."""

from __future__ import annotations

import io
import json
import stat
import tarfile
import time
import zipfile
from pathlib import Path

import pytest
from support.cli import RunPith, assert_one_line_error
from support.latex.arxiv import NUMBER, unpack

from pithauthor.latex.sty import SHIPPED, latex_file

TEX = pytest.mark.tex("latexmk", "pdflatex")
FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
FIGURE = FIXTURES / "manuscripts" / "acmart-sigconf" / "figures" / "sample-franklin.png"
MAIN = r"""\documentclass{article}
\usepackage{graphicx}
\title{A Paper Written on Overleaf}\author{Ada Author}
\begin{document}
\maketitle
\input{sections/introduction}
\begin{figure}[h]\centering
\includegraphics[width=3cm]{figures/franklin.png}
\caption{A figure in its own folder.}
\end{figure}
\end{document}
"""
INTRODUCTION = "\\section{Introduction}\nWritten in a subfolder, as Overleaf projects are.\n"


def _overleaf_zip(path: Path, main: str = MAIN) -> Path:
    """A project zip of the shape Overleaf's download has (files at the top, nested folders, a
    binary figure), plus the `__MACOSX/` folder a Mac adds when the author zips it again."""
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as out:
        out.writestr("main.tex", main)
        out.writestr("sections/introduction.tex", INTRODUCTION)
        out.write(FIGURE, "figures/franklin.png")
        out.writestr("__MACOSX/._main.tex", b"\x00\x05\x16\x07 resource fork")
        out.writestr("__MACOSX/sections/._introduction.tex", b"\x00\x05\x16\x07")
    return path


def _names(archive: Path) -> list[str]:
    with zipfile.ZipFile(archive) as handle:
        return sorted(handle.namelist())


def test_inject_takes_an_overleaf_zip_and_writes_the_badged_project_back_as_a_zip(
    tmp_path: Path, pith: RunPith
) -> None:
    source = _overleaf_zip(tmp_path / "My Paper.zip")
    back = tmp_path / "badged.zip"
    result = pith(
        "latex", "inject", str(source), "--pith", NUMBER, "--offline", "--zip-out", str(back)
    )
    assert result.returncode == 0, result.stderr
    folder = tmp_path / "My Paper"  # unpacked beside the zip, as named
    assert f"unpacked into {folder}" in result.stderr
    assert result.stdout.strip() == str(back)
    assert "next: upload it to Overleaf" in result.stderr
    # the zip holds the project, badged, with every file pith.sty needs; the figure byte for
    # byte; no __MACOSX, no backup of the main file
    names = _names(back)
    project = ["figures/franklin.png", "main.tex", "sections/introduction.tex"]
    assert names == sorted([*project, *SHIPPED])
    with zipfile.ZipFile(back) as handle:
        main = handle.read("main.tex").decode()
        assert f"\\pithnumber{{{NUMBER}}}" in main and "\\usepackage{pith}" in main
        assert handle.read("figures/franklin.png") == FIGURE.read_bytes()
        for name in SHIPPED:
            assert handle.read(name) == latex_file(name).read_bytes(), name
        assert all(stat.S_IMODE(info.external_attr >> 16) == 0o644 for info in handle.infolist())
    assert not (folder / "__MACOSX").exists()
    assert (folder / "main.tex.pith-backup").is_file()  # the folder keeps the backup


@TEX
def test_arxiv_takes_the_badged_zip_and_proves_the_upload(tmp_path: Path, pith: RunPith) -> None:
    # the round trip an Overleaf author makes: download, badge, upload; later download again
    # and pack for arXiv (the zip `inject --zip-out` wrote stands for Overleaf's second download)
    source = _overleaf_zip(tmp_path / "paper.zip")
    badged = tmp_path / "paper-badged.zip"
    done = pith(
        "latex", "inject", str(source), "--pith", NUMBER, "--offline", "--zip-out", str(badged)
    )
    assert done.returncode == 0, done.stderr
    archive = tmp_path / "upload.tar.gz"
    result = pith("latex", "arxiv", str(badged), "-o", str(archive), "--json")
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout)
    assert report["number"] == NUMBER and report["pages"] == 1
    assert report["unpacked"] == str(tmp_path / "paper-badged")
    members = unpack(archive, tmp_path / "check")
    assert {"main.tex", "sections/introduction.tex", "figures/franklin.png"} <= set(members)
    assert not any(name.startswith("__MACOSX") for name in members)


@TEX
def test_arxiv_refuses_a_zip_without_the_badge_before_any_build_and_leaves_no_folder(
    tmp_path: Path, pith: RunPith
) -> None:
    source = _overleaf_zip(tmp_path / "paper.zip")
    result = pith("latex", "arxiv", str(source), "-o", str(tmp_path / "a.tar.gz"))
    assert_one_line_error(result, 2)
    assert "main.tex sets no Pith Number" in result.stderr
    assert "building" not in result.stderr  # refused before the build, not after it
    assert sorted(p.name for p in tmp_path.iterdir()) == ["paper.zip"]


def test_arxiv_refuses_a_read_only_output_folder_before_unpacking_or_building(
    tmp_path: Path, pith: RunPith
) -> None:
    source = _overleaf_zip(
        tmp_path / "paper.zip", MAIN.replace("\\title", f"\\pithnumber{{{NUMBER}}}\\title")
    )
    out = tmp_path / "out"
    out.mkdir()
    out.chmod(0o500)
    try:
        result = pith("latex", "arxiv", str(source), "-o", str(out / "a.tar.gz"))
    finally:
        out.chmod(0o700)
    assert_one_line_error(result, 74)  # an output failure (sysexits' EX_IOERR), not bad input
    assert f"{out} is not writable" in result.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out", "paper.zip"]


def test_sty_zip_holds_every_file_the_package_needs(tmp_path: Path, pith: RunPith) -> None:
    target = tmp_path / "pith-files.zip"
    result = pith("latex", "sty", "--zip", str(target))
    assert result.returncode == 0, result.stderr
    assert _names(target) == sorted(SHIPPED)
    with zipfile.ZipFile(target) as handle:
        for name in SHIPPED:
            assert handle.read(name) == latex_file(name).read_bytes(), name


# --- hostile archives: one line, nothing written outside, nothing left behind ---------------


def _zip_with(path: Path, entries: list[tuple[zipfile.ZipInfo | str, bytes]]) -> Path:
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as out:
        out.writestr("main.tex", MAIN)
        for info, payload in entries:
            out.writestr(info, payload)
    return path


def _link(name: str, target: str) -> tuple[zipfile.ZipInfo, bytes]:
    info = zipfile.ZipInfo(name)
    info.create_system = 3  # Unix: the mode bits below are read
    info.external_attr = (stat.S_IFLNK | 0o777) << 16
    return info, target.encode()


HOSTILE = {
    "parent": ([("../escaped.tex", b"x")], "climbs out of the folder with .."),
    "deep-parent": ([("sections/../../escaped.tex", b"x")], "climbs out of the folder with .."),
    "absolute": ([("/tmp/escaped.tex", b"x")], "(an absolute path)"),
    "symlink": ([_link("sections/key", "/etc/passwd")], "'sections/key' is not a plain file"),
    "bomb": ([("figures/big.eps", b"\0" * (64 * 1024 * 1024))], "a zip bomb"),
    "too-many": ([(f"f/{i}.tex", b"") for i in range(5001)], "more than 5000 files"),
}


@pytest.mark.parametrize("case", sorted(HOSTILE))
@pytest.mark.parametrize("command", ["inject", "arxiv"])
def test_a_hostile_zip_is_refused_in_one_line_and_nothing_is_written(
    tmp_path: Path, pith: RunPith, case: str, command: str
) -> None:
    entries, reason = HOSTILE[case]
    work = tmp_path / "work"
    work.mkdir()
    source = _zip_with(work / "paper.zip", entries)
    args = (
        ["--pith", NUMBER, "--offline"] if command == "inject" else ["-o", str(work / "a.tar.gz")]
    )
    result = pith("latex", command, str(source), *args)
    assert_one_line_error(result, 2)
    assert reason in result.stderr and "nothing was unpacked" in result.stderr
    # nothing beside the zip (no folder, no temporary one), nothing above it
    assert sorted(p.name for p in work.iterdir()) == ["paper.zip"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["work"]
    assert not Path("/tmp/escaped.tex").exists()


def test_a_member_that_writes_more_than_it_declares_is_stopped(tmp_path: Path) -> None:
    # a tar's declared size is what is read: a zip member's size can lie, and is counted
    from pithauthor.errors import ManuscriptError
    from pithauthor.latex.archives import unpack as unpack_archive

    source = tmp_path / "paper.zip"
    _zip_with(source, [("notes.tex", b"a" * 1000)])
    data = bytearray(source.read_bytes())
    # the central directory's uncompressed size of notes.tex: 1000 -> 10 (the data is 1000)
    central = data.rindex(b"PK\x01\x02")
    data[central + 24 : central + 28] = (10).to_bytes(4, "little")
    source.write_bytes(bytes(data))
    with pytest.raises(ManuscriptError, match="nothing was unpacked"):
        unpack_archive(source, tmp_path / "out")
    assert not (tmp_path / "out").exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["paper.zip"]


def test_the_arxiv_tarball_is_read_under_the_same_rules(tmp_path: Path) -> None:
    # the proof build unpacks its own tarball with `archives.unpack`: a link there is refused
    from pithauthor.errors import ManuscriptError
    from pithauthor.latex.archives import unpack as unpack_archive

    source = tmp_path / "upload.tar.gz"
    with tarfile.open(source, "w:gz") as tar:
        info = tarfile.TarInfo("main.tex")
        info.size = 3
        tar.addfile(info, io.BytesIO(b"abc"))
        link = tarfile.TarInfo("sty.sty")
        link.type = tarfile.SYMTYPE
        link.linkname = "/etc/passwd"
        tar.addfile(link)
    with pytest.raises(
        ManuscriptError, match=r"'sty\.sty' is not a plain file inside it \(a symbolic link\)"
    ):
        unpack_archive(source, tmp_path / "out")
    assert not (tmp_path / "out").exists()


def test_an_existing_folder_is_never_unpacked_over(tmp_path: Path, pith: RunPith) -> None:
    source = _overleaf_zip(tmp_path / "paper.zip")
    (tmp_path / "paper").mkdir()
    (tmp_path / "paper" / "main.tex").write_text("mine")
    result = pith("latex", "inject", str(source), "--pith", NUMBER, "--offline")
    assert_one_line_error(result, 2)
    assert "give that folder instead of the archive" in result.stderr
    assert (tmp_path / "paper" / "main.tex").read_text() == "mine"


def test_a_link_to_a_file_outside_the_project_is_left_out_of_the_zip_and_named(
    tmp_path: Path, pith: RunPith
) -> None:
    # a zip is uploaded: a file from elsewhere on this machine must not travel in it
    secret = tmp_path / "secret.txt"
    secret.write_text("not for Overleaf")
    folder = tmp_path / "paper"
    folder.mkdir()
    (folder / "main.tex").write_text(MAIN.replace("\\input{sections/introduction}\n", ""))
    (folder / "notes.txt").symlink_to(secret)
    (folder / "figures").mkdir()
    (folder / "figures" / "franklin.png").write_bytes(FIGURE.read_bytes())
    (folder / "same.png").symlink_to(folder / "figures" / "franklin.png")  # inside: packed
    back = tmp_path / "badged.zip"
    result = pith(
        "latex", "inject", str(folder), "--pith", NUMBER, "--offline", "--zip-out", str(back)
    )
    assert result.returncode == 0, result.stderr
    assert "notes.txt is a link to a file outside the project: left out" in result.stderr
    names = _names(back)
    assert "notes.txt" not in names and "same.png" in names
    with zipfile.ZipFile(back) as handle:
        assert b"not for Overleaf" not in b"".join(handle.read(n) for n in names)


def test_a_zip_with_several_main_files_stays_unpacked_for_the_author_to_name_one(
    tmp_path: Path, pith: RunPith
) -> None:
    # Overleaf keeps the main document in its settings, not in the zip: a project with a
    # supplement of its own is unpacked and kept, and the error names the files to choose from
    source = _overleaf_zip(tmp_path / "paper.zip")
    with zipfile.ZipFile(source, "a") as out:
        out.writestr("supplement.tex", MAIN.replace("Overleaf", "Overleaf: the supplement"))
    result = pith("latex", "inject", str(source), "--pith", NUMBER, "--offline")
    assert_one_line_error(result, 2)
    assert "several main-file candidates (main.tex, supplement.tex)" in result.stderr
    assert f"paper.zip stays unpacked in {tmp_path / 'paper'}" in result.stderr
    named = pith(
        "latex", "inject", str(tmp_path / "paper" / "main.tex"), "--pith", NUMBER, "--offline"
    )
    assert named.returncode == 0, named.stderr


def test_an_encrypted_zip_member_is_one_line(tmp_path: Path, pith: RunPith) -> None:
    source = _overleaf_zip(tmp_path / "paper.zip")
    data = bytearray(source.read_bytes())
    # set the "encrypted" flag (bit 0) of every entry, local and central: zipfile then asks
    # for a password it does not have
    for signature, offset in ((b"PK\x03\x04", 6), (b"PK\x01\x02", 8)):
        at = data.find(signature)
        while at != -1:
            data[at + offset] |= 1
            at = data.find(signature, at + 4)
    source.write_bytes(bytes(data))
    result = pith("latex", "inject", str(source), "--pith", NUMBER, "--offline")
    assert_one_line_error(result, 2)
    assert "cannot be read" in result.stderr and "nothing was unpacked" in result.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["paper.zip"]


def test_a_tar_bomb_is_refused_while_it_is_listed(tmp_path: Path) -> None:
    # a .tar.gz is listed by decompressing it: a member declaring 600 MiB is refused at its
    # header, before a byte of it is read (here there is none: the bytes would be a bomb)
    import gzip

    from pithauthor.errors import ManuscriptError
    from pithauthor.latex.archives import unpack as unpack_archive

    header = tarfile.TarInfo("figures/huge.eps")
    header.size = 600 * 1024 * 1024
    source = tmp_path / "paper.tar.gz"
    source.write_bytes(gzip.compress(header.tobuf(format=tarfile.PAX_FORMAT)))
    started = time.monotonic()
    with pytest.raises(ManuscriptError, match="more than 512 MiB; nothing was unpacked"):
        unpack_archive(source, tmp_path / "out")
    assert time.monotonic() - started < 5
    assert sorted(p.name for p in tmp_path.iterdir()) == ["paper.tar.gz"]
