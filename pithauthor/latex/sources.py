r"""A manuscript's sources: text files read to be written back byte for byte, the main file and
its engine (its head alone decoded and parsed, when that suffices), the files its preamble reads,
and the sources copied into a private folder.
"""

from __future__ import annotations

import codecs
import os
import re
import shutil
import stat
from dataclasses import dataclass
from pathlib import Path

from pithauthor.errors import ManuscriptError, OutputError
from pithauthor.fs import MAX_TEX_BYTES, read_user_file
from pithauthor.latex.preamble import (
    BEGIN_DOCUMENT,
    InputUse,
    Load,
    Preamble,
    has_live_begin_document,
    locate,
    locate_fragment,
)

# A text file read so that it can be written back byte for byte: encoding, BOM, newlines kept.
#
# Which file is the main one, and which engine it asks for (`% !TEX root` / `% !TEX program`).
#
# Copy a manuscript's *sources* into a private folder: never its build products (a stale
# `.aux`, `.fls` or `.fdb_latexmk` would make latexmk skip the build or pack an old file list),
# symlinks followed into real files, and for each copied file where it really came from.

_BOM = b"\xef\xbb\xbf"


@dataclass(frozen=True, slots=True)
class TextFile:
    """The decoded text of a file and what is needed to encode it back identically."""

    path: Path
    raw: bytes
    text: str
    encoding: str  # "utf-8" or "latin-1"
    bom: bool
    newline: str  # "\n" or "\r\n": the file's line ending (that of its first line)
    # where in `raw` `text` ends: None when it is the whole file, else `text` is the file's head
    # (`read_preamble`) and the bytes from `end` on are written back untouched (`pieces`)
    end: int | None = None

    def encode(self, text: str) -> bytes:
        """`text` in the file's own encoding (and BOM)."""
        try:
            body = text.encode(self.encoding)
        except UnicodeEncodeError as exc:
            raise ManuscriptError(
                f"{self.path}: the new text cannot be written in {self.encoding}: {exc.reason}"
            ) from None
        return (_BOM + body) if self.bom else body

    def pieces(self, text: str) -> list[bytes | memoryview]:
        """The bytes of the file whose `text` (the head, when `end` is set) is now `text`: the
        rest is a view of `raw`, never copied (the body of a 50,000-line paper was copied three
        times)."""
        head = self.encode(text)
        return [head] if self.end is None else [head, memoryview(self.raw)[self.end :]]


def _newline(text: str) -> str:
    first = text.find("\n")
    return "\r\n" if first > 0 and text[first - 1] == "\r" else "\n"


def read_text_file(path: Path) -> TextFile:
    """Read `path`; refuse binary files; UTF-8 (with or without BOM) else Latin-1."""
    raw = read_user_file(path, ManuscriptError, "a LaTeX file", limit=MAX_TEX_BYTES)
    bom = raw.startswith(_BOM)
    body = raw[len(_BOM) :] if bom else raw
    try:
        text, encoding = body.decode("utf-8"), "utf-8"
    except UnicodeDecodeError:
        if bom:
            raise ManuscriptError(f"{path} starts with a UTF-8 BOM but is not UTF-8") from None
        text, encoding = body.decode("latin-1"), "latin-1"
    return TextFile(path, raw, text, encoding, bom, _newline(text))


# `read_preamble`: a manuscript's head decoded and parsed, its body kept as bytes

_CHUNK = 1 << 18  # UTF-8 is checked this many bytes at a time


_BEGIN_BYTES = re.compile(rb"\\begin\s*\{document\}")


_DIFF_LINES = 4  # `inject`'s diff shows the lines up to this many after `\begin{document}`


def _is_utf8(body: memoryview) -> bool:
    """Whether `body` is UTF-8, decoded a chunk at a time: no copy of the whole file is made."""
    decoder = codecs.getincrementaldecoder("utf-8")()
    try:
        for at in range(0, len(body), _CHUNK):
            decoder.decode(body[at : at + _CHUNK])
        decoder.decode(b"", final=True)
    except UnicodeDecodeError:
        return False
    return True


