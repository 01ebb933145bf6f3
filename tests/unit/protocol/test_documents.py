"""The TypedDicts of `pithauthor.protocol.documents` are the protocol documents as they really are.

- every document of the real vectors, of the local registry (over HTTP) and of `pith.sign` is an
  instance of its type: no field undeclared, no required field missing, every value of its type;
- every declared field is seen in some such document (no invented field), bar named exceptions;
- the checkers enforce the same field sets (the event envelope's exact fields, the payload JSON
  Schemas, the required fields of records, bundles and states);
- parsed JSON is cast to a document type only in the checking functions, and `dict[str, Any]` is
  gone from the code that handles protocol documents, bar named exceptions.
"""

from __future__ import annotations

import ast
import copy
import json
import types
import typing
from collections.abc import Iterator
from pathlib import Path
from typing import Any, Literal, Union, get_args, get_origin, get_type_hints

import httpx
import pytest
from support.paths import FIXTURES, load_fixture
from support.registry import TestSigner, attestation, citation, replication, start_server

from pithauthor.protocol import documents as d
from pithauthor.protocol.checks.bundle import check_bundle
from pithauthor.protocol.checks.event import (
    check_author_event,
    checked_author_event,
    typed_author_event,
)
from pithauthor.protocol.checks.record import check_record
from pithauthor.protocol.checks.state import check_state
from pithauthor.protocol.identity import IdentityProof
from pithauthor.protocol.ids import PithNumber
from pithauthor.protocol.payloads import load_schema
from pithauthor.protocol.timestamps import HeaderEntry, OTSEntry, build_sidecar
from pithauthor.protocol.verdict import Trust
from pithauthor.registry.local.answers import state_document
from pithauthor.registry.local.server import RegistryServer

REPO = Path(__file__).resolve().parents[3]
EVENTS = Path(__file__).parents[2] / "vectors" / "events"
VALID = sorted((EVENTS / "valid").glob("*.json"))
BODY = "NFG5PAOXQUVIWDX5F7YSYYL7EW"

# --- a structural instance check, from the TypedDicts' own annotations ---------------------------


def faults(value: Any, tp: Any, path: str = "$") -> list[str]:
    """Where `value` is not an instance of `tp` (TypedDicts key by key, unions, literals...)."""
    if tp is object:
        return []
    if typing.is_typeddict(tp):
        if not isinstance(value, dict):
            return [f"{path}: not an object"]
        hints = get_type_hints(tp)
        out = [f"{path}.{k}: not declared in {tp.__name__}" for k in value if k not in hints]
        out += [f"{path}.{k}: required, missing" for k in tp.__required_keys__ if k not in value]
        for key, item in value.items():
            if key in hints:
                out += faults(item, hints[key], f"{path}.{key}")
        return out
    origin = get_origin(tp)
    if origin in (Union, types.UnionType):
        tried = [faults(value, member, path) for member in get_args(tp)]
        return [] if any(not t for t in tried) else min(tried, key=len)
    if origin is Literal:
        return [] if value in get_args(tp) else [f"{path}: {value!r} not in {get_args(tp)}"]
    if origin is list:
        if not isinstance(value, list):
            return [f"{path}: not a list"]
        return [f for i, v in enumerate(value) for f in faults(v, get_args(tp)[0], f"{path}[{i}]")]
    if origin is dict:
        if not isinstance(value, dict):
            return [f"{path}: not an object"]
        return [f for k, v in value.items() for f in faults(v, get_args(tp)[1], f"{path}.{k}")]
    if tp is type(None):
        return [] if value is None else [f"{path}: not null"]
    if tp is int:
        ok = isinstance(value, int) and not isinstance(value, bool)
        return [] if ok else [f"{path}: not an integer"]
    if tp in (str, bool):
        return [] if isinstance(value, tp) else [f"{path}: not {tp.__name__}"]
    raise AssertionError(f"{path}: no rule for {tp!r}")


