"""The trusted-time sidecar of an author event (DESIGN, docs/protocol.md "Trusted time").

An event's `created_at` is whatever its signer wrote. Trusted time is proven beside the event,
never inside it: the signed bytes do not change, and a proof fetched later (an OpenTimestamps
proof completes hours after the event) can be added without signing again. One sidecar per
event id, canonical JSON when written:

    {"type": "pith_trusted_time", "version": 1, "event_id": "sha256:<hex>",
     "rfc3161": [{"authority": URL, "token": base64 DER}],
     "opentimestamps": [{"calendar": URL, "proof": base64, "complete": bool}],
     "bitcoin_headers": [{"height": int, "header": hex of 80 bytes}]}

`bitcoin_headers` is optional (absent when empty, so a sidecar without it is written as
before): the headers of the blocks its complete OpenTimestamps proofs name, shipped so a reader
checks them offline (`pithauthor.timestamps.headers.ShippedHeaders`, read before any fetch). Each
names its height, as the proof's attestation does: a header does not state its own height. A
shipped header is trusted for nothing: the checker judges it exactly as a fetched one (its proof
of work, the difficulty floor, the merkle root the proof reaches).

How each proof is bound to its event:

- RFC 3161: the token's messageImprint is SHA-256 over the event's signature bytes (the
  base64-decoded `signature.signature_b64`; `signature_message`), as sigstore binds a timestamp to a
  signature: it proves the signature existed at the token's genTime;
- OpenTimestamps: the stamped digest is the 32 bytes of the event id (`ots_digest`).

Pure: building, strict parsing, merging. Checking a token or a proof is
`pithauthor.timestamps`'s; this module only says what a sidecar holds.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, NotRequired, Protocol, TypedDict

from pithauthor.protocol.canonical_json import b64decode, b64encode, canonical_text

if TYPE_CHECKING:
    from datetime import datetime

SIDECAR_TYPE = "pith_trusted_time"
SIDECAR_VERSION = 1

#: The member of a bundle or merged state listing the sidecars of its events (a local
#: registry's; DESIGN, docs/protocol.md "Trusted time"). Outside a state's `state_sha256`: the
#: proofs change as they complete, the events they are of do not.
CARRIED_KEY = "trusted_time"

#: A registry that keeps sidecars names this action in a record's `agent_actions.actions`
#: (the local registry's: `POST /pith/{body}/action/trusted_time`); pith sends sidecars to no
#: registry whose records name none (pith.science's name none).
TIME_ACTION_NAME = "submit_trusted_time"
TIME_ACTION = "trusted_time"

#: The proofs of the events of `X.jsonl` are in `X.jsonl` + this suffix (one sidecar a line).
SIDECAR_SUFFIX = ".time.jsonl"

_EVENT_ID_RE = re.compile(r"sha256:[0-9a-f]{64}")
_KEYS = {"type", "version", "event_id", "rfc3161", "opentimestamps"}
_OPTIONAL_KEYS = {"bitcoin_headers"}
_HEADER_KEYS = {"height", "header"}
_HEADER_HEX_RE = re.compile(r"[0-9a-f]{160}")
_RFC3161_KEYS = {"authority", "token"}
_OTS_KEYS = {"calendar", "proof", "complete"}
# a token is a few KiB (the TSA's chain included); a proof a few hundred bytes, a complete one
# a few KiB: anything past this is not a proof
MAX_PROOF_BYTES = 64 << 10
MAX_ENTRIES = 16
HEADER_BYTES = 80


class SidecarFault(ValueError):
    """A sidecar that is not one: the message says what is wrong in one line."""


class RFC3161Entry(TypedDict):
    """An RFC 3161 token from one authority (the DER ContentInfo, base64)."""

    authority: str
    token: str


class OTSEntry(TypedDict):
    """An OpenTimestamps proof from one calendar: `complete` once it reaches a Bitcoin block."""

    calendar: str
    proof: str
    complete: bool


class HeaderEntry(TypedDict):
    """A Bitcoin block header shipped beside the proofs: its height, its 80 bytes in hex."""

    height: int
    header: str


class Sidecar(TypedDict):
    """The proofs of one event's time."""

    type: str
    version: int
    event_id: str
    rfc3161: list[RFC3161Entry]
    opentimestamps: list[OTSEntry]
    bitcoin_headers: NotRequired[list[HeaderEntry]]


class Proven(Protocol):
    """A time some proof shows the event existed at (`pithauthor.timestamps.ProvenTime`):
    `by` names the authority or block ("rfc3161 https://tsa.example/", "bitcoin block 840000")."""

    @property
    def time(self) -> datetime: ...

    @property
    def by(self) -> str: ...


