"""`make demo`: an author's whole job, end to end, on this machine, in a throwaway folder.

Everything goes through the real `pith` command, as an author would type it:

1. the real pith.science record of a paper verifies against the pinned registry key, and the
   same Pith Number is computed offline from arXiv's metadata;
2. a local registry starts on a free loopback port with example papers (never pith.science);
3. a throwaway author key is made in a temporary PITH_HOME (an encrypted key file);
4. the author claims paper B, signs the citations of B's bibliography, records a replication,
   each with `--submit --yes`; a second `pith submit` finds nothing left to send (exactly once);
5. the merged states are fetched and verified;
6. the badge goes into a small manuscript (`pith latex inject`, checked with LaTeX when it is
   installed).

Then the registry is stopped and the folder removed. Exit 0 on success, 1 (one line) if not.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from importlib import resources
from pathlib import Path

from pithauthor.protocol.canonical_json import parse_json

# httpx is imported by the job that needs it (the demo's own process).

PAPER_A = "2101.99901"  # synthetic example paper A
PAPER_B = "2101.99902"  # synthetic example paper B: "our" paper, citing A and DeAR
DEAR = "2302.12445"  # a real paper (DeAR), from the protocol's test vector
PASSPHRASE = "a throwaway passphrase for the demo only"
ORCID = "0000-0002-1825-0097"  # ORCID's own example iD (Josiah Carberry)
MANUSCRIPT = r"""\documentclass{article}
\usepackage{hyperref}
\title{Example paper B}
\author{Demo Author}
\begin{document}
\maketitle
We extend example paper A and use the method of DeAR.
\end{document}
"""


def _say(text: str = "") -> None:
    sys.stdout.write(text + "\n")
    sys.stdout.flush()


class Demo:
    """The demo's folder, environment and registry."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.env = {**os.environ, "PITH_HOME": str(root / "home"), "PITH_PASSPHRASE": PASSPHRASE}
        for name in ("PITH_REGISTRY", "PITH_TOKEN", "PITH_TRUST", "PITH_DEBUG"):
            self.env.pop(name, None)
        # the example papers are not on arXiv, so arXiv's API (which gives a claim the author
        # order) is not asked: nothing listens at the discard port; the claim names no position
        self.env["PITH_ARXIV_API"] = "http://127.0.0.1:9/api/query"
        # trusted time asks public authorities and calendars (docs/protocol.md): the demo stays
        # on this machine, so none is asked; `pith timestamp` fetches the proofs later
        self.env.update(PITH_TSA="none", PITH_OTS_CALENDARS="none", PITH_BTC_HEADERS="none")
        # nor the Internet Archive, Software Heritage or arXiv's PDFs (`pith archive`)
        self.env.update(
            PITH_WAYBACK_URL="http://127.0.0.1:9",
            PITH_SWH_URL="http://127.0.0.1:9",
            PITH_ARXIV_PDF="http://127.0.0.1:9/pdf",
        )
        self.registry: list[str] = []

    def pith(self, *args: str, ok: Sequence[int] = (0,)) -> subprocess.CompletedProcess[str]:
        result = subprocess.run(
            [sys.executable, "-m", "pithauthor", *args],
            capture_output=True,
            text=True,
            env=self.env,
            timeout=300,
        )
        if result.returncode not in ok:
            lines = result.stderr.strip().splitlines() or [f"exit {result.returncode}"]
            raise RuntimeError(f"`pith {' '.join(args[:2])}` failed: {lines[-1]}")
        return result

    def start_registry(self) -> tuple[subprocess.Popen[str], str]:
        proc = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "pithauthor",
                "registry",
                "serve",
                "--port",
                "0",
                "--examples",
                "--data",
                str(self.root / "registry"),
            ],
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
            env=self.env,
        )
        assert proc.stdout is not None
        url = proc.stdout.readline().strip()
        if not url.startswith("http://127.0.0.1:"):
            proc.kill()
            raise RuntimeError("the local registry did not start")
        return proc, url


def run() -> int:
    """The demo; returns the exit code."""
    started = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="pith-demo-") as tmp:
        demo = Demo(Path(tmp))
        _verify_the_real_record(demo)
        proc, url = demo.start_registry()
        try:
            _author_job(demo, url)
        finally:
            proc.terminate()
            try:
                proc.wait(10)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
    _say(
        f"\nDone in {time.monotonic() - started:.1f} s; the registry is stopped and the "
        "temporary folder removed."
    )
    _say(_on_path())
    return 0


def _on_path() -> str:
    """How to get `pith` on PATH after the demo: this venv's, or one installed for good."""
    here = Path(sys.executable).parent
    return (
        "\nTo use pith yourself (docs: README.md, Install):\n"
        f'   export PATH="{here}:$PATH"        # this checkout\'s pith, for this shell\n'
        "   pipx install .                     # or: for good, in its own venv\n"
        "   uv tool install .                  # or: the same with uv\n"
        "then: pith --version"
    )


def _data(*parts: str) -> Path:
    return Path(str(resources.files("pithauthor").joinpath("data", *parts)))