def seen_fields(value: Any, tp: Any, seen: set[tuple[str, str]]) -> None:
    """Add (TypedDict name, field) for every declared field present in `value`."""
    if typing.is_typeddict(tp) and isinstance(value, dict):
        hints = get_type_hints(tp)
        for key, item in value.items():
            if key in hints:
                seen.add((tp.__name__, key))
                seen_fields(item, hints[key], seen)
    elif get_origin(tp) in (Union, types.UnionType):
        for member in get_args(tp):
            if not faults(value, member):
                seen_fields(value, member, seen)
    elif get_origin(tp) is list and isinstance(value, list):
        for item in value:
            seen_fields(item, get_args(tp)[0], seen)


def declared_fields(tp: Any, out: set[tuple[str, str]]) -> None:
    """Every (TypedDict name, field) reachable from `tp`."""
    if typing.is_typeddict(tp):
        if any(name == tp.__name__ for name, _ in out):
            return
        hints = get_type_hints(tp)
        out.update((tp.__name__, k) for k in hints)
        for hint in hints.values():
            declared_fields(hint, out)
    for arg in get_args(tp):
        declared_fields(arg, out)


# --- every document pithauthor meets -------------------------------------------------------------


def _post(srv: RegistryServer, event: dict[str, Any]) -> Any:
    url = f"{srv.url}/pith/{BODY}/action/{event['event_type']}"
    return httpx.post(url, json=event, headers={"Idempotency-Key": event["event_id"]}).json()


@pytest.fixture(scope="module")
def local_documents(tmp_path_factory: pytest.TempPathFactory) -> Iterator[list[tuple[str, Any]]]:
    """The local registry's documents over HTTP, holding an applied event of each type, an
    equivocation, a repeat and a refused event (422), and the sidecar of one event's proofs of
    time; and a state merged with that event (invalid)."""
    srv = start_server(tmp_path_factory.mktemp("registry"))
    try:
        signer = TestSigner(b"\x07" * 32)
        answers = [_post(srv, e) for e in (attestation(signer), citation(signer, 1))]
        answers.append(_post(srv, replication(signer)))
        answers.append(_post(srv, citation(signer, 1, relationship="refutes")))  # equivocation
        # a citation, and the same signed again later: a repeat, listed under `duplicates`
        answers.append(_post(srv, citation(signer, 3)))
        answers.append(_post(srv, citation(signer, 3, created_at="2026-11-29T12:30:00Z")))
        bad = citation(signer, 2)
        bad["payload"]["relationship"] = "extends"  # after signing: 422
        refused = _post(srv, bad)
        # the proofs of the citation's time, kept beside it: the bundle and state list them
        cited = citation(signer, 1)["event_id"]
        sidecar = build_sidecar(
            cited,
            [("https://tsa.test/", b"token")],
            [("https://cal.test", b"proof", True)],
            [(950000, bytes(80))],
        )
        kept = httpx.post(f"{srv.url}/pith/{BODY}/action/trusted_time", json=sidecar)
        assert kept.status_code == 200, kept.text
        base = f"{srv.url}/pith/{BODY}"
        rec = srv.store.find(BODY)
        assert rec is not None
        with_invalid = state_document(rec, srv.key, [*srv.store.events(BODY), bad])
        corrected = state_document(rec, srv.key, _corrections())
        manifest = httpx.get(srv.url + "/pith-mirrors.json").json()
        yield [
            ("local record", (d.RecordDocument, httpx.get(base).json())),
            ("local bundle", (d.RecordBundle, httpx.get(base + "/bundle.json").json())),
            ("local state", (d.ServedState, httpx.get(base + "/state.json").json())),
            ("local manifest", (d.MirrorManifest, manifest)),
            ("local state with an invalid event", (d.MergedState, with_invalid)),
            ("local state with corrections", (d.MergedState, corrected)),
            # a served state is a merged state and its sidecars (none here)
            ("local state with corrections, as served", (d.ServedState, corrected)),
            (
                "local resolver answer",
                (
                    d.ResolveAnswer,
                    httpx.get(srv.url + "/api/pith-number/resolve?arxiv=2302.12445").json(),
                ),
            ),
            ("local 422 answer", (d.ErrorAnswer, refused)),
            *((f"local action answer {i}", (d.ActionAnswer, a)) for i, a in enumerate(answers)),
        ]
    finally:
        srv.stop()


