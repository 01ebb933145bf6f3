"""Named check results, shared by every verifier: passed, failed, unverifiable or not signed.

What a verdict "speaks for": the parts of a document whose truth its `ok` vouches for, i.e.
every field some check below covers (a signature over it, a hash recomputed from it, a rule
applied to it). A verdict is OK only when each such part it carries was checked and passed;
it says nothing about the rest, and says so: those parts are listed, never silently taken.

- `passed` / `failed`: recomputed here, from the document and the trusted keys;
- `unverifiable`: a part the verdict cannot speak for because nobody outside the registry can
  check it (a registry `event_id` preimage, the registry's merge). Never shown as passed;
  `strict_ok` fails on it;
- `not_signed`: fields present in the document that no signature or recomputation covers
  (display text, counters, timestamps the registry adds). Listed, never counted as verified.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal, NamedTuple

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
    verification makes about fifteen of them (issue 27).
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


@dataclass(slots=True)
class Report:
    """The checks made on one document. `ok` is False when any check failed.

    An unverifiable check does not fail `ok` (it fails `strict_ok`), and is never shown as
    passed; a not-signed entry fails neither.
    """

    kind: str
    checks: list[Check] = field(default_factory=list)

    def add(self, name: str, ok: bool, detail: str = "") -> bool:
        self.checks.append(Check(name, PASSED if ok else FAILED, detail))
        return ok

    def unverifiable(self, name: str, detail: str, paths: tuple[str, ...] = ()) -> None:
        self.checks.append(Check(name, UNVERIFIABLE, detail, paths))

    def not_signed(self, name: str, paths: tuple[str, ...], detail: str = "") -> None:
        """Fields no signature covers; nothing is added when `paths` is empty."""
        if paths:
            shown = ", ".join(paths[:8]) + (f" and {len(paths) - 8} more" if len(paths) > 8 else "")
            self.checks.append(Check(name, NOT_SIGNED, detail or shown, paths))

    def extend(self, other: Report, prefix: str = "", path_prefix: str = "") -> None:
        """Add `other`'s checks, names prefixed by `prefix`, paths by `path_prefix`."""
        append = self.checks.append
        for c in other.checks:
            paths = tuple([path_prefix + p for p in c.paths]) if c.paths else ()
            append(Check(prefix + c.name, c.status, c.detail, paths))

    @property
    def ok(self) -> bool:
        return all(c.status != FAILED for c in self.checks)

    @property
    def strict_ok(self) -> bool:
        """No check failed and none was unverifiable (`pith verify --strict`, `pith fetch`)."""
        return all(c.status in (PASSED, NOT_SIGNED) for c in self.checks)

    @property
    def failed(self) -> list[Check]:
        return [c for c in self.checks if c.status == FAILED]

    def with_status(self, status: Status) -> list[Check]:
        return [c for c in self.checks if c.status == status]

    def counts(self) -> dict[str, int]:
        """How many checks have each status (all four keys, zeros included)."""
        return {s: sum(1 for c in self.checks if c.status == s) for s in STATUSES}

    def as_dict(self) -> dict[str, object]:
        return {
            "ok": self.ok,
            "strict_ok": self.strict_ok,
            "kind": self.kind,
            "checks": [c.as_dict() for c in self.checks],
        }
