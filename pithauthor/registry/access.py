"""The registry a command talks to, and which paper it means: options read once, the
client opened, a subject found from an identifier or a record file, Pith Numbers checked
(`check_number`), and the number a badge prints (`badge_number`).
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from typing import NamedTuple

from pithauthor.errors import (
    DocumentError,
    InputError,
    NetworkError,
    NumberUnchecked,
    RegistryRejected,
    VerificationError,
)
from pithauthor.net import RetryPolicy
from pithauthor.protocol.documents import RecordDocument
from pithauthor.protocol.ids import (
    PithNumber,
    classify_reference,
)
from pithauthor.protocol.subject import Subject
from pithauthor.protocol.verdict import Trust
from pithauthor.registry.client import (
    MAX_TIMEOUT,
    RecordCache,
    RegistryClient,
    Say,
    is_local_registry,
    registry_url,
)
from pithauthor.registry.credentials import default_trust
from pithauthor.verify import detect_kind, read_documents, verify_document

__all__ = [
    "RegistryAccess",
    "RegistryOptions",
    "badge_number",
    "check_number",
    "check_registry_options",
    "citing_number",
    "connect",
    "read_subject",
    "subject_for",
]


# --- the options every command that talks to a registry shares -------------------------------


def check_registry_options(registry: str | None, trust_manifests: list[str]) -> None:
    """Refuse a bad registry URL or trust manifest even when no registry is needed: bad input
    is said, not silently ignored."""
    RegistryOptions(registry, tuple(trust_manifests)).read_trust()


class RegistryOptions(NamedTuple):
    """The registry a command talks to, whom it trusts, and how long it tries: what the
    `--registry`, `--trust-manifest` (repeatable) and `--trust-local-registry` options (and a
    command's own retry budget) say, by name."""

    registry: str | None = None
    """`--registry`; None: `$PITH_REGISTRY`, else https://pith.science."""
    trust_manifests: tuple[str, ...] = ()
    """Mirror manifests whose keys are trusted besides the pinned key (and `PITH_TRUST`)."""
    trust_local: bool = False
    """Also trust the key a loopback registry publishes (for tests and dry runs)."""
    retries: int = 6
    """Attempts per request (RetryPolicy.max_attempts)."""
    timeout: float = 20.0
    """Seconds per attempt."""
    parallel: int = 8
    """Connections kept open (a batch sends this many events at once)."""

    @property
    def base_url(self) -> str:
        """The registry's base URL, checked (InputError when it is refused)."""
        return registry_url(self.registry)

    def read_trust(self) -> Trust:
        """The registry URL checked, then the pinned key plus `PITH_TRUST` and the manifests:
        read from disk on each call, so a command calls it once and passes the result on."""
        registry_url(self.registry)
        return default_trust(self.trust_manifests)

    def for_registry(self, where: str) -> RegistryOptions:
        """These options for another registry (a row bound to it): a local registry's key is
        trusted for loopback registries only, never carried over to a remote one."""
        return self._replace(
            registry=where, trust_local=self.trust_local and is_local_registry(where)
        )

    def connect(self, *, trust: Trust | None = None, warn: Say | None = None) -> RegistryClient:
        """`connect` with these options; `trust` is the one `read_trust` gave, when read."""
        return connect(
            self.registry,
            self.trust_manifests,
            self.trust_local,
            parallel=self.parallel,
            retries=self.retries,
            timeout=self.timeout,
            warn=warn,
            trust=trust,
        )


def connect(
    registry: str | None = None,
    trust_manifests: list[str] | tuple[str, ...] = (),
    trust_local: bool = False,
    *,
    parallel: int = 8,
    retries: int = 6,
    timeout: float = 20.0,
    warn: Say | None = None,
    trust: Trust | None = None,
) -> RegistryClient:
    """A client with the trust asked for: the pinned key, `PITH_TRUST`, `trust_manifests` and,
    with `trust_local`, the key a loopback registry publishes (`warn` is told so). `trust`,
    when given, is that trust already read (`RegistryOptions.read_trust`): the manifests are
    not read again."""
    if not math.isfinite(timeout) or not 0 < timeout <= MAX_TIMEOUT:
        raise InputError(f"--timeout must be a number of seconds in (0, {MAX_TIMEOUT:g}]")
    client = RegistryClient(
        registry,
        trust=trust if trust is not None else default_trust(trust_manifests),
        max_connections=max(parallel, 4),
        retry=RetryPolicy(max_attempts=retries),
        timeout=timeout,
    )
    if trust_local:
        try:
            client.trust_local_registry()
        except BaseException:
            client.close()
            raise
        if warn is not None:
            warn(f"trusting the local registry at {client.base_url}: its key is not pith.science's")
    return client


class RegistryAccess:
    """The registry a signing command may need (to fetch records, or to submit), opened on
    first use only: a command given every record by file never touches the network.

    The options are checked, and the trust manifests read, once, here: bad input is said
    before anything else, and the record files and the client use that one reading.
    `note` hears what the user should know (a record without a receipt); `warn` the warning
    that a local registry's key is trusted."""

    def __init__(
        self,
        options: RegistryOptions | None = None,
        *,
        note: Say | None = None,
        warn: Say | None = None,
    ) -> None:
        self.options = options or RegistryOptions()
        self._trust = self.options.read_trust()
        self.note = note
        self.warn = warn
        self._client: RegistryClient | None = None

    @property
    def base_url(self) -> str:
        """The registry's base URL, without connecting."""
        return self.options.base_url

    @property
    def client(self) -> RegistryClient:
        if self._client is None:
            self._client = self.options.connect(trust=self._trust, warn=self.warn)
        return self._client

    def trust(self) -> Trust:
        """The keys record files are checked against: the pinned key, `PITH_TRUST`, the
        manifests and (only with `trust_local`) the local registry's, which takes asking it."""
        if self.options.trust_local:
            return self.client.trust
        return self._trust

    def close(self) -> None:
        if self._client is not None:
            self._client.close()

    def __enter__(self) -> RegistryAccess:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


# --- the paper an event is about -----------------------------------------------------------------


def subject_for(ref: str, record: str | None, registry: RegistryAccess) -> Subject:
    """The paper `ref` (Pith Number, alias or arXiv id) names: from a record file, checked to be
    that paper, or else from the registry (its record verified)."""
    if record is None:
        doc = registry.client.record(ref)
        # before signing: an event bound to a registry that sends its actions elsewhere would
        # stay pending for ever
        registry.client.check_actions_here(doc)
        return Subject.from_document(doc)
    subject = read_subject(record, registry.trust(), note=registry.note)
    check_names(ref, subject, record)
    return subject


def read_subject(path: str, trust: Trust | None = None, *, note: Say | None = None) -> Subject:
    """The subject of a record JSON file (registry record, `pith number from-arxiv --json`,
    bundle or state); `-` reads stdin. A document that carries a registry receipt is verified
    whole and refused (VerificationError, exit 1) when any check fails; one without a receipt
    (computed locally) is taken, and `note` is told so."""
    docs = read_documents(path)
    if len(docs) != 1:
        raise DocumentError(f"{path} holds {len(docs)} documents; give one record")
    doc = docs[0]
    subject = Subject.from_document(doc)
    kind = detect_kind(doc)
    if kind == "computed_record" or (kind == "record" and "receipt" not in doc):
        if note is not None:
            note(
                f"note: {path} has no registry receipt: its Pith Number was computed, not "
                "vouched for by a registry"
            )
        return subject
    report = verify_document(doc, trust)
    if not report.ok:
        failed = ", ".join(c.name for c in report.failed[:6])
        raise VerificationError(f"{path} does not verify ({failed}); not signing for it")
    return subject


def check_names(ref: str, subject: Subject, where: str) -> None:
    """Refuse a record that is not the paper the user named."""
    number = subject.pith_number
    named = classify_reference(ref)
    if named.arxiv is not None:
        version = named.arxiv.version
        if (
            subject.source_id is None
            or named.arxiv.id != subject.source_id
            or (version is not None and version != subject.source_version)
        ):
            held = f"{subject.source_id}v{subject.source_version}" if version else None
            raise InputError(
                f"{where} is the record of arXiv {held or subject.source_id or '(none)'} "
                f"({number.full}), not of {ref.strip()}"
            )
        return
    same = (
        named.alias.matches(number)
        if named.alias
        else bool(named.number and named.number.same_paper(number))
    )
    if not same:
        raise InputError(f"{where} is the record of {number.full}, not of {ref}")


def citing_number(
    ref: str, record: str | None, registry: RegistryAccess, *, offline: bool = False
) -> tuple[PithNumber, str | None, str | None]:
    """The citing paper's full Pith Number: given as such (checked with its record: see
    `check_number`), from its record, or by look-up; and its arXiv id (no version) when its
    record was at hand, so that a citation of another version of the same paper can be refused
    (`sign_citation`). `offline`: a full number given as such is checked only against the
    record cache, and used unchecked (the note says so) when none is there; otherwise a number
    no record checks is refused (an arXiv id still needs its look-up)."""
    if record is None:
        named = classify_reference(ref)
        if named.number is not None and named.number.year is not None:
            note, held = _check_number(
                named.number,
                registry,
                offline=offline,
                instead=f"give the citing paper's arXiv id (--from ARXIV_ID: its number is then "
                "looked up) or its record (--from-record FILE), or --offline to sign "
                f"{named.number.full} unchecked",
            )
            return named.number, note, _source_id(held)
    subject = subject_for(ref, record, registry)
    return subject.pith_number, None, subject.source_id


def _source_id(record: RecordDocument | None) -> str | None:
    source = record["canonical_record"].get("source") if record is not None else None
    found = source.get("id") if isinstance(source, Mapping) else None
    return found if isinstance(found, str) else None


# tries for the look-up that checks a full number (`check_number`)
_COURTESY_ATTEMPTS = 2


def check_number(
    number: PithNumber, registry: RegistryAccess, *, offline: bool = False, instead: str = ""
) -> str:
    """Compare a full Pith Number with its paper's record: the one in the record cache
    (`<PITH_HOME>/cache`, verified again now), or else the registry's (one look-up, then kept
    in the cache). InputError naming the right number when the year is wrong. Returns a note:
    what the number was checked against or, `offline` with no cached record, that its year is
    unchecked. Not `offline`, a number no record can check is refused, never used unchecked
    (it would be written into a paper, or signed): NumberUnchecked (exit 3) when the registry
    cannot be reached, InputError when it has no record of it; `instead` (the error's hint)
    says what to give instead. Nothing is written when nothing was fetched."""
    return _check_number(number, registry, offline=offline, instead=instead)[0]


# a record page's address, pasted where a number was asked for (`badge_number` refuses it)
_RECORD_URL = re.compile(r"https?://[^/\s]+/pith/([A-Za-z2-7]{26})/?$")


def badge_number(
    text: str, registry: RegistryAccess, *, offline: bool = False
) -> tuple[PithNumber, str | None]:
    """The number a badge prints: a full Pith Number, checked with its record (`check_number`:
    a wrong year is refused naming the right number; a number no record can check is refused
    unless `offline`, never written unchecked), or an arXiv id resolved through `registry`
    (record verified); with a note naming the arXiv version the number belongs to, or,
    `offline` with no record cached, saying the year could not be checked. A short alias or a
    number without its year is refused (InputError); so is an arXiv id `offline`."""
    address = _RECORD_URL.match(text.strip())
    if address is not None:  # copied from the record page: it holds the body, not the year
        raise InputError(
            f"{text} is a record's address; give its full Pith Number, "
            f"pith:YYYY:{address.group(1).upper()}"
        )
    kind = classify_reference(text)
    if kind.alias is not None:
        raise InputError(f"{text} is a short alias; give the full Pith Number pith:YYYY:BODY")
    if kind.number is not None:
        if kind.number.year is None:
            raise InputError(
                f"{text}: give the full Pith Number with its year, pith:YYYY:{kind.number.body}"
            )
        return kind.number, check_number(kind.number, registry, offline=offline)
    assert kind.arxiv is not None
    if offline:
        raise InputError(f"{text} is an arXiv id: its number needs the registry (drop --offline)")
    # the whole id, version included: `IDvN` is vN's record (the resolver refuses, naming the
    # version it holds, when the registry has no vN); a bare id is the latest version's
    number = registry.client.resolve(str(kind.arxiv))
    source = registry.client.record(number)["canonical_record"]["source"]
    note = f"{number.full} is the record of arXiv:{source['id']}v{source['version']}"
    if kind.arxiv.version is None:
        note += " (the latest version when the registry built it)"
    return number, note


def _check_number(
    number: PithNumber, registry: RegistryAccess, *, offline: bool, instead: str = ""
) -> tuple[str, RecordDocument | None]:
    """`check_number`'s note, and the record it was checked with (None when none was)."""
    if number.year is None:
        raise InputError(f"{number}: give the full Pith Number, pith:YYYY:{number.body}")
    base = registry.base_url
    record = _cached_record(base, number, registry)
    where = f"{base}, cached"
    if record is None and offline:
        return f"note: offline and no record of {number.full} at hand: its year is unchecked", None
    hint = instead or (
        "give the paper's arXiv id instead (its number is then looked up), or --offline to "
        f"use {number.full} unchecked"
    )
    if record is None:
        try:
            # two tries, not the command's whole retry budget: an author working offline
            # should not wait out a back-off (about 8 s over six tries) to be told to say so
            record = registry.client.record(number.body, attempts=_COURTESY_ATTEMPTS)
        except NetworkError as exc:
            raise NumberUnchecked(
                f"{number.full} could not be checked against its record: "
                f"{str(exc).split('; ')[0]}; nothing was written or signed",
                hint=hint,
            ) from None
        except RegistryRejected:
            raise InputError(
                f"{base} has no record of {number.full}, so it could not be checked; nothing "
                "was written or signed",
                hint=hint,
            ) from None
        cache = RecordCache()
        try:
            cache.put_record(base, number.body, record, registry.trust())  # verified under it
        finally:
            cache.close()
        where = base
    right = PithNumber.parse(record["pith_number"])
    source = record["canonical_record"]["source"]
    paper = f"arXiv {source['id']}v{source['version']}"
    if right.full != number.full:
        raise InputError(f"{number.full} has the wrong year: the record of {paper} is {right.full}")
    return f"{number.full} is the record of {paper} (checked with {where})", record


def _cached_record(
    base: str, number: PithNumber, registry: RegistryAccess
) -> RecordDocument | None:
    """The cached record of `number`'s body, if there is a cache and the record still verifies
    under today's trust."""
    cache = RecordCache.existing()
    if cache is None:
        return None
    try:
        # checked in full again unless these exact bytes passed under this trust before
        record = cache.checked_record(base, number.body, registry.trust())
        if record is None or PithNumber.parse(str(record["pith_number"])).body != number.body:
            return None
        return record
    finally:
        cache.close()
