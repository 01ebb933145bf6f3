"""`pith latex inject|arxiv|sty`: the badge in a manuscript, the arXiv upload, pith.sty."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import typer

from pithauthor._cli.app import new_app
from pithauthor._cli.catalog import summary
from pithauthor._cli.options import (
    OFFLINE_NUMBER_OPTION,
    REGISTRY_OPTION,
    TRUST_LOCAL_OPTION,
    TRUST_MANIFEST_OPTION,
    complete_key,
    number_access,
)
from pithauthor._cli.output import StepLines, data, emit_json, message, warn
from pithauthor.errors import InputError

if TYPE_CHECKING:
    from pithauthor.latex.archives import ProjectZip

latex_app = new_app(summary("latex"), name="latex")


@latex_app.command("inject")
def inject_cmd(
    target: str = typer.Argument(
        ".",
        help="The manuscript folder, its main .tex file, or its source zip (an Overleaf "
        "download: unpacked into the folder beside it).",
    ),
    pith: str | None = typer.Option(
        None, "--pith", help="The Pith Number (pith:YYYY:BODY) or arXiv id."
    ),
    author_key: bool = typer.Option(
        False,
        "--author-key",
        help="Also add \\pithauthorkey{KEY_ID} for your active key (or each --key), "
        "the paper proof of docs/identity.md.",
    ),
    key: list[str] = typer.Option(
        [],
        "--key",
        metavar="NAME|KEY_ID",
        autocompletion=complete_key,
        help="With --author-key: this key (repeatable).",
    ),
    dry_run: bool = typer.Option(False, "--dry-run", help="Print the diff; write nothing."),
    check: bool = typer.Option(
        False, "--check", help="Compile a copy first and check the PDF; write only if it passes."
    ),
    force: bool = typer.Option(
        False,
        "--force",
        help="Replace another \\pithnumber or pith.sty version; badge a review copy.",
    ),
    placement: str | None = typer.Option(
        None,
        "--placement",
        help="title (after the title block, the default), margin (moves no line) or none.",
    ),
    timeout: float | None = typer.Option(
        None,
        "--timeout",
        metavar="SECONDS",
        help="Stop a build that takes longer (default: from the paper's own last build, "
        "else 600 s).",
    ),
    follow_links: bool = typer.Option(
        False,
        "--follow-links",
        help="Write through a main file or pith.sty that links out of the folder "
        "(refused without it, as pith latex arxiv refuses it).",
    ),
    zip_out: str | None = typer.Option(
        None,
        "--zip-out",
        metavar="FILE",
        help="Also write the badged project as a zip, ready to upload to Overleaf.",
    ),
    as_json: bool = typer.Option(False, "--json", help="Print the result as JSON."),
    registry: str | None = REGISTRY_OPTION,
    trust_manifest: list[str] = TRUST_MANIFEST_OPTION,
    trust_local: bool = TRUST_LOCAL_OPTION,
    offline: bool = OFFLINE_NUMBER_OPTION,
) -> None:
    """Add \\usepackage{pith} and \\pithnumber{...} to the preamble, and copy pith.sty."""
    from pithauthor.keys.author import show
    from pithauthor.latex.injection import inject
    from pithauthor.latex.sty import MANIFEST
    from pithauthor.registry.access import badge_number

    if pith is None and not author_key:
        raise InputError("give --pith NUMBER, --author-key, or both")
    if key and not author_key:
        raise InputError("--key chooses the key of --author-key; give --author-key too")
    if timeout is not None and not check:
        raise InputError("--timeout bounds the --check build; give --check too")
    if zip_out is not None and dry_run:
        raise InputError("--zip-out writes the changed project; not with --dry-run")
    keys = [show(k).key_id for k in key] or ([show(None).key_id] if author_key else [])
    number, which = None, None
    if pith is not None:
        with number_access(registry, trust_manifest, trust_local) as access:
            number, which = badge_number(pith, access, offline=offline)
    with StepLines() as steps:  # the --check build, shown as it runs (it may take minutes)
        result = inject(
            target,
            number,
            author_keys=keys,
            dry_run=dry_run,
            check=check,
            force=force,
            placement=placement,
            timeout=timeout,
            progress=steps,
            follow_links=follow_links,
            zip_out=zip_out,
        )
    if which:  # after inject: a manuscript it refuses is the one error line
        message(which)
    if as_json:
        emit_json(
            {
                "main": str(result.main),
                "changed": result.changed,
                "dry_run": result.dry_run,
                "backup": str(result.backup) if result.backup else None,
                "sty": str(result.sty),
                "sty_action": result.sty_action,
                "engine": result.engine,
                "checked": result.checked,
                "diff": result.diff,
                "notes": result.notes,
                **{  # each file that follows pith.sty: what was done with it
                    f.action_key: result.companion_actions[f.name]
                    for f in MANIFEST
                    if f.name in result.companion_actions
                },
                "unpacked": str(result.unpacked) if result.unpacked else None,
                "zip_out": str(result.zip_out.path) if result.zip_out else None,
            }
        )
        return
    if result.unpacked is not None:
        message(f"{target}: unpacked into {result.unpacked}")
    if dry_run and result.diff:
        data(result.diff.rstrip("\n"))
    for note in result.notes:
        message(note)
    would = "would be " if dry_run else ""
    if result.changed:
        what = "badge" if number is not None else "author keys"
        message(f"{result.main}: {what} {would}added")
    else:
        message(f"{result.main}: already has this Pith Number and keys; nothing to change")
    if result.backup:
        message(f"backup: {result.backup}")
    if result.sty_action != "unchanged":
        message(f"{result.sty}: {would}{result.sty_action}")
    for name, action in result.companion_actions.items():  # the files that follow pith.sty
        if action != "unchanged":
            message(f"{result.sty.with_name(name)}: {would}{action}")
    if result.checked:
        message(f"checked: compiles with {result.engine}; the PDF carries what was added")
    if result.zip_out is not None:
        _zip_lines(result.zip_out)
        message(
            "next: upload it to Overleaf (New Project > Upload Project), or upload its changed "
            'files into your project (docs/latex.md, "Overleaf")'
        )


def _zip_lines(written: ProjectZip) -> None:
    """What a written zip holds: its path on stdout, the count, size and anything left out."""
    data(str(written.path))
    for name in written.left_out:
        warn(f"{name} is a link to a file outside the project: left out of the zip")
    count = len(written.files)
    message(
        f"{written.path}: {count} file{'' if count == 1 else 's'}, {written.size / 1000:.0f} kB"
    )


@latex_app.command("arxiv")
def arxiv_cmd(
    target: str = typer.Argument(
        ".",
        help="The manuscript folder, its main .tex file, or its source zip (an Overleaf "
        "download: unpacked into the folder beside it).",
    ),
    output: str = typer.Option(
        "paper.tar.gz", "-o", "--out", metavar="FILE", help="The archive to write."
    ),
    keep_comments: bool = typer.Option(
        False, "--keep-comments", help="Keep the comments in the .tex files (arXiv publishes them)."
    ),
    timeout: float | None = typer.Option(
        None,
        "--timeout",
        metavar="SECONDS",
        help="Stop a build that takes longer (default: from the paper's own last build, "
        "else 600 s).",
    ),
    no_badge: bool = typer.Option(
        False,
        "--no-badge",
        help="Pack a paper without \\pithnumber (the v1 upload: its number does not exist "
        "before arXiv has v1); proven the same way minus the badge checks.",
    ),
    as_json: bool = typer.Option(False, "--json", help="Print the result as JSON."),
) -> None:
    """Build the sources in a private folder, pack what the build read (with the .bbl, pith.sty
    and its LaTeXML binding), and prove the archive by building it alone with pdfLaTeX. Each
    step is shown on stderr with its time (a spinner on a terminal)."""
    from pithauthor.fs import check_output_file
    from pithauthor.latex.arxiv import build_arxiv_archive

    check_output_file(output, InputError, "an archive to write")
    with StepLines() as steps:
        result = build_arxiv_archive(
            target,
            output,
            keep_comments=keep_comments,
            timeout=timeout,
            no_badge=no_badge,
            progress=steps,
        )
    if as_json:
        emit_json(
            {
                "archive": str(result.archive),
                "main": str(result.main),
                "engine": result.engine,
                "files": result.files,
                "number": result.number,
                "pages": result.pages,
                "size": result.size,
                "comments_removed": result.comments_removed,
                "comment_lines_removed": result.comment_lines_removed,
                "readme": result.readme,
                "warnings": result.warnings,
                "unpacked": str(result.unpacked) if result.unpacked else None,
            }
        )
        return
    if result.unpacked is not None:
        message(f"{target}: unpacked into {result.unpacked}")
    for name in result.files:
        data(name)
    for warning in result.warnings:
        message(f"warning: {warning}")
    if keep_comments:
        message("comments kept (--keep-comments)")
    else:
        message(
            f"comments removed: {result.comments_removed} "
            f"({result.comment_lines_removed} whole lines)"
        )
    badge = (
        f"with {result.number} and its link"
        if result.number is not None
        else "without a Pith Number (--no-badge)"
    )
    message(
        f"{result.archive}: {len(result.files)} files, {result.size / 1000:.0f} kB; "
        f"proven: builds alone with {result.engine} to {result.pages} "
        f"{'page' if result.pages == 1 else 'pages'}, {badge}"
    )


@latex_app.command("sty")
def sty_cmd(
    path: bool = typer.Option(False, "--path", help="Print where the shipped pith.sty is."),
    copy: str | None = typer.Option(
        None, "--copy", metavar="FOLDER", help="Copy pith.sty (and its LaTeXML binding) there."
    ),
    install: bool = typer.Option(
        False, "--install", help="Install into TEXMFHOME, so every local project finds it."
    ),
    zip_file: str | None = typer.Option(
        None,
        "--zip",
        metavar="FILE",
        help="Write pith.sty and every file it needs as one zip (one Overleaf upload).",
    ),
    force: bool = typer.Option(False, "--force", help="Replace another version of the files."),
    as_json: bool = typer.Option(False, "--json", help="Print the result as JSON."),
) -> None:
    """Get pith.sty and its files: their paths (default), a copy into a folder, one zip for an
    Overleaf upload, or a TEXMFHOME install."""
    from pithauthor.fs import check_output_file
    from pithauthor.latex.sty import copy_sty, found_by_tex, install_sty, shipped_files, zip_sty

    if sum((path, copy is not None, install, zip_file is not None)) > 1:
        raise InputError("give one of --path, --copy FOLDER, --zip FILE, --install")
    if zip_file is not None:
        check_output_file(zip_file, InputError, "a zip to write")
        written = zip_sty(Path(zip_file))
        if as_json:
            emit_json({"zip": str(written.path), "files": written.files, "size": written.size})
        else:
            _zip_lines(written)
            message(f"holds {', '.join(written.files)}")
        return
    if copy is None and not install:
        files = shipped_files()
        if as_json:
            emit_json({"files": [str(f) for f in files]})
        else:
            for file in files:
                data(str(file))
        return
    done = install_sty(force=force) if install else copy_sty(Path(copy or "."), force=force)
    if as_json:
        emit_json({"files": [{"path": str(c.path), "action": c.action} for c in done]})
    else:
        for item in done:
            data(str(item.path))
            message(f"{item.path}: {item.action}")
    if install:
        found = found_by_tex()
        if found is None or found.resolve() != done[0].path.resolve():
            warn(f"LaTeX finds {found or 'no pith.sty'} first, not the installed copy")
        else:
            message("\\usepackage{pith} now works in every project on this machine")


def register(app: typer.Typer) -> None:
    """Add `pith latex ...`."""
    app.add_typer(latex_app, name="latex", short_help=summary("latex"))
