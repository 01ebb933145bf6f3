"""Time in the protocol's one form: UTC at second precision, `YYYY-MM-DDTHH:MM:SSZ`."""

from __future__ import annotations

from datetime import UTC, datetime

STAMP_FORMAT = "%Y-%m-%dT%H:%M:%SZ"


def utc_stamp(when: datetime) -> str:
    """`when` (aware) as `YYYY-MM-DDTHH:MM:SSZ` in UTC."""
    return when.astimezone(UTC).strftime(STAMP_FORMAT)


def utc_now() -> str:
    """Now, as `YYYY-MM-DDTHH:MM:SSZ` in UTC."""
    return utc_stamp(datetime.now(UTC))
