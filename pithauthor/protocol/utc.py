"""Time in the protocol's one form: UTC at second precision, `YYYY-MM-DDTHH:MM:SSZ`."""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # datetime is loaded where a stamp is made of one: `pith bib scan` makes none
    from datetime import datetime


STAMP_FORMAT = "%Y-%m-%dT%H:%M:%SZ"


# The last stamp made, by its whole second: events signed in a loop share their second, so the
# clock is read once per event (one cheap time.time()) and the stamp written once per second.
_last: tuple[int, str] = (-1, "")


def utc_stamp(when: datetime) -> str:
    """`when` (aware) as `YYYY-MM-DDTHH:MM:SSZ` in UTC."""
    from datetime import UTC

    return when.astimezone(UTC).strftime(STAMP_FORMAT)


def utc_now() -> str:
    """Now, as `YYYY-MM-DDTHH:MM:SSZ` in UTC."""
    global _last
    second = int(time.time())
    if _last[0] != second:
        # a tuple swapped in one assignment: another thread sees the old pair or the new one
        _last = (second, time.strftime(STAMP_FORMAT, time.gmtime(second)))
    return _last[1]
