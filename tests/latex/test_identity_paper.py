"""The paper proof end to end: `pith latex inject --author-key` puts the author's key id in a
real manuscript, pdflatex builds it, and `pith verify --paper-pdf FILE|URL` finds the key in the
PDF (from a file, and served by a local HTTP server); a PDF without it fails the proof."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
from support.cli import use_fast_kdf
from support.identity_server import IdentityServer, Site
from support.latex.pdfcheck import info, page_text
from support.latex.texbuild import NUMBER
from support.paths import FIXTURES

from pithauthor._cli.main import main
from pithauthor.verify import read_documents

pytestmark = pytest.mark.tex("pdflatex")

ORCID = "0000-0002-1825-0097"
RECORD = str(FIXTURES / "record-2302.12445v2.json")
MANUSCRIPT = (
    "\\documentclass{article}\n\\usepackage{amsmath}\n\\title{DEAR}\\author{J. Carberry}\n"
    "\\begin{document}\n\\maketitle\nSome text.\n\\end{document}\n"
)


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    with pytest.raises(SystemExit) as exit_info:
        main(list(args))
    out, err = capsys.readouterr()
    return int(exit_info.value.code or 0), out, err


@pytest.fixture
def author(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> str:
    use_fast_kdf(monkeypatch)  # in this process: the env var alone reaches only `pith` processes
    monkeypatch.setenv("PITH_PASSPHRASE", "paper proof tests")
    code, out, err = run(
        capsys, "keys", "generate", "--name", "carberry", "--orcid", ORCID, "--backend", "file",
        "--json", "--public-name", "Chengjian Liu",  # author 2 of the record's paper
    )  # fmt: skip
    assert code == 0, err
    return str(json.loads(out)["key_id"])


def pdflatex(folder: Path) -> Path:
    done = subprocess.run(
        ["pdflatex", "-interaction=nonstopmode", "-halt-on-error", "-no-shell-escape", "main.tex"],
        cwd=folder,
        capture_output=True,
        text=True,
        errors="replace",
        timeout=240,
    )
    assert done.returncode == 0, done.stdout[-2000:]
    return folder / "main.pdf"


@pytest.fixture
def server() -> Iterator[IdentityServer]:
    with IdentityServer(Site()) as srv:
        yield srv


def test_inject_author_key_then_verify_the_built_pdf(
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
    author: str,
    server: IdentityServer,
) -> None:
    paper = tmp_path / "paper"
    paper.mkdir()
    (paper / "main.tex").write_text(MANUSCRIPT, "utf-8")
    # before arXiv: no Pith Number yet, only the key (the active key, by giving no name)
    code, _, err = run(capsys, "latex", "inject", str(paper), "--author-key")
    assert code == 0, err
    text = (paper / "main.tex").read_text("utf-8")
    assert f"\\usepackage{{pith}}\n\\pithauthorkey{{{author}}}\n" in text
    assert "\\pithnumber" not in text
    # again, with the number and the key named: nothing is doubled
    code, _, err = run(
        capsys,
        "latex",
        "inject",
        str(paper),
        "--pith",
        NUMBER,
        "--offline",
        "--author-key",
        "--key",
        "carberry",
    )
    assert code == 0, err
    text = (paper / "main.tex").read_text("utf-8")
    assert text.count("\\pithauthorkey") == 1 and text.count(f"\\pithnumber{{{NUMBER}}}") == 1
    pdf = pdflatex(paper)
    assert info(pdf)["/PithAuthorKeys"] == author
    assert author not in page_text(pdf)

    event = tmp_path / "claim.jsonl"
    code, _, err = run(
        capsys, "claim", NUMBER, "--record", RECORD, "--proof", "paper", "--out", str(event)
    )
    assert code == 0, err
    (claim,) = read_documents(event)
    assert claim["payload"]["identity_proofs"] == [
        {"kind": "paper", "locator": "https://arxiv.org/pdf/2302.12445v2"}
    ]
    # a local copy of the PDF names the key, but shows nothing of who put it there
    code, out, err = run(capsys, "verify", str(event), "--signer", author, "--paper-pdf", str(pdf))
    assert code == 0, out + err
    line = next(ln for ln in out.splitlines() if "identity_proof.paper" in ln)
    assert line.startswith("unverifiable ")
    assert f"named, not bound: {pdf}: this file names the key" in line
    assert line.endswith(f"/PithAuthorKeys names {author}")
    # the same PDF as arXiv serves it for the claimed version (the local server as mirror)
    server.site.files["/pdf/2302.12445v2"] = ("application/pdf", pdf.read_bytes())
    monkeypatch.setenv("PITH_ARXIV_PDF", f"{server.url}/pdf")
    url = f"{server.url}/pdf/2302.12445v2"
    code, out, err = run(capsys, "verify", str(event), "--signer", author, "--record", RECORD)
    assert code == 0, out + err
    line = next(ln for ln in out.splitlines() if "identity_proof.paper" in ln)
    assert line.startswith("passed ")
    assert line.endswith(
        f"current: {url}: /PithAuthorKeys names {author}: an author of the claimed version put "
        "it there"
    )


def test_a_pdf_without_the_key_fails_the_paper_proof(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, author: str
) -> None:
    paper = tmp_path / "paper"
    paper.mkdir()
    (paper / "main.tex").write_text(MANUSCRIPT, "utf-8")
    code, _, err = run(capsys, "latex", "inject", str(paper), "--pith", NUMBER, "--offline")
    assert code == 0, err
    pdf = pdflatex(paper)
    event = tmp_path / "claim.jsonl"
    code, _, err = run(capsys, "claim", NUMBER, "--record", RECORD, "--out", str(event))
    assert code == 0, err
    code, out, _ = run(capsys, "verify", str(event), "--signer", author, "--paper-pdf", str(pdf))
    assert code == 1
    assert "failed       identity_proof.paper" in out and "no /PithAuthorKeys" in out


def test_a_pdf_of_another_paper_fails_the_paper_proof(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, author: str
) -> None:
    other = "pith:2022:4O7LE3EHU3JQ243TWCKWFFFE3G"
    paper = tmp_path / "paper"
    paper.mkdir()
    (paper / "main.tex").write_text(MANUSCRIPT, "utf-8")
    code, _, err = run(
        capsys,
        "latex",
        "inject",
        str(paper),
        "--pith",
        other,
        "--offline",
        "--author-key",
        "--key",
        author,
    )
    assert code == 0, err
    pdf = pdflatex(paper)
    event = tmp_path / "claim.jsonl"
    run(capsys, "claim", NUMBER, "--record", RECORD, "--out", str(event))
    code, out, _ = run(capsys, "verify", str(event), "--signer", author, "--paper-pdf", str(pdf))
    assert code == 1 and f"the PDF is of {other}, not {NUMBER}" in out


def test_inject_check_compiles_and_finds_the_key(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, author: str
) -> None:
    paper = tmp_path / "paper"
    paper.mkdir()
    (paper / "main.tex").write_text(MANUSCRIPT, "utf-8")
    code, _, err = run(
        capsys, "latex", "inject", str(paper), "--author-key", "--key", author, "--check"
    )
    assert code == 0, err
    assert "checked: compiles with pdflatex" in err


def test_a_garbage_pdf_fails_cleanly(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, author: str
) -> None:
    event = tmp_path / "claim.jsonl"
    run(capsys, "claim", NUMBER, "--record", RECORD, "--out", str(event))
    junk = tmp_path / "junk.pdf"
    junk.write_bytes(b"%PDF-1.7\n" + b"\x00garbage" * 50)
    code, out, err = run(capsys, "verify", str(event), "--signer", author, "--paper-pdf", str(junk))
    assert code == 1 and "not a readable PDF" in out and "Traceback" not in err
    code, _, err = run(
        capsys, "verify", str(event), "--signer", author, "--paper-pdf", str(tmp_path / "no.pdf")
    )
    assert code == 2 and "no.pdf: no such file" in err
