"""Canonical JSON and SHA-256: the one place every hash in the protocol comes from (VERIFIED).

The one strict JSON reader: every JSON document pithauthor reads goes through `parse_json`.

JSON that other parsers read differently is refused, so that what is signed, stored and served
means one thing to every reader (I-JSON, RFC 7493, plus a depth limit):

- NaN, Infinity and -Infinity (Python's `json` accepts them; the JSON grammar does not);
- integers outside +-(2**53 - 1), and floats that overflow to infinity;
- strings (keys included) holding a lone UTF-16 surrogate (not encodable as UTF-8);
- an object with the same key twice (readers disagree on which one wins);
- nesting deeper than `MAX_DEPTH` arrays and objects;
- bytes that are not UTF-8 (a leading byte order mark is allowed and dropped).

Every refusal is a `JSONFault` (a `ValueError`) whose message says what is wrong in one line.
"""

from __future__ import annotations

import binascii
import json
import re
from collections.abc import Callable
from typing import Any

# One encoder for the process: `json.dumps` with non-default options builds a new JSONEncoder
# (and its C encoder) on every call, a sixth of the cost of serialising an event. The output is
# the same: `dumps` is `JSONEncoder(**options).encode(obj)`.
_CANONICAL = json.JSONEncoder(sort_keys=True, separators=(",", ":"), ensure_ascii=False)


# The C encoder that `_CANONICAL.encode` builds on every call (CPython's `_json`), made once
# with the same options (no circular-reference table, no indent, ":" and ",", sorted keys, no
# skipped keys, NaN as `encode` writes it): `encode` also allocates that table and a closure
# per call, a quarter of the cost of serialising an event. Without the table a
# value holding itself (never JSON) ends in RecursionError instead of ValueError.
# tests/unit/protocol/test_ids.py checks it writes what `json.dumps` writes;
# where `_json` is missing, `encode` does the work.
_MAKE_C_ENCODER: Any = getattr(json.encoder, "c_make_encoder", None)  # not in typeshed
_C_ENCODER = (
    None
    if _MAKE_C_ENCODER is None
    else _MAKE_C_ENCODER(
        None, _CANONICAL.default, json.encoder.encode_basestring, None, ":", ",", True, False, True
    )
)


def canonical(obj: Any) -> bytes:
    """The protocol's canonical bytes: sorted keys, no spaces, UTF-8, non-ASCII kept as is."""
    return canonical_text(obj).encode("utf-8")


def canonical_text(obj: Any) -> str:
    """`canonical(obj)` before its UTF-8 encoding (to place inside a larger canonical text)."""
    if _C_ENCODER is not None and type(obj) is dict:
        return "".join(_C_ENCODER(obj, 0))
    return _CANONICAL.encode(obj)


#: A text as a canonical JSON string, quotes included: the encoder's own escaping.
json_string: Callable[[str], str] = json.encoder.encode_basestring


def sha256_hex(data: bytes) -> str:
    """Lower-case hex SHA-256 of `data`."""
    import hashlib  # here: it loads OpenSSL, and `pith bib scan` hashes nothing

    return hashlib.sha256(data).hexdigest()


def canonical_sha256(obj: Any) -> str:
    """Lower-case hex SHA-256 of the canonical bytes of `obj`."""
    import hashlib  # see sha256_hex

    return hashlib.sha256(canonical(obj)).hexdigest()


def base32_nopad(data: bytes) -> str:
    """RFC 4648 base32, upper case, without padding."""
    import base64  # here: `base64` loads `struct`, and `pith bib scan` encodes nothing

    return base64.b32encode(data).decode("ascii").rstrip("=")


def b64encode(data: bytes) -> str:
    """Standard base64 with padding, as the registry writes keys and signatures."""
    return binascii.b2a_base64(data, newline=False).decode("ascii")  # `base64.b64encode`'s call


def b64decode(text: str) -> bytes:
    """Canonical standard base64 only; raises ValueError on anything else.

    The bytes must encode back to exactly `text`: padding included, and zero in the unused low
    bits of the last character (`...Q==` and `...R==` would otherwise decode alike), so one byte
    string has one spelling and nothing outside a signature can be varied.
    """
    data = text.encode("ascii")  # UnicodeEncodeError, a ValueError, for any other character
    # binascii directly, not base64.b64decode(validate=True), which runs a regular expression
    # and two wrappers first (a fifth of a signature check's overhead). Lenient
    # decoding skips what is not of the alphabet, but then the bytes do not encode back to
    # `text`: that one comparison refuses every other spelling (alphabet, padding, bits).
    raw = binascii.a2b_base64(data)  # binascii.Error, a ValueError, on broken padding
    if binascii.b2a_base64(raw, newline=False) != data:
        raise ValueError("not canonical base64 (alphabet, padding or unused bits)")
    return raw


def hex_digest_bytes(hex_digest: str) -> bytes:
    """The 32 raw bytes named by a 64-character lower-case hex SHA-256 digest."""
    if len(hex_digest) != 64 or hex_digest != hex_digest.lower():
        raise ValueError("a SHA-256 digest is 64 lower-case hex characters")
    return bytes.fromhex(hex_digest)


MAX_DEPTH = 64


"""The deepest nesting of arrays and objects accepted (the protocol's documents use 5)."""


