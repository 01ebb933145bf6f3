"""The payloads of author events (pure): the eight relationships a citation can carry, each event
type's JSON Schema (`pithauthor/schemas/`) and the checks it implies, and the payload fields
that name a paper, an artifact or an ORCID iD.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from functools import cache, lru_cache
from typing import TYPE_CHECKING, Any, Final, cast

from pithauthor.errors import InputError
from pithauthor.protocol.canonical_json import b64decode, json_string, parse_json
from pithauthor.protocol.ids import BODY_LENGTH, PithNumber

# Types only, and fastjsonschema loaded where a schema is first compiled:
# `pith bib scan` reads the relationships from here and needs none of them (start-up).
if TYPE_CHECKING:
    from pithauthor.protocol.documents import (
        AnchorPayload,
        ArtifactRef,
        AttestationAuthor,
        AttestationPayload,
        CitationPayload,
        EventType,
        ReplicationPayload,
        StoragePayload,
    )
    from pithauthor.protocol.identity import IdentityProof

__all__ = [
    "DEFAULT_STATEMENT",
    "OUTCOMES",
    "PROOF_SYSTEMS",
    "RELATIONSHIPS",
    "Artifact",
    "anchor_payload",
    "attestation_payload",
    "citation_payload",
    "digest_matches_number",
    "replication_payload",
    "storage_payload",
]


# The eight relationships a citation can carry (the registry's citation form, OBSERVED).
#
# This tuple is the one place the names live: the bibliography reader validates against it and
# the citation events use it.

RELATIONSHIPS: Final[tuple[str, ...]] = (
    "supports",
    "refutes",
    "extends",
    "uses_method",
    "depends_on",
    "replaces",
    "compares",
    "cites",
)


DEFAULT_RELATIONSHIP: Final[str] = "cites"


_KNOWN: Final[frozenset[str]] = frozenset(RELATIONSHIPS)


def relationship_problem(text: str) -> str | None:
    """None when `text` names one of the eight (case and outer spaces ignored); else why not."""
    if text.strip().lower() in _KNOWN:
        return None
    hint = ""
    folded = "_".join(text.strip().lower().replace("-", " ").split())
    if folded in _KNOWN:
        hint = f" (did you mean {folded!r}?)"
    return f"{text!r} is not a relationship{hint}; expected one of {', '.join(RELATIONSHIPS)}"


def normalize_relationship(text: str) -> str:
    """The relationship `text` names, in its canonical spelling; InputError when none."""
    problem = relationship_problem(text)
    if problem is not None:
        raise InputError(problem)
    return text.strip().lower()


# The payloads of the five author event types (DESIGN), as plain data and pure rules.
#
# The JSON Schemas in `pithauthor/schemas/` are the authority on shape and bounds; this module
# holds the names and lists they use, builds payloads in protocol form (optional keys omitted,
# never null), and the two rules a schema cannot state: the ORCID check digit, and that the
# payload's `canonical_sha256` is the digest the subject's Pith Number was cut from.

ATTESTATION: Final = "author_attestation"


CITATION: Final = "citation_signature"


REPLICATION: Final = "replication_record"


ANCHOR: Final = "timestamp_anchor"


STORAGE: Final = "storage_attestation"


EVENT_TYPES: tuple[EventType, ...] = (ATTESTATION, CITATION, REPLICATION, ANCHOR, STORAGE)


PAYLOAD_SCHEMAS: dict[str, str] = {t: f"pithauthor.{t}.v1" for t in EVENT_TYPES}


DEFAULT_STATEMENT = "I am an author of this paper."


OUTCOMES: dict[str, tuple[str, ...]] = {
    "replication": ("reproduced", "partially_reproduced", "not_reproduced", "inconclusive"),
    "falsification": ("falsified", "not_falsified", "inconclusive"),
    "formal_bridge": ("formalized", "partially_formalized", "not_formalized"),
}


PROOF_SYSTEMS: dict[str, str] = {"lean4": "Lean 4", "coq": "Coq", "isabelle": "Isabelle"}


@dataclass(frozen=True, slots=True)
class Artifact:
    """An artifact of a replication: where it is, and the sha256 of its bytes."""

    uri: str
    sha256: str

    def as_dict(self) -> ArtifactRef:
        return {"uri": self.uri, "sha256": self.sha256}


def attestation_payload(
    canonical_sha256: str,
    *,
    name: str,
    orcid: str | None = None,
    position: int | None = None,
    statement: str | None = None,
    identity_proofs: Iterable[Mapping[str, Any]] = (),
) -> AttestationPayload:
    """`author_attestation` payload; `statement` defaults to DEFAULT_STATEMENT;
    `identity_proofs` ({kind, locator}, docs/identity.md) omitted when there are none."""
    author: AttestationAuthor = {"name": name}
    if orcid is not None:
        author["orcid"] = orcid
    if position is not None:
        author["position"] = position
    payload: AttestationPayload = {
        "payload_schema": PAYLOAD_SCHEMAS[ATTESTATION],
        "canonical_sha256": canonical_sha256,
        "author": author,
        "statement": DEFAULT_STATEMENT if statement is None else statement,
    }
    proofs: list[IdentityProof] = [
        {"kind": p["kind"], "locator": p["locator"]} for p in identity_proofs
    ]
    if proofs:
        payload["identity_proofs"] = proofs
    return payload


def citation_payload(
    canonical_sha256: str,
    *,
    citing: str,
    relationship: str,
    citation_key: str | None = None,
    context: str | None = None,
) -> CitationPayload:
    """`citation_signature` payload; `canonical_sha256` is the CITED paper's."""
    payload: CitationPayload = {
        "payload_schema": PAYLOAD_SCHEMAS[CITATION],
        "canonical_sha256": canonical_sha256,
        "citing_pith_number": citing,
        "relationship": relationship,
    }
    if citation_key is not None:
        payload["citation_key"] = citation_key
    if context is not None:
        payload["context"] = context
    return payload


