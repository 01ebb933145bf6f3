"""The outbox as an author's history grows: commands with a 0, 10,000 and 100,000-event
outbox, and storing events just signed.

Commands: `pith papers` and `pith outbox list` run as a user runs them (a fresh process each
time), with an outbox of 10,000 or 100,000 citations (all accepted, in the ledger, but 10
pending; 300 cited papers, one key) against the same command with an empty outbox; rounds
interleaved, medians compared. Target: within 1.2x of the empty outbox. Before the ledger
every command parsed and re-checked every stored event (about 45-96 us of CPU each): 0.8 s
more at 10,000 events, 8 s for `pith papers` at 100,000.

The commands an author runs that read or write the outbox, in the same three outboxes (each
built once, for every row): `pith claim PAPER --record FILE --position N` (the example record
of pithauthor/data/examples; `--position` checked against a loopback arXiv API stand-in, whose
answer is cached after the warm-up), `pith cite --from A --from-record FILE --to B --record
FILE` (one citation), `pith replicate PAPER --record FILE`, `pith withdraw EVENT` (of the
outbox's oldest accepted citation; its baseline an outbox holding only that event), `pith
submit` with nothing pending for its registry (twice: as the benchmarks run, with no
trusted-time source, and with the default authorities and calendars set, every event holding
its token and complete proof, so nothing is asked of them), and `pith status PAPER`, the last
two against
a local registry process on loopback (its key trusted from its saved manifest). A plaintext key
(no KDF); every signing run signs anew (what the run before signed is dropped from the outbox,
untimed). CPU of the process (user + system: what other processes' load hardly changes),
median of RUNS interleaved rounds after a warm-up, each round running every command in the
three outboxes in turn. Target: within 1.2x of the empty outbox.

Store: `Outbox.store` of 2,000 citations this process just signed (as `pith cite` stores them)
against the same rows written with bare sqlite3 (the same bodies, one fully synced transaction)
and the same journal lines appended and synced: what pith adds is its labels, its indexes and
its count. Informational (no target; before, storing re-verified and re-parsed
every event: 2.4x the signing itself).
"""

from __future__ import annotations

import hashlib
import json
import os
import resource
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Callable
from pathlib import Path
from typing import Any

from benchmarks._timing import command, interleaved_medians, row

SIZES = (10_000, 100_000)
TARGET = 1.2
STORE_EVENTS = 2000
LOCAL = "http://127.0.0.1:8787"  # never contacted: no command here asks a registry
CITED = 300
# a default source of each kind of proof the fill keeps per event
TSA = "https://timestamp.digicert.com"
CALENDAR = "https://a.pool.opentimestamps.org"
PENDING = 10  # the working set of every outbox here but the empty one: the same few rows
#: The local arXiv API stand-in (`pith claim` checks --position against it) lives with the tests.
sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))


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


def _home(root: Path, n: int, name: str = "", pending: int = PENDING) -> Path:
    """A PITH_HOME with a plaintext key and an outbox of `n` citations, all accepted but
    `pending` (the history grows, the working set does not)."""
    home = root / f"home-{name or n}"
    home.mkdir(mode=0o700)
    script = (
        "import sys; from benchmarks.bench_outbox import _fill; "
        "_fill(int(sys.argv[1]), int(sys.argv[2]))"
    )
    repo = Path(__file__).resolve().parents[1]
    subprocess.run([sys.executable, "-c", script, str(n), str(pending)], check=True, cwd=repo,
                   env=_env(home), stderr=subprocess.DEVNULL)  # fmt: skip
    return home


def _fill(n: int, pending: int = PENDING) -> None:
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
        ids = [e["event_id"] for e in events[: n - pending]]
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
            # every event's proofs of time, as `pith submit` keeps them with trusted time set
            # (the default): a token and a complete OpenTimestamps proof each
            for kind, source, complete in (("rfc3161", TSA, 0), ("ots", CALENDAR, 1)):
                conn.execute(
                    "INSERT INTO trusted_time (event_id, kind, source, proof, complete, "
                    "updated_at) SELECT event_id, ?, ?, x'00', ?, stored_at FROM outbox "
                    "UNION SELECT event_id, ?, ?, x'00', ?, stored_at FROM ledger",
                    (kind, source, complete) * 2,
                )
            conn.execute("COMMIT")


