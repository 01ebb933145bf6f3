"""Tamper suite for signed events: no change to a genuine event is accepted, and each is refused
by the check named for what was changed.

Every entrance reads events the same way: the strict JSON reader, then `check_author_event`
(`pith verify`, the outbox, the local registry). Two walks over each published valid vector
(every event type), then random trees:

- one byte per field: each leaf has its middle character replaced by the next of its class (or
  its integer raised by one); a table says, per field, exactly which checks must fail;
- every field in turn changed, emptied, deleted, duplicated, and every field name added to
  every object: nothing but the genuine event itself (its canonical bytes unchanged) is
  accepted;
- Hypothesis inserts arbitrary JSON trees anywhere, tries arbitrary signature strings and byte
  flips, and feeds the strict reader hostile text.

Counts are printed in the "tamper counts" summary.
"""

from __future__ import annotations

import base64
import copy
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st
from support.examples_budget import examples
from support.tamper_counts import count

from pithauthor.errors import EventError
from pithauthor.protocol.canonical_json import MAX_SAFE_INTEGER, JSONFault, canonical, parse_json
from pithauthor.protocol.checks.event import check_author_event
from pithauthor.protocol.payloads import EVENT_TYPES, load_schema
from pithauthor.registry.outbox import Outbox

# ================================================================================================
# Every field of a signed event, changed by one byte, fails verification by a named check.
#
# Each leaf of each valid vector (envelope, signer.*, payload.* with nested author.* and
# artifacts[i].*, event_id, signature.*) has its middle character replaced by the next character
# of its class (0-9, a-f, g-z, A-Z; anything else becomes '#'), or its integer raised by one.
# The table says, per field, exactly which checks must fail. Fields that only the hash covers fail
# `event_id`, whose detail lists the signed fields; every field with a rule of its own also fails
# the check named for that rule.

VALID = Path(__file__).parents[1] / "vectors" / "events" / "valid"
CLASSES = ("0123456789", "abcdef", "ghijklmnopqrstuvwxyz", "ABCDEFGHIJKLMNOPQRSTUVWXYZ")

