r"""The LaTeX badge: add `\usepackage{pith}` + `\pithnumber{...}` to a manuscript without
touching anything else, check that it compiles, and pack an arXiv-ready archive.

Public API: `inject`, `find_main_file`, `check_pdf`, `build_arxiv_archive`
(and `Step`, what it tells its `progress` callback).
"""

from __future__ import annotations

import difflib
import os
import re
import tempfile
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from pathlib import Path

from pithauthor.errors import (
    BuildError,
    CompileFailed,
    InputError,
    ManuscriptError,
    PithNumberError,
)
from pithauthor.fs import MAX_TEX_BYTES, Data, check_output_file, read_user_file, replace_files
from pithauthor.latex.archives import (
    ProjectZip,
    is_archive,
    unpack_project,
    unpacked_project,
    write_project_zip,
)
from pithauthor.latex.build import build_sources, whose_fault
from pithauthor.latex.clock import BuildClock, check_timeout
from pithauthor.latex.pdf import (
    check_badge_visible,
    check_pdf,
    pdf_author_keys,
    placement_notes,
)
from pithauthor.latex.preamble import Preamble, add_author_keys
from pithauthor.latex.review import review_copy
from pithauthor.latex.sources import (
    InputFacts,
    TextFile,
    backup_path,
    engine_of,
    ensure_writable,
    find_main_file,
    preamble_inputs,
    read_preamble,
    write_target,
)
from pithauthor.latex.sty import (
    COMPANIONS,
    MANIFEST,
    STY_NAME,
    another_version,
    pith_build_files,
    shipped_bytes,
)
from pithauthor.protocol.identity import pdf_key_ids
from pithauthor.protocol.ids import PithNumber

__all__ = [
    "InjectResult",
    "Step",
    "inject",
]


PLACEMENTS = ("title", "margin", "none")  # pith.sty's `placement` option


# the loads `inject` may rewrite for a new placement: any other options are the author's, kept
_PLAIN_LOAD = re.compile(r"\\usepackage(\[placement=(title|margin|none)\])?\{pith\}")


@dataclass(frozen=True, slots=True)
class InjectResult:
    """What `inject` did (or, with dry_run, would do)."""

    main: Path
    changed: bool
    diff: str
    backup: Path | None
    sty: Path
    sty_action: str  # "copied", "replaced" or "unchanged"
    engine: str
    checked: bool
    dry_run: bool
    notes: list[str] = field(default_factory=list)
    ltxml_action: str = "unchanged"  # pith.sty.ltxml: "copied", "replaced" or "unchanged"
    compat_action: str = "unchanged"  # pith-compat.def: the same
    placement_def_action: str = "unchanged"  # pith-placement.def: the same
    authorkeys_def_action: str = "unchanged"  # pith-authorkeys.def: the same
    unpacked: Path | None = None  # the folder an archive given as target was unpacked into
    zip_out: ProjectZip | None = None  # the project written as a zip (`zip_out`)
    # every shipped file but pith.sty (`sty.COMPANIONS`), by name -> its action, as above
    companion_actions: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class Step:
    """One step of `build_arxiv_archive`, told to its `progress` callback twice: when it starts
    (`seconds` None) and once it has succeeded (`seconds`: how long it took). A step that fails
    is not told again: its error is raised (so a caller printing finished steps prints nothing
    for it, and the error stays the one line)."""

    text: str  # what is being done: "building (pdflatex, latexmk)"
    seconds: float | None = None


Progress = Callable[[Step], None]


@contextmanager
def step(progress: Progress | None, text: str) -> Iterator[None]:
    """Tell `progress` that the step `text` starts, and, when the body succeeds, how long it
    took (an exception passes through untold: see `Step`)."""
    if progress is None:
        yield
        return
    progress(Step(text))
    start = time.monotonic()
    yield
    progress(Step(text, time.monotonic() - start))


