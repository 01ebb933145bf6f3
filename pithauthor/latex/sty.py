"""pith.sty and the badge outside the paper: the shipped pith.sty found, copied beside a paper or
installed where LaTeX finds it, and badge snippets (Markdown, HTML, SVG) for READMEs and pages.
"""

from __future__ import annotations

import re
import shutil
import subprocess
from dataclasses import dataclass
from html import escape
from importlib import resources
from pathlib import Path
from urllib.parse import quote

from pithauthor.errors import InputError, ManuscriptError, PithError
from pithauthor.fs import MAX_TEX_BYTES, read_user_file, replace_file
from pithauthor.latex.archives import ProjectZip, write_files_zip
from pithauthor.latex.sources import ensure_writable_folder
from pithauthor.protocol.ids import PithNumber

# Files shipped inside the package: the LaTeX package pith.sty, which the tool copies beside
# an author's paper so that it travels with the source (arXiv has no pith.sty of its own).
#
# `latex/pith.sty` in the repository is the one source; the wheel carries a real copy of it as
# `pithauthor/data/pith.sty` (pyproject's force-include), and a source checkout or an editable
# install reads `latex/` directly.
#
# Putting pith.sty where LaTeX finds it: its path, a copy into a folder, or TEXMFHOME.

_PROVIDES = re.compile(r"\\ProvidesPackage\{pith\}\s*\[(\d{4}/\d{2}/\d{2})\s+v(\S+)")

_CHECKOUT_LATEX = Path(__file__).resolve().parents[2] / "latex"


def latex_file(name: str) -> Path:
    """The path of a shipped LaTeX file (`pith.sty`, a `.def` file, `pith.sty.ltxml`),
    always a real file."""
    packaged = Path(str(resources.files("pithauthor") / "data" / name))
    for path in (packaged, _CHECKOUT_LATEX / name):
        if path.is_file():
            return path.resolve()
    raise PithError(f"the packaged {name} is missing: {packaged}")


def pith_sty_path() -> Path:
    """The path of the packaged pith.sty (a real file, never a link)."""
    return latex_file(STY_NAME)


def pith_ltxml_path() -> Path:
    """The packaged pith.sty.ltxml: the LaTeXML binding that arXiv's HTML view uses."""
    return latex_file(LTXML_NAME)


def pith_sty_version() -> str:
    """The version and date of the packaged pith.sty, as `1.0.0 (2026/11/29)`."""
    text = pith_sty_path().read_text(encoding="utf-8")
    match = _PROVIDES.search(text)
    if match is None:
        raise PithError("the packaged pith.sty has no \\ProvidesPackage{pith}[date vX.Y] line")
    return f"{match.group(2)} ({match.group(1)})"


@dataclass(frozen=True, slots=True)
class ShippedFile:
    """One LaTeX file the package ships (`MANIFEST`): its name, what it is, whether a build of
    a badged paper reads it, and the key that says what `inject` did with it (`pith latex
    inject --json`, `InjectResult`)."""

    name: str
    role: str
    built: bool
    action_key: str


#: Every LaTeX file the package ships, pith.sty first: the one list. What travels with a paper
#: (`copy_sty`, `inject`, the arXiv upload), what a build reads (`BUILD_FILES`), the CTAN bundle
#: (latex/build_ctan.py) and the names below are derived from it; pyproject.toml's force-include
#: (hatch reads no Python) is held equal to it by tests/test_packaging.py. A new file is a new row.
MANIFEST = (
    ShippedFile("pith.sty", "the package", True, "sty_action"),
    ShippedFile(
        "pith-compat.def",
        "its back-end code, read on LaTeX before 2022-06 or without hyperref or PDF management",
        True,
        "compat_action",
    ),
    ShippedFile(
        "pith-placement.def",
        "its placement code (the class title blocks, the margin), read for placement=title or "
        "margin",
        True,
        "placement_def_action",
    ),
    ShippedFile(
        "pith-authorkeys.def",
        "its \\pithauthorkey code, read at the first \\pithauthorkey",
        True,
        "authorkeys_def_action",
    ),
    ShippedFile(
        "pith.sty.ltxml", "its LaTeXML binding, for arXiv's HTML view", False, "ltxml_action"
    ),
)
SHIPPED = tuple(f.name for f in MANIFEST)
"""What travels with a paper, by name (pith.sty first; the others may be missing from a
version that does not ship them: `shipped_files`)."""
STY_NAME = SHIPPED[0]
# what a build of a badged paper reads besides the paper: pith.sty and its .def files
BUILD_FILES = tuple(f.name for f in MANIFEST if f.built)
# what follows pith.sty into the paper's folder (`inject`): every other shipped file
COMPANIONS = SHIPPED[1:]
# the LaTeXML binding: the arXiv upload packs it beside pith.sty, though no build reads it
LTXML_NAME = next(f.name for f in MANIFEST if f.action_key == "ltxml_action")


