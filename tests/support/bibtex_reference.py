"""How BibTeX itself reads a .bib file: `bibtex` run with a style that writes each entry's key
and fields, for tests that compare pith's reading with BibTeX's (skipped where BibTeX is not
installed; the pith side of such tests always runs)."""

from __future__ import annotations

import re
import shutil
import subprocess
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

_MONTH_NAMES = ("January", "February", "March", "April", "May", "June", "July", "August",
                "September", "October", "November", "December")  # fmt: skip

# the month macros of BibTeX's standard styles (plain.bst), which pith knows too
_MONTHS = [f'MACRO {{{m[:3].lower()}}} {{"{m}"}}' for m in _MONTH_NAMES]

_MARK = "=pith-field="  # starts each line the style writes; BibTeX's own breaks indent by two


@dataclass(frozen=True)
class BibtexReading:
    """Entries (key -> lower-case field -> value, white space collapsed as BibTeX collapses it)
    in file order, and the error lines of BibTeX's log (`I was expecting ...---line 3 of ...`,
    `Repeated entry---line 9 of ...`)."""

    def error_lines(self) -> list[int]:
        """The line numbers BibTeX's errors name."""
        return [int(m.group(1)) for e in self.errors if (m := re.search(r"line ([0-9]+)", e))]

    entries: dict[str, dict[str, str]]
    errors: list[str]
    undefined: set[str]  # macros used and defined nowhere: BibTeX reads each as ""


def available() -> bool:
    return shutil.which("bibtex") is not None


def bibtex_reads(bib: Path, fields: Sequence[str]) -> BibtexReading | None:
    """`bib` as BibTeX reads it (every entry, `\\nocite{*}`), with `fields`; None without BibTeX."""
    if not available():
        return None
    names = [name.lower() for name in fields if name.lower() != "crossref"]  # built in
    lines = [f'  {n} empty$ \'skip$ {{ "{_MARK}{n}=" {n} * write$ newline$ }} if$' for n in names]
    style = "\n".join(
        [
            f"ENTRY {{ {' '.join(names)} }} {{}} {{}}",
            *_MONTHS,
            "FUNCTION {dump}",
            f'{{ "{_MARK}@" cite$ * write$ newline$',
            *lines,
            "}",
            "READ",
            "ITERATE {dump}",
            "",
        ]
    )
    with tempfile.TemporaryDirectory(prefix="pith-bibtex-") as tmp:
        folder = Path(tmp)
        shutil.copyfile(bib, folder / "refs.bib")
        (folder / "dump.bst").write_text(style, encoding="ascii")
        (folder / "job.aux").write_text(
            "\\citation{*}\n\\bibdata{refs}\n\\bibstyle{dump}\n", encoding="ascii"
        )
        subprocess.run(
            ["bibtex", "-terse", "job"], cwd=folder, capture_output=True, timeout=60, check=False
        )
        output = (folder / "job.bbl").read_text(encoding="utf-8", errors="replace")
        log = (folder / "job.blg").read_text(encoding="utf-8", errors="replace")
    entries: dict[str, dict[str, str]] = {}
    records: list[str] = []
    for line in output.splitlines():
        if line.startswith(_MARK):
            records.append(line[len(_MARK) :])
        elif records:
            records[-1] += " " + line  # BibTeX broke a long line at a space
    current: dict[str, str] = {}
    for record in records:
        if record.startswith("@"):
            current = entries.setdefault(record[1:], {})
        else:
            name, _, value = record.partition("=")
            current[name] = " ".join(value.split())
    # BibTeX's errors name their line: `I was expecting a `{' or a `('---line 3 of file refs.bib`
    errors = [line for line in log.splitlines() if re.search(r"---line [0-9]+ of file", line)
              and not line.startswith("Warning--")]  # fmt: skip
    undefined = set(re.findall(r'^Warning--string name "([^"]*)" is undefined', log, re.M))
    return BibtexReading(entries, errors, undefined)