def _require_year(number: PithNumber) -> str:
    if number.year is None:
        raise InputError(f"{number.body}: give the full Pith Number, pith:YYYY:{number.body}")
    return number.full


def _same_number(existing: str, number: PithNumber) -> bool:
    try:
        parsed = PithNumber.parse(existing)
    except PithNumberError:
        return False
    return parsed.year == number.year and parsed.body == number.body


def _package_load(placement: str | None) -> str:
    """`\\usepackage{pith}`, with the placement option unless it is the default."""
    if placement in (None, "title"):
        return "\\usepackage{pith}"
    if placement not in PLACEMENTS:
        raise InputError(f"placement must be one of {', '.join(PLACEMENTS)}, not {placement!r}")
    return f"\\usepackage[placement={placement}]{{pith}}"


def _edits(
    source: TextFile,
    pre: Preamble,
    number: PithNumber,
    force: bool,
    placement: str | None,
    inputs: InputFacts,
) -> list[str]:
    """Apply the edits to the text; returns [new_text, note, ...]."""
    text, nl, full = source.text, source.newline, _require_year(number)
    name = source.path.name
    load = _package_load(placement)
    package_line = load + nl
    number_line = f"\\pithnumber{{{full}}}" + nl
    edits: list[tuple[int, int, str]] = []
    notes: list[str] = []
    if len(pre.pith_numbers) > 1:
        raise ManuscriptError(f"{name}: \\pithnumber appears more than once; keep one")
    if pre.pith_package is not None and placement is not None:
        span = pre.pith_package
        current = text[span.start : span.end]
        if _PLAIN_LOAD.fullmatch(current):
            if current != load:
                edits.append((span.start, span.end, load))
        else:
            notes.append(f"{current} is left as it is; set placement={placement} there")
    if pre.pith_numbers:
        use = pre.pith_numbers[0]
        if not _same_number(use.text, number):
            if not force:
                raise ManuscriptError(
                    f"{name} already has \\pithnumber{{{use.text}}}; "
                    f"use --force to replace it with {full}"
                )
            edits.append((use.value.start, use.value.end, full))
            notes.append(f"replaced \\pithnumber{{{use.text}}} with {full}")
        if pre.pith_package is None and inputs.package is None:
            at = use.macro.start
            # a line goes in only at a live top-level line start: anywhere else it would land
            # inside a group, a macro's argument or a conditional (docs/latex.md, "Where")
            if at not in pre.boundaries:
                raise ManuscriptError(
                    f"{name}: \\pithnumber is used without \\usepackage{{pith}}; "
                    "add \\usepackage{pith} on the line before it"
                )
            edits.append((at, at, package_line))
    elif pre.pith_package is not None:
        after = pre.line_start_after(pre.pith_package.end)
        if after is None:
            raise ManuscriptError(f"{name}: no safe line after \\usepackage{{pith}}")
        edits.append((after, after, number_line))
    elif inputs.package is not None and inputs.via is not None:
        # pith is loaded by a file the preamble inputs: loading it again here could clash
        # with its options, so only the number is added, on the line after that `\input`
        after = pre.line_start_after(inputs.via.macro.end)
        if after is None:
            raise ManuscriptError(
                f"{name}: no safe line after \\input{{{inputs.via.name}}} "
                f"(which loads pith, in {inputs.package.name}) for \\pithnumber"
            )
        edits.append((after, after, number_line))
        notes.append(
            f"{inputs.package.name} loads pith; \\pithnumber goes after "
            f"\\input{{{inputs.via.name}}} in {name}"
        )
        if placement is not None:
            notes.append(f"set placement={placement} where {inputs.package.name} loads pith")
    else:
        anchor = pre.documentclass
        if pre.hyperref is not None and pre.hyperref.end > anchor.end:
            anchor = pre.hyperref
        line = pre.line_start_after(anchor.end)
        if line is None:
            edits.append((anchor.end, anchor.end, nl + package_line + number_line))
        else:
            edits.append((line, line, package_line + number_line))
    # the last edit first: the positions of the earlier ones (all taken from `text`) stay true
    for start, end, replacement in sorted(edits, reverse=True):
        text = text[:start] + replacement + text[end:]
    return [text, *notes]


