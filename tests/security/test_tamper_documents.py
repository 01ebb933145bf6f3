"""Tamper suite for whole documents: record, receipt row, registry state, local state, bundle.

Every field of each document is changed, emptied, deleted, duplicated and added to in turn (the
JSON tree is walked generically; a state's `state_sha256` is recomputed after each change, as
an attacker would). No variant may be accepted unless the verdict reports the touched field as
`not_signed` or `unverifiable` (a deleted one: reported so in the genuine document, or listed in
`checks.fields.OPTIONAL`). A key written twice in the JSON text is refused by the reader.
The counts are printed in the "tamper counts" section of the pytest summary.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Callable, Iterator
from functools import partial
from pathlib import Path
from typing import Any

import httpx
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from support.examples_budget import examples
from support.paths import FIXTURES, load_fixture
from support.registry import REAL_NUMBER, TestSigner, attestation, citation, replication
from support.tamper_counts import count

from pithauthor.errors import DocumentError
from pithauthor.protocol.canonical_json import canonical_sha256
from pithauthor.protocol.checks.fields import OPTIONAL
from pithauthor.protocol.verdict import NOT_SIGNED, UNVERIFIABLE, Report, Trust, path_text, segments
from pithauthor.registry.local.run import add_paper
from pithauthor.verify import detect_kind, pinned_trust, verify_document, verify_file

Path_ = tuple[str | int, ...]
VECTORS = Path(__file__).parents[1] / "vectors" / "events"
BODY = REAL_NUMBER.rsplit(":", 1)[1]


# --- the generic walk --------------------------------------------------------------------------


def nodes(value: Any, path: Path_ = ()) -> Iterator[tuple[Path_, Any]]:
    """Every node below the root, parents first."""
    if isinstance(value, dict):
        for key, child in value.items():
            yield (*path, key), child
            yield from nodes(child, (*path, key))
    elif isinstance(value, list):
        for index, child in enumerate(value):
            yield (*path, index), child
            yield from nodes(child, (*path, index))


def containers(value: Any, path: Path_ = ()) -> Iterator[tuple[Path_, Any]]:
    """The root and every object or list below it."""
    if isinstance(value, dict | list):
        yield path, value
    for sub, child in nodes(value, path):
        if isinstance(child, dict | list):
            yield sub, child


def _parent(doc: Any, path: Path_) -> Any:
    for step in path[:-1]:
        doc = doc[step]
    return doc


def changed(value: Any) -> list[Any]:
    """Other values of the same type, and one of another type."""
    if isinstance(value, bool):
        return [not value, str(value).lower()]
    if isinstance(value, int | float):
        return [value + 1, str(value)]
    if isinstance(value, str):
        flipped = value[:-1] + ("A" if value[-1:] != "A" else "B") if value else "x"
        return [flipped, value + " ", 0]
    if value is None:
        return ["x"]
    return ["x", None]


def empty(value: Any) -> Any:
    return {dict: {}, list: [], str: "", int: 0, float: 0.0, bool: False}.get(type(value))


def mutations(doc: Any, sample: bool = False) -> Iterator[tuple[str, Path_, Any]]:
    """(operation, touched path, mutated copy) for every field of `doc`. With `sample`: one
    edit per field (the operations taking turns from field to field) and every fourth "add"."""

    def at(path: Path_, fn: Callable[[Any, Any], None]) -> Any:
        out = copy.deepcopy(doc)
        fn(_parent(out, path), path[-1])
        return out

    for number, (path, value) in enumerate(list(nodes(doc))):
        edits: list[tuple[str, Path_, Callable[[Any, Any], None]]] = []
        for new in changed(value):
            edits.append(("change", path, partial(_set, value=new)))
        blank = empty(value)
        if blank is not None and blank != value:
            edits.append(("empty", path, partial(_set, value=blank)))
        edits.append(("delete", path, _delete))
        if isinstance(path[-1], int):
            edits.append(("duplicate", (*path[:-1], path[-1] + 1), _duplicate))
        for operation, touched, fn in [edits[number % len(edits)]] if sample else edits:
            yield operation, touched, at(path, fn)
    for number, (path, value) in enumerate(list(containers(doc))):
        if sample and number % 4:
            continue
        out = copy.deepcopy(doc)
        target = _parent(out, (*path, 0)) if path else out
        if isinstance(value, dict):
            target["tampered"] = "x"
            yield "add", (*path, "tampered"), out
        else:
            target.append("x")
            yield "add", (*path, len(value)), out


def _set(parent: Any, key: Any, value: Any) -> None:
    parent[key] = value


def _delete(parent: Any, key: Any) -> None:
    del parent[key]


def _duplicate(parent: Any, key: Any) -> None:
    parent.insert(key + 1, copy.deepcopy(parent[key]))


def dump_with_duplicate(value: Any, target: Path_, path: Path_ = ()) -> str:
    """JSON text of `value` where the object at `target` writes its first key twice."""
    if isinstance(value, dict):
        items = [
            f"{json.dumps(k)}:{dump_with_duplicate(v, target, (*path, k))}"
            for k, v in value.items()
        ]
        if path == target and value:
            first = next(iter(value))
            items.append(f"{json.dumps(first)}:{json.dumps(changed(value[first])[0])}")
        return "{" + ",".join(items) + "}"
    if isinstance(value, list):
        parts = [dump_with_duplicate(v, target, (*path, i)) for i, v in enumerate(value)]
        return "[" + ",".join(parts) + "]"
    return json.dumps(value)


# --- the verdict rule --------------------------------------------------------------------------


def text(path: Path_) -> str:
    return path_text(tuple(f"[{p}]" if isinstance(p, int) else p for p in path))


def listed(report: Report) -> list[str]:
    """Paths the report names as not signed or unverifiable."""
    return [p for c in report.checks if c.status in (NOT_SIGNED, UNVERIFIABLE) for p in c.paths]


def covered_by(path: str, paths: list[str]) -> bool:
    return any(path == p or path.startswith((p + ".", p + "[")) for p in paths)


def optional(kind: str, path: Path_) -> bool:
    segs = tuple(f"[{p}]" if isinstance(p, int) else p for p in path)
    for pattern in OPTIONAL.get(kind, ()):
        pat = segments(pattern)
        if len(pat) == len(segs) and all(
            a == b or (a == "*" and not b.startswith("[")) or (a == "[*]" and b.startswith("["))
            for a, b in zip(pat, segs, strict=True)
        ):
            return True
    return False


def same_title(doc: Any, mutated: Any, path: Path_) -> bool:
    """A displayed title changed only in case or white space: the same canonical title."""
    from pithauthor.protocol.record import text_canon_sha256

    if not path or path[-1] != "title" or not _still_there(doc, path):
        return False  # (a later edit may have removed the title's parent, or shifted a list)
    old, new = _parent(doc, path)[path[-1]], _parent(mutated, path).get(path[-1])
    return isinstance(new, str) and text_canon_sha256(old) == text_canon_sha256(new)


def reseal(doc: Any, touched: Path_) -> Any:
    """Recompute what anyone can recompute without a key: a state's state_sha256."""
    if isinstance(doc, dict) and "state_sha256" in doc and touched[:1] != ("state_sha256",):
        body = {k: v for k, v in doc.items() if k != "state_sha256"}
        doc["state_sha256"] = canonical_sha256(body)
    return doc