def pith_build_files(folder: Path | None = None) -> dict[str, bytes]:
    """Our pith.sty and .def files (BUILD_FILES), by name, as a build is given them; with
    `folder`, only those it lacks: a paper's own copies are what its build reads (`arxiv`)."""
    return {
        name: shipped_bytes(name)
        for name in BUILD_FILES
        if folder is None or not (folder / name).is_file()
    }


def shipped_bytes(name: str) -> bytes:
    """The bytes of a packaged LaTeX file: pith.sty, a .def file or pith.sty.ltxml (never
    a link: its content)."""
    return (pith_sty_path() if name == STY_NAME else latex_file(name)).read_bytes()


TEXMF_SUBFOLDER = Path("tex") / "latex" / "pith"


@dataclass(frozen=True, slots=True)
class StyCopy:
    """One shipped file put into a folder, and what was done: copied, replaced or unchanged."""

    path: Path
    action: str


def shipped_files() -> list[Path]:
    """The real paths of the shipped LaTeX files (pith.sty first)."""
    files = [latex_file(STY_NAME)]
    for name in SHIPPED[1:]:
        try:
            files.append(latex_file(name))
        except PithError:  # an optional file this version does not ship
            continue
    return files


def another_version(dest: Path, theirs: bytes) -> ManuscriptError:
    """The error for a `pith.sty` at `dest` that is not the packaged one: both versions named."""
    match = re.search(rb"\\ProvidesPackage\{pith\}\[([^\]]*)\]", theirs)
    version = match.group(1).decode("latin-1").strip() if match else "no version line"
    return ManuscriptError(
        f"{dest} is another version ({version}) than this pithauthor's "
        f"({pith_sty_version()}); use --force to replace it"
    )


def copy_sty(folder: Path, *, force: bool = False) -> list[StyCopy]:
    """Copy the shipped files into `folder` (which must exist); another version needs `force`."""
    if not folder.is_dir():
        raise ManuscriptError(f"{folder} is not a folder")
    plans: list[tuple[Path, bytes, str]] = []
    for source in shipped_files():
        ours = source.read_bytes()
        dest = folder / source.name
        if dest.is_symlink() or (dest.exists() and not dest.is_file()):
            raise ManuscriptError(f"{dest} is not a regular file; remove it first")
        if not dest.exists():
            plans.append((dest, ours, "copied"))
            continue
        theirs = read_user_file(dest, ManuscriptError, "a TeX file", limit=MAX_TEX_BYTES)
        if theirs == ours:
            plans.append((dest, ours, "unchanged"))
        elif not force and source.name == STY_NAME:
            raise another_version(dest, theirs)
        elif not force:
            raise ManuscriptError(f"{dest} is another version; use --force to replace it")
        else:
            plans.append((dest, ours, "replaced"))
    if any(action != "unchanged" for _, _, action in plans):
        ensure_writable_folder(folder)
    for dest, data, action in plans:
        if action != "unchanged":
            replace_file(dest, data, mode=0o644)
    return [StyCopy(dest, action) for dest, _, action in plans]


def zip_sty(output: Path) -> ProjectZip:
    """Every shipped file (`shipped_files`: pith.sty, its three .def files, its LaTeXML
    binding) as one zip at `output`: one upload into an Overleaf project instead of five."""
    return write_files_zip(Path(output), shipped_files())


def texmf_home() -> Path:
    """TEXMFHOME as kpathsea sees it (`kpsewhich -var-value TEXMFHOME`)."""
    if shutil.which("kpsewhich") is None:
        raise ManuscriptError(
            "kpsewhich is not installed (no TeX here?); use `pith latex sty --copy FOLDER`"
        )
    answer = subprocess.run(
        ["kpsewhich", "-var-value", "TEXMFHOME"],
        capture_output=True,
        text=True,
        timeout=30,
        check=False,
    )
    value = answer.stdout.strip()
    if answer.returncode != 0 or not value:
        raise ManuscriptError("kpsewhich does not name a TEXMFHOME; use --copy FOLDER instead")
    return Path(value).expanduser()


