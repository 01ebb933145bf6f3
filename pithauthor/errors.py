"""One error hierarchy for the whole package; the CLI maps each class to an exit code.

Every error pithauthor raises on purpose is defined here and derives from `PithError`; the
one catch site (`pithauthor._cli.main.main`) prints its message as one line on stderr and exits
with its `exit_code`. The tree, with the exit code each branch maps to:

    PithError                     1  (the base; never raised itself)
    ├── InputError                2  bad input or usage: nothing was done
    │   ├── PithNumberError           a malformed Pith Number or alias
    │   ├── ArxivIdError              a malformed arXiv identifier
    │   ├── OrcidError                a malformed ORCID iD
    │   ├── MetadataError             arXiv metadata missing a field
    │   ├── DocumentError             a JSON document of no known kind
    │   ├── EventError                an event that cannot be built
    │   ├── BibliographyError         a .bib file that cannot be read at all
    │   ├── ManuscriptError           a .tex folder that cannot be read or changed
    │   ├── OutboxDamaged             the outbox file is not a healthy outbox
    │   ├── ConfirmationNeeded        publishing needs --yes (no terminal to ask on)
    │   └── Declined                  the author answered no
    ├── VerificationError         1  something was checked and found wrong
    ├── RegistryRejected          1  the registry answered, and refused (a 4xx)
    │   └── RegistryAnswerError       ... with its status and reason (a read: 404, 400)
    │       └── EventRefused          ... this signed event (its POST): a verdict, final
    ├── BuildError                1  a LaTeX build failed
    │   └── CompileFailed             the engine failed on the manuscript
    ├── ArchiveRefused            1  an archive answered and kept no copy (a refusal, a failed job)
    ├── NetworkError              3  a server could not be reached (after every retry)
    │   ├── RegistryResponseError     the registry answered something the protocol excludes
    │   │   └── ActionNotNamed        the paper's record names no action for the event's type
    │   ├── NumberUnchecked           a full Pith Number could not be checked: no registry
    │   └── ArxivApiError             arXiv's API could not be used
    │       └── ArxivQueryRefused     arXiv answered its error feed, saying why
    ├── KeyStoreError             4  a key problem
    │   ├── KeyNotFound, KeyExists, WrongPassphrase, KeyFileTampered,
    │   ├── UnsafePermissions, PassphraseUnavailable, KeyRetired
    │   └── KeyringUnavailable        no usable keyring backend answered
    ├── AuthError                 4  sign-in wanted, or the token (archive.org keys) refused
    ├── FormatRefused             5  the registry refuses the body's format (415, 422 naming it)
    └── OutputError              74  a file could not be written: disk full, read-only folder

Exit codes (documented in docs/cli.md):

    0  success
    1  a check or an operation failed
    2  bad input or usage
    3  registry or network unreachable
    4  key or authorisation problem
    5  the registry refuses the format pithauthor sends (protocol mismatch)
    70 a bug in pith: an exception no class here names (sysexits' EX_SOFTWARE); the one line
       says where to report it
    74 an output could not be written (sysexits' EX_IOERR): the disk or quota is full, the
       folder or file system is read-only, no permission to write there
    75 not done yet, nothing wrong (sysexits' EX_TEMPFAIL): `pith anchor`'s proofs are
       pending at the calendars; the same command later goes on from what was kept

Why an output failure is not bad input (2): the command and its input were right, and running
it again where there is room (or permission) succeeds; a script can tell the two apart. The
file-system module (`pithauthor.fs`) raises it wherever it writes; the catch site also maps an
OSError or SQLite error of those kinds that reached it from elsewhere.

Why `EventRefused` is its own class: only the registry's answer to the POST of an event is a
verdict on that event (the outbox marks it rejected and never sends it again); a 4xx to a read
(the paper's record not found) says nothing about the event, which stays pending. The two are
told apart where the answer arrives (`pithauthor.net.RegistryHttp.post_json`), not later.

Why `FormatRefused` is not an `EventRefused`: a registry that cannot read the body's format
(415 Unsupported Media Type, or a 422 whose reason names the format or content type) refuses
every event alike, whatever each says. No event is marked rejected: the whole submission stops,
the rows stay pending, and the exit code says that this pithauthor and that registry do not
speak the same format (upgrade pithauthor, or ask the registry what it reads).

Messages never contain secret material: they are shown to users as they are.

An error may carry a `hint`: the author's obvious next step (a command to run, a flag to add).
The CLI ends the one error line with it, `pith: error: WHAT IS WRONG; next: STEP`: bad input
gets exactly one line on stderr, and that line says both what is wrong and what to do.
"""

