"""One error hierarchy for the whole package; the CLI maps each class to an exit code.

Exit codes (documented in docs/cli.md):

    0  success
    1  a check or an operation failed
    2  bad input or usage
    3  registry or network unreachable
    4  key or authorisation problem

Messages never contain secret material: they are shown to users as they are.

An error may carry a `hint`: the author's obvious next step (a command to run, a flag to add).
The CLI prints it as a second line, `pith: next: ...`, right after the error line; the error
line itself stays one line that says what is wrong.
"""

from __future__ import annotations

EXIT_OK = 0
EXIT_FAILED = 1
EXIT_INPUT = 2
EXIT_NETWORK = 3
EXIT_KEY = 4


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


class ArxivIdError(InputError, ValueError):
    """A string is not a well-formed arXiv identifier."""


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


class BuildError(PithError):
    """A LaTeX build failed."""

    exit_code = EXIT_FAILED


# --- 3: network -------------------------------------------------------------------------------


class NetworkError(PithError):
    """The registry could not be reached or answered nonsense after every retry."""

    exit_code = EXIT_NETWORK


class RegistryResponseError(NetworkError):
    """The registry answered with something that is not what the protocol promises."""


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


class KeyFileTampered(KeyStoreError):
    """The key file is not what pithauthor wrote (bad structure or failed integrity check)."""


class UnsafePermissions(KeyStoreError):
    """A key file or folder is readable by others."""


class PassphraseUnavailable(KeyStoreError):
    """A passphrase is needed and no source gives one."""


class KeyRetired(KeyStoreError):
    """Signing was asked of a retired key."""


class AuthError(PithError):
    """The registry wants sign-in, or refused the token (401/403)."""

    exit_code = EXIT_KEY