def replication_payload(
    canonical_sha256: str,
    *,
    kind: str,
    outcome: str,
    summary: str,
    artifacts: Iterable[Artifact] = (),
    proof_system: str | None = None,
) -> ReplicationPayload:
    """`replication_record` payload; `proof_system` only for a formal bridge."""
    listed = [a.as_dict() for a in artifacts]
    schema = PAYLOAD_SCHEMAS[REPLICATION]
    if proof_system is None:
        return {
            "payload_schema": schema,
            "canonical_sha256": canonical_sha256,
            "kind": kind,
            "outcome": outcome,
            "artifacts": listed,
            "summary": summary,
        }
    return {  # the same, with proof_system in its place (the order a reader sees)
        "payload_schema": schema,
        "canonical_sha256": canonical_sha256,
        "kind": kind,
        "outcome": outcome,
        "proof_system": proof_system,
        "artifacts": listed,
        "summary": summary,
    }


def anchor_payload(
    canonical_sha256: str,
    *,
    proofs: Iterable[tuple[str, str]],
    headers: Iterable[tuple[int, str]],
) -> AnchorPayload:
    """`timestamp_anchor` payload: (calendar URL, base64 complete proof) per calendar, sorted
    by calendar, and (height, 160 hex) per block, ascending (one entry per source and height:
    the last given wins), in the trusted-time sidecar's forms."""
    by_calendar = dict(proofs)
    by_height = dict(headers)
    return {
        "payload_schema": PAYLOAD_SCHEMAS[ANCHOR],
        "canonical_sha256": canonical_sha256,
        "opentimestamps": [
            {"calendar": url, "proof": by_calendar[url], "complete": True}
            for url in sorted(by_calendar)
        ],
        "bitcoin_headers": [{"height": h, "header": by_height[h]} for h in sorted(by_height)],
    }


