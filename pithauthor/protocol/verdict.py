"""The verdict model (pure): named checks (passed, failed, unverifiable, not signed) gathered in
a `Report`, what a verdict *speaks for* (the fields it checked; every other field is listed as
not signed), and `Trust`, the registry keys a verdict is checked against.
"""

from __future__ import annotations

import operator
import re
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from functools import lru_cache
from itertools import chain
from typing import Any, Literal, NamedTuple

from pithauthor.errors import DocumentError
from pithauthor.protocol.canonical_json import b64decode
from pithauthor.protocol.identity import PUBLIC_KEY_LENGTH, fingerprint_b32, fingerprint_hex

# Named check results, shared by every verifier: passed, failed, unverifiable or not signed.
#
# What a verdict "speaks for": the parts of a document whose truth its `ok` vouches for, i.e.
# every field some check below covers (a signature over it, a hash recomputed from it, a rule
# applied to it). A verdict is OK only when each such part it carries was checked and passed;
# it says nothing about the rest, and says so: those parts are listed, never silently taken.
#
# - `passed` / `failed`: recomputed here, from the document and the trusted keys;
# - `unverifiable`: a part the verdict cannot speak for because nobody outside the registry can
#   check it (a registry `event_id` preimage, the registry's merge). Never shown as passed;
#   `strict_ok` fails on it;
# - `not_signed`: fields present in the document that no signature or recomputation covers
#   (display text, counters, timestamps the registry adds). Listed, never counted as verified.

Status = Literal["passed", "failed", "unverifiable", "not_signed"]


PASSED: Status = "passed"


FAILED: Status = "failed"


UNVERIFIABLE: Status = "unverifiable"


NOT_SIGNED: Status = "not_signed"


STATUSES: tuple[Status, ...] = (PASSED, FAILED, UNVERIFIABLE, NOT_SIGNED)


class Check(NamedTuple):
    """One named check. `detail` says what was compared, or why it could not be.

    `paths` names the JSON fields an `unverifiable` or `not_signed` entry is about (dotted,
    list items as `[i]`), so that a reader (and the tamper tests) can tell what it covers.

    A NamedTuple, not a frozen dataclass: just as immutable, but made five times faster (a
    frozen dataclass sets each field through `object.__setattr__`), and one event's
    verification makes about fifteen of them.
    """

    name: str
    status: Status
    detail: str = ""
    paths: tuple[str, ...] = ()

    def as_dict(self) -> dict[str, object]:
        out: dict[str, object] = {"name": self.name, "status": self.status, "detail": self.detail}
        if self.paths:
            out["paths"] = list(self.paths)
        return out


_STATUS = operator.itemgetter(1)  # a Check's status, read in C

# A part of a report added by `extend` and not yet renamed: where it goes among the report's
# own checks (their count when it was added), its checks, the name prefix and the path prefix,
# and the report they are of when it was adopted (completed before renaming, see `pending`).
_Part = tuple[int, list[Check], str, str, "Report | None"]


