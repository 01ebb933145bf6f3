"""`pith status` of a paper with more claims, citations and replications than a text page lists:
the text shows the counts (citations per relationship), the first rows of each list and one
line saying how many more and how to list them; `--all` lists every one and `--json` gives
every one; a first and a second look print the same. A real local registry over loopback."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from support.cli import RunPith
from support.registry import SUBJECT, TestSigner, attestation, citation, replication, start_server

from pithauthor._cli.status_page import page_lines
from pithauthor.registry.local.server import RegistryServer
from pithauthor.registry.outbox import STATES
from pithauthor.registry.page import PAGE_ROWS

NUMBER = SUBJECT.pith_number.full
CITES, EXTENDS, CLAIMS, REPLICATIONS = 17, 6, 12, 11


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RegistryServer]:
    registry = start_server(tmp_path_factory.mktemp("registry"))
    signer = TestSigner()
    events = [citation(signer, i) for i in range(CITES)]
    events += [citation(signer, CITES + i, relationship="extends") for i in range(EXTENDS)]
    events += [
        attestation(TestSigner(), position=i + 1, name=f"Author {i + 1}") for i in range(CLAIMS)
    ]
    events += [replication(TestSigner()) for _ in range(REPLICATIONS)]
    for event in events:
        registry.store.insert_event(SUBJECT.pith_number.body, event, event["created_at"])  # type: ignore[arg-type]
    try:
        yield registry
    finally:
        registry.stop()


def _look(pith: RunPith, server: RegistryServer, *extra: str) -> str:
    done = pith("status", NUMBER, "--registry", server.url, "--trust-local-registry", *extra)
    assert done.returncode == 0, done.stderr
    return done.stdout


def _section(text: str, title: str) -> list[str]:
    """The lines under the header line starting with `title`, up to the next header."""
    lines = text.splitlines()
    (start,) = [i for i, line in enumerate(lines) if line.startswith(title)]
    rows = []
    for line in lines[start + 1 :]:
        if not line.startswith("  "):
            break
        rows.append(line)
    return rows


def test_the_text_page_lists_the_first_rows_with_the_counts_and_says_how_many_more(
    server: RegistryServer, pith: RunPith
) -> None:
    text = _look(pith, server)
    cited = CITES + EXTENDS
    assert f"citations received ({cited}): {CITES} cites, {EXTENDS} extends\n" in text, text
    more = "  ... and {} more (--all lists every one, as --json does)"
    received = _section(text, "citations received")
    assert len(received) == PAGE_ROWS + 1 and received[-1] == more.format(cited - PAGE_ROWS)
    assert all((" cites  by " in r) != (" extends  by " in r) for r in received[:PAGE_ROWS])
    claims = _section(text, "claims (")
    assert f"claims ({CLAIMS})" in text
    assert len(claims) == PAGE_ROWS + 1 and claims[-1] == more.format(CLAIMS - PAGE_ROWS)
    replications = _section(text, "replications (")
    assert f"replications ({REPLICATIONS})" in text
    assert replications[-1] == more.format(REPLICATIONS - PAGE_ROWS)
    assert len(replications) == PAGE_ROWS + 1
    # the checklist is above the lists, and the outbox line after them
    assert text.index("checklist") < text.index("claims (") < text.index("outbox:")
    assert len(text.splitlines()) < 60  # whatever the paper's fame


def test_all_lists_every_row_and_json_gives_every_row(
    server: RegistryServer, pith: RunPith
) -> None:
    page = json.loads(_look(pith, server, "--json"))
    assert len(page["citations_received"]) == CITES + EXTENDS
    assert page["citations_by_relationship"] == {"cites": CITES, "extends": EXTENDS}
    assert len(page["claims"]) == CLAIMS and len(page["replications"]) == REPLICATIONS
    every = _look(pith, server, "--all")
    assert "more (--all" not in every
    received = _section(every, "citations received")
    assert [row.split()[0] for row in received] == [
        c["citing_pith_number"] for c in page["citations_received"]
    ]
    assert len(_section(every, "claims (")) == CLAIMS
    assert len(_section(every, "replications (")) == REPLICATIONS
    assert every == "\n".join(page_lines(page, STATES, None)) + "\n"  # the JSON page, whole
    assert json.loads(_look(pith, server, "--json", "--all")) == page  # --all changes no JSON


def test_a_first_and_a_second_look_print_the_same_page_the_json_page_bounded(
    server: RegistryServer, pith: RunPith, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    first = _look(pith, server)
    second = _look(pith, server)  # the kept summary of the first rows, revalidated (304)
    assert second == first
    page: dict[str, Any] = json.loads(_look(pith, server, "--json"))
    assert first == "\n".join(page_lines(page, STATES, PAGE_ROWS)) + "\n"
    # a look that starts from `--json` keeps the text page's summary too: the same text
    monkeypatch.setenv("PITH_HOME", str(tmp_path / "another-home"))
    json.loads(_look(pith, server, "--json"))
    assert _look(pith, server) == first


def test_the_help_says_how_many_rows_the_page_lists() -> None:
    """`--all`'s help names the page's number of rows (a literal: the command's module loads no
    registry code for `--help`)."""
    import click
    import typer.main

    from pithauthor._cli import main

    root = typer.main.get_command(main.app)
    status = root.get_command(click.Context(root, info_name="pith"), "status")  # type: ignore[attr-defined]
    (every,) = [p for p in status.params if "--all" in getattr(p, "opts", [])]
    assert f"first {PAGE_ROWS} " in every.help
    assert f"first {PAGE_ROWS} " in " ".join((status.help or "").split())