def storage_payload(
    canonical_sha256: str,
    *,
    captures: Iterable[Mapping[str, str]],
    code: Mapping[str, str] | None = None,
) -> StoragePayload:
    """`storage_attestation` payload: the Wayback captures (url, capture_url, timestamp,
    digest, mimetype, and sha256 for the PDF), in the order given; `code` ({origin, swhid})
    when a repository was saved too."""
    listed: list[Any] = []
    for capture in captures:
        entry = {k: capture[k] for k in ("url", "capture_url", "timestamp", "digest", "mimetype")}
        if capture.get("sha256") is not None:
            entry["sha256"] = capture["sha256"]
        listed.append(entry)
    payload: StoragePayload = {
        "payload_schema": PAYLOAD_SCHEMAS[STORAGE],
        "canonical_sha256": canonical_sha256,
        "captures": listed,
    }
    if code is not None:
        payload["code"] = {"origin": code["origin"], "swhid": code["swhid"]}
    return payload


#: The largest OpenTimestamps proof an anchor carries (decoded), as a trusted-time sidecar's.
MAX_ANCHOR_PROOF_BYTES: Final = 64 << 10


PDF_MIMETYPE: Final = "application/pdf"


def anchor_problem(payload: Mapping[str, Any]) -> str | None:
    """None when a `timestamp_anchor` payload that met its schema also meets the rules a schema
    cannot state: each proof canonical base64 of at most `MAX_ANCHOR_PROOF_BYTES`, each calendar
    named once, the headers in ascending height, each height once. Whether a proof reaches the
    digest and a header is not judged here: that is the anchor verdict's
    (docs/protocol.md, "Anchors and archive copies")."""
    calendars: set[str] = set()
    for number, entry in enumerate(payload["opentimestamps"], start=1):
        try:
            raw = b64decode(entry["proof"])
        except ValueError:
            return f"payload.opentimestamps[{number}].proof is not canonical base64"
        if len(raw) > MAX_ANCHOR_PROOF_BYTES:
            return f"payload.opentimestamps[{number}].proof is over {MAX_ANCHOR_PROOF_BYTES} bytes"
        if entry["calendar"] in calendars:
            return f"payload.opentimestamps names {entry['calendar']} twice"
        calendars.add(entry["calendar"])
    heights = [h["height"] for h in payload["bitcoin_headers"]]
    if heights != sorted(set(heights)):
        return "payload.bitcoin_headers are not in ascending height, each once"
    return None


def pdf_capture(payload: Mapping[str, Any]) -> Mapping[str, Any] | None:
    """The capture of the paper's PDF in a `storage_attestation` payload (the one whose
    mimetype is application/pdf), if it holds one."""
    captures = payload.get("captures")
    if not isinstance(captures, list):
        return None
    found = [c for c in captures if isinstance(c, Mapping) and c.get("mimetype") == PDF_MIMETYPE]
    return found[0] if found else None


def storage_problem(payload: Mapping[str, Any]) -> str | None:
    """None when a `storage_attestation` payload that met its schema also meets the rules a
    schema cannot state: exactly one capture of the PDF, the one with a `sha256` (the bytes the
    signer compared); each capture URL the Wayback form of its url at its timestamp
    (`.../web/<timestamp>/<url>`); each url captured once."""
    captures = payload["captures"]
    pdfs = [c for c in captures if c["mimetype"] == PDF_MIMETYPE]
    if len(pdfs) != 1:
        return f"payload.captures holds {len(pdfs)} captures of a PDF, not exactly one"
    urls: set[str] = set()
    for number, capture in enumerate(captures, start=1):
        where = f"payload.captures[{number}]"
        if ("sha256" in capture) != (capture["mimetype"] == PDF_MIMETYPE):
            return f"{where}: sha256 is given for the PDF's capture, and for it only"
        if not capture["capture_url"].endswith(f"/web/{capture['timestamp']}/{capture['url']}"):
            return f"{where}.capture_url is not .../web/{capture['timestamp']}/{capture['url']}"
        if capture["url"] in urls:
            return f"payload.captures captures {capture['url']} twice"
        urls.add(capture["url"])
    return None