def signature_message(event: Mapping[str, Any]) -> bytes:
    """The bytes an RFC 3161 token is over: the event's signature (the token's imprint is
    their SHA-256). Raises ValueError when the event has no readable signature."""
    signature = event.get("signature")
    value = signature.get("signature_b64") if isinstance(signature, Mapping) else None
    if not isinstance(value, str):
        raise ValueError("the event has no signature_b64")
    return b64decode(value)


def ots_digest(event_id: str) -> bytes:
    """The 32 bytes an OpenTimestamps proof stamps: the event id's digest."""
    if not isinstance(event_id, str) or not _EVENT_ID_RE.fullmatch(event_id):
        raise ValueError(f"not an event id: {event_id!r}")
    return bytes.fromhex(event_id[len("sha256:") :])


def build_sidecar(
    event_id: str,
    rfc3161: Iterable[tuple[str, bytes]] = (),
    opentimestamps: Iterable[tuple[str, bytes, bool]] = (),
    headers: Iterable[tuple[int, bytes]] = (),
) -> Sidecar:
    """A sidecar for `event_id`: (authority, token) and (calendar, proof, complete) tuples,
    one entry per source (the last given wins), sorted by source; (height, 80-byte header)
    tuples, one per height (the last given wins), sorted by height, the member absent when
    there are none."""
    ots_digest(event_id)  # ValueError for anything but an event id
    tokens = {url: token for url, token in rfc3161}
    proofs = {url: (proof, complete) for url, proof, complete in opentimestamps}
    by_height = {height: raw for height, raw in headers}
    sidecar: Sidecar = {
        "type": SIDECAR_TYPE,
        "version": SIDECAR_VERSION,
        "event_id": event_id,
        "rfc3161": [{"authority": url, "token": b64encode(tokens[url])} for url in sorted(tokens)],
        "opentimestamps": [
            {"calendar": url, "proof": b64encode(proofs[url][0]), "complete": proofs[url][1]}
            for url in sorted(proofs)
        ],
    }
    if by_height:
        for height, raw in by_height.items():
            if type(height) is not int or height < 0 or len(raw) != HEADER_BYTES:
                raise ValueError(f"not a block header of a height: {height!r}")
        sidecar["bitcoin_headers"] = [
            {"height": h, "header": by_height[h].hex()} for h in sorted(by_height)
        ]
    return sidecar


def sidecar_json(sidecar: Sidecar) -> str:
    """The sidecar as written: canonical JSON, one line."""
    return canonical_text(sidecar)


def parse_sidecar(doc: Any) -> Sidecar:
    """`doc` (parsed JSON) as a sidecar, checked strictly: exactly the fields above, an event
    id, http(s) sources named once each, canonical base64 of at most `MAX_PROOF_BYTES`.
    Raises SidecarFault."""
    if not isinstance(doc, dict):
        raise SidecarFault("a trusted-time sidecar is a JSON object")
    if not _KEYS <= set(doc) <= _KEYS | _OPTIONAL_KEYS:
        raise SidecarFault(_fields_problem("the sidecar", set(doc), _KEYS, _OPTIONAL_KEYS))
    if doc["type"] != SIDECAR_TYPE:
        raise SidecarFault(f"type is {doc['type']!r}, not {SIDECAR_TYPE!r}")
    if type(doc["version"]) is not int or doc["version"] != SIDECAR_VERSION:
        raise SidecarFault(f"version {doc['version']!r} is not {SIDECAR_VERSION}")
    event_id = doc["event_id"]
    if not isinstance(event_id, str) or not _EVENT_ID_RE.fullmatch(event_id):
        raise SidecarFault(f"event_id {event_id!r} is not sha256:<64 hex>")
    tokens = _entries(doc["rfc3161"], "rfc3161", _RFC3161_KEYS, "authority", "token")
    proofs = _entries(doc["opentimestamps"], "opentimestamps", _OTS_KEYS, "calendar", "proof")
    for entry in proofs:
        if type(entry["complete"]) is not bool:
            raise SidecarFault(f"opentimestamps: complete of {entry['calendar']} is not a boolean")
    sidecar: Sidecar = {
        "type": SIDECAR_TYPE,
        "version": SIDECAR_VERSION,
        "event_id": event_id,
        "rfc3161": [{"authority": e["authority"], "token": e["token"]} for e in tokens],
        "opentimestamps": [
            {"calendar": e["calendar"], "proof": e["proof"], "complete": e["complete"]}
            for e in proofs
        ],
    }
    if "bitcoin_headers" in doc:
        sidecar["bitcoin_headers"] = _headers(doc["bitcoin_headers"])
    return sidecar