def _head_end(raw: bytes, start: int) -> int | None:
    """Where the head to decode ends: after the line `_DIFF_LINES` lines past the first
    `\\begin{document}` in the bytes, and after `_MAGIC_LINES` lines at least; None when the
    file ends first. A newline byte always ends a character in UTF-8 and Latin-1."""
    found = _BEGIN_BYTES.search(raw, start)
    if found is None:
        return None
    ends = []
    for at, lines in ((found.start(), _DIFF_LINES), (start, _MAGIC_LINES)):
        for _ in range(lines):
            at = raw.find(b"\n", at) + 1
            if at == 0:
                return None
        ends.append(at)
    return max(ends)


def _head_suffices(text: str, pre: Preamble) -> bool:
    """Whether `locate` on the head `text` found what it finds on the whole text: its first
    `\\begin{document}` is the live one, and nothing before it needs the rest (`\\iffalse`:
    `\\newif` switches and verbatim blocks are looked for in the whole text). And whether the
    head holds what `engine_of` and `inject`'s diff read."""
    first = BEGIN_DOCUMENT.search(text)
    return (
        first is not None
        and pre.begin_document == first.start()
        and "\\iffalse" not in text[: first.end()]
        and text.count("\n") >= _MAGIC_LINES
        and text.count("\n", pre.begin_document) >= _DIFF_LINES
    )


def read_preamble(path: Path, *, whole: bool = False) -> tuple[TextFile, Preamble]:
    """`read_text_file` and `locate` in one, decoding only the head of the file: its text up
    to a few lines past the live `\\begin{document}` (`TextFile.end`), when `_head_suffices`
    proves that the whole text gives the same preamble; else (or with `whole`) all of it. The
    encoding is still that of the whole file, and every check of `read_text_file` is made."""
    raw = read_user_file(path, ManuscriptError, "a LaTeX file", limit=MAX_TEX_BYTES)
    bom = raw.startswith(_BOM)
    start = len(_BOM) if bom else 0
    if raw.isascii() or _is_utf8(memoryview(raw)[start:]):
        encoding = "utf-8"
    elif bom:
        raise ManuscriptError(f"{path} starts with a UTF-8 BOM but is not UTF-8")
    else:
        encoding = "latin-1"
    end = None if whole else _head_end(raw, start)
    if end is not None:
        head = raw[start:end].decode(encoding)
        try:
            pre: Preamble | None = locate(head, path.name)
        except ManuscriptError:
            pre = None  # said again below, from the whole text, as it always was
        if pre is not None and _head_suffices(head, pre):
            return TextFile(path, raw, head, encoding, bom, _newline(head), end), pre
    text = raw[start:].decode(encoding)
    return TextFile(path, raw, text, encoding, bom, _newline(text)), locate(text, path.name)


def link_outside(name: str, origin: Path, folder: Path) -> str | None:
    """The one rule for links in a manuscript, `pith latex arxiv`'s and `inject`'s alike: why
    the file `name` of the paper, really at `origin` (links resolved), may not be used, when
    it lies outside the paper's `folder`; else None. arXiv gets the folder only, and a write
    through such a link would change (and back up) a file outside it."""
    if origin.is_relative_to(folder.resolve()):
        return None
    return (
        f"{name} is a link to {origin}, outside the paper's folder: arXiv will not have it; "
        "copy the file itself into the folder"
    )