def rules_problem(event_type: str, payload: Mapping[str, Any]) -> str | None:
    """The rules beyond its schema a payload of `event_type` breaks (`anchor_problem`,
    `storage_problem`), for a payload that met its schema; None for the other types."""
    if event_type == ANCHOR:
        return anchor_problem(payload)
    if event_type == STORAGE:
        return storage_problem(payload)
    return None


# base32 alphabet (RFC 4648) -> the digits Python's int(..., 32) reads, to compare in C speed.
_TO_INT32 = str.maketrans("ABCDEFGHIJKLMNOPQRSTUVWXYZ234567", "0123456789abcdefghijklmnopqrstuv")
_TO_INT32_BYTES = bytes.maketrans(
    b"ABCDEFGHIJKLMNOPQRSTUVWXYZ234567", b"0123456789abcdefghijklmnopqrstuv"
)


_LOWER_HEX = frozenset("0123456789abcdef")


def digest_matches_number(canonical_sha256: str, number: PithNumber) -> bool:
    """True when `number`'s body is the first 26 base32 characters of the digest.

    The same as `base32_nopad(digest)[:26] == body`: 26 characters are the top 130 bits.
    """
    return digest_matches_body(canonical_sha256, number.body)


@lru_cache(
    maxsize=256
)  # the events of one document name one subject: asked once (`pith status` of a 10,000-event state)
def digest_matches_body(canonical_sha256: str, body: str) -> bool:
    """`digest_matches_number` for a number's 26-character body, upper-case base32 (a verifier
    has it as text, from a `subject_pith_number` already checked, not as a PithNumber)."""
    # exactly 64 lower-case hex digits, as the protocol shows every hash: `bytes.fromhex` alone
    # would also take upper case and spaces, spellings no verifier accepts in a signed payload
    if len(canonical_sha256) != 64 or not _LOWER_HEX.issuperset(canonical_sha256):
        return False
    if len(body) != BODY_LENGTH:
        return False
    return body_bits_match(canonical_sha256, body)


def body_bits_match(canonical_sha256: str, body: str) -> bool:
    """`digest_matches_body` for a digest and a body whose spellings are proven (64 lower-case
    hex; 26 characters of upper-case base32, as a subject's pattern gives them): the 130 bits
    alone, for a caller that has checked both (a cache of pairs missed on every citation of a
    bibliography, each citing another paper, and cost more than the comparison)."""
    # the top 130 bits of the digest, read as the 17 leading bytes' top 136 bits less 6. The
    # body's ASCII text is translated as bytes (a table look-up per byte: a third of the
    # dict look-up per character of `str.translate`); any other text as before (`int` reads
    # some non-ASCII digits in text, none in bytes)
    if body.isascii():
        bits = int(body.encode().translate(_TO_INT32_BYTES), 32)
    else:
        bits = int(body.translate(_TO_INT32), 32)
    return int(canonical_sha256[:34], 16) >> 6 == bits


def self_citation_problem(
    citing: Any, cited: Any, citing_arxiv: str | None = None, cited_arxiv: str | None = None
) -> str | None:
    """None unless a citation's citing paper is its cited paper: the same Pith Number, or,
    when the records of both are at hand (`*_arxiv`: their `source.id`, without version),
    two versions of one arXiv paper (each version has its own number): a paper cannot sign a
    citation of itself."""
    if isinstance(citing, str) and citing == cited:
        return f"the citing paper {citing} is the cited paper: a paper cannot cite itself"
    if citing_arxiv is not None and citing_arxiv == cited_arxiv:
        return (
            f"the citing paper {citing} and the cited paper {cited} are versions of one arXiv "
            f"paper, {citing_arxiv}: a paper cannot cite itself"
        )
    return None


def payload_orcid(payload: Mapping[str, Any]) -> str | None:
    """The author's ORCID iD in an attestation payload, if any."""
    author = payload.get("author")
    orcid = author.get("orcid") if isinstance(author, Mapping) else None
    return orcid if isinstance(orcid, str) else None