def _diff(path: Path, old: str, new: str, edited_until: int) -> str:
    """The unified diff; only the text up to a few lines past the last edit is compared
    (everything after it is the same), so that a long body costs nothing."""
    cut = edited_until
    for _ in range(4):
        found = old.find("\n", cut)
        cut = len(old) if found == -1 else found + 1
    grown = len(new) - len(old)
    lines = difflib.unified_diff(
        old[:cut].splitlines(keepends=True),
        new[: cut + grown].splitlines(keepends=True),
        fromfile=f"a/{path.name}",
        tofile=f"b/{path.name}",
    )
    return "".join(line if line.endswith("\n") else line + "\n" for line in lines)


def _sty_plan(main: Path, force: bool, follow_links: bool = False) -> tuple[str, bytes]:
    """What to do with `pith.sty` next to `main`: copy, replace (force) or nothing."""
    ours = shipped_bytes(STY_NAME)
    dest = main.parent / STY_NAME
    if not dest.exists() and not dest.is_symlink():
        return "copied", ours
    # a dangling, looping or outside link is refused before anything is written
    write_target(dest, outside=follow_links)
    theirs = read_user_file(dest, ManuscriptError, "a LaTeX file", limit=MAX_TEX_BYTES)
    if theirs == ours:
        return "unchanged", ours
    if not force:
        raise another_version(dest, theirs)
    return "replaced", ours


def _companion_action(main: Path, name: str) -> tuple[str, bytes]:
    """pith.sty.ltxml and the .def files follow pith.sty (whose other versions `_sty_plan`
    already refused): copied when missing, replaced when they differ from ours."""
    ours = shipped_bytes(name)
    dest = main.parent / name
    if not dest.exists():
        return "copied", ours
    return ("unchanged" if dest.read_bytes() == ours else "replaced"), ours


def _compile_and_check(
    main: Path,
    source: TextFile,
    new_bytes: bytes,
    sty: bytes,
    engine: str,
    number: PithNumber | None,
    author_keys: Sequence[str] = (),
    link: bool = True,
    timeout: float | None = None,
    placement: str | None = None,
    progress: Progress | None = None,
) -> list[str]:
    """Build the sources with the new main file, as `arxiv` does, and check the PDF (the badge
    visible on its page, too); return notes on where the badge went (pith.sty's own word in the
    log). When that build fails, the untouched sources are built too, to say whose fault it is.
    `progress` is told each build as a step (a paper's build may take minutes)."""
    clock = BuildClock(main, timeout)
    try:
        ours = {**pith_build_files(), main.name: new_bytes, STY_NAME: sty}
        # the step is the build and the reading of its PDF, as `arxiv`'s
        with (
            step(progress, f"checking: building a copy ({engine}, latexmk)"),
            build_sources(main, engine, ours, clock) as built,
        ):
            if number is not None:
                check_pdf(built.result.pdf, number, require_link=link, log=built.result.log)
                if link:
                    check_badge_visible(built.result.pdf, number.url(), placement)
            if author_keys:
                _check_pdf_keys(built.result.pdf, author_keys)
            return placement_notes(built.result.log)
    except CompileFailed as failed:
        with step(progress, "building the untouched sources, to tell whose fault it is"):
            raise whose_fault(failed, main, engine, {main.name: source.raw}, clock) from None


def _check_pdf_keys(pdf: Path, author_keys: Sequence[str]) -> None:
    found, _ = pdf_author_keys(pdf.read_bytes())
    missing = [k for k in author_keys if k not in pdf_key_ids(found or "")]
    if missing:
        raise BuildError(f"the PDF's /PithAuthorKeys lacks {', '.join(missing)}")