def write_target(path: Path, *, outside: bool = False) -> Path:
    """The file to write in place of `path`: `path` itself, or, when it is a symbolic link, the
    regular file it ends at, so that the link is kept (an atomic rename over the link would
    replace it with a copy). A dangling or looping link is refused, and so is one that leads
    out of the paper's folder (`path`'s; `link_outside`) unless `outside` says to follow it
    (`pith latex inject --follow-links`)."""
    if not path.is_symlink():
        return path
    try:
        target = path.resolve(strict=True)
    except (OSError, RuntimeError) as exc:  # RuntimeError: a loop, before Python 3.13
        reason = getattr(exc, "strerror", None) or str(exc)
        raise ManuscriptError(f"{path} is a symbolic link that leads nowhere ({reason})") from None
    if not target.is_file():
        raise ManuscriptError(f"{path} is a symbolic link to {target}, which is not a regular file")
    problem = link_outside(path.name, target, path.parent)
    if problem is not None and not outside:
        raise ManuscriptError(f"{problem}; nothing was written (--follow-links writes through it)")
    return target


def ensure_writable(path: Path) -> None:
    """Refuse a read-only file (by its mode bits, so that root is refused too) or folder."""
    try:
        mode = path.stat().st_mode
    except OSError as exc:
        raise ManuscriptError(f"{path}: cannot stat ({exc.strerror})") from None
    if not mode & stat.S_IWUSR or not os.access(path, os.W_OK):
        raise ManuscriptError(f"{path} is read-only; make it writable to add the badge")
    ensure_writable_folder(path.parent, f"cannot replace {path.name} safely")


def ensure_writable_folder(folder: Path, why: str = "nothing was written") -> None:
    """Refuse a read-only folder (by its mode bits too, so that root is refused as well): an
    output failure (OutputError, exit 74), not bad input: the same command succeeds once the
    folder is writable."""
    try:
        mode = folder.stat().st_mode
    except OSError as exc:
        raise ManuscriptError(f"{folder}: cannot stat ({exc.strerror})") from None
    if not mode & stat.S_IWUSR or not os.access(folder, os.W_OK | os.X_OK):
        raise OutputError(f"{folder} is not writable; {why}")


def backup_path(path: Path) -> Path:
    """`NAME.pith-backup`, or `NAME.pith-backup.N` with the first free N: never overwritten."""
    candidate = path.with_name(path.name + ".pith-backup")
    number = 1
    while candidate.exists():
        candidate = path.with_name(f"{path.name}.pith-backup.{number}")
        number += 1
    return candidate


_MAGIC_LINES = 20  # editors read magic comments from the first lines only

_ROOT = re.compile(r"^\s*%\s*!\s*TEX\s+root\s*=\s*(.+?)\s*$", re.IGNORECASE | re.MULTILINE)

_PROGRAM = re.compile(
    r"^\s*%\s*!\s*TEX\s+(?:TS-)?program\s*=\s*([A-Za-z]+)\s*$", re.IGNORECASE | re.MULTILINE
)

_DOCUMENTCLASS = re.compile(r"\\document(?:class|style)\b")

_STANDALONE = re.compile(
    r"^[^%\n]*\\documentclass\s*(?:\[[^\]]*\]\s*)?\{standalone\}", re.MULTILINE
)

ENGINES = ("pdflatex", "xelatex", "lualatex", "latex")


def _head(text: str) -> str:
    """The first lines of `text`, where editors look for magic comments."""
    end = 0
    for _ in range(_MAGIC_LINES):
        end = text.find("\n", end) + 1
        if end == 0:
            return text
    return text[:end]


def _read_head(path: Path) -> str:
    """The first few KB of a file, decoded leniently (for magic comments only)."""
    # only the head is read: the whole file is read (and checked) once, by whoever parses it
    data = read_user_file(path, ManuscriptError, "a LaTeX file", limit=MAX_TEX_BYTES, head=8192)
    return data.decode("utf-8", errors="replace")


def magic_root(path: Path, text: str) -> Path | None:
    """The file named by a `% !TEX root = ...` comment, relative to `path`'s folder."""
    match = _ROOT.search(_head(text))
    if match is None:
        return None
    target = (path.parent / match.group(1)).resolve()
    if target == path.resolve():
        return None
    return target