from __future__ import annotations

EXIT_OK = 0
EXIT_FAILED = 1
EXIT_INPUT = 2
EXIT_NETWORK = 3
EXIT_KEY = 4
EXIT_PROTOCOL = 5
EXIT_BUG = 70  # sysexits.h EX_SOFTWARE: an internal software error
EXIT_OUTPUT = 74  # sysexits.h EX_IOERR: an error while writing a file
EXIT_PENDING = 75  # sysexits.h EX_TEMPFAIL: not done yet; run the same command again later

REPORT_BUGS = "as the README's 'Reporting a bug' says"
"""How a bug in pith is reported (the one line of exit 70 says it). The package names no tracker
address of its own: the README of the checkout or release it came from says where."""


class PithError(Exception):
    """Base of every error pithauthor raises on purpose."""

    exit_code: int = EXIT_FAILED
    hint: str | None = None
    """The next step, when there is an obvious one (a class may give a default)."""

    def __init__(self, *args: object, hint: str | None = None) -> None:
        super().__init__(*args)
        if hint is not None:
            self.hint = hint


# --- 2: bad input -----------------------------------------------------------------------------


class InputError(PithError):
    """The user gave something malformed: a number, an id, a file."""

    exit_code = EXIT_INPUT


class PithNumberError(InputError, ValueError):
    """A string is not a well-formed Pith Number (or alias)."""

    hint = (
        "a Pith Number is pith:YEAR: and 26 letters and digits (A-Z, 2-7), as `pith number "
        "from-arxiv` prints it; an arXiv id such as 2302.12445 is taken too"
    )


class ArxivIdError(InputError, ValueError):
    """A string is not a well-formed arXiv identifier."""

    hint = "an arXiv id looks like 2302.12445 (2302.12445v2: one version) or hep-th/9901001"


class MetadataError(InputError):
    """arXiv metadata (arXivRaw XML or JSON) is missing a field or is malformed."""


class DocumentError(InputError):
    """A JSON document (record, state, bundle, event) cannot be read or is of no known kind."""


class OrcidError(InputError, ValueError):
    """A string is not a valid ORCID iD (format or check digit)."""


class EventError(InputError):
    """An event cannot be built: a payload field is missing or out of range."""


class BibliographyError(InputError):
    """A bibliography file cannot be read at all."""


class ManuscriptError(InputError):
    """A LaTeX manuscript cannot be found, read or safely changed."""


class OutboxDamaged(InputError):
    """The outbox file is not a healthy outbox (exit 2): say which file, and how to recover."""


class ConfirmationNeeded(InputError):
    """Publishing needs the author's yes, and there is no terminal to ask on (give --yes)."""


class Declined(InputError):
    """The author did not answer yes: nothing was done (as `pith keys delete` answered no)."""


# --- 1: a check or an operation failed ----------------------------------------------------------


class VerificationError(PithError):
    """Something was checked and found wrong."""

    exit_code = EXIT_FAILED


class RegistryRejected(PithError):
    """The registry answered, and refused (4xx other than authorisation)."""

    exit_code = EXIT_FAILED


class RegistryAnswerError(RegistryRejected):
    """The registry answered 4xx (not 401/403): it refused, and said why. `answer` is its
    parsed JSON answer (None when it sent none)."""

    def __init__(self, message: str, status: int, answer: object = None) -> None:
        super().__init__(message)
        self.status = status
        self.answer = answer


class EventRefused(RegistryAnswerError):
    """The registry refused this signed event: its answer (4xx) to the event's POST. Final:
    the outbox marks the event rejected, and it is never sent again."""

    hint = "`pith outbox list --state rejected` shows each refused event and the registry's answer"


class BuildError(PithError):
    """A LaTeX build failed."""

    exit_code = EXIT_FAILED