# field (list indices as []) -> checks that fail when it changes by one byte.
EXPECTED: dict[str, set[str]] = {
    "event_type": {"event_type", "target", "event_id"},
    "target": {"target", "event_id"},
    # still pith:YYYY:BODY, but no longer the number of payload.canonical_sha256
    "subject_pith_number": {"payload_subject", "event_id"},
    # the middle character is the 'T'
    "created_at": {"created_at", "event_id"},
    "signer.key_id": {"key_id", "event_id"},
    "signer.public_key_fingerprint": {"public_key_fingerprint", "event_id"},
    "signer.public_key_b64": {"public_key_fingerprint", "key_id", "event_id", "signature"},
    # orcid:0000-0002-... -> orcid:0000-0102-...: wrong check digit
    "signer.signer_id": {"signer_id", "event_id"},
    "signer.signer_type": {"signer_type", "event_id"},
    "event_id": {"event_id", "signature"},
    "signature.algorithm": {"signature"},
    "signature.signed_message": {"signature"},
    "signature.signature_b64": {"signature"},
    "payload.payload_schema": {"payload_schema", "event_id"},
    # Still 64 hex. A Pith Number carries the digest's first 130 bits; the middle hex digit holds
    # bits 128-131, so payload_subject sees the change only when it touches bit 128 or 129
    # (see EXTRA); the whole digest is bound by event_id.
    "payload.canonical_sha256": {"event_id"},
    "payload.author.name": {"event_id"},
    # the middle character of 0000-0002-1825-0097 is a '-'
    "payload.author.orcid": {"payload_schema", "event_id"},
    "payload.author.position": {"event_id"},
    "payload.statement": {"event_id"},
    "payload.citing_pith_number": {"event_id"},
    "payload.relationship": {"payload_schema", "event_id"},
    "payload.citation_key": {"event_id"},
    "payload.context": {"event_id"},
    "payload.kind": {"payload_schema", "event_id"},
    "payload.outcome": {"payload_schema", "event_id"},
    "payload.proof_system": {"payload_schema", "event_id"},
    "payload.artifacts[].uri": {"event_id"},
    "payload.artifacts[].sha256": {"event_id"},
    "payload.summary": {"event_id"},
    "payload.identity_proofs[].kind": {"payload_schema", "event_id"},
    "payload.identity_proofs[].locator": {"event_id"},
    # still sha256:<64 hex>: which event it corrects is bound by event_id
    "payload.replaces": {"event_id"},
    "payload.withdraws": {"event_id"},
    # an anchor: which proof and header is bound by event_id (whether the proof still reaches
    # the hash is the anchor verdict's, not the event's); it carries complete proofs only
    "payload.opentimestamps[].calendar": {"event_id"},
    "payload.opentimestamps[].proof": {"event_id"},
    "payload.opentimestamps[].complete": {"payload_schema", "event_id"},
    "payload.bitcoin_headers[].height": {"event_id"},
    "payload.bitcoin_headers[].header": {"event_id"},
    # a storage attestation: a capture URL must stay the Wayback form of its url and timestamp
    "payload.captures[].url": {"payload_captures", "event_id"},
    "payload.captures[].capture_url": {"payload_captures", "event_id"},
    "payload.captures[].timestamp": {"payload_captures", "event_id"},
    "payload.captures[].digest": {"event_id"},
    "payload.captures[].sha256": {"event_id"},
    "payload.captures[].mimetype": {"event_id"},
    "payload.code.origin": {"event_id"},
    "payload.code.swhid": {"event_id"},
}
# Where a vector adds a rule: the attestation's payload ORCID must be the signer's, and a signer
# without ORCID is named by its key id, which follows the public key.
EXTRA: dict[tuple[str, str], set[str]] = {
    ("author_attestation.json", "signer.signer_id"): {"payload_orcid"},
    ("author_attestation_identity_proofs.json", "signer.signer_id"): {"payload_orcid"},
    ("author_attestation_replacement.json", "signer.signer_id"): {"payload_orcid"},
    # the middle characters of the ORCID proof's iD ('-') and of the paper URL ('/') break the
    # locator's pattern; the web origin's stays a valid origin (only the hash covers it)
    ("author_attestation_identity_proofs.json", "payload.identity_proofs[0].locator"): {
        "payload_schema"
    },
    ("author_attestation_identity_proofs.json", "payload.identity_proofs[2].locator"): {
        "payload_schema"
    },
    ("citation_signature_key_signer.json", "signer.public_key_b64"): {"signer_id"},
    # 694dd781...7f25|b959...: 'b' -> 'c' (1011 -> 1100) changes bits 128-129 of the digest;
    # e3beb26c...a4d9|8378...: '8' -> '9' changes only bit 131 (the other subject's vectors).
    ("author_attestation.json", "payload.canonical_sha256"): {"payload_subject"},
    ("replication_record.json", "payload.canonical_sha256"): {"payload_subject"},
    ("author_attestation_identity_proofs.json", "payload.canonical_sha256"): {"payload_subject"},
    ("author_attestation_replacement.json", "payload.canonical_sha256"): {"payload_subject"},
    ("timestamp_anchor.json", "payload.canonical_sha256"): {"payload_subject"},
    ("storage_attestation.json", "payload.canonical_sha256"): {"payload_subject"},
    # application/pdf -> application#pdf: no capture of the PDF is left; text/html -> text#html
    # breaks the mimetype's pattern
    ("storage_attestation.json", "payload.captures[0].mimetype"): {"payload_captures"},
    ("storage_attestation.json", "payload.captures[1].mimetype"): {"payload_schema"},
}


def _leaves(obj: Any, path: tuple[Any, ...] = ()) -> Iterator[tuple[Any, ...]]:
    if isinstance(obj, dict):
        for key, value in obj.items():
            yield from _leaves(value, (*path, key))
    elif isinstance(obj, list):
        for index, value in enumerate(obj):
            yield from _leaves(value, (*path, index))
    else:
        yield path


def _name(path: tuple[Any, ...]) -> str:
    joined = ".".join(str(p) for p in path)
    return joined.replace(".0.", "[].").replace(".1.", "[].").replace(".2.", "[].")