def _headers(value: Any) -> list[HeaderEntry]:
    """The `bitcoin_headers` member, strictly: 1 to `MAX_ENTRIES` objects, each a height
    named once and 80 bytes in lowercase hex, heights ascending (as written)."""
    if not isinstance(value, list) or not value:
        raise SidecarFault("bitcoin_headers is not a non-empty list (leave it out when empty)")
    if len(value) > MAX_ENTRIES:
        raise SidecarFault(f"bitcoin_headers holds {len(value)} entries (at most {MAX_ENTRIES})")
    out: list[HeaderEntry] = []
    for number, entry in enumerate(value, start=1):
        where = f"bitcoin_headers[{number}]"
        if not isinstance(entry, dict):
            raise SidecarFault(f"{where} is not an object")
        if set(entry) != _HEADER_KEYS:
            raise SidecarFault(_fields_problem(where, set(entry), _HEADER_KEYS))
        height, text = entry["height"], entry["header"]
        if type(height) is not int or height < 0:
            raise SidecarFault(f"{where}.height {height!r} is not a block height")
        if out and height <= out[-1]["height"]:
            raise SidecarFault("bitcoin_headers are not in ascending height, each once")
        if not isinstance(text, str) or not _HEADER_HEX_RE.fullmatch(text):
            raise SidecarFault(f"{where}.header is not 80 bytes in lowercase hex")
        out.append({"height": height, "header": text})
    return out


def _fields_problem(
    what: str, have: set[str], want: set[str], optional: set[str] | None = None
) -> str:
    missing, extra = sorted(want - have), sorted(have - want - (optional or set()))
    parts = ([f"lacks {', '.join(missing)}"] if missing else []) + (
        [f"has unknown {', '.join(extra)}"] if extra else []
    )
    return f"{what} {' and '.join(parts)}"


def _entries(value: Any, name: str, keys: set[str], source: str, blob: str) -> list[Any]:
    if not isinstance(value, list):
        raise SidecarFault(f"{name} is not a list")
    if len(value) > MAX_ENTRIES:
        raise SidecarFault(f"{name} holds {len(value)} entries (at most {MAX_ENTRIES})")
    seen: set[str] = set()
    for number, entry in enumerate(value, start=1):
        where = f"{name}[{number}]"
        if not isinstance(entry, dict):
            raise SidecarFault(f"{where} is not an object")
        if set(entry) != keys:
            raise SidecarFault(_fields_problem(where, set(entry), keys))
        url = entry[source]
        if not isinstance(url, str) or not url.startswith(("https://", "http://")):
            raise SidecarFault(f"{where}.{source} {url!r} is not an http(s) URL")
        if url in seen:
            raise SidecarFault(f"{name} names {url} twice")
        seen.add(url)
        text = entry[blob]
        try:
            raw = b64decode(text) if isinstance(text, str) else None
        except ValueError:
            raw = None
        if not raw or len(raw) > MAX_PROOF_BYTES:
            raise SidecarFault(
                f"{where}.{blob} is not canonical base64 of 1 to {MAX_PROOF_BYTES} bytes"
            )
    return value


def tokens_of(sidecar: Sidecar) -> list[tuple[str, bytes]]:
    """(authority, token bytes) of a parsed sidecar."""
    return [(e["authority"], b64decode(e["token"])) for e in sidecar["rfc3161"]]


def proofs_of(sidecar: Sidecar) -> list[tuple[str, bytes, bool]]:
    """(calendar, proof bytes, complete) of a parsed sidecar."""
    return [
        (e["calendar"], b64decode(e["proof"]), e["complete"]) for e in sidecar["opentimestamps"]
    ]


def headers_of(sidecar: Sidecar) -> list[tuple[int, bytes]]:
    """(height, 80-byte header) of a parsed sidecar's shipped headers (none: empty)."""
    return [(e["height"], bytes.fromhex(e["header"])) for e in sidecar.get("bitcoin_headers", [])]


def merge_sidecars(sidecars: Sequence[Sidecar]) -> Sidecar:
    """One sidecar of several for the same event: every source's entry, a complete
    OpenTimestamps proof preferred to a pending one, every height's header (the last given
    wins). Raises ValueError for several events."""
    ids = {s["event_id"] for s in sidecars}
    if len(ids) != 1:
        raise ValueError("sidecars of different events cannot be merged")
    tokens: dict[str, bytes] = {}
    proofs: dict[str, tuple[bytes, bool]] = {}
    headers: dict[int, bytes] = {}
    for sidecar in sidecars:
        tokens.update(tokens_of(sidecar))
        headers.update(headers_of(sidecar))
        for url, proof, complete in proofs_of(sidecar):
            if url not in proofs or complete or not proofs[url][1]:
                proofs[url] = (proof, complete)
    return build_sidecar(
        ids.pop(),
        tokens.items(),
        [(url, p, c) for url, (p, c) in proofs.items()],
        headers.items(),
    )
