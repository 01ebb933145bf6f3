"""Bounded work for every .bib file: `@string` macros that double at each
step, crossrefs copying a large parent into many children, and a value or a file's values past
their bounds stop the command with one line naming the entry, and exit 2, within seconds and
under a memory cap (the 31-line bomb took more than 15 GB before)."""

from __future__ import annotations

import resource
import subprocess
import sys
import time
from pathlib import Path

import pytest
from support.cli import LAUNCHER, NO_REGISTRY, RunPith, assert_one_line_error

from pithauthor.bibliography.bibtex import (
    MAX_BIB_BLOCKS,
    MAX_BIB_DELIMITERS,
    MAX_EXPANDED_CHARS,
    MAX_VALUE_CHARS,
)
from pithauthor.bibliography.reading import read_bibliographies
from pithauthor.errors import BibliographyError

BOMB = Path(__file__).parents[1] / "fixtures" / "bib" / "string-bomb.bib"
MEMORY_CAP = 1024**3  # 1 GiB of address space for the whole `pith` process
SECONDS = 20.0  # generous on a shared machine: the bomb is refused in well under a second


def _capped(*args: str, tmp_path: Path) -> tuple[subprocess.CompletedProcess[str], float]:
    """`pith ARGS` in a process limited to MEMORY_CAP of address space and SECONDS."""

    def limit() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (MEMORY_CAP, MEMORY_CAP))

    start = time.monotonic()
    done = subprocess.run(
        [sys.executable, LAUNCHER, *args],
        capture_output=True,
        text=True,
        timeout=SECONDS,
        preexec_fn=limit,
        env={"PITH_HOME": str(tmp_path / "home"), "PATH": "/usr/bin:/bin"},
        check=False,
    )
    return done, time.monotonic() - start


@pytest.mark.parametrize(
    "command",
    [
        ("bib", "scan", "{bib}"),
        ("cite", "{bib}", "--from", "2101.99902", "--registry", NO_REGISTRY),
    ],
    ids=["bib-scan", "cite"],
)
def test_the_string_bomb_is_one_line_and_exit_2_under_a_memory_cap(
    tmp_path: Path, command: tuple[str, ...]
) -> None:
    args = [arg.replace("{bib}", str(BOMB)) for arg in command]
    result, seconds = _capped(*args, tmp_path=tmp_path)
    assert_one_line_error(result, 2)
    assert "MemoryError" not in result.stderr
    assert f"{BOMB}:15: @string{{s14}}: its value expands past 200,000 characters" in result.stderr
    assert seconds < SECONDS


def _write(tmp_path: Path, text: str) -> Path:
    bib = tmp_path / "refs.bib"
    bib.write_text(text, encoding="utf-8")
    return bib


def test_a_value_at_the_bound_is_read_and_one_past_it_is_refused(tmp_path: Path) -> None:
    half = MAX_VALUE_CHARS // 2
    at = f'@string{{a = "{"x" * half}"}}\n@misc{{k, title = a # a, year = 2020}}\n'
    (entry,) = read_bibliographies([_write(tmp_path, at)]).entries
    assert len(entry.fields["title"]) == MAX_VALUE_CHARS
    past = at.replace("a # a", 'a # a # "y"')
    with pytest.raises(BibliographyError, match=r"refs.bib:2: k: its value expands past"):
        read_bibliographies([_write(tmp_path, past)])
    plain = f"@misc{{k, abstract = {{{'z' * (MAX_VALUE_CHARS + 1)}}}}}\n"
    with pytest.raises(BibliographyError, match=r"refs.bib:1: k: its value holds more than 200,"):
        read_bibliographies([_write(tmp_path, plain)])


def test_crossref_copies_count_towards_the_bound_of_the_whole_file(
    pith: RunPith, tmp_path: Path
) -> None:
    """One parent with large fields, and children that each copy them: the strings are
    shared, but every reader of the entries sees each copy. Refused, naming a child."""
    big = "y" * (MAX_VALUE_CHARS - 10)
    fields = ", ".join(f"f{i} = big" for i in range(10))
    children = "".join(f"@misc{{c{i}, crossref = {{p}}}}\n" for i in range(200))
    text = f'@string{{big = "{big}"}}\n@book{{p, {fields}}}\n{children}'
    assert 200 * 10 * len(big) > MAX_EXPANDED_CHARS  # what the children would copy
    result = pith("bib", "scan", str(_write(tmp_path, text)))
    assert_one_line_error(result, 2)
    assert "the values read expand past" in result.stderr and ": c" in result.stderr


def test_more_entries_than_the_bound_are_refused_before_they_are_parsed(
    tmp_path: Path,
) -> None:
    """Half a million one-line entries fit in a 32 MiB file and took 1.5 GB and two minutes;
    past MAX_BIB_BLOCKS the files are refused before bibtexparser builds a block."""
    line = "@misc{k%d, title = {T}}\n"
    bib = _write(tmp_path, "".join(line % i for i in range(MAX_BIB_BLOCKS + 1)))
    result, seconds = _capped("bib", "scan", str(bib), tmp_path=tmp_path)
    assert_one_line_error(result, 2)
    assert f"more than {MAX_BIB_BLOCKS:,} entries" in result.stderr
    assert seconds < SECONDS


def test_values_built_by_concatenation_stop_at_the_bound_of_the_whole_file_under_a_cap(
    tmp_path: Path,
) -> None:
    """Each entry joins a near-bound macro to one character: a new string each (not shared),
    four bytes a character (non-BMP), so that the reading's bound is what keeps it under
    the memory cap."""
    near = "😀" * (MAX_VALUE_CHARS - 1)
    count = MAX_EXPANDED_CHARS // MAX_VALUE_CHARS + 2
    entries = "".join(f'@misc{{e{i}, title = big # "x"}}\n' for i in range(count))
    bib = _write(tmp_path, f"@string{{big = {{{near}}}}}\n{entries}")
    result, seconds = _capped("bib", "scan", str(bib), tmp_path=tmp_path)
    assert_one_line_error(result, 2)
    assert "the values read expand past 67,108,864 characters" in result.stderr
    assert seconds < SECONDS


def test_more_delimiters_than_the_bound_are_refused_before_they_are_parsed(
    tmp_path: Path,
) -> None:
    """bibtexparser handles each brace, quote, comma, `=` and line break in Python: 32 MiB of
    nested braces took 52 s. Past MAX_BIB_DELIMITERS the files are refused before parsing."""
    half = MAX_BIB_DELIMITERS // 2 + 1
    bib = _write(tmp_path, "@misc{k, title = " + "{" * half + "}" * half + "}\n")
    result, seconds = _capped("bib", "scan", str(bib), tmp_path=tmp_path)
    assert_one_line_error(result, 2)
    assert f"more than {MAX_BIB_DELIMITERS:,} braces" in result.stderr
    assert seconds < SECONDS