class CompileFailed(BuildError):
    """The engine failed on the manuscript for a reason not named otherwise (not: latexmk
    missing, the build stopped, a file outside the folder); `reason` is the first error,
    without the words around it."""

    def __init__(self, message: str, reason: str) -> None:
        super().__init__(message)
        self.reason = reason


# --- 3: network -------------------------------------------------------------------------------


class ArchiveRefused(PithError):
    """An archive (the Internet Archive's Save Page Now, Software Heritage) answered and kept
    no copy: it refused the URL or origin (403), or its capture or save job ended in error."""

    exit_code = EXIT_FAILED


class NetworkError(PithError):
    """The registry could not be reached or answered nonsense after every retry."""

    exit_code = EXIT_NETWORK
    # one command that asks every registry (and ORCID) once, in seconds, and says which fails
    hint: str | None = (
        "`pith doctor` checks the registries and ORCID in a few seconds (--timeout S)"
    )


class RegistryResponseError(NetworkError):
    """The registry answered with something that is not what the protocol promises."""

    hint = None  # it did answer: checking that it answers is no next step; its message says


class ActionNotNamed(RegistryResponseError):
    """The paper's record names no action endpoint for the event's type (a registry that takes
    no anchors, say): that event stays pending, and the others of a submission still go."""


class NumberUnchecked(NetworkError):
    """A full Pith Number (to write into a paper, or to sign) could not be checked against its
    record: no record cached and the registry unreachable. Refused, never used unchecked
    unless the author says `--offline`; the hint says what to give instead."""

    hint = "give the paper's arXiv id instead (its number is then looked up), or --offline"


class ArxivApiError(NetworkError):
    """arXiv's API could not be used: unreachable, refused, or answered something unreadable."""

    hint = None  # `pith doctor` does not ask arXiv: no next step to name here


class ArxivQueryRefused(ArxivApiError):
    """arXiv answered with its error feed (an entry titled "Error"), saying why."""


# --- 4: keys and authorisation ----------------------------------------------------------------


class KeyStoreError(PithError):
    """Base of the key problems."""

    exit_code = EXIT_KEY


class KeyNotFound(KeyStoreError):
    """No key by that name or id."""


class KeyExists(KeyStoreError):
    """Creating would overwrite an existing key."""


class WrongPassphrase(KeyStoreError):
    """The passphrase does not open the key file."""

    hint = (
        "check $PITH_PASSPHRASE or the --passphrase-file ($PITH_BACKUP_PASSPHRASE or "
        "--backup-passphrase-file for a backup); without them a terminal asks, three tries"
    )


class KeyFileTampered(KeyStoreError):
    """The key file is not what pithauthor wrote (bad structure or failed integrity check)."""

    hint = "restore the key from its backup: pith keys import BACKUP_FILE (`pith doctor` checks)"


class UnsafePermissions(KeyStoreError):
    """A key file or folder is readable by others."""


class PassphraseUnavailable(KeyStoreError):
    """A passphrase is needed and no source gives one."""


class KeyRetired(KeyStoreError):
    """Signing was asked of a retired key."""

    hint = "`pith keys list` shows the active key that replaced it: sign with --key NAME"


class KeyringUnavailable(KeyStoreError):
    """No usable keyring backend answered (the reason is the message)."""


class AuthError(PithError):
    """The registry wants sign-in, or refused the token (401/403)."""

    exit_code = EXIT_KEY


# --- 5: protocol mismatch ---------------------------------------------------------------------


class FormatRefused(PithError):
    """The registry refuses the format of the body pithauthor sends (415, or a 422 naming
    the format): no event is judged, every row stays pending (the module docstring says why).
    `status` is the registry's status code."""

    exit_code = EXIT_PROTOCOL
    hint = "`pith outbox list --state pending` lists the events kept for a later `pith submit`"

    def __init__(self, message: str, status: int) -> None:
        super().__init__(message)
        self.status = status


# --- 74: output ----------------------------------------------------------------------------------


class OutputError(PithError):
    """A file could not be written: the disk or quota is full, the folder or file system is
    read-only, or writing there is not permitted. Nothing half-written is left (every write is
    a temp file renamed into place); the message names the file and why."""

    exit_code = EXIT_OUTPUT