# The payload JSON Schemas shipped in `pithauthor/schemas/`, compiled once per process.
#
# Schemas are JSON Schema draft-07 files; validation uses `fastjsonschema`, which compiles each
# schema to Python once (a 15-20x speed-up over interpreting it per payload, which matters when
# thousands of events are signed or verified). `tests/unit/protocol/test_payloads.py` checks that
# the reference implementation `jsonschema` agrees.

Validate = Callable[[Any], Any]


def schema_file(event_type: str) -> str:
    """The file name of `event_type`'s payload schema inside `pithauthor/schemas/`."""
    if event_type not in EVENT_TYPES:
        raise ValueError(f"unknown event type {event_type!r}")
    return f"{event_type}.schema.json"


@cache
def load_schema(event_type: str) -> dict[str, Any]:
    """The payload schema of `event_type`, as parsed JSON."""
    # the package loader's own read (`pkgutil.get_data`): `importlib.resources` loads tempfile,
    # shutil, zipfile, bz2 and lzma (about 4 ms), and the signer reads the citation schema's
    # field rules on every `pith cite`
    import importlib
    import pkgutil  # here: `pith bib scan` reads no schema

    # imported first as any import does it: `get_data` alone would load the package without
    # making it an attribute of `pithauthor`
    importlib.import_module("pithauthor.schemas")
    data = pkgutil.get_data("pithauthor.schemas", schema_file(event_type))
    if data is None:  # a loader that cannot read data: the package is broken
        raise FileNotFoundError(f"pithauthor/schemas/{schema_file(event_type)}")
    schema: dict[str, Any] = parse_json(data.decode("utf-8"))
    return schema


# Every payload schema says `"not": {"required": ["replaces", "withdraws"]}`: fastjsonschema
# checks a `not` by running the inner schema and catching the exception it raises, which made
# every valid payload raise and catch one (two fifths of a validation). The rule is
# taken out of the compiled schema and checked as the same two-key test in `schema_violation`;
# `_validator` refuses a schema whose `not` says anything else, so the two cannot drift.
_BOTH_CORRECTIONS = {"required": ["replaces", "withdraws"]}


@cache
def _validator(event_type: str) -> tuple[Validate, bool]:
    """The compiled schema (without its `not`) and whether it has numbers (see `_numeric`)."""
    schema = dict(load_schema(event_type))
    _check_not(event_type, schema.pop("not", _BOTH_CORRECTIONS))
    import fastjsonschema

    validate: Validate = fastjsonschema.compile(schema)
    return validate, _numeric(schema)


def _check_not(event_type: str, rule: object) -> None:
    """Refuse a schema whose top-level `not` is other than the two-key rule checked apart."""
    if rule != _BOTH_CORRECTIONS:
        raise ValueError(f"{schema_file(event_type)}: an unexpected top-level 'not'")


def _numeric(schema: Any) -> bool:
    """Whether a value a schema places (the object, its `properties`, `items` and
    `additionalProperties`) may be a number. When none may, a float in a payload fails the
    schema itself, and the walk for fractions (`_fraction`) is not needed. `allOf`, `if`,
    `then` and `else` only narrow what these admit, so they are not walked."""
    if not isinstance(schema, dict):
        return not isinstance(schema, bool) or schema  # `true` admits anything, `false` nothing
    kinds = schema.get("type")
    kinds = kinds if isinstance(kinds, list) else [kinds]
    if "integer" in kinds or "number" in kinds:
        return True
    listed = [*schema.get("enum", ()), *([schema["const"]] if "const" in schema else [])]
    if "type" not in schema and not listed:
        return True  # no type and no list of values: numbers too
    if "type" not in schema and any(not isinstance(v, str) for v in listed):
        return True
    children = list(schema.get("properties", {}).values())
    if "object" in kinds:  # JSON Schema's default: any other property, of any value
        children.append(schema.get("additionalProperties", True))
    if "array" in kinds:  # the same for the items of an array
        children.append(schema.get("items", True))
    return any(_numeric(c) for c in children)