def _commands(empty: Path, homes: dict[int, Path]) -> list[dict[str, Any]]:
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


# --- the commands an author runs, each with the three outboxes -------------------------------

# rounds of the authoring rows (after one warm-up): each round runs every outbox. Nine, not
# five: on this virtual machine a command's CPU time moves by 20-30% now and then (a whole run
# at load 1.3 read `claim` at 1.26x with 10,000 events and 1.05x with 100,000, and `cite --to`
# at 0.96x and 1.31x), and a median of five took such a streak
RUNS = 9
DEAR = "2302.12445"  # the example record shipped in pithauthor/data/examples
POSITION = 3  # the bench key's place in the stand-in's author list (Bench Author)


def _cpu(argv: list[str], env: dict[str, str]) -> float:
    """CPU seconds (user + system) of one run of `argv`, a fresh process; failure raises."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    done = subprocess.run(argv, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                          stdin=subprocess.DEVNULL, text=True)  # fmt: skip
    if done.returncode != 0:
        raise RuntimeError(f"{argv[3:5]} failed: {done.stderr.strip()[-400:]}")
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def _record(root: Path, source: Path) -> Path:
    """`pith number from-arxiv --json` of `source`: a record file, as `--record` takes."""
    out = root / f"{source.stem}.record.json"
    done = subprocess.run([sys.executable, "-m", "pithauthor", "number", "from-arxiv", "--json",
                           str(source)], check=True, capture_output=True)  # fmt: skip
    out.write_bytes(done.stdout)
    return out


def _registry(root: Path) -> tuple[subprocess.Popen[str], str, Path]:
    """A local registry process on loopback holding the example papers: (the process, its
    URL, its saved manifest, trusted as an author keeps it)."""
    from pithauthor.registry.local.answers import load_or_create_key
    from pithauthor.registry.local.run import add_paper, example_papers
    from pithauthor.registry.local.store import RegistryStore

    data = root / "registry"
    store, key = RegistryStore(data), load_or_create_key(data)
    for paper in example_papers():
        add_paper(store, key, paper)
    store.close()
    serve = [sys.executable, "-m", "pithauthor", "registry", "serve", "--port", "0"]
    proc = subprocess.Popen([*serve, "--data", str(data)], stdout=subprocess.PIPE,
                            stderr=subprocess.DEVNULL, text=True)  # fmt: skip
    assert proc.stdout is not None
    url = proc.stdout.readline().strip()
    manifest = root / "pith-mirrors.json"
    with urllib.request.urlopen(f"{url}/pith-mirrors.json", timeout=30) as answer:
        manifest.write_bytes(answer.read())
    return proc, url, manifest


def _outbox_file(home: Path) -> Path:
    return home / "outbox" / "outbox.sqlite3"


def _working(home: Path) -> set[str]:
    from pithauthor.registry.outbox import Outbox

    with Outbox(_outbox_file(home)) as outbox:
        return {e.event_id for e in outbox.working()}


def _drop_new(home: Path, kept: set[str]) -> None:
    """Untimed, between runs: drop what the last run signed (the working set's rows that
    were not there at the start), so that the next run signs anew."""
    from pithauthor.registry.outbox import Outbox

    with Outbox(_outbox_file(home)) as outbox:
        new = [e.event_id for e in outbox.working() if e.event_id not in kept]
        if new:
            outbox.drop(new)


def _first_accepted(home: Path) -> str:
    """The id of the outbox's oldest accepted event (in its ledger), to withdraw."""
    conn = sqlite3.connect(_outbox_file(home))
    try:
        return str(conn.execute("SELECT event_id FROM ledger ORDER BY rowid LIMIT 1").fetchone()[0])
    finally:
        conn.close()


