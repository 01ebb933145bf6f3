"""A secret in memory: where a passphrase comes from (a file, stdin, the environment, a prompt),
and no core dump of a process once a secret key is in it.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import sys
import threading
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType

from pithauthor.errors import InputError, PassphraseUnavailable
from pithauthor.fs import MAX_SECRET_BYTES, decode_utf8, loose_bits, read_user_text

# Where a passphrase comes from: a file (or '-' for stdin), an environment variable, or a prompt.
#
# Order: an explicit `--passphrase-file` first, then the environment variable, then an interactive
# prompt when standard input is a terminal; otherwise PassphraseUnavailable.

PASSPHRASE_ENV = "PITH_PASSPHRASE"

BACKUP_PASSPHRASE_ENV = "PITH_BACKUP_PASSPHRASE"

STDIN = "-"

#: A new passphrase shorter than this gets a warning (argon2id slows guessing, it cannot make
#: a short passphrase long): 12 characters is the usual advice for offline-attackable secrets.
MIN_NEW_LENGTH = 12

#: How often a mistyped passphrase may be typed again at the prompt before the command stops.
PROMPT_TRIES = 3


@dataclass
class PassphraseSource:
    """A lazily read passphrase; read once, then remembered for the life of the object.

    `fallback` is asked when neither the file nor the environment variable gives one (used so
    that a backup passphrase defaults to the key's passphrase source).
    """

    file: str | None = None
    env_var: str = PASSPHRASE_ENV
    interactive: bool = True
    fallback: PassphraseSource | None = None
    _cached: str | None = field(default=None, init=False, repr=False)
    #: True when the passphrase remembered was typed at this source's prompt (it may be retyped)
    prompted: bool = field(default=False, init=False, repr=False)

    def __repr__(self) -> str:
        return f"PassphraseSource(file={self.file!r}, env_var={self.env_var!r})"

    def describe(self) -> str:
        """Where the passphrase would come from, in words (never the passphrase)."""
        if self.file == STDIN:
            return "standard input"
        if self.file:
            return f"file {self.file}"
        if os.environ.get(self.env_var):
            return f"environment variable {self.env_var}"
        if self.fallback is not None:
            return self.fallback.describe()
        if self.interactive and _stdin_is_tty():
            return "interactive prompt"
        return "none"

    def get(self, prompt: str = "Passphrase: ", *, confirm: bool = False) -> str:
        """The passphrase; `confirm` asks twice when prompting. Empty passphrases are refused."""
        if self._cached is None:
            self._cached = self._read(prompt, confirm)
            if confirm and len(self._cached) < MIN_NEW_LENGTH:
                sys.stderr.write(
                    f"pith: warning: the new passphrase has {len(self._cached)} characters; one "
                    f"of {MIN_NEW_LENGTH} or more (a few words) is much harder to guess\n"
                )
        return self._cached

    def forget(self) -> None:
        """Drop the remembered passphrase, so that the next `get` asks again."""
        self._cached = None
        self.prompted = False

    def _read(self, prompt: str, confirm: bool) -> str:
        if self.file is not None:
            text = _read_file(self.file)
            if not text:
                raise InputError(f"the passphrase from {self.describe()} is empty")
            return text
        from_env = os.environ.get(self.env_var)
        if from_env:
            return from_env
        if self.fallback is not None:
            return self.fallback.get(prompt, confirm=confirm)
        if self.interactive and _stdin_is_tty():
            self.prompted = True
            return _prompt(prompt, confirm)
        raise PassphraseUnavailable(
            f"a passphrase is needed: set {self.env_var}, pass --passphrase-file PATH "
            "(or '-' for standard input), or run in a terminal"
        )


def passphrase_source(passphrase_file: str | None = None) -> PassphraseSource:
    """The key passphrase source built from CLI options (typer-free, for every command)."""
    return PassphraseSource(file=passphrase_file, env_var=PASSPHRASE_ENV)


def backup_passphrase_source(
    backup_passphrase_file: str | None, key_source: PassphraseSource
) -> PassphraseSource:
    """The backup-file passphrase: its own file or PITH_BACKUP_PASSPHRASE, else the key's
    non-interactive source (file or environment), else its own prompt."""
    # At a terminal a backup gets its own prompt (its own passphrase: the backup leaves the
    # machine). A script that gives only the key's passphrase has no one to answer a prompt:
    # that passphrase serves the backup too, rather than the command failing.
    unattended = key_source.file is not None or bool(os.environ.get(key_source.env_var))
    return PassphraseSource(
        file=backup_passphrase_file,
        env_var=BACKUP_PASSPHRASE_ENV,
        fallback=key_source if unattended else None,
    )


def _stdin_is_tty() -> bool:
    try:
        return sys.stdin is not None and sys.stdin.isatty()
    except (ValueError, OSError):
        return False


def _read_file(name: str) -> str:
    """The first line of a passphrase file (or of stdin); file faults are bad input (exit 2)."""
    what = "a passphrase file"
    if name == STDIN:
        stream = getattr(sys.stdin, "buffer", None)
        raw = stream.readline(MAX_SECRET_BYTES + 1) if stream is not None else b""
        if len(raw) > MAX_SECRET_BYTES:
            raise InputError(
                f"the passphrase on standard input is longer than {MAX_SECRET_BYTES} bytes"
            )
        text = decode_utf8(raw, "standard input", InputError, "a passphrase")
    else:
        text = read_user_text(name, InputError, what, limit=MAX_SECRET_BYTES)
        _warn_if_loose(Path(name))
        # the first line only: the newline an editor or `echo` ends the file with (LF or CRLF)
        # is never part of the passphrase
        text = text.splitlines()[0] if text else ""
    return text.rstrip("\r\n")


def _warn_if_loose(path: Path) -> None:
    if loose_bits(path):
        sys.stderr.write(
            f"pith: warning: passphrase file {path} is readable by others; chmod 600 {path}\n"
        )


def _prompt(prompt: str, confirm: bool) -> str:
    """Typed at the terminal; a new one twice, asked again (PROMPT_TRIES in all) when the two
    differ or it is empty: a typo should not end the command."""
    import getpass  # here, with termios: every signing command loads this module, few prompt

    for attempt in range(1, PROMPT_TRIES + 1):
        last = attempt == PROMPT_TRIES
        first = getpass.getpass(prompt)
        if not first:
            if last:
                _nonempty(first, "the passphrase")
            sys.stderr.write("pith: the passphrase is empty; type it again\n")
            continue
        if not confirm or getpass.getpass("Repeat passphrase: ") == first:
            return first
        if last:
            break
        sys.stderr.write("pith: the two passphrases differ; type them again\n")
    raise PassphraseUnavailable(f"the two passphrases differ ({PROMPT_TRIES} tries)")


def _nonempty(value: str, what: str) -> str:
    if not value:
        raise PassphraseUnavailable(f"{what} is empty")
    return value


# No core dump of a process that holds a secret key.
#
# A core dump is a copy of the process's memory on disk: with a key unlocked, a crash would write
# its seed (and the passphrase it was decrypted with) to a file outside the key store, perhaps
# readable by others or kept by a crash reporter. So, once a secret enters memory (a stored key
# unlocked, a backup decrypted, a new key made, the local registry's key loaded), the process
# forbids its own core dumps for the rest of its life:
#
# - `RLIMIT_CORE` 0 (POSIX, the soft limit): the kernel writes no core file. The hard limit is
#   left as it was: only code inside this process could raise the soft limit again, and such
#   code could read the key anyway; the programs it starts (TeX, a pager) may still raise theirs.
# - `prctl(PR_SET_DUMPABLE, 0)` (Linux): no core even through a `core_pattern` pipe to a crash
#   handler, and other processes of the same user cannot ptrace it or read its memory through
#   /proc. (`execve` of another program sets it back for that program.)
#
# Where neither exists (Windows) nothing is done: there is nothing the process can set.

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