def run_suite(name: str, doc: Any, trust: Trust, tmp_path: Path, sample: bool = False) -> None:
    """Every mutation of `doc` (or, with `sample`, one per field) refused or reported; every
    object written with a key twice refused by the reader (with `sample`, every fourth)."""
    genuine = verify_document(doc, trust)
    assert genuine.ok and genuine.kind != "", (name, genuine.failed)
    kind = detect_kind(doc)
    in_genuine = listed(genuine)
    tried = refused = reported = 0
    wrongly: list[str] = []
    for operation, path, mutated in mutations(doc, sample):
        tried += 1
        where = text(path)
        try:
            report = verify_document(reseal(mutated, path), trust)
        except DocumentError:
            refused += 1  # not even a document of a kind pith knows
            continue
        if not report.ok:
            refused += 1
            continue
        if same_title(doc, mutated, path):
            reported += 1  # titles compare in canonical form (case, white space)
            continue
        if operation == "delete":
            ok = covered_by(where, in_genuine) or optional(kind, path)
        else:
            ok = covered_by(where, listed(report))
        if ok:
            reported += 1
        else:
            wrongly.append(f"{operation} {where}")
    duplicates = 0
    for number, (path, value) in enumerate(containers(doc)):
        if isinstance(value, dict) and value and not (sample and number % 4):
            file = tmp_path / "dup.json"
            file.write_text(dump_with_duplicate(doc, path), "utf-8")
            with pytest.raises(DocumentError, match="duplicate key"):
                verify_file(file, trust)
            duplicates += 1
    count(
        f"{name}, one edit per field" if sample else name,
        tried=tried + duplicates,
        refused=refused + duplicates,
        accepted_and_reported=reported,
        accepted_unreported=len(wrongly),
    )
    assert not wrongly, f"{name}: accepted without being reported: {wrongly[:20]}"
    assert refused > tried / 3  # the suite is not vacuous: most fields are checked


