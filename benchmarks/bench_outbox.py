"""The outbox as an author's history grows: commands with a 0, 10,000 and 100,000-event
outbox, and storing events just signed.

Commands: `pith papers` and `pith outbox list` run as a user runs them (a fresh process each
time), with an outbox of 10,000 or 100,000 citations (all accepted, in the ledger, but 10
pending; 300 cited papers, one key) against the same command with an empty outbox; rounds
interleaved, medians compared. Target: within 1.2x of the empty outbox. Before the ledger
every command parsed and re-checked every stored event (about 45-96 us of CPU each): 0.8 s
more at 10,000 events, 8 s for `pith papers` at 100,000.

Store: `Outbox.store` of 2,000 citations this process just signed (as `pith cite` stores them)
against the same rows written with bare sqlite3 (the same bodies, one fully synced transaction)
and the same journal lines appended and synced: what pith adds is its labels, its indexes and
its count. Informational (no target; before, storing re-verified and re-parsed
every event: 2.4x the signing itself).
"""

from __future__ import annotations

import hashlib
import os
import sqlite3
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from benchmarks._timing import command, interleaved_medians, row

SIZES = (10_000, 100_000)
TARGET = 1.2
STORE_EVENTS = 2000
LOCAL = "http://127.0.0.1:8787"  # never contacted: no command here asks a registry
CITED = 300
PENDING = 10  # the working set of every outbox here but the empty one: the same few rows


def _env(home: Path) -> dict[str, str]:
    return {**os.environ, "PITH_HOME": str(home)}


def _signed(n: int, tag: str) -> list[dict[str, Any]]:
    """`n` citations signed with this PITH_HOME's plaintext key, as `pith cite` signs them
    (so the outbox takes them as just signed): CITED cited papers, one citing paper each 300."""
    from pithauthor.keys.author import load_signing_key
    from pithauthor.protocol.ids import PithNumber
    from pithauthor.protocol.subject import Subject
    from pithauthor.sign import sign_citation

    key = load_signing_key("bench")
    cited = []
    for i in range(CITED):
        digest = hashlib.sha256(f"cited {i}".encode()).hexdigest()
        cited.append(Subject(PithNumber.from_digest(digest, 2023), digest))
    out = []
    for i in range(n):
        citing = hashlib.sha256(f"{tag} citing {i // CITED}".encode()).hexdigest()
        number = PithNumber.from_digest(citing, 2024)
        when = "2026-11-29T12:00:00Z"
        out.append(dict(sign_citation(key, cited[i % CITED], number, "cites", created_at=when)))
    return out


def _home(root: Path, n: int, name: str = "") -> Path:
    """A PITH_HOME with a plaintext key and an outbox of `n` citations, all accepted but
    PENDING (the history grows, the working set does not)."""
    home = root / f"home-{name or n}"
    home.mkdir(mode=0o700)
    script = "import sys; from benchmarks.bench_outbox import _fill; _fill(int(sys.argv[1]))"
    repo = Path(__file__).resolve().parents[1]
    subprocess.run([sys.executable, "-c", script, str(n)], check=True, cwd=repo, env=_env(home),
                   stderr=subprocess.DEVNULL)  # fmt: skip
    return home


def _fill(n: int) -> None:
    """In a process whose PITH_HOME is the new one: the key, the events, the answers."""
    from pithauthor.keys.author import generate
    from pithauthor.registry.outbox import Outbox

    generate("bench", public_name="Bench Author", backend="file", insecure_plaintext=True,
             note=lambda _: None)  # fmt: skip
    events = _signed(n, "history")
    with Outbox() as outbox:
        for i in range(0, n, 5000):
            outbox.store(events[i : i + 5000], LOCAL)
        # the registry's answers, recorded as `mark_accepted` would, in bulk (set-up, untimed)
        ids = [e["event_id"] for e in events[:-PENDING]]
        with outbox._lock:
            conn = outbox._conn
            conn.execute("BEGIN IMMEDIATE")
            conn.execute("CREATE TEMP TABLE done (event_id TEXT PRIMARY KEY)")
            conn.executemany("INSERT INTO done VALUES (?)", ((i,) for i in ids))
            columns = "event_id, registry, event_type, subject, body, stored_at, updated_at, " \
                "attempts, signer, key_id, citing"  # fmt: skip
            conn.execute(
                f"INSERT INTO ledger ({columns}, answer) SELECT {columns}, '{{}}' FROM outbox "
                "WHERE event_id IN (SELECT event_id FROM done)"
            )
            conn.execute("DELETE FROM outbox WHERE event_id IN (SELECT event_id FROM done)")
            conn.execute("COMMIT")