class Report:
    """The checks made on one document. `ok` is False when any check failed.

    An unverifiable check does not fail `ok` (it fails `strict_ok`), and is never shown as
    passed; a not-signed entry fails neither. Why `ok` tolerates it: every state pith.science
    serves has an unpublished merge, so an `ok` that failed on it could never pass a real state;
    `strict_ok` is for a reader who takes only what can be recomputed.

    A document's report holds each event's checks renamed (`events[3].signature`), and renaming
    17,000 checks was most of what a bundle of 1,000 events added to checking them.
    So `extend` keeps a copy of the other report's checks with its prefixes, and the renamed
    checks are written only when `checks` is read (the CLI's listing, `--json`, a failure's
    names); `ok` and `strict_ok` read the statuses where they are, which no prefix changes.
    What a reader sees of `checks` is exactly what renaming at once gave, in the same order.
    """

    __slots__ = ("_checks", "_parts", "_pending", "kind")

    __match_args__ = ("kind", "checks")  # as the dataclass it was

    def __init__(self, kind: str, checks: list[Check] | None = None) -> None:
        self.kind = kind
        self._checks: list[Check] = [] if checks is None else checks
        self._parts: list[_Part] = []
        self._pending: tuple[Callable[..., None], tuple[Any, ...]] | None = None

    @classmethod
    def pending(
        cls, kind: str, checks: list[Check], write: Callable[..., None], *args: Any
    ) -> Report:
        """A report whose `checks` hold, where a detail is still to be written, a stand-in of
        the same status: `write(checks, *args)` puts the real checks in their places when
        `checks` is first read. The statuses (`ok`, `strict_ok`) are known without it."""
        report = cls.__new__(cls)  # `__init__`'s fields set here: one frame less an event
        report.kind = kind
        report._checks = checks
        report._parts = []
        report._pending = (write, args)
        return report

    @property
    def checks(self) -> list[Check]:
        """Every check, in order (the list itself: callers append to it)."""
        if self._pending is not None:
            write, args = self._pending
            self._pending = None
            write(self._checks, *args)
        if self._parts:
            self._rename()
        return self._checks

    def head(self) -> Check:
        """The first check, without completing or renaming anything (a stand-in is never
        first)."""
        return self._checks[0]

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Report):
            return NotImplemented
        return self.kind == other.kind and self.checks == other.checks

    __hash__ = None  # type: ignore[assignment]  # mutable, as the dataclass it was

    def __repr__(self) -> str:
        return f"Report(kind={self.kind!r}, checks={self.checks!r})"

    def append(self, check: Check) -> None:
        """Add `check` after everything added so far, without renaming what waits (as reading
        `checks` to append to it would)."""
        self._checks.append(check)

    def add(self, name: str, ok: bool, detail: str = "") -> bool:
        self._checks.append(Check(name, PASSED if ok else FAILED, detail))
        return ok

    def reserve(self, name: str) -> Check:
        """Hold the next place for the check `name`, decided later (`settle`) while checks are
        added after it; until then a failed stand-in holds it (read early, `ok` is False)."""
        place = Check(name, FAILED, "(not decided yet)")
        self._checks.append(place)
        return place

    def settle(self, place: Check, check: Check) -> None:
        """Put `check` where `reserve` left `place` (found by identity: renaming keeps it)."""
        own = self._checks
        own[next(i for i, c in enumerate(own) if c is place)] = check

    def unverifiable(self, name: str, detail: str, paths: tuple[str, ...] = ()) -> None:
        self._checks.append(Check(name, UNVERIFIABLE, detail, paths))

    def not_signed(self, name: str, paths: tuple[str, ...], detail: str = "") -> None:
        """Fields no signature covers; nothing is added when `paths` is empty."""
        if paths:
            shown = ", ".join(paths[:8]) + (f" and {len(paths) - 8} more" if len(paths) > 8 else "")
            self._checks.append(Check(name, NOT_SIGNED, detail or shown, paths))

    def extend(
        self, other: Report, prefix: str = "", path_prefix: str = "", *, adopt: bool = False
    ) -> None:
        """Add `other`'s checks, names prefixed by `prefix`, paths by `path_prefix`.

        What `other` holds now is what is added (a copy of its list: a later change to `other`
        does not show here), unless `adopt` says that nothing changes `other` afterwards (a
        document's event report): its list is then kept as it is, to be completed and renamed
        when `checks` is read. The renaming itself waits until then."""
        # `_checks` grows only at its end, and a part is placed before the checks added after
        # it: its position is the count of the report's own checks when it came
        if adopt and not other._parts:
            self._parts.append((len(self._checks), other._checks, prefix, path_prefix, other))
        else:
            self._parts.append((len(self._checks), other.checks[:], prefix, path_prefix, None))

    def _rename(self) -> None:
        """Write the waiting parts into the list, renamed, in place (a caller may hold it)."""
        # tuple.__new__ skips the NamedTuple's Python-level __new__, and one comprehension the
        # method calls of a loop: a document of 1,000 events re-names 17,000 checks here
        make = tuple.__new__
        own, done, at = self._checks, [], 0
        for where, checks, prefix, path_prefix, source in self._parts:
            if source is not None:
                source.checks  # noqa: B018  # writes what it left pending, in `checks` itself
            done += own[at:where]
            at = where
            if not prefix and not path_prefix:
                done += checks
                continue
            done += [
                make(
                    Check,
                    (
                        prefix + name,
                        status,
                        detail,
                        tuple([path_prefix + p for p in paths]) if paths else (),
                    ),
                )
                for name, status, detail, paths in checks
            ]
        done += own[at:]
        self._parts = []
        own[:] = done

    def _statuses(self) -> Iterator[Status]:
        """Every check's status, renamed or waiting (no prefix changes one), read in C."""
        if not self._parts:
            return map(_STATUS, self._checks)
        return map(_STATUS, chain(self._checks, *[part[1] for part in self._parts]))

    # The statuses are read by `map(_STATUS, ...)` and `in`, loops that run in C: every event
    # of a document is asked `ok` and `failed` (a generator per question was a tenth of an
    # event's check beyond its signature)

    @property
    def ok(self) -> bool:
        if not self._parts:  # `_statuses`'s first case, without its frame (asked of each event)
            return FAILED not in map(_STATUS, self._checks)
        return FAILED not in self._statuses()

    @property
    def strict_ok(self) -> bool:
        """No check failed and none was unverifiable (`pith verify --strict`, `pith fetch`)."""
        statuses = set(self._statuses())
        return FAILED not in statuses and UNVERIFIABLE not in statuses

    @property
    def failed(self) -> list[Check]:
        if FAILED not in self._statuses():
            return []
        return [c for c in self.checks if c.status == FAILED]

    def with_status(self, status: Status) -> list[Check]:
        if status not in self._statuses():  # none: no check is renamed to say so
            return []
        return [c for c in self.checks if c.status == status]

    def counts(self) -> dict[str, int]:
        """How many checks have each status (all four keys, zeros included), counted without
        naming them (a state of 10,000 events holds 180,000 checks)."""
        found = Counter(self._statuses())
        return {s: found[s] for s in STATUSES}

    def as_dict(self) -> dict[str, object]:
        return {
            "ok": self.ok,
            "strict_ok": self.strict_ok,
            "kind": self.kind,
            "checks": [c.as_dict() for c in self.checks],
        }