def _corrections() -> list[d.AuthorEvent]:
    """Each type replaced, and then withdrawn: every link field of every payload."""
    from support.registry import SUBJECT

    from pithauthor.sign import attest_authorship, record_replication, sign_citation, withdraw

    key = TestSigner(b"\x0b" * 32)
    times = iter(f"2026-11-29T1{h}:00:00Z" for h in range(10))
    citing = PithNumber.parse("pith:2024:ABCDEFGHIJKLMNOPQRSTUVWXYZ")  # another paper (not itself)
    events: list[d.AuthorEvent] = []
    first = [
        attest_authorship(key, SUBJECT, name="Ada Lovelace", created_at=next(times)),
        sign_citation(key, SUBJECT, citing, "cites", created_at=next(times)),
        record_replication(
            key, SUBJECT, kind="replication", outcome="reproduced", summary="ran it",
            created_at=next(times),
        ),
    ]  # fmt: skip
    second = [
        attest_authorship(key, SUBJECT, name="Ada Lovelace", position=1, created_at=next(times),
                          replaces=first[0]["event_id"]),
        sign_citation(key, SUBJECT, citing, "extends", created_at=next(times),
                      replaces=first[1]["event_id"]),
        record_replication(
            key, SUBJECT, kind="replication", outcome="not_reproduced", summary="ran it again",
            created_at=next(times), replaces=first[2]["event_id"],
        ),
    ]  # fmt: skip
    events = [*first, *second]
    events += [withdraw(key, e, created_at=next(times)) for e in second]
    return events


def _signed_events() -> list[tuple[str, Any]]:
    from support.registry import SUBJECT

    from pithauthor.sign import attest_authorship, record_replication, sign_citation

    key = TestSigner(b"\x09" * 32)
    citing = PithNumber.parse("pith:2024:ABCDEFGHIJKLMNOPQRSTUVWXYZ")  # another paper (not itself)
    events = [
        attest_authorship(key, SUBJECT, name="Ada Lovelace"),
        attest_authorship(
            key,
            SUBJECT,
            name="Josiah Carberry",
            orcid="0000-0002-1825-0097",
            position=2,
            identity_proofs=[{"kind": "orcid", "locator": "0000-0002-1825-0097"}],
        ),
        sign_citation(key, SUBJECT, citing, "extends", citation_key="k", context="Sec. 2"),
        record_replication(
            key,
            SUBJECT,
            kind="formal_bridge",
            outcome="formalized",
            summary="Lean 4 proof",
            artifacts=[("https://example.org/a.zip", "ab" * 32)],
            proof_system="lean4",
        ),
    ]
    return [(f"pith.sign event {i}", (d.AuthorEvent, e)) for i, e in enumerate(events)]


def real_documents() -> list[tuple[str, Any]]:
    """The registry's real documents (tests/fixtures, copies of the protocol vectors) and the
    project's own event vectors."""
    docs: list[tuple[str, Any]] = [
        ("real record", (d.RecordDocument, load_fixture("record-2302.12445v2.json"))),
        ("real state", (d.MergedState, load_fixture("state-2204.10562v1.json"))),
        ("real manifest", (d.MirrorManifest, load_fixture("pith-mirrors.json"))),
    ]
    docs += [
        (f"receipt {i}", (d.ReceiptRow, r)) for i, r in enumerate(load_fixture("receipts.jsonl"))
    ]
    docs += [
        (f"canonical record {i}", (d.ComputedRecord, r))
        for i, r in enumerate(load_fixture("canonical_records.jsonl"))
    ]
    docs += [(p.name, (d.AuthorEvent, json.loads(p.read_text("utf-8")))) for p in VALID]
    return docs


