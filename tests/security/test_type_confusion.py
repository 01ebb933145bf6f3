"""Type confusion: whatever a hostile registry or file puts where a document expects another
JSON type, the verifier answers with failed checks or a `PithError` (the CLI's one-line input
error), never another exception (docs/protocol.md, "What `pith verify` checks").

Every node of each document (every object value and list item, at every depth, the events'
payloads included) is replaced in turn by a value of every other JSON type; a state's
`state_sha256` is recomputed after each change, as an attacker would. The public verifier
(`verify_documents`, and the offline identity checks `pith verify` adds) must then raise
nothing but a `PithError`, and a report that passes must name the changed field as not signed
or unverifiable: a change of signed or hashed content never verifies. The documents: the real
state, record and receipt rows, every valid event vector, and a state and a bundle the local
registry answers for events of every type, with a repeat, an equivocation, a replacement, a
withdrawal and an invalid event. A lone UTF-16 surrogate, which JSON cannot carry but a
document built in Python can, is refused the same way.
"""

from __future__ import annotations

import contextlib
import copy
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from support.paths import REPO, load_fixture
from support.registry import (
    T0,
    T1,
    T2,
    TestSigner,
    cite_event,
    claim_event,
    replication,
)

from pithauthor.errors import PithError
from pithauthor.identity import verify_identity
from pithauthor.protocol.canonical_json import canonical_sha256
from pithauthor.protocol.verdict import NOT_SIGNED, UNVERIFIABLE, Report, Trust
from pithauthor.registry.local.answers import bundle_document, load_or_create_key, state_document
from pithauthor.registry.local.run import add_paper, example_papers
from pithauthor.registry.local.store import RegistryStore
from pithauthor.sign import withdraw
from pithauthor.verify import pinned_trust, verify_documents

Path_ = tuple[str | int, ...]

ONE_OF_EACH: tuple[Any, ...] = (None, True, 7, 2.5, "x", [], {})
"""A value of every JSON type: each node is replaced by those not of its own type."""

MORE: tuple[Any, ...] = (False, 0, -1, "", [None], [[]], [{}], {"": None}, {"event_id": [1]})
"""Under `slow`, besides: the other values the checks might treat apart (falsy, empty, nested
containers of the wrong type, an object that looks like an event with a list for an id)."""

SURROGATE = "\ud800"


def nodes(value: Any, path: Path_ = ()) -> Iterator[tuple[Path_, Any]]:
    """Every object value and list item below the root, at every depth, parents first."""
    if isinstance(value, dict):
        for key, child in value.items():
            yield (*path, key), child
            yield from nodes(child, (*path, key))
    elif isinstance(value, list):
        for index, child in enumerate(value):
            yield (*path, index), child
            yield from nodes(child, (*path, index))


def replaced(doc: Any, path: Path_, value: Any) -> Any:
    """A copy of `doc` with the node at `path` set to `value`, resealed (a state's hash; a
    surrogate has no bytes to hash, and leaves it as it was)."""
    out = copy.copy(doc)  # the containers on the path copied, the rest shared (and only read)
    parent = out
    for step in path[:-1]:
        parent[step] = copy.copy(parent[step])
        parent = parent[step]
    parent[path[-1]] = value
    if "state_sha256" in out and path[0] != "state_sha256":
        with contextlib.suppress(UnicodeEncodeError):
            out["state_sha256"] = canonical_sha256(
                {k: v for k, v in out.items() if k != "state_sha256"}
            )
    return out


def text(path: Path_) -> str:
    return "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in path).lstrip(".")


def reported(report: Report, where: str) -> bool:
    """The report names `where` (or a field holding it) as not signed or unverifiable."""
    listed = [p for c in report.checks if c.status in (NOT_SIGNED, UNVERIFIABLE) for p in c.paths]
    return any(where == p or where.startswith((p + ".", p + "[")) for p in listed)


def verdict(doc: Any, trust: Trust) -> Report | PithError:
    """What `pith verify` makes of `doc` offline: its report, or the error it prints. Any
    other exception propagates (and fails the test)."""
    try:
        report = verify_documents([doc], trust)
        verify_identity([doc], report, offline=True)
        json.dumps(report.as_dict())  # `--json`: the report serialises
    except PithError as exc:
        return exc
    return report


