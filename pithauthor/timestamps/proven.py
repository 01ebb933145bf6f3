"""What a checked timestamp proves: a time, and who or what proves it."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime


@dataclass(frozen=True)
class ProvenTime:
    """A time something is proven to have existed by, and by what: `rfc3161 <authority url>` or
    `bitcoin block <height>`."""

    time: datetime
    by: str