def inputs_of(source: TextFile, preamble: Preamble) -> InputFacts:
    """What the files the preamble inputs hold: a `\\pithnumber` (then the main file needs
    none), or `\\usepackage{pith}` (then the main file must not load it again)."""
    if preamble.pith_numbers and preamble.pith_package is not None:
        return InputFacts()
    return preamble_inputs(preamble.inputs, source.path.parent)


def inject(
    target: str | os.PathLike[str],
    number: PithNumber | None,
    *,
    author_keys: Sequence[str] = (),
    dry_run: bool = False,
    check: bool = False,
    force: bool = False,
    placement: str | None = None,
    timeout: float | None = None,
    progress: Progress | None = None,
    follow_links: bool = False,
    zip_out: str | os.PathLike[str] | None = None,
) -> InjectResult:
    """Add the badge to the manuscript at `target` (a folder, a .tex file, or a project's
    source archive: an Overleaf zip), and a `\\pithauthorkey` line per key id in
    `author_keys` (docs/identity.md); `number` may be None when only keys are added (before the
    paper has a Pith Number).

    `placement` (title, margin or none) sets pith.sty's option; None leaves an existing
    `\\usepackage{pith}` as it is and adds a plain one (the default, title).
    Nothing is written when anything is wrong, with `dry_run`, or when `check` fails.
    `timeout` (seconds) bounds the `check` build; without it the limit comes from the paper's
    own builds (docs/latex.md). `progress` is told the `check` builds as steps (`Step`).
    A main file or pith.sty that is a link to a file outside the folder is refused, as
    `pith latex arxiv` refuses it (`sources.link_outside`), unless `follow_links`: then the
    file is written through the link, and its backup is kept in the folder, beside the link.

    An archive is unpacked into the folder beside it (`paper.zip` -> `paper/`, under the rules
    of `pithauthor.fs.unpack_archive`; with `dry_run`, into a temporary folder) and badged
    there; that folder is removed again when the badge is refused (unless the main file must be
    named among several: `archives.unpacked_project`). `zip_out` then writes the badged
    project as a zip ready to upload to Overleaf (any target: a folder too).
    """
    check_timeout(timeout)
    if zip_out is not None and dry_run:
        raise InputError("--zip-out writes the changed project; not with a dry run")
    if zip_out is not None:
        check_output_file(os.fspath(zip_out), InputError, "a zip to write")
    path = Path(target)

    def into(project: Path) -> InjectResult:  # a folder, or the one a zip was unpacked into
        return _inject(
            project,
            number,
            author_keys,
            dry_run,
            check,
            force,
            placement,
            timeout,
            progress,
            follow_links,
        )

    if not is_archive(path):
        return _zipped(into(path), zip_out, None)
    if dry_run:
        with tempfile.TemporaryDirectory(prefix="pith-inject-") as scratch:
            return into(unpack_project(path, Path(scratch) / "project").project)
    with unpacked_project(path) as unpacked:  # removed again if the badge is refused
        result = into(unpacked.project)
    return _zipped(result, zip_out, unpacked.folder)


def _zipped(
    result: InjectResult, zip_out: str | os.PathLike[str] | None, unpacked: Path | None
) -> InjectResult:
    """`result`, with the project written to `zip_out` when asked."""
    if zip_out is None:
        return replace(result, unpacked=unpacked)
    written = write_project_zip(result.main.parent, Path(zip_out))
    return replace(result, unpacked=unpacked, zip_out=written)