def all_documents(local: list[tuple[str, Any]]) -> list[tuple[str, Any]]:
    return real_documents() + local + _signed_events()


def test_every_real_and_local_document_is_an_instance_of_its_type(
    local_documents: list[tuple[str, Any]],
) -> None:
    found = {name: faults(doc, tp) for name, (tp, doc) in all_documents(local_documents)}
    assert {name: f for name, f in found.items() if f} == {}


def test_the_fixtures_are_the_protocol_vectors() -> None:
    shared = Path("/work/shared/protocol/vectors")
    if not shared.is_dir():
        pytest.skip("the shared protocol vectors are not on this machine")
    for name in ("record-2302.12445v2.json", "state-2204.10562v1.json", "pith-mirrors.json"):
        assert (FIXTURES / name).read_bytes() == (shared / name).read_bytes(), name


# Declared fields no vector holds, each with the reason it is declared all the same.
UNSEEN = {
    ("RecordCreated", "event_type"): "a bundle's record_created carries it (PROTOCOL section 4); "
    "no real bundle is among the vectors",
    ("RegistryEvent", "event_type"): "as for RecordCreated: seen in bundles, not in the vectors",
    ("AnchorPayload", "replaces"): "a correction of an anchor: the same rule as every type's, "
    "shown by the replication and attestation vectors",
    ("AnchorPayload", "withdraws"): "as for replaces",
    ("StoragePayload", "replaces"): "as for AnchorPayload",
    ("StoragePayload", "withdraws"): "as for AnchorPayload",
    ("RecordDocument", "upstream_receipt"): "the local registry's record of a paper added from a "
    "pith.science record (tests/unit/registry/test_local_server.py)",
}


def test_every_declared_field_is_seen_in_some_document(
    local_documents: list[tuple[str, Any]],
) -> None:
    seen: set[tuple[str, str]] = set()
    declared: set[tuple[str, str]] = set()
    for _, (tp, doc) in all_documents(local_documents):
        seen_fields(doc, tp, seen)
        declared_fields(tp, declared)
    assert declared - seen == set(UNSEEN)


def test_a_field_the_types_do_not_declare_is_found() -> None:
    record = load_fixture("record-2302.12445v2.json")
    record["receipt"]["extra"] = 1
    del record["aliases"][0]["alias_value"]
    assert faults(record, d.RecordDocument) == [
        "$.receipt.extra: not declared in Receipt",
        "$.aliases[0].alias_value: required, missing",
    ]


# --- the checkers enforce the same field sets ----------------------------------------------------


def _event() -> dict[str, Any]:
    return json.loads((EVENTS / "valid" / "citation_signature.json").read_text("utf-8"))


@pytest.mark.parametrize(
    ("where", "fields"),
    [
        ((), d.AuthorEvent.__required_keys__),
        (("signer",), d.EventSigner.__required_keys__),
        (("signature",), d.EventSignature.__required_keys__),
    ],
)
def test_the_envelope_requires_exactly_the_typed_fields(
    where: tuple[str, ...], fields: frozenset[str]
) -> None:
    assert fields and not d.AuthorEvent.__optional_keys__
    prefix = "".join(w + "." for w in where)
    for name in fields:
        event = _event()
        block = event
        for key in where:
            block = block[key]
        del block[name]
        structure = check_author_event(event).checks[0]
        assert structure.name == "structure" and f"{prefix}{name} (missing)" in structure.detail
    event = _event()
    block = event
    for key in where:
        block = block[key]
    block["note"] = "x"
    assert f"{prefix}'note' (unknown field)" in check_author_event(event).checks[0].detail


def _schema_view(schema: dict[str, Any]) -> tuple[set[str], set[str], Any]:
    return (
        set(schema["properties"]),
        set(schema.get("required", ())),
        schema.get("additionalProperties"),
    )