def engine_of(text: str) -> str:
    """The engine asked for by `% !TEX program = ...` (pdflatex when none or unknown)."""
    match = _PROGRAM.search(_head(text))
    if match is None:
        return "pdflatex"
    name = match.group(1).lower()
    if name not in ENGINES:
        raise ManuscriptError(
            f"% !TEX program = {match.group(1)} is not one of {', '.join(ENGINES)}"
        )
    return name


def _is_main(path: Path) -> bool:
    try:
        text = read_text_file(path).text
    except ManuscriptError:
        return False
    return bool(_DOCUMENTCLASS.search(text)) and has_live_begin_document(text)


def _why_not_main(files: list[Path]) -> str:
    """What the preamble reader found in the first file with a `\\documentclass` ('' if none)."""
    for path in files:
        try:
            text = read_text_file(path).text
            if _DOCUMENTCLASS.search(text):
                locate(text, path.name)
        except ManuscriptError as exc:
            return f"; {exc}"
    return ""


def _is_standalone(path: Path) -> bool:
    """Whether `path` is a `standalone`-class document: a figure built on its own."""
    return bool(_STANDALONE.search(read_text_file(path).text))


def find_main_file(target: Path) -> Path:
    """The main file of `target` (a .tex file, or a folder searched at its top level)."""
    if not target.exists():
        raise ManuscriptError(f"{target}: no such file or folder")
    if target.is_file():
        root = magic_root(target, _read_head(target))
        if root is not None:
            if not root.is_file():
                raise ManuscriptError(f"{target}: % !TEX root names {root}, which does not exist")
            return root
        return target
    files = sorted(p for p in target.iterdir() if p.suffix == ".tex" and p.is_file())
    if not files:
        raise ManuscriptError(f"{target}: no .tex file in this folder")
    named: set[Path] = set()
    pointing: set[Path] = set()
    for path in files:
        try:
            root = magic_root(path, _read_head(path))
        except ManuscriptError:
            continue
        if root is not None:
            named.add(root)
            pointing.add(path.resolve())
    candidates = [p for p in files if p.resolve() not in pointing and _is_main(p)]
    preferred = [p for p in candidates if p.resolve() in named]
    if len(preferred) == 1:
        return preferred[0]
    papers = [p for p in candidates if not _is_standalone(p)]
    if len(papers) == 1:  # the others are figures (or pieces) built alone: not the paper
        return papers[0]
    if not candidates:
        raise ManuscriptError(
            f"{target}: no main file (one with \\documentclass and \\begin{{document}})"
            + _why_not_main([p for p in files if p.resolve() not in pointing])
        )
    if len(candidates) > 1:
        names = ", ".join(p.name for p in candidates)
        raise ManuscriptError(
            f"{target}: several main-file candidates ({names}); name one, e.g. "
            f"'pith latex inject {candidates[0]}', or add '% !TEX root = ...'"
        )
    return candidates[0]


# What TeX and its helpers write next to the sources (arXiv removes these too). The .bbl is
# kept only when the folder holds no .bib: then it is a source (an Overleaf or arXiv download).
BUILD_PRODUCTS = frozenset(
    {
        ".aux",
        ".fls",
        ".fdb_latexmk",
        ".log",
        ".out",
        ".toc",
        ".lof",
        ".lot",
        ".loa",
        ".lol",
        ".bcf",
        ".blg",
        ".nav",
        ".snm",
        ".vrb",
        ".idx",
        ".ilg",
        ".glo",
        ".glg",
        ".ist",
        ".brf",
        ".thm",
        ".dvi",
        ".xdv",
        ".synctex",
        ".auxlock",
        ".fmt",
        ".run.xml",
        ".synctex.gz",
        ".synctex(busy)",
        ".pdfsync",
        ".figlist",
        ".makefile",
        ".upa",
        ".upb",
        ".mw",
    }
)

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
    origins: dict[str, Path] = {}
    for relative, real in source_files(folder, main):
        target = destination / relative
        target.parent.mkdir(parents=True, exist_ok=True)
        try:
            shutil.copyfile(real, target)
        except OSError as exc:
            raise ManuscriptError(f"{relative}: cannot be copied ({exc.strerror})") from None
        origins[relative] = real
    return origins