def _authoring(root: Path, empty: Path, homes: dict[int, Path]) -> list[dict[str, Any]]:
    """`pith claim`, `cite`, `replicate`, `withdraw`, `submit` and `status` with the empty,
    10,000- and 100,000-event outboxes, in interleaved rounds (CPU of the process)."""
    from support.arxiv_server import ArxivServer, Paper

    from pithauthor.registry.local.run import example_papers

    examples = {p.stem: p for p in example_papers()}
    dear, citing = _record(root, examples[DEAR]), _record(root, examples["example-2101.99901"])
    citing_number = json.loads(citing.read_text("utf-8"))["pith_number"]
    one = _home(root, 1, "one", pending=0)  # withdraw's baseline: the one event it withdraws
    authors = ["Lin Zhang", "Shaohuai Shi", "Bench Author", "Wei Wang", "Bo Li"]
    title = "DeAR: Accelerating Distributed Deep Learning with Fine-Grained All-Reduce Pipelining"
    paper = Paper(DEAR, title, authors, "2023-02-24T04:11:18Z", version=2, category="cs.LG")
    proc, url, manifest = _registry(root)
    pith = [sys.executable, "-m", "pithauthor"]
    trust = ["--registry", url, "--trust-manifest", str(manifest)]
    try:
        with ArxivServer([paper]) as arxiv:
            sign = ["--yes", *trust]
            argvs: dict[str, Callable[[Path], list[str]]] = {
                "claim PAPER --record FILE --position N": lambda _: [
                    *pith, "claim", DEAR, "--record", str(dear), "--position", str(POSITION),
                    "--arxiv-api", arxiv.url, *sign,
                ],
                "cite --from A --to B (records from files)": lambda _: [
                    *pith, "cite", "--from", citing_number, "--from-record", str(citing),
                    "--to", DEAR, "--record", str(dear), *sign,
                ],
                "replicate PAPER --record FILE": lambda _: [
                    *pith, "replicate", DEAR, "--record", str(dear), "--kind", "replication",
                    "--outcome", "reproduced", "--summary", "Re-ran it.",
                    "--artifact", "https://example.org/log.txt", "--sha256", "ab" * 32, *sign,
                ],
                "withdraw EVENT (an accepted citation)": lambda home: [
                    *pith, "withdraw", _first_accepted(home)[:23], "--yes", "--registry", LOCAL,
                ],
                "submit (nothing pending for it)": lambda _: [*pith, "submit", *trust],
                # as users run it: trusted time set (the default authorities and calendars;
                # every event holds its proofs, so nothing is asked of them)
                "submit (nothing pending for it; trusted time set, as by default)": lambda _: [
                    "env", "-u", "PITH_TSA", "-u", "PITH_OTS_CALENDARS", *pith, "submit", *trust,
                ],
                "status PAPER (local registry)": lambda _: [*pith, "status", DEAR, *trust],
            }  # fmt: skip
            return _rounds(argvs, empty, one, homes)
    finally:
        proc.terminate()
        proc.wait(10)


def _rounds(
    argvs: dict[str, Callable[[Path], list[str]]],
    empty: Path,
    one: Path,
    homes: dict[int, Path],
) -> list[dict[str, Any]]:
    """Each command in each outbox, in turns, RUNS rounds after a warm-up; one row per
    command and size (its median CPU against the same command's with the empty outbox)."""
    cpu: dict[tuple[str, int], list[float]] = {}
    plans = []
    for name, argv in argvs.items():
        base = one if name.startswith("withdraw") else empty
        for n, home in ((0, base), *homes.items()):
            plans.append((name, n, home, argv(home), _working(home)))
    for round_ in range(1 + RUNS):
        for name, n, home, argv, kept in plans:
            _drop_new(home, kept)
            took = _cpu(argv, _env(home))
            if round_:
                cpu.setdefault((name, n), []).append(took)
    for _, _, home, _, kept in plans:
        _drop_new(home, kept)
    rows = []
    for name in argvs:
        base = statistics.median(cpu[name, 0])
        against = "one accepted event" if name.startswith("withdraw") else "an empty one"
        for n in homes:
            rows.append(
                row(
                    f"outbox: `pith {name}` with a {n:,}-event outbox vs {against}",
                    statistics.median(cpu[name, n]),
                    base,
                    TARGET,
                    note=f"CPU of the process, median of {RUNS} interleaved rounds; a "
                    "plaintext key; what a run signed dropped before the next (untimed)",
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
            stored = _store(root)
            empty = _home(root, 0)  # each outbox is built once, for every row below
            homes = {n: _home(root, n) for n in SIZES}
            return [stored, *_commands(empty, homes), *_authoring(root, empty, homes)]
    finally:
        if saved is None:
            os.environ.pop("PITH_HOME", None)
        else:
            os.environ["PITH_HOME"] = saved


if __name__ == "__main__":
    for r in run():
        print(r)