@pytest.mark.parametrize(
    ("event_type", "path", "typed"),
    [
        ("author_attestation", (), d.AttestationPayload),
        ("author_attestation", ("author",), d.AttestationAuthor),
        ("author_attestation", ("identity_proofs", "items"), IdentityProof),
        ("citation_signature", (), d.CitationPayload),
        ("replication_record", (), d.ReplicationPayload),
        ("replication_record", ("artifacts", "items"), d.ArtifactRef),
        ("timestamp_anchor", (), d.AnchorPayload),
        ("timestamp_anchor", ("opentimestamps", "items"), OTSEntry),
        ("timestamp_anchor", ("bitcoin_headers", "items"), HeaderEntry),
        ("storage_attestation", (), d.StoragePayload),
        ("storage_attestation", ("captures", "items"), d.Capture),
        ("storage_attestation", ("code",), d.CodeArchive),
    ],
)
def test_payload_types_match_their_json_schemas(
    event_type: str, path: tuple[str, ...], typed: Any
) -> None:
    schema = load_schema(event_type)
    for key in path:
        schema = schema["properties"][key] if key != "items" else schema["items"]
    props, required, additional = _schema_view(schema)
    assert props == set(get_type_hints(typed))
    assert required == set(typed.__required_keys__)
    assert additional is False
    assert d.PAYLOAD_TYPES[event_type] is typed or path


def _missing_required(report: Any) -> str:
    return next(c.detail for c in report.checks if c.name == "required")


@pytest.mark.parametrize(
    ("typed", "document", "check"),
    [
        (d.RecordDocument, "record-2302.12445v2.json", check_record),
        (d.MergedState, "state-2204.10562v1.json", check_state),
    ],
)
def test_the_checkers_require_exactly_the_typed_required_fields(
    typed: Any, document: str, check: Any
) -> None:
    trust = Trust.from_manifest(load_fixture("pith-mirrors.json"))
    names = [n for n in get_type_hints(typed) if n in load_fixture(document)]
    assert set(typed.__required_keys__) <= set(names)
    for name in names:
        doc = load_fixture(document)
        del doc[name]
        detail = _missing_required(check(doc, trust))
        if name in typed.__required_keys__:
            assert detail == f"missing: {name}", name
        else:
            assert detail == "present", name


def test_the_bundle_checker_requires_exactly_the_typed_required_fields(
    local_documents: list[tuple[str, Any]],
) -> None:
    bundle = dict(local_documents)["local bundle"][1]
    manifest = dict(local_documents)["local manifest"][1]
    trust = Trust.from_manifest(manifest, local=True)
    assert check_bundle(bundle, trust).ok
    for name in get_type_hints(d.RecordBundle):
        doc = copy.deepcopy(bundle)
        del doc[name]
        detail = _missing_required(check_bundle(doc, trust))
        expected = f"missing: {name}" if name in d.RecordBundle.__required_keys__ else "present"
        assert detail == expected, name


# --- where parsed JSON becomes typed -------------------------------------------------------------


def test_only_checked_events_are_typed() -> None:
    for path in VALID:
        doc = json.loads(path.read_text("utf-8"))
        assert checked_author_event(doc)[1] is doc
        assert typed_author_event(doc) is doc
    invalid = {p.stem: p for p in (EVENTS / "invalid").glob("*.json")}
    from pithauthor.protocol.canonical_json import JSONFault, parse_json

    for stem, path in invalid.items():
        try:
            doc = parse_json(path.read_bytes())
        except JSONFault:
            continue
        assert checked_author_event(doc)[1] is None, stem
    shapes = ("extra_top_level_field", "missing_signature", "event_type_unknown", "target_wrong")
    for stem in (*shapes, "relationship_unknown", "extra_signer_field"):
        assert typed_author_event(parse_json(invalid[stem].read_bytes())) is None, stem
    # the shape is all typed_author_event reads: a stale id or a foreign signature is not shape
    for stem in ("event_id_stale", "signature_by_other_key"):
        assert typed_author_event(parse_json(invalid[stem].read_bytes())) is not None, stem