def confuse(
    doc: Any, trust: Trust, values: tuple[Any, ...], per_node: int | None = None
) -> dict[str, int]:
    """Replace every node of `doc` by each of `values` that changes it (not an equal value of
    its type); with `per_node`, by that many of them only, taking turns from node to node (so
    that every type is still put everywhere in the document). Asserts the rules above."""
    changes: list[tuple[Path_, Any]] = []
    for number, (path, old) in enumerate(nodes(doc)):
        others = [v for v in values if not (type(v) is type(old) and v == old)]
        if per_node is not None:
            turn = number % len(others)
            others = (others[turn:] + others[:turn])[:per_node]
        changes += [(path, new) for new in [*others, *python_equal(old)]]
    return judge(doc, trust, changes)


def python_equal(value: Any) -> list[Any]:
    """Values Python's == takes for `value` that JSON does not: `2.0` for `2`, `true` for `1`
    (a check comparing with == would pass them; the hash and the reader see another value)."""
    if type(value) is bool:
        return [int(value), float(value)]
    if type(value) is int:
        return [float(value), *([bool(value)] if value in (0, 1) else [])]
    return []


def judge(doc: Any, trust: Trust, changes: list[tuple[Path_, Any]]) -> dict[str, int]:
    """Each change made alone: refused (a `PithError`), failed, or reported (the changed field
    named as not signed or unverifiable); anything else fails the test."""
    before = canonical_sha256(doc)  # the changed copies share the rest of it
    genuine = verify_documents([doc], trust)
    assert genuine.ok, genuine.failed
    counts = {"tried": len(changes), "failed": 0, "refused": 0, "reported": 0}
    unreported: list[str] = []
    for path, new in changes:
        result = verdict(replaced(doc, path, new), trust)
        if isinstance(result, PithError):
            counts["refused"] += 1
        elif not result.ok:
            counts["failed"] += 1
        elif reported(result, text(path)):
            counts["reported"] += 1
        else:
            unreported.append(f"{text(path)} = {new!r}")
    assert not unreported, f"changed, and verified without a word: {unreported[:10]}"
    assert canonical_sha256(doc) == before  # nothing was changed in the document verified
    return counts


# --- the documents -----------------------------------------------------------------------------


def _real() -> dict[str, Any]:
    docs = {
        "state": load_fixture("state-2204.10562v1.json"),
        "record": load_fixture("record-2302.12445v2.json"),
    }
    for number, row in enumerate(load_fixture("receipts.jsonl")[:2]):
        docs[f"receipt row {number}"] = row
    events = REPO / "tests" / "vectors" / "events" / "valid"
    for path in sorted(events.glob("*.json")):
        docs[f"event {path.stem}"] = json.loads(path.read_text("utf-8"))
    # a bundle under the real registry's key: the real state's record, its record_created
    # (version 1 of its paper: `true == 1` in Python) and a real citation
    state = docs["state"]
    created, canon = state["current"]["record_created"], state["current"]["canonical_record"]
    docs["bundle"] = {
        "bundle_type": "pith_open_graph_bundle",
        "bundle_version": "1.0",
        "pith_number": state["pith_number"],
        "short_pith_number": "pith:" + state["pith_number"].split(":")[2][:8],
        "canonical_record": canon,
        "canonical_sha256": created["payload"]["canonical_sha256"],
        "source": canon["source"],
        "source_aliases": state["current"]["source_aliases"],
        "events": [created, docs["event citation_signature"]],
    }
    return copy.deepcopy(docs)  # nothing shared between the documents


REAL = _real()


