"""No core dump of a process that holds a secret key.

A core dump is a copy of the process's memory on disk: with a key unlocked, a crash would write
its seed (and the passphrase it was decrypted with) to a file outside the key store, perhaps
readable by others or kept by a crash reporter. So, once a secret enters memory (a stored key
unlocked, a backup decrypted, a new key made, the local registry's key loaded), the process
forbids its own core dumps for the rest of its life:

- `RLIMIT_CORE` 0 (POSIX, the soft limit): the kernel writes no core file. The hard limit is
  left as it was: only code inside this process could raise the soft limit again, and such
  code could read the key anyway; the programs it starts (TeX, a pager) may still raise theirs.
- `prctl(PR_SET_DUMPABLE, 0)` (Linux): no core even through a `core_pattern` pipe to a crash
  handler, and other processes of the same user cannot ptrace it or read its memory through
  /proc. (`execve` of another program sets it back for that program.)

Where neither exists (Windows) nothing is done: there is nothing the process can set.
"""

from __future__ import annotations

import contextlib
import ctypes
import sys
import threading
from types import ModuleType

resource: ModuleType | None
try:
    import resource
except ImportError:  # not POSIX (Windows): no core-dump limit to set
    resource = None

PR_SET_DUMPABLE = 4  # <linux/prctl.h>

_lock = threading.Lock()
_done = False


def forbid_core_dumps() -> None:
    """Forbid core dumps of this process from now on (once; later calls do nothing)."""
    global _done
    with _lock:
        if _done:
            return
        _done = True
        if resource is None:
            return
        _, hard = resource.getrlimit(resource.RLIMIT_CORE)
        with contextlib.suppress(ValueError, OSError):  # lowering is always allowed
            resource.setrlimit(resource.RLIMIT_CORE, (0, hard))
        if sys.platform.startswith("linux"):
            # no libc prctl (a static or unusual build): the core limit above still holds
            with contextlib.suppress(OSError, AttributeError):
                ctypes.CDLL(None, use_errno=True).prctl(PR_SET_DUMPABLE, 0, 0, 0, 0)