def schema_violation(event_type: str, payload: Mapping[str, Any]) -> str | None:
    """None when `payload` meets its schema; else the first failure, naming its JSON path
    (`payload.relationship must be one of [...]`)."""
    validate, numeric = _validator(event_type)
    try:
        validate(payload)
    except Exception as exc:
        from fastjsonschema import JsonSchemaValueException  # loaded by `_validator`

        if not isinstance(exc, JsonSchemaValueException):
            raise
        message = str(exc.message)
        return "payload" + message[4:] if message.startswith("data") else message
    if "replaces" in payload and "withdraws" in payload:  # the schema's `not` (see above)
        return "payload must not hold both replaces and withdraws"
    return _fraction(payload, "payload") if numeric and _has_float(payload) else None


def _has_float(value: Any) -> bool:
    """Whether `value` holds a float anywhere (the walk of `_fraction` without its paths)."""
    if isinstance(value, float):
        return True
    if isinstance(value, Mapping):
        return any(_has_float(v) for v in value.values() if not isinstance(v, str))
    if isinstance(value, list):
        return any(_has_float(v) for v in value if not isinstance(v, str))
    return False


def _fraction(value: Any, path: str) -> str | None:
    """JSON Schema's `integer` admits 3.0, which canonical JSON writes as `3.0` in Python and `3`
    elsewhere: payloads hold integers only, written without a fraction."""
    if isinstance(value, float):
        return f"{path} must be an integer without a fraction"
    if isinstance(value, Mapping):
        items: Any = ((f"{path}.{k}", v) for k, v in value.items())
    elif isinstance(value, list):
        items = ((f"{path}[{i}]", v) for i, v in enumerate(value))
    else:
        return None
    return next((f for p, v in items if (f := _fraction(v, p))), None)


# --- payloads pithauthor built itself ------------------------------------------------------------
# Signing validated each payload it had just built with the whole compiled schema, a fifth of
# the cost of signing a citation. A citation's schema is flat: an object of string
# fields, each a const, an enum or a string with bounds and a pattern. Those rules are read from
# the schema file here and checked directly: a handful of comparisons and at most three regular
# expressions. Whatever the direct check does not pass goes to the full schema, which has the
# last word (and the message), so the direct check can only ever skip work on a payload the
# schema accepts; tests/unit/protocol/test_payloads.py checks that the two agree (and both
# with the reference `jsonschema`). Verification takes the same path (`check_author_event`): a
# payload from outside meets its schema by the direct check or is judged by the full one.

_FIELD_KEYWORDS = frozenset(("type", "minLength", "maxLength", "pattern", "description"))


_TOP_KEYWORDS = frozenset(
    ("$schema", "title", "description", "type", "additionalProperties", "required", "properties")
) | {"not"}


FieldRule = tuple[frozenset[str] | None, int, float, "re.Pattern[str] | None"]


def _field_rule(subschema: Any) -> FieldRule | None:
    """(allowed values or None, min length, max length, compiled pattern) of a string field;
    None when the subschema says more than these can."""
    if not isinstance(subschema, dict):
        return None
    rest = {k: v for k, v in subschema.items() if k != "description"}
    if set(rest) == {"const"} and isinstance(rest["const"], str):
        return frozenset((rest["const"],)), 0, math.inf, None
    if set(rest) == {"enum"} and all(isinstance(v, str) for v in rest["enum"]):
        return frozenset(rest["enum"]), 0, math.inf, None
    if rest.get("type") != "string" or not set(subschema) <= _FIELD_KEYWORDS:
        return None
    pattern = rest.get("pattern")
    # fastjsonschema reads `$` as the end of the text (`\Z`), not "before a final newline"
    compiled = None if pattern is None else re.compile(_DOLLAR.sub(r"\\Z", pattern))
    return None, rest.get("minLength", 0), rest.get("maxLength", math.inf), compiled


# an unescaped `$`, as fastjsonschema's generator finds it
_DOLLAR = re.compile(r"(?<!\\)\$")