def _one_byte(value: Any) -> Any:
    if isinstance(value, bool):  # an anchor's `complete`: the one boolean of a payload
        return not value
    if not isinstance(value, int | str):
        raise TypeError(f"unexpected leaf {value!r}")
    if isinstance(value, int):
        return value + 1
    mid = len(value) // 2
    char = value[mid]
    for chars in CLASSES:
        if char in chars:
            new = chars[(chars.index(char) + 1) % len(chars)]
            break
    else:
        new = "#"
    assert len(char.encode()) == 1, "the middle character is one byte"
    return value[:mid] + new + value[mid + 1 :]


def _cases() -> Iterator[Any]:
    for file in sorted(VALID.glob("*.json")):
        event = json.loads(file.read_text("utf-8"))
        for path in _leaves(event):
            yield pytest.param(file.name, path, id=f"{file.stem}:{_name(path)}")


@pytest.mark.parametrize(("file", "path"), list(_cases()))
def test_one_byte_change_fails_the_check_named_for_the_field(
    file: str, path: tuple[Any, ...]
) -> None:
    event = json.loads((VALID / file).read_text("utf-8"))
    assert check_author_event(event).ok
    changed = copy.deepcopy(event)
    target = changed
    for step in path[:-1]:
        target = target[step]
    target[path[-1]] = _one_byte(target[path[-1]])

    report = check_author_event(changed)

    field = _name(path)
    assert field in EXPECTED, f"{field} has no expectation: add it to the table"
    precise = "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in path)[1:]
    expected = EXPECTED[field] | EXTRA.get((file, precise), EXTRA.get((file, field), set()))
    assert not report.ok
    assert {c.name for c in report.failed} == expected, report.failed
    for check in report.failed:
        if check.name == "payload_schema":
            assert precise in check.detail or field.startswith("payload.payload_schema"), (
                check.detail
            )
        if check.name == "event_id":
            assert "signer, payload" in check.detail


def test_table_has_no_field_the_vectors_lack() -> None:
    seen = {
        _name(path)
        for file in VALID.glob("*.json")
        for path in _leaves(json.loads(file.read_text("utf-8")))
    }
    assert set(EXPECTED) == seen


# ================================================================================================
# Tamper suite for signed events: no change to a genuine event is accepted by anyone.
#
# Every entrance reads events the same way: the strict JSON reader, then `check_author_event`
# (`pith verify`, the outbox, the local registry). For each published valid vector (every event
# type) the tree is walked generically: every field in turn is changed, emptied, deleted,
# duplicated, and every field name is added to every object. Hypothesis then inserts arbitrary
# JSON trees anywhere, tries arbitrary signature strings and byte flips. The one thing that may
# be accepted is the genuine event itself (its canonical bytes unchanged: key order and white
# space are not part of an event). Counts are printed in the "tamper counts" summary.

GENUINE: dict[str, dict[str, Any]] = {
    p.stem: parse_json(p.read_bytes()) for p in sorted(VALID.glob("*.json"))
}
Path_ = tuple[str | int, ...]


def accepted(text: str | bytes) -> bool:
    """What `pith verify`, the outbox and the registry do with an event's text."""
    try:
        event = parse_json(text)
    except JSONFault:
        return False
    return check_author_event(event).ok


def same_event(text: str | bytes, genuine: dict[str, Any]) -> bool:
    try:
        return canonical(parse_json(text)) == canonical(genuine)
    except JSONFault:
        return False


def nodes(tree: Any, path: Path_ = ()) -> Iterator[tuple[Path_, Any]]:
    """Every (path, value) under `tree`, the root excluded."""
    if not isinstance(tree, dict | list):
        return
    children: Any = tree.items() if isinstance(tree, dict) else enumerate(tree)
    for key, child in children:
        yield (*path, key), child
        yield from nodes(child, (*path, key))


def objects(tree: Any) -> list[Path_]:
    """The paths of every object in `tree`, the root included."""
    return [()] + [p for p, v in nodes(tree) if isinstance(v, dict)]


def get(tree: Any, path: Path_) -> Any:
    for key in path:
        tree = tree[key]
    return tree


def edited(genuine: dict[str, Any], path: Path_, action: str, value: Any = None) -> Any:
    """A deep copy of `genuine` with one edit at `path`: set, delete, or insert before."""
    event = json.loads(json.dumps(genuine))
    parent = get(event, path[:-1])
    key = path[-1]
    if action == "set":
        parent[key] = value
    elif action == "delete":
        del parent[key]
    elif action == "insert":
        parent.insert(key, value)
    return event


