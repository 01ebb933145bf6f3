"""How long a build may take: `--timeout S` when given, else a limit chosen from the paper's own
builds. A manuscript that never ends (`\\def\\x{\\x}\\x`) must not hold a core for long.

The first build of a paper on this machine gets `DEFAULT_LIMIT`: nothing is known of it yet,
and a thesis with many TikZ figures can take minutes. Each build that succeeds records how long
it took (in PITH_HOME's cache, keyed by the main file's path, nothing else of the paper), and
later builds of that paper, and the later builds of the same command (the arXiv proof build, the
build of the untouched copy), get `FACTOR` times that, and at least `MIN_LIMIT`.
"""

from __future__ import annotations

import hashlib
import json
import math
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from pithauthor.errors import InputError, PithError
from pithauthor.fs import private_dir, replace_file

DEFAULT_LIMIT = 600.0  # seconds, for a paper never built here before
MIN_LIMIT = 60.0  # never less, whatever the paper's last build took (a cold font cache...)
MAX_LIMIT = 24 * 3600.0  # what --timeout accepts
FACTOR = 5.0  # the margin over the paper's last build: a paper grows, machines get busy
_FILE = "build-times.json"
_KEEP = 500  # papers remembered; the oldest are forgotten


def check_timeout(seconds: float | None) -> float | None:
    """`--timeout` as given, refused (InputError) unless a positive number of seconds."""
    if seconds is None:
        return None
    if not math.isfinite(seconds) or not 0 < seconds <= MAX_LIMIT:
        raise InputError(f"--timeout must be a number of seconds in (0, {MAX_LIMIT:g}]")
    return float(seconds)


def from_build(seconds: float) -> float:
    """The limit for a build of a paper whose earlier build took `seconds`."""
    return max(MIN_LIMIT, FACTOR * seconds)


class BuildClock:
    """The limit of each build of one paper in one command, learning from its first build."""

    def __init__(self, main: Path, given: float | None) -> None:
        self.main = main
        self.given = check_timeout(given)
        self.first: float | None = None  # how long this command's first build took
        self._known = None if self.given is not None else _recorded(main)

    def limit(self) -> float:
        """Seconds the next build may take."""
        if self.given is not None:
            return self.given
        if self.first is not None:
            return from_build(self.first)
        if self._known is not None:
            return from_build(self._known)
        return DEFAULT_LIMIT

    def why(self) -> str:
        """How the limit was chosen, for the message of a build that was stopped."""
        if self.given is not None:
            return "the --timeout given"
        if self.first is not None or self._known is not None:
            return f"{FACTOR:g} times this paper's last build; --timeout SECONDS allows longer"
        return "the limit for a first build; --timeout SECONDS allows longer"

    @contextmanager
    def timed(self) -> Iterator[None]:
        """Time one build; a build that succeeds is remembered (the first one of the command
        sets the limit of the next ones)."""
        start = time.monotonic()
        yield
        took = time.monotonic() - start
        if self.first is None:
            self.first = took
            _record(self.main, took)


def _key(main: Path) -> str:
    return hashlib.sha256(str(main.resolve()).encode("utf-8", "surrogateescape")).hexdigest()


def _path() -> Path:
    return private_dir("cache") / _FILE


def _recorded(main: Path) -> float | None:
    """The recorded duration of the paper's last successful build (None when unknown or when
    the cache cannot be read: it is a hint, never a reason to fail)."""
    try:
        value = json.loads(_path().read_text("utf-8")).get(_key(main))
    except (OSError, ValueError, AttributeError, PithError):
        return None
    if isinstance(value, int | float) and math.isfinite(value) and value > 0:
        return float(value)
    return None


def _record(main: Path, seconds: float) -> None:
    try:
        path = _path()
        try:
            times = json.loads(path.read_text("utf-8"))
            times = times if isinstance(times, dict) else {}
        except (OSError, ValueError):
            times = {}
        times.pop(_key(main), None)
        times[_key(main)] = round(seconds, 2)  # newest last: the oldest go first
        kept = dict(list(times.items())[-_KEEP:])
        replace_file(path, json.dumps(kept).encode(), mode=0o600, durable=False)
    except (OSError, PithError):
        pass  # a read-only home: the next build gets the default limit again