def _verify_the_real_record(demo: Demo) -> None:
    _say("pithauthor demo: claim, cite, replicate, submit, verify, badge\n")
    _say("1. The real pith.science record of DeAR (arXiv:2302.12445), offline")
    report = parse_json(
        demo.pith("verify", str(_data("demo", "record-2302.12445v2.json")), "--json").stdout
    )
    passed = sum(c["status"] == "passed" for c in report["checks"])
    _say(
        f"   pith verify: {'OK' if report['ok'] else 'FAILED'}: {passed} checks passed, "
        "receipt signed by the pinned key pith-v1-2026-05"
    )
    number = demo.pith("number", "from-arxiv", str(_data("examples", "2302.12445.json"))).stdout
    _say(f"   pith number from-arxiv (arXiv's own metadata): {number.strip()}")


def _author_job(demo: Demo, url: str) -> None:
    import httpx

    manifest = demo.root / "local-manifest.json"
    manifest.write_text(httpx.get(url + "/pith-mirrors.json", timeout=10).text, "utf-8")
    demo.registry = ["--registry", url, "--trust-manifest", str(manifest)]
    _say(f"\n2. A local registry at {url} (example papers; NOT pith.science)")
    _say("   its key is trusted for this demo only (--trust-manifest)")

    _say("\n3. A throwaway author key (pith keys generate; encrypted file, PITH_PASSPHRASE)")
    key = parse_json(
        demo.pith(
            "keys",
            "generate",
            "--name",
            "demo-author",
            "--public-name",
            "Example Author",  # author 1 of paper B: the name its claim signs
            "--orcid",
            ORCID,
            "--backend",
            "file",
            "--json",
        ).stdout
    )
    _say(f"   {key['key_id']}  signer orcid:{ORCID}, public name {key['public_name']!r}")

    _say("\n4. Sign and submit (each command stores its events in the outbox, then sends them)")
    claim = demo.pith("claim", PAPER_B, "--submit", "--yes", *demo.registry)
    _say("   pith claim: " + _last(claim.stderr, "signed"))
    _say("   " + _last(claim.stderr, "submitted"))
    cite = demo.pith(
        "cite",
        str(_data("demo", "refs.bib")),
        "--from",
        PAPER_B,
        "--submit",
        "--yes",
        "--json",
        *demo.registry,
    )
    for row in parse_json(cite.stdout)["rows"]:
        _say(f"   pith cite: {row['key']:<11} {row['status']:<13} {row['detail']}")
    _say("   " + _last(cite.stderr, "submitted"))
    log = demo.root / "replication-log.txt"
    log.write_text("Demo: re-ran the pipelining schedule on a toy model; same speed-up.\n")
    digest = hashlib.sha256(log.read_bytes()).hexdigest()
    replicate = demo.pith(
        "replicate",
        DEAR,
        "--kind",
        "replication",
        "--outcome",
        "reproduced",
        "--summary",
        "Re-ran the pipelining schedule on a toy model; the speed-up holds.",
        "--artifact",
        "https://example.org/demo/replication-log.txt",
        "--sha256",
        digest,
        "--submit",
        "--yes",
        *demo.registry,
    )
    _say("   pith replicate: " + _last(replicate.stderr, "signed"))
    _say("   " + _last(replicate.stderr, "submitted"))
    again = parse_json(demo.pith("submit", "--json", *demo.registry).stdout)
    _say(
        f"   pith submit again: {len(again['accepted'])} sent, {len(again['pending'])} pending "
        "(each event arrived exactly once)"
    )

    _say("\n5. The merged states, fetched and verified (pith fetch, pith verify)")
    for ref in (PAPER_B, PAPER_A, DEAR):
        out = demo.root / f"state-{ref.replace('/', '_')}.json"
        demo.pith("fetch", ref, "--what", "state", "-o", str(out), *demo.registry)
        report = parse_json(
            demo.pith("verify", str(out), "--trust-manifest", demo.registry[3], "--json").stdout
        )
        state = parse_json(out.read_text("utf-8"))
        cur = state["current"]
        passed = sum(c["status"] == "passed" for c in report["checks"])
        _say(
            f"   {state['pith_number']}  claims {len(cur['author_attestations'])}, "
            f"citations {len(cur['citation_signatures'])}, replications "
            f"{len(cur['replication_records'])}; verify: {'OK' if report['ok'] else 'FAILED'} "
            f"({passed} checks passed)"
        )
        if not report["ok"]:
            raise RuntimeError(f"the state of {ref} does not verify")
    _badge(demo)


def _badge(demo: Demo) -> None:
    number = demo.pith("fetch", PAPER_B, "--what", "number", *demo.registry).stdout.strip()
    folder = demo.root / "paper"
    folder.mkdir()
    (folder / "main.tex").write_text(MANUSCRIPT, "utf-8")
    check = ["--check"] if shutil.which("latexmk") and shutil.which("pdflatex") else []
    _say(f"\n6. The badge in a manuscript (pith latex inject{' --check' if check else ''})")
    result = demo.pith("latex", "inject", str(folder), "--pith", number, *check, *demo.registry)
    for line in result.stderr.strip().splitlines():
        _say("   " + line)
    if not check:
        _say("   (no LaTeX on this machine: the PDF check was skipped)")


def _last(text: str, starts: str) -> str:
    lines = [line for line in text.splitlines() if line.startswith(starts)]
    return lines[-1] if lines else ""


def main() -> None:
    try:
        code = run()
    except Exception as exc:  # the demo reports, never shows a traceback
        sys.stderr.write(f"demo failed: {exc}\n")
        code = 1
    sys.exit(code)


if __name__ == "__main__":
    main()