MAX_SAFE_INTEGER = 2**53 - 1


"""The largest integer magnitude every JSON reader represents exactly (RFC 7493, 2.2)."""


_MAX_INT_DIGITS = 17  # 2**53 - 1 has 16 digits; anything longer is out of range before int()


_SURROGATE = re.compile("[\ud800-\udfff]")

# the escape of a UTF-16 surrogate (\\uD800-\\uDFFF); also found where the backslash is itself
# escaped, which only costs the full check
_ESCAPED_SURROGATE = re.compile(rb"\\u[dD][89a-fA-F]")


class JSONFault(ValueError):
    """The text is not strict JSON; the message says why in one line."""


def _parse_constant(name: str) -> Any:
    raise JSONFault(f"{name} is not a JSON number")


def _parse_int(text: str) -> int:
    digits = text.lstrip("-")
    if len(digits) > _MAX_INT_DIGITS or abs(int(text)) > MAX_SAFE_INTEGER:
        shown = text if len(text) <= 24 else text[:20] + "..."
        raise JSONFault(f"integer {shown} is outside +-(2**53 - 1)")
    return int(text)


def _parse_float(text: str) -> float:
    value = float(text)
    if value in (float("inf"), float("-inf")):
        raise JSONFault(f"number {text[:24]} overflows a 64-bit float")
    return value


def _pairs(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    # built in C; a key given twice leaves the dict shorter than the pairs (a loop
    # per key was a fifth of the reader's hooks on a 10 MB state), then named by the loop
    obj = dict(pairs)
    if len(obj) != len(pairs):
        seen: set[str] = set()
        for key, _ in pairs:
            if key in seen:
                raise JSONFault(f"duplicate key {key!r} in an object")
            seen.add(key)
    return obj


def _check_tree(value: Any, depth: int = 1) -> None:
    """Depth and lone surrogates, which the decoder's hooks cannot see."""
    if isinstance(value, str):
        if _SURROGATE.search(value):
            raise JSONFault("a string holds a lone UTF-16 surrogate")
        return
    if isinstance(value, dict):
        children: Any = value.values()
        for key in value:
            if _SURROGATE.search(key):
                raise JSONFault("a key holds a lone UTF-16 surrogate")
    elif isinstance(value, list):
        children = value
    else:
        return
    if depth > MAX_DEPTH:
        raise JSONFault(f"nested deeper than {MAX_DEPTH} levels")
    for child in children:
        if isinstance(child, dict | list | str):
            _check_tree(child, depth + 1)


def _check_depth(value: Any) -> None:
    """`_check_tree` without the strings: level by level, containers only (a 10 MB
    merged state holds some 200,000 values, and one call per value was most of reading it)."""
    # a tuple of types, not `dict | list`: isinstance of a union is slower (a third of this walk)
    containers = (dict, list)
    level = [value] if isinstance(value, containers) else []
    depth = 1
    while level:
        if depth > MAX_DEPTH:
            raise JSONFault(f"nested deeper than {MAX_DEPTH} levels")
        below: list[Any] = []
        for container in level:
            children = container.values() if isinstance(container, dict) else container
            below += [c for c in children if isinstance(c, containers)]
        level, depth = below, depth + 1


def parse_json(data: bytes | str) -> Any:
    """The value of strict JSON `data`, or `JSONFault` saying in one line why it is refused."""
    # bytes decode as UTF-8, which refuses surrogates: a lone one can then only come from an
    # escape, and without one no string needs looking at (a str is checked string by string)
    strings = True
    if isinstance(data, bytes):
        strings = _ESCAPED_SURROGATE.search(data) is not None
        # a byte order mark is an editor's (Windows Notepad writes one), not content
        if data.startswith(b"\xef\xbb\xbf"):
            data = data[3:]
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise JSONFault(f"not UTF-8 (byte {exc.start})") from None
    else:
        text = data
    try:
        value = json.loads(
            text,
            parse_constant=_parse_constant,
            parse_int=_parse_int,
            parse_float=_parse_float,
            object_pairs_hook=_pairs,
        )
    except JSONFault:
        raise
    except RecursionError:  # deeper than Python's own stack: refused before `_check_tree` runs
        raise JSONFault(f"nested deeper than {MAX_DEPTH} levels") from None
    except json.JSONDecodeError as exc:
        raise JSONFault(f"not JSON: {exc.msg} (line {exc.lineno}, column {exc.colno})") from None
    except ValueError as exc:  # int() digit limits and the like
        raise JSONFault(f"not JSON: {exc}") from None
    if strings:
        _check_tree(value)
    else:
        _check_depth(value)
    return value


def parse_stored(text: str | bytes, fault: Callable[[JSONFault], Exception]) -> Any:
    """A JSON value this package stored itself (a SQLite column), read by the one strict
    reader; damaged where it was kept (a file edited by hand, a disk fault), it raises
    `fault(exc)`: the one-line error of the store that holds it."""
    try:
        return parse_json(text)
    except JSONFault as exc:
        raise fault(exc) from None


def dump_json(value: Any) -> str:
    """Strict JSON text for `value`: refuses NaN/Infinity instead of writing them."""
    return json.dumps(value, allow_nan=False, ensure_ascii=False)
