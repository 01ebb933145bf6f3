"""`--write-back`: eprint fields added to the entries a lookup resolved, and not one other byte
of the .bib changed; a backup kept; a second run changes nothing."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from support.arxiv_server import ArxivServer
from support.lookup_corpus import SCHOLAR
from support.lookup_corpus import SCHOLAR_PAPERS as PAPERS

from pithauthor.bibliography.arxiv_api import ArxivApi
from pithauthor.bibliography.lookup import lookup_identifiers, write_back, write_eprints
from pithauthor.bibliography.reading import read_bibliographies
from pithauthor.errors import BibliographyError


def _without(new: bytes, inserted: list[bytes]) -> bytes:
    for piece in inserted:
        assert new.count(piece) == 1, piece
        new = new.replace(piece, b"", 1)
    return new


def test_google_scholar_entries_get_eprints_in_their_own_layout(tmp_path: Path) -> None:
    bib = tmp_path / "refs.bib"
    bib.write_bytes(SCHOLAR.read_bytes())
    with ArxivServer(PAPERS) as server, ArxivApi(server.url) as api:
        result = lookup_identifiers(read_bibliographies([bib]), api)
    (done,) = write_back(result.reading)
    assert set(done.written) == {"vaswani2017attention", "devlin2019bert", "witten1998anti",
                                 "li2018deep", "maldacena1999large"}  # fmt: skip
    new = bib.read_bytes()
    assert b"  year={2017},\n  eprint={1706.03762},\n  archivePrefix={arXiv}\n}" in new
    inserted = [
        b",\n  eprint={1706.03762},\n  archivePrefix={arXiv}",
        b",\n  eprint={1810.04805},\n  archivePrefix={arXiv}",
        b",\n  eprint={hep-th/9802150},\n  archivePrefix={arXiv}",
        b",\n  eprint={1810.06339},\n  archivePrefix={arXiv}",
        b",\n  eprint={hep-th/9711200},\n  archivePrefix={arXiv}",
    ]
    assert _without(new, inserted) == SCHOLAR.read_bytes()
    assert done.backup is not None and done.backup.read_bytes() == SCHOLAR.read_bytes()
    # read again: the entries now carry their ids in eprint; nothing is left to look up or add
    again = read_bibliographies([bib])
    sources = {e.key: (str(e.identifier), e.identifier_source) for e in again.entries}
    assert sources["vaswani2017attention"] == ("1706.03762", "eprint")
    assert write_back(again) == []
    assert sorted(p.name for p in tmp_path.glob("refs.bib*")) == [
        "refs.bib",
        "refs.bib.pith-backup",
    ]


@pytest.mark.parametrize(
    ("entry", "expected"),
    [
        # BibTeX-style spaces and a trailing comma
        ("@article{k,\n    title = {T},\n    year = 2020,\n}\n",
         "@article{k,\n    title = {T},\n    year = 2020,\n    eprint = {2001.00001},\n"
         "    archivePrefix = {arXiv},\n}\n"),
        # one line, parentheses
        ("@misc(k, title={T}, year=2020)", "@misc(k, title={T}, year=2020, eprint={2001.00001}, "
         "archivePrefix={arXiv})"),
        # Windows line endings and tabs
        ("@article{k,\r\n\ttitle={T},\r\n\tyear={2020}\r\n}\r\n",
         "@article{k,\r\n\ttitle={T},\r\n\tyear={2020},\r\n\teprint={2001.00001},\r\n"
         "\tarchivePrefix={arXiv}\r\n}\r\n"),
    ],
)  # fmt: skip
def test_layouts_are_followed(tmp_path: Path, entry: str, expected: str) -> None:
    bib = tmp_path / "x.bib"
    bib.write_bytes(("% before\n" + entry + "% after\n").encode())
    done = write_eprints(bib, {"k": "2001.00001"})
    assert done.written == ("k",)
    assert bib.read_bytes() == ("% before\n" + expected + "% after\n").encode()


def test_latin1_file_keeps_its_bytes(tmp_path: Path) -> None:
    original = "@article{k,\n  title={Caf\xe9},\n  author={M\xfcller, J.},\n  year={2020}\n}\n"
    bib = tmp_path / "x.bib"
    bib.write_bytes(original.encode("latin-1"))
    write_eprints(bib, {"k": "2001.00001"})
    new = bib.read_bytes()
    inserted = b",\n  eprint={2001.00001},\n  archivePrefix={arXiv}"
    assert _without(new, [inserted]) == original.encode("latin-1")


def test_entries_with_an_eprint_or_not_in_the_file_are_left_alone(tmp_path: Path) -> None:
    text = "@article{hal,\n  eprint={hal-01234},\n  eprinttype={HAL}\n}\n"
    bib = tmp_path / "x.bib"
    bib.write_text(text, encoding="utf-8")
    done = write_eprints(bib, {"hal": "2001.00001", "ghost": "2001.00002"})
    assert done.written == () and done.backup is None
    assert dict(done.skipped) == {
        "hal": "it already has an eprint field",
        "ghost": "not found in the file",
    }
    assert bib.read_text(encoding="utf-8") == text


def test_a_symlink_is_followed_and_stays_a_link(tmp_path: Path) -> None:
    shared = tmp_path / "shared"
    shared.mkdir()
    real = shared / "all.bib"
    real.write_text("@article{k,\n  title={T},\n  year={2020}\n}\n", encoding="utf-8")
    link = tmp_path / "refs.bib"
    link.symlink_to(real)
    write_eprints(link, {"k": "2001.00001"})
    assert link.is_symlink()
    assert "eprint={2001.00001}" in real.read_text(encoding="utf-8")
    assert (shared / "all.bib.pith-backup").exists()


def test_a_read_only_file_is_refused_unchanged(tmp_path: Path) -> None:
    bib = tmp_path / "x.bib"
    text = "@article{k,\n  title={T},\n  year={2020}\n}\n"
    bib.write_text(text, encoding="utf-8")
    os.chmod(bib, 0o444)  # refused by its mode bits, also for root
    with pytest.raises(BibliographyError, match="read-only"):
        write_eprints(bib, {"k": "2001.00001"})
    assert bib.read_text(encoding="utf-8") == text
    assert not list(tmp_path.glob("*.pith-backup*"))


def test_an_entry_with_a_repeated_field_is_still_written(tmp_path: Path) -> None:
    text = "@article{k,\n  title={T},\n  title={T again},\n  year={2020}\n}\n"
    bib = tmp_path / "x.bib"
    bib.write_text(text, encoding="utf-8")
    assert write_eprints(bib, {"k": "2001.00001"}).written == ("k",)
    assert bib.read_text(encoding="utf-8") == text.replace(
        "{2020}", "{2020},\n  eprint={2001.00001},\n  archivePrefix={arXiv}"
    )