@cache
def _flat_rules(event_type: str) -> tuple[frozenset[str], dict[str, FieldRule]] | None:
    """(required fields, rule per field) when `event_type`'s schema is flat; else None."""
    schema = load_schema(event_type)
    if not set(schema) <= _TOP_KEYWORDS or schema.get("type") != "object":
        return None
    if schema.get("additionalProperties") is not False:
        return None
    rules = {name: _field_rule(sub) for name, sub in schema["properties"].items()}
    if any(rule is None for rule in rules.values()):
        return None
    # the same refusal of an unexpected `not` as `_validator`'s, without compiling the schema:
    # a signer whose payloads all pass these rules never needs fastjsonschema
    _check_not(event_type, schema.get("not", _BOTH_CORRECTIONS))
    return frozenset(schema.get("required", ())), cast(dict[str, FieldRule], rules)


def _meets_flat(
    payload: Mapping[str, Any], flat: tuple[frozenset[str], dict[str, FieldRule]]
) -> bool:
    required, rules = flat
    if not required <= payload.keys() or ("replaces" in payload and "withdraws" in payload):
        return False
    for name, value in payload.items():
        rule = rules.get(name)
        # exactly str, as the JSON reader gives: anything else is left to the full schema
        if rule is None or type(value) is not str:
            return False
        allowed, low, high, pattern = rule
        if allowed is not None:  # a const or an enum of texts: nothing more to ask
            if value not in allowed:
                return False
        elif not low <= len(value) <= high or (
            pattern is not None and pattern.search(value) is None
        ):
            return False
    return True


# The rules of a citation's fields, for the signer's template (`pithauthor.sign`).


@cache
def citation_rules() -> dict[str, FieldRule] | None:
    """The schema's rule per citation field, when it is flat and its payload_schema is the
    constant `citation_payload` writes; else None (every citation takes the full checks)."""
    flat = _flat_rules(CITATION)
    if flat is None or flat[1]["payload_schema"][0] != frozenset((PAYLOAD_SCHEMAS[CITATION],)):
        return None
    return flat[1]


def plain_field(value: Any, rule: FieldRule) -> bool:
    """`value` is text that meets `rule` and is printable (printable text is clean to sign: the
    fast case of `text.payload_text_problem`, shown for every code point in test_text)."""
    allowed, low, high, pattern = rule
    return (
        type(value) is str
        and low <= len(value) <= high
        and (allowed is None or value in allowed)
        and (pattern is None or pattern.search(value) is not None)
        and value.isprintable()
    )


# A citation from outside, as a verifier meets it: its schema, its text rule and its canonical
# text in one pass (`checks.event`'s tight path asked the three in turn, and the sorting encoder
# was a tenth of verifying a citation beyond its signature).


