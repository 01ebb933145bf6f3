"""`%` comments in .bib files are read as biber reads them: a commented-out entry or field is
ignored and reported as a `comment` row, never a `parse_error`, and write-back never edits it."""

from __future__ import annotations

import json
from pathlib import Path

from support.cli import RunPith

from pithauthor.bibliography.lookup import write_back
from pithauthor.bibliography.reading import read_bibliographies

COMMENTED = """\
@article{kept,
  title = {Kept: 50% of {all %} of it},
  url = "https://example.org/a%20b",
  author = {Doe, Jane},
  eprint = {2302.12445},
% doi = {10.1000/commented-out},
  year = {2023} % a comment after the last field
}

% @article{gone,
%   title = {Commented out},
%   author = {Doe, Jane},
%   eprint = {1706.03762},
%   year = {2017}
% }

%@misc{alsogone, title = {On one line}, eprint = {1810.04805}}
  %% @InProceedings(indented, title = "Doubled %%")

@comment{this % is not an entry}
@book(Car%ey,
,
  title = "Mind % the Stop", year = "1958"
)
"""


def _write(tmp_path: Path, text: str = COMMENTED) -> Path:
    bib = tmp_path / "refs.bib"
    bib.write_text(text, encoding="utf-8")
    return bib


def test_commented_out_entries_are_comment_rows_and_commented_fields_are_ignored(
    tmp_path: Path,
) -> None:
    reading = read_bibliographies([_write(tmp_path)])
    entries = {e.key: e for e in reading.entries}
    assert set(entries) == {"kept", "Car"}  # biber: `Car%ey` is the key `Car`
    kept = entries["kept"]
    assert kept.fields["title"] == "Kept: 50% of {all %} of it"  # % inside a value is text
    assert kept.fields["url"] == "https://example.org/a%20b"
    assert "doi" not in kept.fields and kept.fields["year"] == "2023"
    assert entries["Car"].fields["title"] == "Mind % the Stop"
    comments = [(r.key, r.line, r.status) for r in reading.failures]
    assert comments == [("gone", 10, "comment"), ("alsogone", 17, "comment"),
                        ("indented", 18, "comment")]  # fmt: skip
    assert all("ignored, as biber does" in r.detail for r in reading.failures)
    assert [e.line for e in reading.entries] == [1, 21]  # lines as in the file


def test_scan_reports_comments_and_exits_0(pith: RunPith, tmp_path: Path) -> None:
    result = pith("bib", "scan", str(_write(tmp_path)), "--json")
    assert result.returncode == 0, result.stderr
    document = json.loads(result.stdout)
    assert document["counts"] == {"found": 1, "no_identifier": 1, "comment": 3}
    table = pith("bib", "scan", str(_write(tmp_path)))
    assert table.returncode == 0 and "3 comment" in table.stdout.splitlines()[-1]


def test_a_file_of_commented_out_entries_only_is_a_bibliography(
    pith: RunPith, tmp_path: Path
) -> None:
    bib = _write(tmp_path, "% @article{a,\n%  title = {A},\n%  year = {2020}\n% }\n")
    result = pith("bib", "scan", str(bib))
    assert result.returncode == 0, result.stderr
    assert result.stdout.rstrip().endswith("1 entries: 1 comment")


def test_write_back_edits_the_entry_not_its_commented_out_copy(tmp_path: Path) -> None:
    from dataclasses import replace

    from pithauthor.protocol.ids import ArxivId

    text = (
        "% @article{twin,\n%   title = {Old},\n%   year = {2016}\n% }\n"
        "@article{twin,\n  title = {New},\n  year = {2017}\n}\n"
    )
    bib = _write(tmp_path, text)
    reading = read_bibliographies([bib])
    (entry,) = reading.entries
    found = replace(entry, identifier=ArxivId.parse("1706.03762"), identifier_source="lookup")
    (done,) = write_back([found])
    assert done.written == ("twin",)
    assert bib.read_text(encoding="utf-8") == text.replace(
        "  year = {2017}\n}",
        "  year = {2017},\n  eprint = {1706.03762},\n  archivePrefix = {arXiv}\n}",
    )