def _commands(root: Path) -> list[dict[str, Any]]:
    empty = _home(root, 0)
    homes = {n: _home(root, n) for n in SIZES}
    pith = [sys.executable, "-m", "pithauthor"]
    rows = []
    for argv in (["papers"], ["outbox", "list"]):
        for n, home in homes.items():
            fig, base = interleaved_medians(
                [command([*pith, *argv], env=_env(home)), command([*pith, *argv], env=_env(empty))],
                runs=7,
            )
            rows.append(
                row(
                    f"outbox: `pith {' '.join(argv)}` with a {n:,}-event outbox vs an empty one",
                    fig,
                    base,
                    TARGET,
                    note=f"median of 7 interleaved runs; {PENDING} pending, the rest accepted "
                    f"(the ledger), {CITED} papers, one key",
                )
            )
    return rows


def _store(root: Path) -> dict[str, Any]:
    from pithauthor.protocol.canonical_json import canonical
    from pithauthor.registry.outbox import Outbox

    home = _home(root, 0, "store")
    os.environ["PITH_HOME"] = str(home)
    batches = iter(range(100))
    made: list[list[dict[str, Any]]] = []

    def fresh() -> None:
        made.append(_signed(STORE_EVENTS, f"store {next(batches)}"))

    def store() -> None:
        with Outbox(home / f"o{time.monotonic_ns()}.sqlite3") as outbox:
            outbox.store(made[-1], LOCAL)

    def bare() -> None:
        rows = [(e["event_id"], LOCAL, canonical(e).decode()) for e in made[-1]]
        path = home / f"b{time.monotonic_ns()}.sqlite3"
        conn = sqlite3.connect(path, isolation_level=None)
        conn.execute("PRAGMA journal_mode=WAL")
        conn.execute("PRAGMA synchronous=FULL")
        conn.execute("CREATE TABLE t (event_id TEXT, registry TEXT, body TEXT, "
                     "PRIMARY KEY (event_id, registry))")  # fmt: skip
        conn.execute("BEGIN IMMEDIATE")
        conn.executemany("INSERT INTO t VALUES (?,?,?)", rows)
        text = "".join(f'{{"op":"store","event":{body}}}\n' for _, _, body in rows)
        with open(path.with_suffix(".jsonl"), "a", encoding="utf-8") as journal:
            journal.write(text)
            journal.flush()
            os.fsync(journal.fileno())
        conn.execute("COMMIT")
        conn.close()

    fig, base = interleaved_medians([store, bare], runs=7, setup=fresh)
    return row(
        f"outbox: store {STORE_EVENTS:,} citations just signed",
        fig,
        base,
        2.0,
        note="vs bare sqlite3 inserts of the same bodies and the same journal lines, synced "
        "alike; median of 7 interleaved runs (no target, informational)",
        informational=True,
    )


def run() -> list[dict[str, Any]]:
    saved = os.environ.get("PITH_HOME")
    try:
        with tempfile.TemporaryDirectory(prefix="pith-bench-") as tmp:
            root = Path(tmp)
            return [_store(root), *_commands(root)]
    finally:
        if saved is None:
            os.environ.pop("PITH_HOME", None)
        else:
            os.environ["PITH_HOME"] = saved


if __name__ == "__main__":
    for r in run():
        print(r)