def citation_text(payload: Mapping[str, Any]) -> str | None:
    """The canonical text of a citation payload (`canonical_text(payload)`) when it meets the
    citation schema (`built_payload_violation` finds nothing) and every text in it is printable
    (`text.payload_text_problem`'s fast case); None when a rule doubts it, and the full checks
    then judge it. Each field is exactly text (as the JSON reader gives), each meets its rule as
    read from the schema file (`citation_rules`); the fields a pattern or a constant proves
    plain ASCII are written as they are, the caller's text through the encoder's own string
    function, the keys in sorted order. tests/unit/protocol/test_payloads_citation_text.py
    holds it to the schema, the text rule and `json.dumps` on hostile payloads."""
    heads = _citation_heads()
    if heads is None:
        return None
    digest = payload.get("canonical_sha256")
    citing = payload.get("citing_pith_number")
    key = payload.get("citation_key")
    note = payload.get("context")
    link = payload.get("replaces")
    dropped = payload.get("withdraws")
    # exactly the fields named here that are not None: a field the schema does not know, or a
    # JSON null, leaves the count short; both links at once is the schema's `not`
    present = (
        4 + (key is not None) + (note is not None) + (link is not None) + (dropped is not None)
    )
    if len(payload) != present or (link is not None and dropped is not None):
        return None
    schema, relationship = payload.get("payload_schema"), payload.get("relationship")
    if (
        type(schema) is not str
        or schema != heads[1]
        or type(relationship) is not str
        or (tail := heads[0].get(relationship)) is None
        or type(digest) is not str
        or _HEX64.fullmatch(digest) is None
        or type(citing) is not str
        or _NUMBER.fullmatch(citing) is None
    ):
        return None
    key_text = note_text = link_text = ""
    # `plain_field` of each, written out (two calls an event); no enum (`_citation_heads`)
    if key is not None:
        _, low, high, pattern = heads[2]
        if (
            type(key) is not str
            or not low <= len(key) <= high
            or (pattern is not None and pattern.search(key) is None)
            or not key.isprintable()
        ):
            return None
        key_text = f',"citation_key":{json_string(key)}'
    if note is not None:
        _, low, high, pattern = heads[3]
        if (
            type(note) is not str
            or not low <= len(note) <= high
            or (pattern is not None and pattern.search(note) is None)
            or not note.isprintable()
        ):
            return None
        note_text = f',"context":{json_string(note)}'
    if link is not None or dropped is not None:
        eid = link if link is not None else dropped
        if type(eid) is not str or _EVENT_ID.fullmatch(eid) is None:
            return None
        link_text = f',"{"replaces" if link is not None else "withdraws"}":"{eid}"'
    return (
        f'{{"canonical_sha256":"{digest}"{key_text},"citing_pith_number":"{citing}"'
        f"{note_text},{tail}{link_text}}}"
    )


# The schema's patterns of the fields a citation's canonical text writes without escaping:
# `\Z`, the end of the text, as fastjsonschema reads `$`. `_citation_heads` checks that the
# schema's rules are these (else every citation takes the full checks)
_HEX64 = re.compile(r"[0-9a-f]{64}\Z")
_NUMBER = re.compile(r"pith:[0-9]{4}:[A-Z2-7]{26}\Z")
_EVENT_ID = re.compile(r"sha256:[0-9a-f]{64}\Z")
_PLAIN_RULES = {
    "canonical_sha256": (None, 64, 64, "^[0-9a-f]{64}\\Z"),
    "citing_pith_number": (None, 36, 36, "^pith:[0-9]{4}:[A-Z2-7]{26}\\Z"),
    "replaces": (None, 71, 71, "^sha256:[0-9a-f]{64}\\Z"),
    "withdraws": (None, 71, 71, "^sha256:[0-9a-f]{64}\\Z"),
}


@cache
def _citation_heads() -> tuple[dict[str, str], str, FieldRule, FieldRule] | None:
    """(each relationship the schema allows -> the text ending a citation's canonical text
    with it, the payload_schema constant, the rules of citation_key and context), when the
    schema's rules are the ones `citation_text` writes by; else None."""
    rules = citation_rules()
    names = {*_PLAIN_RULES, "payload_schema", "relationship", "citation_key", "context"}
    if rules is None or set(rules) != names:
        return None
    for name, (allowed, low, high, pattern) in _PLAIN_RULES.items():
        rule = rules[name]
        if rule[:3] != (allowed, low, high) or rule[3] is None or rule[3].pattern != pattern:
            return None
    schema = PAYLOAD_SCHEMAS[CITATION]
    relationships = rules["relationship"][0]
    if relationships is None or rules["citation_key"][0] is not None:
        return None
    if rules["context"][0] is not None:
        return None
    head = f'"payload_schema":{json_string(schema)},"relationship":'
    tails = {r: head + json_string(r) for r in relationships}
    return tails, schema, rules["citation_key"], rules["context"]


def built_payload_violation(event_type: str, payload: Mapping[str, Any]) -> str | None:
    """`schema_violation` for a payload pithauthor built: the same verdict, by the direct check
    when the type's schema is flat and the payload passes it, else by the full schema."""
    flat = _flat_rules(event_type)
    if flat is not None and type(payload) is dict and _meets_flat(payload, flat):
        return None
    return schema_violation(event_type, payload)