# --- the documents -----------------------------------------------------------------------------


@pytest.fixture(scope="module")
def local(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    """A real local registry with events of every type, one equivocation and a record added
    from the real registry's record file (it keeps the upstream receipt)."""
    from support.registry import start_server

    data = tmp_path_factory.mktemp("tamper") / "reg"
    srv = start_server(data)
    add_paper(srv.store, srv.key, FIXTURES / "record-2302.12445v2.json", pinned_trust())
    try:
        signer = TestSigner(b"\x01" * 32)
        events = [
            citation(signer, 1),
            citation(signer, 1, relationship="refutes", created_at="2026-11-29T12:00:01Z"),
            attestation(signer),
            replication(signer),
        ]
        for event in events:
            httpx.post(
                f"{srv.url}/pith/{BODY}/action/{event['event_type']}",
                json=event,
                headers={"Idempotency-Key": event["event_id"]},
            ).raise_for_status()
        manifest = httpx.get(srv.url + "/pith-mirrors.json").json()
        trust = pinned_trust().with_keys(Trust.from_manifest(manifest, local=True).keys.values())
        docs = {
            what: httpx.get(f"{srv.url}/pith/{BODY}{suffix}").json()
            for what, suffix in (
                ("record", ""),
                ("state", "/state.json"),
                ("bundle", "/bundle.json"),
            )
        }
        assert docs["state"]["equivocations"], "the suite needs an equivocation to tamper with"
        yield {"trust": trust, **docs}
    finally:
        srv.stop()


def _registry_bundle() -> dict[str, Any]:
    """A bundle under the real registry's key (its record_created from the real state)."""
    state = load_fixture("state-2204.10562v1.json")
    created = dict(state["current"]["record_created"])
    canon = state["current"]["canonical_record"]
    number = state["pith_number"]
    return {
        "bundle_type": "pith_open_graph_bundle",
        "bundle_version": "1.0",
        "pith_number": number,
        "short_pith_number": "pith:" + number.split(":")[2][:8],
        "canonical_record": canon,
        "canonical_sha256": created["payload"]["canonical_sha256"],
        "source": canon["source"],
        "source_aliases": state["current"]["source_aliases"],
        "events": [
            created,
            json.loads((VECTORS / "valid" / "citation_signature.json").read_text()),
        ],
    }


SCOPE = [
    pytest.param(True, id="one-edit-per-field"),
    pytest.param(False, id="every-edit", marks=pytest.mark.slow),
]
"""Each document suite twice: one edit per field in the default run (every field is touched,
the operations taking turns), and every edit of every field under `slow` (about 4 times the
work: 15-30 CPU-s for all of them). The printed counts say which."""


@pytest.mark.parametrize("sample", SCOPE)
def test_no_field_of_the_real_record_can_be_altered_unreported(
    tmp_path: Path, sample: bool
) -> None:
    record = load_fixture("record-2302.12445v2.json")
    run_suite("record (pith.science)", record, pinned_trust(), tmp_path, sample)


@pytest.mark.parametrize("sample", SCOPE)
def test_no_field_of_a_receipt_row_can_be_altered_unreported(tmp_path: Path, sample: bool) -> None:
    for row in load_fixture("receipts.jsonl")[:2]:
        run_suite("receipt row", row, pinned_trust(), tmp_path, sample)


@pytest.mark.parametrize("sample", SCOPE)
def test_no_field_of_the_real_state_can_be_altered_unreported(tmp_path: Path, sample: bool) -> None:
    state = load_fixture("state-2204.10562v1.json")
    run_suite("state (pith.science)", state, pinned_trust(), tmp_path, sample)


@pytest.mark.parametrize("sample", SCOPE)
def test_no_field_of_a_registry_bundle_can_be_altered_unreported(
    tmp_path: Path, sample: bool
) -> None:
    run_suite("bundle (pith.science key)", _registry_bundle(), pinned_trust(), tmp_path, sample)


@pytest.mark.parametrize("sample", SCOPE)
@pytest.mark.parametrize("what", ["record", "state", "bundle"])
def test_no_field_of_a_local_registry_document_can_be_altered_unreported(
    local: dict[str, Any], what: str, tmp_path: Path, sample: bool
) -> None:
    run_suite(f"{what} (local registry)", local[what], local["trust"], tmp_path, sample)


# --- several edits at once (Hypothesis) ------------------------------------------------------


DOCS = {
    "record": load_fixture("record-2302.12445v2.json"),
    "state": load_fixture("state-2204.10562v1.json"),
    "bundle": _registry_bundle(),
}


@settings(max_examples=examples(120), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data(), which=st.sampled_from(sorted(DOCS)))
def test_several_edits_at_once_are_refused_or_reported(data: st.DataObject, which: str) -> None:
    """Up to four edits anywhere in one document (resealed): refused, or every touched field is
    reported (not signed / unverifiable; a deleted one: so in the genuine document, or optional)."""
    genuine = DOCS[which]
    in_genuine = listed(verify_document(genuine, pinned_trust()))
    doc = copy.deepcopy(genuine)
    touched: list[tuple[str, Path_]] = []
    for _ in range(data.draw(st.integers(1, 4), label="edits")):
        paths = [p for p, _ in nodes(doc)]
        path = data.draw(st.sampled_from(paths), label="path")
        parent, last = _parent(doc, path), path[-1]
        operation = data.draw(st.sampled_from(["change", "empty", "delete", "add"]), label="op")
        if operation == "change":
            parent[last] = data.draw(st.sampled_from(changed(parent[last])), label="value")
        elif operation == "empty" and empty(parent[last]) not in (None, parent[last]):
            parent[last] = empty(parent[last])
        elif operation == "delete":
            del parent[last]
        elif isinstance(parent[last], dict):
            parent[last]["tampered"] = "x"
            path = (*path, "tampered")
        else:
            operation = "change"
            parent[last] = "x"
        touched.append((operation, path))
    sealed = reseal(doc, ("none",))
    try:
        report = verify_document(sealed, pinned_trust())
    except DocumentError:
        return  # refused: not a document of a kind pith knows
    if not report.ok:
        return
    now = listed(report)
    for operation, path in touched:
        where = text(path)
        if _still_there(sealed, path) and _at(sealed, path) == _at(genuine, path):
            continue  # resealing rewrote it as it was (state_sha256): not an edit
        if path == ("state_sha256",) and _still_there(sealed, path):
            continue  # resealing recomputed it from the (edited) body: the edit is gone
        if operation == "delete" and not _still_there(doc, path[:-1]):
            continue  # a later edit removed its parent: that edit is the one checked
        if operation == "delete" and not _still_there(genuine, path):
            continue  # it took away what an earlier edit added: nothing of the genuine changed
        if operation == "delete":
            assert covered_by(where, in_genuine) or optional(which, path), (operation, where)
        elif _still_there(doc, path) and not same_title(genuine, doc, path):
            assert covered_by(where, now) or covered_by(where, in_genuine), (operation, where)


def _at(doc: Any, path: Path_) -> Any:
    """The value at `path`, or a marker no JSON value equals when it is not there."""
    node = doc
    for step in path:
        try:
            node = node[step]
        except (KeyError, IndexError, TypeError):
            return _MISSING
    return node


_MISSING = object()


def _still_there(doc: Any, path: Path_) -> bool:
    """A later edit may have removed an earlier one's field (or its parent)."""
    node = doc
    for step in path:
        try:
            node = node[step]
        except (KeyError, IndexError, TypeError):
            return False
    return True


def _with_action_host(record: dict[str, Any], host: str) -> dict[str, Any]:
    """`record` with its first action link moved to `host` (same scheme, port and path)."""
    from urllib.parse import urlsplit

    moved = copy.deepcopy(record)
    actions = moved["agent_actions"]["actions"]
    name, url = next(iter(actions.items()))
    parts = urlsplit(url)
    actions[name] = parts._replace(netloc=f"{host}:{parts.port}").geturl()
    return moved


@pytest.mark.parametrize("host", ["127.evil.example", "127.0.0.1.evil.example"])
def test_a_local_registrys_action_link_to_a_host_that_only_looks_loopback_fails(
    local: dict[str, Any], host: str
) -> None:
    """A local registry's key covers its other loopback spellings, not a DNS name that starts
    like one: `127.evil.example` is somebody's server (the one loopback rule, `protocol.text`)."""
    report = verify_document(_with_action_host(local["record"], host), local["trust"])
    assert "agent_actions" in [c.name for c in report.failed]


def test_a_local_registrys_action_link_may_spell_loopback_another_way(
    local: dict[str, Any],
) -> None:
    report = verify_document(_with_action_host(local["record"], "localhost"), local["trust"])
    assert report.ok, [c.name for c in report.failed]