# Which fields of a JSON document a verdict covers, and which it does not (pure).
#
# A verifier names what it checked as path patterns (`receipt.key_id`, `aliases[*].alias_kind`,
# `current.graph_snapshots[3]`); a pattern covers the node it names and everything inside it.
# `uncovered` walks the document and returns the paths of the largest subtrees no pattern covers,
# so every field present is either checked or reported (as not signed).

Segments = tuple[str, ...]


_SEGMENT_RE = re.compile(r"([^.\[\]]+)|\[([0-9]+|\*)\]")


@lru_cache(maxsize=4096)
def segments(pattern: str) -> Segments:
    """`a.b[0].c` -> ('a', 'b', '[0]', 'c'); `*` and `[*]` are wildcards for a key / an item."""
    out: list[str] = []
    for key, index in _SEGMENT_RE.findall(pattern):
        out.append(key if key else f"[{index}]")
    return tuple(out)


def path_text(segs: Segments) -> str:
    """('a', '[0]', 'b') -> `a[0].b`."""
    text = ""
    for seg in segs:
        text += seg if seg.startswith("[") else ("." + seg if text else seg)
    return text


class _Trie:
    """Patterns as a tree of segments; `end` marks a node a whole pattern reaches."""

    __slots__ = ("children", "end")

    def __init__(self) -> None:
        self.children: dict[str, _Trie] = {}
        self.end = False

    def add(self, segs: Segments) -> None:
        node = self
        for seg in segs:
            node = node.children.setdefault(seg, _Trie())
        node.end = True

    def step(self, seg: str) -> list[_Trie]:
        wildcard = "[*]" if seg.startswith("[") else "*"
        return [n for n in (self.children.get(seg), self.children.get(wildcard)) if n is not None]