def changes(value: Any) -> list[Any]:
    """Other values for a field: edits of the same type, every empty value, other types."""
    same: list[Any] = []
    if isinstance(value, str):
        same = [value + "x", value[:-1], value.upper(), value.lower(), " " + value, value * 2]
    elif isinstance(value, bool):
        same = [not value]
    elif isinstance(value, int):
        same = [value + 1, value - 1, -value, float(value), str(value)]
    elif isinstance(value, list):
        same = [value[:-1], value + value[-1:]] if value else [[{}]]
    elif isinstance(value, dict):
        same = [dict(list(value.items())[:-1])]
    empties = ["", [], {}, None, 0, False]
    others = [1, True, "x", ["x"], {"x": "x"}, 2**53 - 1, -1, 1.5]
    return [v for v in same + empties + others if type(v) is not type(value) or v != value]


def duplicated_key_texts(genuine: dict[str, Any], path: Path_) -> list[str]:
    """The event's text with the member at `path` written twice (same value; another value)."""
    parent_path, key = path[:-1], path[-1]
    texts = []
    for second in (get(genuine, path), "x"):
        marker = "\u2603DUPLICATE\u2603"
        event = edited(genuine, (*parent_path, marker), "set", None)
        member = json.dumps(key) + ":" + json.dumps(get(genuine, path))
        text = json.dumps(event, ensure_ascii=False).replace(
            json.dumps(marker, ensure_ascii=False) + ": null",
            member + ", " + json.dumps(key) + ":" + json.dumps(second),
        )
        texts.append(text)
    return texts


def variants(genuine: dict[str, Any]) -> Iterator[tuple[str, Path_, str]]:
    """(kind of tampering, the field touched, text) for every field in turn."""
    names = {k for p, _ in nodes(genuine) if isinstance(k := p[-1], str)} | {"x", "note"}
    for path, value in nodes(genuine):
        for other in changes(value):
            yield "change/empty", path, json.dumps(edited(genuine, path, "set", other))
        yield "delete", path, json.dumps(edited(genuine, path, "delete"))
        if isinstance(path[-1], str):
            for text in duplicated_key_texts(genuine, path):
                yield "duplicate", path, text
        else:
            yield "duplicate", path, json.dumps(edited(genuine, path, "insert", value))
    for obj in objects(genuine):
        for name in sorted(names - set(get(genuine, obj))):
            for value in ("x", None, {}, get(genuine, ("event_id",))):
                yield "add", (*obj, name), json.dumps(edited(genuine, (*obj, name), "set", value))


STRIDE = 5
"""The default run tries every 5th variant (each field has more than 5, so every field is
still changed, and every kind of tampering is tried); `slow` tries them all (5 times the work)."""


@pytest.mark.parametrize(
    "stride",
    [
        pytest.param(STRIDE, id=f"every-{STRIDE}th"),
        pytest.param(1, id="all", marks=pytest.mark.slow),
    ],
)
@pytest.mark.parametrize("name", sorted(GENUINE))
def test_no_change_to_any_field_of_a_genuine_event_is_accepted(
    name: str, stride: int, tmp_path: Path
) -> None:
    genuine = GENUINE[name]
    assert accepted(json.dumps(genuine)), "the genuine event itself must pass"
    tried = refused = 0
    kinds: set[str] = set()
    touched: set[Path_] = set()
    with Outbox(tmp_path / "outbox.sqlite3") as outbox:
        for index, (kind, path, text) in enumerate(variants(genuine)):
            if index % stride:
                continue
            if same_event(text, genuine):
                continue  # not a change (cannot happen for the edits above; kept honest)
            tried += 1
            kinds.add(kind)
            if kind != "add":
                touched.add(path)
            assert not accepted(text), (kind, text)
            try:
                outbox.store([parse_json(text)])
            except (JSONFault, EventError):
                refused += 1
        assert outbox.counts()["pending"] == 0
    label = f"event {genuine['event_type']} ({name})"
    count(
        label if stride == 1 else f"{label}, every {stride}th variant", tried=tried, refused=refused
    )
    assert kinds == {"change/empty", "delete", "duplicate", "add"}
    assert refused == tried > 200 // stride


