"""`pith latex inject|arxiv` and `pith badge`."""

from __future__ import annotations

from typing import TYPE_CHECKING

import typer

from pithauthor._cli.app import new_app

if TYPE_CHECKING:
    from pithauthor._core.pith_number import PithNumber

latex_app = new_app("Add the Pith badge to a LaTeX manuscript and pack it for arXiv.", name="latex")


def _number(text: str) -> PithNumber:
    """A Pith Number (with its year), or an arXiv id resolved through the registry."""
    from pithauthor._core.arxiv_id import ArxivId
    from pithauthor._core.pith_number import PithNumber
    from pithauthor.errors import ArxivIdError, InputError, PithNumberError

    try:
        number = PithNumber.parse(text)
    except PithNumberError as number_error:
        try:
            arxiv_id = ArxivId.parse(text)
        except ArxivIdError:
            raise number_error from None
        import importlib

        try:
            resolve_arxiv = importlib.import_module("pithauthor.submit").resolve_arxiv
        except (ImportError, AttributeError):
            raise InputError(
                f"{text} is an arXiv id; resolving it needs the registry client, which this "
                "installation lacks; pass the Pith Number (pith:YYYY:BODY) instead"
            ) from None
        resolved: PithNumber = resolve_arxiv(arxiv_id)
        return resolved
    if number.year is None:
        raise InputError(
            f"{text}: give the full Pith Number with its year, pith:YYYY:{number.body}"
        )
    return number


@latex_app.command("inject")
def inject_cmd(
    target: str = typer.Argument(".", help="The manuscript folder or its main .tex file."),
    pith: str = typer.Option(..., "--pith", help="The Pith Number (pith:YYYY:BODY) or arXiv id."),
    dry_run: bool = typer.Option(False, "--dry-run", help="Print the diff; write nothing."),
    check: bool = typer.Option(
        False, "--check", help="Compile a copy first and check the PDF; write only if it passes."
    ),
    force: bool = typer.Option(
        False, "--force", help="Replace another \\pithnumber or another pith.sty version."
    ),
    as_json: bool = typer.Option(False, "--json", help="Print the result as JSON."),
) -> None:
    """Add \\usepackage{pith} and \\pithnumber{...} to the preamble, and copy pith.sty."""
    from pithauthor._cli.output import data, emit_json, message
    from pithauthor.latex import inject

    result = inject(target, _number(pith), dry_run=dry_run, check=check, force=force)
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
            }
        )
        return
    if dry_run and result.diff:
        data(result.diff.rstrip("\n"))
    for note in result.notes:
        message(note)
    would = "would be " if dry_run else ""
    if result.changed:
        message(f"{result.main}: badge {would}added")
    else:
        message(f"{result.main}: already has this Pith Number; nothing to change")
    if result.backup:
        message(f"backup: {result.backup}")
    if result.sty_action != "unchanged":
        message(f"{result.sty}: {would}{result.sty_action}")
    if result.checked:
        message(f"checked: compiles with {result.engine}; the PDF carries the number and link")


@latex_app.command("arxiv")
def arxiv_cmd(
    target: str = typer.Argument(".", help="The manuscript folder or its main .tex file."),
    output: str = typer.Option("paper.tar.gz", "-o", "--output", help="The archive to write."),
    as_json: bool = typer.Option(False, "--json", help="Print the result as JSON."),
) -> None:
    """Compile, then pack the files the build read (with the .bbl and pith.sty) for arXiv."""
    from pithauthor._cli.output import data, emit_json, message
    from pithauthor._files import check_output_file
    from pithauthor.errors import InputError
    from pithauthor.latex import build_arxiv_archive

    check_output_file(output, InputError, "an archive to write")
    result = build_arxiv_archive(target, output)
    if as_json:
        emit_json({"archive": str(result.archive), "main": str(result.main), "files": result.files})
        return
    for name in result.files:
        data(name)
    message(f"{result.archive}: {len(result.files)} files, compiled with {result.engine}")


def badge_cmd(
    number: str = typer.Argument(..., help="The Pith Number (pith:YYYY:BODY or the body)."),
    fmt: str = typer.Option("markdown", "--format", "-f", help="markdown, html, svg or latex."),
    image: str = typer.Option(
        "pith-badge.svg", "--image", help="Image path or URL for the markdown snippet."
    ),
) -> None:
    """Print a badge snippet for a README or web page (the SVG is made locally)."""
    from pithauthor._badge import badge
    from pithauthor._cli.output import data
    from pithauthor._core.pith_number import PithNumber

    data(badge(PithNumber.parse(number), fmt, image=image))


def register(app: typer.Typer) -> None:
    """Add `latex` and `badge` to `app`."""
    app.add_typer(latex_app)
    app.command("badge")(badge_cmd)