DOCUMENT_TYPES = {
    name
    for name, value in vars(d).items()
    if typing.is_typeddict(value) and value.__module__ == d.__name__
} | {"IdentityProof", "AuthorPayload"}
# the functions that have checked a document's shape, the only ones that cast to its type
GATES = {
    ("pithauthor/protocol/checks/event.py", "_typed"),
    ("pithauthor/protocol/checks/record.py", "checked_record"),
    ("pithauthor/protocol/checks/bundle.py", "checked_bundle"),
    ("pithauthor/protocol/checks/state.py", "checked_state"),
    # the record cache: text whose SHA-256 is bound to the trust it passed `check_record` under
    # (any other text is checked again, through `checked_record`)
    ("pithauthor/registry/client.py", "RecordCache"),
    # a record whose bytes' SHA-256 the record cache keeps as having passed under this trust
    ("pithauthor/registry/client.py", "_passed_before"),
}


def _nodes_with_owner(tree: ast.AST) -> Iterator[tuple[ast.AST, str]]:
    """Every node of a module with the name of the outermost def or class around it ('' at top
    level), in no particular order (the callers collect sets). A stack, not nested generators:
    a `yield from` per level of nesting made the walk cost twice the parse."""
    defs = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)
    stack: list[tuple[ast.AST, str]] = [(tree, "")]
    while stack:
        node, owner = stack.pop()
        for child in ast.iter_child_nodes(node):
            inner = child.name if isinstance(child, defs) and not owner else owner
            yield child, inner
            stack.append((child, inner))


def _package_files() -> list[Path]:
    return sorted((REPO / "pithauthor").rglob("*.py"))


def test_documents_are_cast_to_their_types_only_where_their_shape_is_checked() -> None:
    casts = set()
    for path in _package_files():
        for node, owner in _nodes_with_owner(ast.parse(path.read_text("utf-8"))):
            if (
                isinstance(node, ast.Call)
                # the name first: unparsing every call of the package was a third of this test
                and getattr(node.func, "id", getattr(node.func, "attr", None)) == "cast"
                and ast.unparse(node.func) in ("cast", "typing.cast")
                and ast.unparse(node.args[0]).strip("'\"") in DOCUMENT_TYPES
            ):
                casts.add((str(path.relative_to(REPO)), owner))
    assert casts == GATES


# The code that handles protocol documents.
TYPED_MODULES = [
    *sorted(str(p.relative_to(REPO)) for p in (REPO / "pithauthor" / "protocol").rglob("*.py")),
    *sorted(
        str(p.relative_to(REPO)) for p in (REPO / "pithauthor" / "registry" / "local").glob("*.py")
    ),
    "pithauthor/sign.py",
    "pithauthor/bibliography/cite.py",
    "pithauthor/registry/outbox.py",
    "pithauthor/registry/journal.py",
    "pithauthor/registry/recovery.py",
    "pithauthor/verify.py",
    "pithauthor/registry/client.py",
    "pithauthor/registry/submit.py",
    "pithauthor/registry/client.py",
    "pithauthor/registry/access.py",
    "pithauthor/_cli/signing.py",
]
# `dict[str, Any]` left on purpose, by (module, top-level def or class), with the reason.
ALLOWED_ANY = {
    ("pithauthor/protocol/canonical_json.py", "_pairs"): "the JSON reader itself: it builds every "
    "parsed object before anything knows what kind of document it is",
    ("pithauthor/protocol/payloads.py", "load_schema"): "a JSON Schema, not a protocol document",
}


def test_no_untyped_document_dicts_are_left() -> None:
    found = set()
    for module in TYPED_MODULES:
        tree = ast.parse((REPO / module).read_text("utf-8"))
        for node, owner in _nodes_with_owner(tree):
            if (
                isinstance(node, ast.Subscript)
                and getattr(node.value, "id", None) == "dict"  # cheap before unparse
                and ast.unparse(node) == "dict[str, Any]"
            ):
                found.add((module, owner))
    assert found == set(ALLOWED_ANY)