def _schema_objects(schema: Any, path: str = "") -> Iterator[tuple[str, dict[str, Any]]]:
    """Every sub-schema of type object, at any depth."""
    if isinstance(schema, dict):
        if schema.get("type") == "object":
            yield path or "/", schema
        for key, value in schema.items():
            if key not in ("if", "const", "enum"):
                yield from _schema_objects(value, f"{path}/{key}")
    elif isinstance(schema, list):
        for i, value in enumerate(schema):
            yield from _schema_objects(value, f"{path}/{i}")


@pytest.mark.parametrize("event_type", EVENT_TYPES)
def test_every_object_in_every_payload_schema_is_closed(event_type: str) -> None:
    """No payload object, at any level, takes a field its schema does not name."""
    found = list(_schema_objects(load_schema(event_type)))
    assert found
    open_ = [
        p
        for p, s in found
        if s.get("type") == "object" and s.get("additionalProperties") is not False
    ]
    assert open_ == []


# --- Hypothesis -------------------------------------------------------------------------------

SAFE_INTS = st.integers(-MAX_SAFE_INTEGER, MAX_SAFE_INTEGER)
SCALARS = st.none() | st.booleans() | SAFE_INTS | st.floats(allow_nan=False) | st.text(max_size=20)


def _containers(kids: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    return st.lists(kids, max_size=4) | st.dictionaries(st.text(max_size=10), kids, max_size=4)


TREES = st.recursive(SCALARS, _containers, max_leaves=12)
EVENT_NAMES = st.sampled_from(sorted(GENUINE))
FAST = settings(
    max_examples=examples(300), deadline=None, suppress_health_check=[HealthCheck.too_slow]
)


def _finite(tree: Any) -> bool:
    if isinstance(tree, float):
        return tree not in (float("inf"), float("-inf"))
    if isinstance(tree, dict):
        return all(_finite(v) for v in tree.values())
    if isinstance(tree, list):
        return all(_finite(v) for v in tree)
    return True


@pytest.mark.slow
@FAST
@given(name=EVENT_NAMES, where=st.integers(min_value=0), key=st.text(max_size=12), tree=TREES)
def test_a_json_tree_added_to_any_object_is_never_accepted(
    name: str, where: int, key: str, tree: Any
) -> None:
    """Slow: 300 Hypothesis examples of arbitrary JSON trees (the default run edits every field)."""
    genuine = GENUINE[name]
    paths = objects(genuine)
    obj = paths[where % len(paths)]
    assume(_finite(tree))
    text = json.dumps(edited(genuine, (*obj, key), "set", tree))
    if same_event(text, genuine):
        return  # the key existed with exactly this value
    ok = accepted(text)
    count("event + arbitrary JSON tree (Hypothesis)", tried=1, refused=int(not ok))
    assert not ok


@pytest.mark.slow
@FAST
@given(name=EVENT_NAMES, where=st.integers(min_value=0), tree=TREES)
def test_any_field_replaced_by_a_json_tree_is_never_accepted(
    name: str, where: int, tree: Any
) -> None:
    """Slow: 300 Hypothesis examples of arbitrary JSON trees (the default run edits every field)."""
    genuine = GENUINE[name]
    paths = [p for p, _ in nodes(genuine)]
    assume(_finite(tree))
    text = json.dumps(edited(genuine, paths[where % len(paths)], "set", tree))
    if same_event(text, genuine):
        return
    ok = accepted(text)
    count("event field := arbitrary JSON tree (Hypothesis)", tried=1, refused=int(not ok))
    assert not ok


@FAST
@given(
    name=EVENT_NAMES,
    signature=st.text(max_size=100)
    | st.binary(max_size=70).map(lambda b: base64.b64encode(b).decode()),
)
def test_only_the_genuine_signature_string_is_accepted(name: str, signature: str) -> None:
    genuine = GENUINE[name]
    assume(signature != genuine["signature"]["signature_b64"])
    text = json.dumps(edited(genuine, ("signature", "signature_b64"), "set", signature))
    ok = accepted(text)
    count("event signature_b64 := arbitrary string (Hypothesis)", tried=1, refused=int(not ok))
    assert not ok


@pytest.mark.parametrize("name", sorted(GENUINE))
def test_every_other_spelling_of_the_genuine_signature_bytes_is_refused(name: str) -> None:
    """64 bytes leave 4 unused bits in the last base64 character: 15 other spellings decode to
    the very same signature; only the canonical one is accepted, and padding must be there."""
    genuine = GENUINE[name]
    sig = genuine["signature"]["signature_b64"]
    alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
    stem, last = sig[:-3], sig[-3]
    spellings = [
        stem + c + "==" for c in alphabet if alphabet.index(c) >> 4 == alphabet.index(last) >> 4
    ]
    spellings += [sig.rstrip("="), sig + "=", sig[:-1], " " + sig, sig + "\n"]
    tried = refused = 0
    for spelling in spellings:
        if spelling == sig:
            continue
        if "=" in spelling and spelling.endswith("=="):
            assert base64.b64decode(spelling) == base64.b64decode(sig)  # same bytes
        tried += 1
        text = json.dumps(edited(genuine, ("signature", "signature_b64"), "set", spelling))
        refused += not accepted(text)
    count("event signature_b64 re-spelled, same 64 bytes", tried=tried, refused=refused)
    assert refused == tried == 15 + 5


@FAST
@given(name=EVENT_NAMES, at=st.integers(min_value=0), byte=st.integers(0, 255))
def test_a_byte_changed_anywhere_in_the_text_is_accepted_only_if_the_event_is_the_same(
    name: str, at: int, byte: int
) -> None:
    genuine = GENUINE[name]
    raw = bytearray(json.dumps(genuine, indent=1, ensure_ascii=False).encode("utf-8"))
    at %= len(raw)
    assume(raw[at] != byte)
    raw[at] = byte
    ok = accepted(bytes(raw))
    same = same_event(bytes(raw), genuine)
    count(
        "event text with one byte changed (Hypothesis)",
        tried=1,
        refused=int(not ok),
        accepted_as_the_same_event=int(ok and same),
    )
    assert not ok or same  # e.g. a space turned into a tab: still the genuine event


# --- the strict JSON reader ---------------------------------------------------------------------


def _reader_outcome(suite: str, data: str | bytes) -> None:
    """parse_json refuses with JSONFault or gives a value that survives a round trip; anything
    else it raises fails the test."""
    try:
        value = parse_json(data)
    except JSONFault:
        count(suite, tried=1, refused=1)
        return
    again = parse_json(json.dumps(value, ensure_ascii=False, allow_nan=False).encode("utf-8"))
    assert again == value  # what it accepts survives a round trip through any writer
    count(suite, tried=1, accepted_and_round_tripped=1)


@settings(max_examples=examples(500), deadline=None)
@given(st.text() | st.binary())
def test_strict_reader_raises_only_jsonfault_and_round_trips_what_it_accepts(
    data: str | bytes,
) -> None:
    _reader_outcome("parse_json on arbitrary text/bytes (Hypothesis)", data)


@settings(max_examples=examples(300), deadline=None)
@given(
    tree=TREES,
    at=st.integers(min_value=0),
    insert=st.sampled_from(
        [
            "NaN",
            "Infinity",
            "-Infinity",
            "9007199254740992",
            "1e999",
            '"\\ud800"',
            '"\\udfff"',
            "[",
            "]",
            "{",
            "}",
            ",",
            ":",
            '"',
            "\\",
            "\x00",
            "\ufeff",
            "1" * 30,
            "[" * 100_000,
        ]
    ),
)
def test_strict_reader_on_json_with_hostile_pieces_inserted(
    tree: Any, at: int, insert: str
) -> None:
    assume(_finite(tree))
    text = json.dumps(tree)
    at %= len(text) + 1
    _reader_outcome(
        "parse_json on JSON with a hostile piece (Hypothesis)", text[:at] + insert + text[at:]
    )


@settings(max_examples=examples(300), deadline=None)
@given(tree=TREES)
def test_strict_reader_reads_every_strict_tree_exactly(tree: Any) -> None:
    assume(_finite(tree))
    assert parse_json(json.dumps(tree)) == tree
    assert parse_json(json.dumps(tree, ensure_ascii=False).encode("utf-8")) == tree
