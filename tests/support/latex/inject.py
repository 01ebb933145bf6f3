"""Shared helpers for the `pith latex inject` tests (fixture copies, snapshots of a folder)."""

from __future__ import annotations

import shutil
from pathlib import Path

MANUSCRIPTS = Path(__file__).resolve().parents[2] / "fixtures" / "manuscripts"
NUMBER = "pith:2023:NFG5PAOXQUVIHWKP5TT6Y3LVRM"
OTHER = "pith:2024:ABCDEFGHIJKLMNOPQRSTUVWXYZ"
MAINS = {
    "amsart-amsrefs": "main.tex",
    "revtex4-ijqc": "xampl.tex",
    "llncs-biblatex": "biblatex-lncs-test.tex",
    "acmart-sigconf": "sigconf-paper.tex",
    "elsarticle-num": "els-paper.tex",
    "revtex4-2-aps": "aps-paper.tex",
}


def copy_manuscript(name: str, tmp_path: Path) -> Path:
    """A fresh copy of fixture manuscript `name` under `tmp_path`."""
    destination = tmp_path / name
    shutil.copytree(MANUSCRIPTS / name, destination)
    return destination


def snapshot(folder: Path) -> dict[str, tuple[bytes, int]]:
    """Every file's bytes and modification time (ns), by relative path."""
    return {
        p.relative_to(folder).as_posix(): (p.read_bytes(), p.stat().st_mtime_ns)
        for p in sorted(folder.rglob("*"))
        if p.is_file()
    }