@lru_cache(maxsize=64)
def _trie(patterns: tuple[str | Segments, ...]) -> _Trie:
    """The trie of `patterns`; the same patterns (one per kind of part) are built once."""
    root = _Trie()
    for p in patterns:
        root.add(segments(p) if isinstance(p, str) else p)
    return root


def uncovered(doc: Any, patterns: Iterable[str | Segments]) -> tuple[str, ...]:
    """Paths of the largest parts of `doc` that no pattern covers (document order): `paper`
    once, not each field inside it, so that a report stays short and still misses nothing.

    An empty object or list that patterns reach into has nothing uncovered in it."""
    root = _trie(tuple(patterns))
    found: list[str] = []

    def walk(node: Any, path: Segments, tries: list[_Trie]) -> None:
        if any(t.end for t in tries):
            return  # covered, with everything inside
        if not tries:
            found.append(path_text(path))
            return
        if isinstance(node, Mapping):
            for key, value in node.items():
                seg = str(key)
                walk(value, (*path, seg), [n for t in tries for n in t.step(seg)])
        elif isinstance(node, list):
            for index, value in enumerate(node):
                seg = f"[{index}]"
                walk(value, (*path, seg), [n for t in tries for n in t.step(seg)])
        elif path:
            found.append(path_text(path))

    walk(doc, (), [root])
    return tuple(found)


def under(prefix: str, names: Iterable[str]) -> tuple[str, ...]:
    """`under('receipt', ['key_id'])` -> ('receipt.key_id',)."""
    return tuple(f"{prefix}.{n}" if prefix and not n.startswith("[") else prefix + n for n in names)


# PyNaCl is imported where a signature is checked: commands that check none skip it.

# Registry keys a client trusts, read from a mirror manifest (section 3, VERIFIED).
#
# Words used here and by every verdict that names a key:
#
# - the pinned key: the Pith registry's key shipped inside the package (`pith-v1-2026-05`, from
#   `pithauthor/data/pith-mirrors.json`). It is trusted without asking anyone, and no manifest
#   can name its key id with another key: otherwise a manifest handed to a user could replace
#   pith.science's key and vouch for forged receipts;
# - a local key (`RegistryKey.local`): a key the user chose to trust (a manifest file,
#   PITH_TRUST, `--trust-local-registry`); its `source` says where it came from and is shown in
#   each check it passes, so that a verdict never passes off a local key's word as Pith's;
# - VERIFIED: the manifest's fingerprints are recomputed from its key (section 3 rules) and a
#   manifest whose fingerprint disagrees with its key is refused.

PINNED_SOURCE = "pinned manifest"


class RegistryKey(NamedTuple):
    """One registry signing key. `local` marks a key of a local (non-Pith) registry; `source`
    says where it came from (shown in every check it passes); `base_url` is the registry's
    address from the manifest (the only origin its records may link to)."""

    key_id: str
    public_key: bytes
    source: str = PINNED_SOURCE
    local: bool = False
    base_url: str | None = None

    @property
    def fingerprint(self) -> str:
        return fingerprint_hex(self.public_key)

    def verify_digest(self, digest: bytes, signature: bytes) -> bool:
        """True when `signature` is this key's Ed25519 signature over `digest`."""
        from nacl.exceptions import BadSignatureError
        from nacl.signing import VerifyKey

        try:
            VerifyKey(self.public_key).verify(digest, signature)
        except BadSignatureError:
            return False
        return True


