"""What a long call is doing, told to whoever shows it: the one hook between the library and a
progress display. The library never prints; it reports here, and nothing happens unless a caller
installed a reporter (`reporting`), as the `pith` command does for the length of a command.

Two kinds of report:

- `Retrying`: a request got no usable answer and will be sent again after a wait
  (`pithauthor.net`, for every registry, identity and arXiv request): what, why, how long;
- `Advance`: so much of a counted task is done (`pithauthor.bibliography`: the references of
  a bibliography looked up in the registry).

A reporter is called from whichever thread does the work (look-ups run in parallel): it must be
thread-safe, quick, and must not raise.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable, Iterator
from typing import NamedTuple

__all__ = [
    "Advance",
    "Report",
    "Reporter",
    "Retrying",
    "report",
    "reporting",
]


class Retrying(NamedTuple):
    """A request is being sent again: `what` (`the registry at https://…`) failed with `reason`
    (`HTTP 503`, `connection failed`); the next of `attempts` tries is `attempt` (2 or more),
    after `wait` seconds; at most `left` seconds of waiting remain before the last try."""

    what: str
    reason: str
    attempt: int
    attempts: int
    wait: float
    left: float


class Advance(NamedTuple):
    """`done` of `total` parts of the task `what` are done (`total` None: not known)."""

    what: str
    done: int
    total: int | None


Report = Retrying | Advance
Reporter = Callable[[Report], None]

_lock = threading.Lock()
_reporters: list[Reporter] = []


@contextlib.contextmanager
def reporting(reporter: Reporter) -> Iterator[None]:
    """Send every report made while the block runs (in any thread) to `reporter`; the one
    installed before is back afterwards."""
    with _lock:
        _reporters.append(reporter)
    try:
        yield
    finally:
        with _lock:
            _reporters.remove(reporter)


def report(event: Report) -> None:
    """Tell the reporter installed last, if any (otherwise nothing happens)."""
    reporter = _reporters[-1] if _reporters else None
    if reporter is not None:
        reporter(event)