def source_files(folder: Path, main: Path) -> list[tuple[str, Path]]:
    """The sources of `folder` as (relative name, real file): its files without build products,
    backups, version control or caches (what `copy_sources` copies and a project zip holds).
    Symlinks are followed; one that cannot be resolved is left out."""
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
        # checked while walking: a home folder given by mistake is refused before it is read
        if len(files) > 20000:
            raise ManuscriptError(f"{folder}: more than 20000 files; is this the paper's folder?")
    main_stem = main.with_suffix("").name
    return [(rel, real) for rel, real in files if not _is_product(rel, main_stem, has_bib)]


# What the files a preamble reads hold (`\input{preamble}`, Overleaf style, and the files those
# read in turn): a `\pithnumber`, or the `\usepackage{pith}` the main file must not repeat.

_MAX_DEPTH = 8  # \input chains deeper than this are not followed (nor are loops)


@dataclass(frozen=True, slots=True)
class InputFacts:
    """The first `\\pithnumber` and `\\usepackage{pith}` found along the preamble's inputs."""

    number: tuple[Path, str] | None = None  # the file, and the number it gives
    package: Path | None = None  # the file that loads pith
    via: InputUse | None = None  # the main file's `\input` that leads to that load
    loads: tuple[Load, ...] = ()  # every package those files load (a venue's review mode)
    commands: frozenset[str] = frozenset()  # their live top-level macros (\iclrfinalcopy)


def preamble_inputs(inputs: list[InputUse], folder: Path) -> InputFacts:
    """Follow the main file's `inputs` (and theirs, depth first, inside `folder`), parsed as
    TeX reads them: comments and disabled blocks do not count."""
    number: tuple[Path, str] | None = None
    package: tuple[Path, InputUse] | None = None
    seen: set[Path] = set()
    loads: list[Load] = []
    commands: set[str] = set()

    def walk(uses: list[InputUse], depth: int, top: InputUse | None) -> None:
        nonlocal number, package
        for use in uses:
            path = _resolve(folder, use.name)
            if path is None or path in seen or depth > _MAX_DEPTH:
                continue
            seen.add(path)
            try:
                found = locate_fragment(read_text_file(path).text, path.name)
            except ManuscriptError:
                continue
            if number is None and found.pith_numbers:
                number = (path, found.pith_numbers[0].text.strip())
            if package is None and found.pith_package is not None:
                package = (path, top or use)
            loads.extend(found.loads)
            commands.update(found.commands)
            walk(found.inputs, depth + 1, top or use)

    walk(inputs, 1, None)
    return InputFacts(
        number=number,
        package=package[0] if package else None,
        via=package[1] if package else None,
        loads=tuple(loads),
        commands=frozenset(commands),
    )


def _resolve(folder: Path, name: str) -> Path | None:
    """The file `\\input{name}` reads (as TeX: the name, else with .tex), inside `folder`."""
    name = name.strip().strip('"')
    if not name:
        return None
    for candidate in (folder / name, folder / f"{name}.tex"):
        if not candidate.is_file():
            continue
        # inside the paper's folder only (links resolved): `\input{../../.ssh/x}` is not
        # read, and is refused as `pith latex arxiv` refuses it: arXiv would not have it
        real = candidate.resolve()
        if real.is_relative_to(folder.resolve()):
            return real
        if candidate.is_symlink():
            problem = link_outside(f"\\input{{{name}}}", real, folder)
        else:
            problem = (
                f"\\input{{{name}}} reads {real}, outside the paper's folder: arXiv will not "
                "have it; copy the file into the folder and name it by a relative path"
            )
        raise ManuscriptError(f"{problem}; nothing was written")
    return None