@dataclass(frozen=True, slots=True)
class Trust:
    """The set of registry keys a verifier accepts, by key id."""

    keys: Mapping[str, RegistryKey] = field(default_factory=dict)

    @classmethod
    def from_manifest(
        cls, manifest: Mapping[str, Any], *, local: bool = False, source: str | None = None
    ) -> Trust:
        """Every mirror key of a manifest, each checked for self-consistency and labelled with
        `source` (where the manifest came from)."""
        if not isinstance(manifest, Mapping):
            raise DocumentError("not a Pith mirror manifest (not a JSON object)")
        if manifest.get("manifest_type") != "pith_mirror_manifest":
            raise DocumentError("not a Pith mirror manifest (manifest_type)")
        mirrors = manifest.get("mirrors", [])
        if not isinstance(mirrors, list) or not all(isinstance(m, Mapping) for m in mirrors):
            raise DocumentError("the manifest's mirrors are not a list of objects")
        if source is None:
            source = "local registry manifest" if local else PINNED_SOURCE
        keys: dict[str, RegistryKey] = {}
        for mirror in mirrors:
            key = _key_from_manifest_entry(mirror.get("public_key") or {}, local=local)
            base = mirror.get("base_url")
            key = RegistryKey(
                key.key_id, key.public_key, source, local, base if isinstance(base, str) else None
            )
            if key.key_id in keys and keys[key.key_id].public_key != key.public_key:
                raise DocumentError(f"the manifest names key id {key.key_id} twice, two keys")
            keys.setdefault(key.key_id, key)
        if not keys:
            raise DocumentError("the manifest names no public key")
        return cls(keys)

    def with_keys(self, extra: Iterable[RegistryKey]) -> Trust:
        """This trust plus `extra` keys (a manifest the user chose to trust).

        A key already trusted is never replaced: the same key again is a no-op (the first
        label stays), another key under a trusted key id (above all the pinned
        `pith-v1-2026-05`) is refused with `DocumentError` (exit 2)."""
        merged = dict(self.keys)
        for key in extra:
            known = merged.get(key.key_id)
            if known is None:
                merged[key.key_id] = key
            elif known.public_key != key.public_key:
                raise DocumentError(
                    f"{key.source} names key id {key.key_id!r} with another key than the one "
                    f"already trusted ({known.source}); refused: a trusted key is never replaced"
                )
        return Trust(merged)

    def get(self, key_id: str) -> RegistryKey | None:
        return self.keys.get(key_id)


def _key_from_manifest_entry(entry: Mapping[str, Any], *, local: bool) -> RegistryKey:
    key_id = entry.get("key_id")
    if not isinstance(key_id, str) or not key_id:
        raise DocumentError("a manifest key has no key_id")
    if entry.get("algorithm") != "ed25519":
        raise DocumentError(f"manifest key {key_id}: algorithm is not ed25519")
    try:
        raw = b64decode(str(entry.get("public_key_b64", "")))
    except ValueError:
        raise DocumentError(f"manifest key {key_id}: public_key_b64 is not base64") from None
    if len(raw) != PUBLIC_KEY_LENGTH:
        raise DocumentError(f"manifest key {key_id}: the key is not 32 bytes")
    if "public_key_hex" in entry and entry["public_key_hex"] != raw.hex():
        raise DocumentError(f"manifest key {key_id}: hex and base64 forms disagree")
    if "fingerprint_sha256_hex" in entry and entry["fingerprint_sha256_hex"] != fingerprint_hex(
        raw
    ):
        raise DocumentError(f"manifest key {key_id}: hex fingerprint does not match the key")
    b32 = entry.get("fingerprint_sha256_b32_first128bits")
    if b32 is not None and b32 != fingerprint_b32(raw):
        raise DocumentError(f"manifest key {key_id}: base32 fingerprint does not match the key")
    return RegistryKey(key_id=key_id, public_key=raw, local=local)
