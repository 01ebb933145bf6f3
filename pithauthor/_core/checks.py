"""Named check results, shared by every verifier: passed, failed, or unverifiable."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

Status = Literal["passed", "failed", "unverifiable"]
PASSED: Status = "passed"
FAILED: Status = "failed"
UNVERIFIABLE: Status = "unverifiable"


@dataclass(frozen=True, slots=True)
class Check:
    """One named check. `detail` says what was compared, or why it could not be."""

    name: str
    status: Status
    detail: str = ""

    def as_dict(self) -> dict[str, str]:
        return {"name": self.name, "status": self.status, "detail": self.detail}


@dataclass(slots=True)
class Report:
    """The checks made on one document. `ok` is False when any check failed.

    An unverifiable check does not fail the report, and is never shown as passed.
    """

    kind: str
    checks: list[Check] = field(default_factory=list)

    def add(self, name: str, ok: bool, detail: str = "") -> bool:
        self.checks.append(Check(name, PASSED if ok else FAILED, detail))
        return ok

    def unverifiable(self, name: str, detail: str) -> None:
        self.checks.append(Check(name, UNVERIFIABLE, detail))

    def extend(self, other: Report, prefix: str = "") -> None:
        for c in other.checks:
            self.checks.append(Check(prefix + c.name, c.status, c.detail))

    @property
    def ok(self) -> bool:
        return all(c.status != FAILED for c in self.checks)

    @property
    def failed(self) -> list[Check]:
        return [c for c in self.checks if c.status == FAILED]

    def as_dict(self) -> dict[str, object]:
        return {"ok": self.ok, "kind": self.kind, "checks": [c.as_dict() for c in self.checks]}