@pytest.fixture(scope="module")
def local(tmp_path_factory: pytest.TempPathFactory) -> tuple[dict[str, Any], Trust]:
    """The local registry's state and bundle of the example paper 2302.12445, merged from
    events of every type, a repeat (duplicates), an equivocation, a replacement (superseded),
    a withdrawal and an invalid event (its signature another's); with that registry's trust."""
    data = Path(tmp_path_factory.mktemp("confusion")) / "reg"
    key = load_or_create_key(data)
    rec, _ = add_paper(
        RegistryStore(data), key, next(p for p in example_papers() if "2302" in p.name)
    )
    one, two = TestSigner(b"\x01" * 32), TestSigner(b"\x02" * 32)
    cited, claim = cite_event(one, "cites", T0), claim_event(one, 1, T0)
    withdrawn = cite_event(two, "extends", T0)
    forged = cite_event(two, "cites", T2)
    forged["signature"] = {
        **forged["signature"],
        "signature_b64": cited["signature"]["signature_b64"],
    }
    events: list[Any] = [
        cited,
        cite_event(one, "cites", T1),  # the same statement again: a duplicate
        cite_event(one, "refutes", T2),  # another claim in the same slot: an equivocation
        claim,
        claim_event(one, 2, T1, replaces=claim["event_id"]),
        withdrawn,
        dict(withdraw(two, withdrawn, created_at=T1)),
        replication(one),
    ]
    state = state_document(rec, key, [*events, forged])
    for name in ("duplicates", "equivocations", "superseded", "withdrawals", "invalid_events"):
        assert state.get(name), f"the state needs {name} to confuse"
    bundle = bundle_document(rec, key, events)  # a bundle that verifies: no invalid event
    trust = Trust.from_manifest(key.manifest("http://127.0.0.1:1"), local=True)
    return {"local state": state, "local bundle": bundle}, trust


# --- the tests ---------------------------------------------------------------------------------


def test_the_reported_bug_a_state_list_that_is_a_number_fails_its_check() -> None:
    """The colleague's report: `current.citation_signatures = 5` raised TypeError."""
    for name in ("author_attestations", "citation_signatures", "replication_records"):
        state = replaced(REAL["state"], ("current", name), 5)
        report = verdict(state, pinned_trust())
        assert isinstance(report, Report) and not report.ok
        assert f"current.{name}" in [c.name for c in report.failed]


@pytest.mark.parametrize("which", sorted(REAL))
def test_every_node_of_a_real_document_replaced_by_every_other_type(which: str) -> None:
    counts = confuse(REAL[which], pinned_trust(), ONE_OF_EACH)
    assert (
        counts["failed"] + counts["refused"] > counts["tried"] / 3
    )  # not vacuous: most fields are checked


@pytest.mark.parametrize("which", ["local state", "local bundle"])
def test_every_node_of_a_local_registry_answer_replaced_by_every_other_type(
    local: tuple[dict[str, Any], Trust], which: str
) -> None:
    docs, trust = local
    counts = confuse(docs[which], trust, ONE_OF_EACH, per_node=2)  # every type: under `slow`
    assert counts["failed"] + counts["refused"] > counts["tried"] / 3


@pytest.mark.slow
def test_every_node_of_every_document_replaced_by_every_value(
    local: tuple[dict[str, Any], Trust],
) -> None:
    docs, trust = local
    for doc in REAL.values():
        confuse(doc, pinned_trust(), MORE)
    for doc in docs.values():
        confuse(doc, trust, ONE_OF_EACH + MORE)


@pytest.mark.parametrize("which", [*sorted(REAL), "local state", "local bundle"])
def test_a_lone_surrogate_anywhere_is_refused_failed_or_reported(
    local: tuple[dict[str, Any], Trust], which: str
) -> None:
    """Every text of every document (a Python caller's: JSON cannot hold one) made a lone
    surrogate, and one added to it, and every object given a key that is one: by the same
    rules. A document holding one has no canonical bytes: where it is hashed, it is refused."""
    docs, trust = local
    doc, trusted = (REAL[which], pinned_trust()) if which in REAL else (docs[which], trust)
    changes: list[tuple[Path_, Any]] = []
    for path, old in [((), doc), *nodes(doc)]:
        if isinstance(old, str):
            changes += [(path, SURROGATE), (path, old + SURROGATE)]
        if isinstance(old, dict):
            changes.append(((*path, SURROGATE), "x"))
    counts = judge(doc, trusted, changes)
    assert counts["refused"] + counts["failed"] > 0
