"""Copy a manuscript's *sources* into a private folder: never its build products (a stale
`.aux`, `.fls` or `.fdb_latexmk` would make latexmk skip the build or pack an old file list),
symlinks followed into real files, and for each copied file where it really came from."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

from pithauthor.errors import ManuscriptError

# What TeX and its helpers write next to the sources (arXiv removes these too). The .bbl is
# kept only when the folder holds no .bib: then it is a source (an Overleaf or arXiv download).
BUILD_PRODUCTS = frozenset(
    {
        ".aux", ".fls", ".fdb_latexmk", ".log", ".out", ".toc", ".lof", ".lot", ".loa", ".lol",
        ".bcf", ".blg", ".nav", ".snm", ".vrb", ".idx", ".ilg", ".glo", ".glg", ".ist", ".brf",
        ".thm", ".dvi", ".xdv", ".synctex", ".auxlock", ".fmt", ".run.xml", ".synctex.gz",
        ".synctex(busy)", ".pdfsync", ".figlist", ".makefile", ".upa", ".upb", ".mw",
    }
)  # fmt: skip
_SKIP_DIRS = frozenset({".git", ".hg", ".svn", "__pycache__", "__MACOSX", ".latexmk"})


def _suffix(name: str) -> str:
    for double in (".run.xml", ".synctex.gz", ".synctex(busy)"):
        if name.endswith(double):
            return double
    return os.path.splitext(name)[1].lower()


def _is_product(relative: str, main_stem: str, has_bib: bool) -> bool:
    name = relative.rsplit("/", 1)[-1]
    suffix = _suffix(name)
    if suffix in BUILD_PRODUCTS or name.endswith("-blx.bib") or ".pith-backup" in name:
        return True
    if suffix == ".bbl":
        return has_bib
    # the paper's own output (a PDF named like another .tex may be a figure: kept)
    return relative in (f"{main_stem}.pdf", f"{main_stem}.ps") or name.startswith(".#")


def copy_sources(folder: Path, destination: Path, main: Path) -> dict[str, Path]:
    """Copy the sources of `folder` to `destination`; return {relative name: real origin}.

    Symlinks are followed (the copy holds real files); a link that cannot be resolved is left
    out. Whether an origin lies outside `folder` is judged later, for the files the build read.
    """
    folder = folder.resolve()
    files: list[tuple[str, Path]] = []
    has_bib = False
    seen = {folder}
    for root, dirs, names in os.walk(folder, followlinks=True):
        here = Path(root)
        kept = []
        for d in sorted(dirs):
            real_dir = (here / d).resolve()
            if d in _SKIP_DIRS or d.startswith("_minted") or real_dir in seen:
                continue  # version control, caches, and links that loop back
            seen.add(real_dir)
            kept.append(d)
        dirs[:] = kept
        for name in sorted(names):
            path = here / name
            relative = path.relative_to(folder).as_posix()
            try:
                real = path.resolve(strict=True)
            except (OSError, RuntimeError):
                continue  # a dangling or looping link
            if not real.is_file():
                continue
            has_bib = has_bib or name.endswith(".bib")
            files.append((relative, real))
        if len(files) > 20000:
            raise ManuscriptError(f"{folder}: more than 20000 files; is this the paper's folder?")
    origins: dict[str, Path] = {}
    main_stem = main.with_suffix("").name
    for relative, real in files:
        if _is_product(relative, main_stem, has_bib):
            continue
        target = destination / relative
        target.parent.mkdir(parents=True, exist_ok=True)
        try:
            shutil.copyfile(real, target)
        except OSError as exc:
            raise ManuscriptError(f"{relative}: cannot be copied ({exc.strerror})") from None
        origins[relative] = real
    return origins