def install_sty(*, force: bool = False) -> list[StyCopy]:
    """Copy the shipped files into TEXMFHOME/tex/latex/pith, where every local project finds
    them (kpathsea searches TEXMFHOME on disk: no `mktexlsr` needed)."""
    folder = texmf_home() / TEXMF_SUBFOLDER
    existing = next(p for p in (folder, *folder.parents) if p.exists())
    if existing != folder:
        ensure_writable_folder(existing, f"cannot create {folder}")
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise ManuscriptError(f"{folder}: cannot be created ({exc.strerror})") from None
    return copy_sty(folder, force=force)


def found_by_tex() -> Path | None:
    """The pith.sty that `\\usepackage{pith}` loads outside any project (kpsewhich), if any."""
    if shutil.which("kpsewhich") is None:
        return None
    answer = subprocess.run(
        ["kpsewhich", "pith.sty"], capture_output=True, text=True, timeout=30, check=False
    )
    found = answer.stdout.strip()
    return Path(found) if answer.returncode == 0 and found else None


# Badge snippets for READMEs and web pages; the SVG is drawn here (no network).

FORMATS = ("markdown", "html", "svg", "latex")

_LABEL = "pith"

_CHAR_WIDTH = 7  # px per character at 11px Verdana-like text (close enough for 8 base32 chars)

_PAD = 6

# What a Markdown link destination may hold as is; everything else is percent-encoded, so that
# no quote, bracket, parenthesis, angle bracket, backslash or space can end or break the link.
_URL_SAFE = "/:?#&=%~+@,;!*$-._"

_MD_SPECIAL = re.compile(r"([\\`*_{}\[\]()<>#+!|-])")


def md_url(url: str) -> str:
    """`url` (a path or URL) safe inside a Markdown link `(...)` and an HTML attribute."""
    if any(not c.isprintable() for c in url):
        raise InputError("the image path or URL holds a line break or control character")
    if url.lower().lstrip().startswith(("javascript:", "data:", "vbscript:")):
        raise InputError("the image must be a path or an http(s) URL")
    return quote(url, safe=_URL_SAFE)


def md_text(text: str) -> str:
    """`text` safe as Markdown link text (every Markdown punctuation backslash-escaped)."""
    return _MD_SPECIAL.sub(r"\\\1", " ".join(text.split()))


def badge_svg(number: PithNumber) -> str:
    """A two-part badge, `pith | XXXXXXXX`, as a standalone SVG document."""
    value = number.body[:8]
    left = _PAD * 2 + _CHAR_WIDTH * len(_LABEL)
    right = _PAD * 2 + _CHAR_WIDTH * len(value)
    width = left + right
    title = escape(str(number))
    return (
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="20" '
        f'viewBox="0 0 {width} 20" role="img" aria-label="{title}">'
        f"<title>{title}</title>"
        f'<rect width="{left}" height="20" rx="3" fill="#555"/>'
        f'<rect x="{left}" width="{right}" height="20" rx="3" fill="#2b6cb0"/>'
        f'<rect x="{left}" width="4" height="20" fill="#2b6cb0"/>'
        f'<g fill="#fff" font-family="DejaVu Sans,Verdana,Geneva,sans-serif" font-size="11">'
        f'<text x="{_PAD}" y="14">{_LABEL}</text>'
        f'<text x="{left + _PAD}" y="14">{escape(value)}</text>'
        "</g></svg>"
    )


def badge(number: PithNumber, fmt: str, *, image: str = "pith-badge.svg") -> str:
    """The snippet in `fmt` (markdown, html, svg or latex)."""
    url = number.url()
    if fmt == "svg":
        return badge_svg(number)
    if fmt == "markdown":
        return f"[![{md_text(number.short)}]({md_url(image)})]({md_url(url)})"
    if fmt == "html":
        href = escape(md_url(url), quote=True)
        return f'<a href="{href}" title="{escape(str(number))}">{badge_svg(number)}</a>'
    if fmt == "latex":
        if number.year is None:
            raise InputError(f"the LaTeX snippet needs the year: give pith:YYYY:{number.body}")
        return f"\\usepackage{{pith}}\n\\pithnumber{{{number.full}}}"
    raise InputError(f"unknown format {fmt!r}; choose one of {', '.join(FORMATS)}")