def _inject(
    target: Path,
    number: PithNumber | None,
    author_keys: Sequence[str],
    dry_run: bool,
    check: bool,
    force: bool,
    placement: str | None,
    timeout: float | None,
    progress: Progress | None,
    follow_links: bool,
) -> InjectResult:
    """`inject` into a folder or a .tex file."""
    if number is None and not author_keys:
        raise InputError("give a Pith Number, author keys, or both")
    if number is not None:
        _require_year(number)
    _package_load(placement)
    main = find_main_file(Path(target))
    # only the head is decoded and edited (the body stays bytes); author keys are placed by a
    # parse of the edited text, and that is proven on the whole text only: they read it all
    source, preamble = read_preamble(main, whole=bool(author_keys))
    engine = engine_of(source.text)
    new_text, notes = source.text, []
    facts = inputs_of(source, preamble)
    review = review_copy(preamble, facts.loads, facts.commands) if number is not None else None
    if review is not None:
        if not force:
            raise ManuscriptError(
                f"{main.name}: {review.message()}; add it to the camera-ready copy, or use --force"
            )
        notes.append(f"warning: {review.message()} (added anyway: --force)")
    elsewhere = None if preamble.pith_numbers else facts.number
    if number is not None and elsewhere is not None:
        if not _same_number(elsewhere[1], number):
            raise ManuscriptError(
                f"{elsewhere[0].name} (read by {main.name}) already has "
                f"\\pithnumber{{{elsewhere[1]}}}; change the number there"
            )
        notes.append(f"{elsewhere[0].name} already has this \\pithnumber; {main.name} unchanged")
    elif number is not None:
        new_text, *edit_notes = _edits(source, preamble, number, force, placement, facts)
        notes += edit_notes
    if author_keys:
        new_text, added = add_author_keys(new_text, main.name, source.newline, author_keys)
        if added:
            notes.append(f"added {added} \\pithauthorkey line(s)")
    # `text` encodes to the bytes read: only a new text makes new bytes (encoded once, here)
    changed = new_text != source.text
    pieces: list[bytes | memoryview] = source.pieces(new_text) if changed else [source.raw]
    sty_action, sty = _sty_plan(main, force, follow_links)
    # through a symbolic link to its target: the link stays
    written = write_target(main, outside=follow_links)
    if written != main:
        notes.append(f"{main.name} is a symbolic link: the badge goes into its target {written}")
    companions = {name: _companion_action(main, name) for name in COMPANIONS}
    # a read-only file is refused now, not after a `--check` build of a minute
    if changed and not dry_run:
        ensure_writable(written)
    if check:
        notes += _compile_and_check(
            main,
            source,
            b"".join(pieces),
            sty,
            engine,
            number,
            author_keys,
            link=placement != "none",
            timeout=timeout,
            placement=placement,
            progress=progress,
        )
    backup: Path | None = None
    # every refusal is above: only now is anything written, each file whole (`replace_file`)
    if not dry_run:
        # every file written first and the folder synced once (fs.replace_files): five
        # replace_file calls cost ten fsyncs, most of inject's time on a 50,000-line paper
        writes: list[tuple[Path, Data, int, Path | None]] = []
        if changed:
            # in the paper's folder, whatever the link leads to: never a file written outside
            # it that the user did not ask for (`follow_links` is for the main file only)
            inside = written.is_relative_to(main.parent.resolve())
            backup = backup_path(written if inside else main)
            writes.append((written, pieces, written.stat().st_mode, backup))
        if sty_action != "unchanged":
            writes.append(
                (write_target(main.parent / STY_NAME, outside=follow_links), sty, 0o644, None)
            )
        for name, (action, data) in companions.items():
            if action != "unchanged":
                writes.append((main.parent / name, data, 0o644, None))
        replace_files(writes)
    # each file's action under its key (`sty.MANIFEST`)
    actions = {f.action_key: companions[f.name][0] for f in MANIFEST if f.name in companions}
    return InjectResult(
        main=main,
        changed=changed,
        diff=_diff(main, source.text, new_text, preamble.begin_document) if changed else "",
        backup=backup,
        sty=main.parent / STY_NAME,
        sty_action=sty_action,
        engine=engine,
        checked=check,
        dry_run=dry_run,
        notes=notes,
        ltxml_action=actions["ltxml_action"],
        compat_action=actions["compat_action"],
        placement_def_action=actions["placement_def_action"],
        authorkeys_def_action=actions["authorkeys_def_action"],
        companion_actions={name: action for name, (action, _) in companions.items()},
    )
