"""Talk to a registry: resolve, fetch and verify records, bundles and states; send events.

Every record is verified against the trusted registry keys before anything uses it: the key
pinned in the package, plus the manifests named in `PITH_TRUST` (paths separated by the OS path
separator) or passed explicitly. Events go to the action endpoint the record's `agent_actions`
names (same origin as the registry only), with `Idempotency-Key: <event_id>`. The HTTP rules
(URL policy, retries, error mapping) live in `pithauthor._http`; batches and the outbox in
`pithauthor.submit`.
"""

from __future__ import annotations

import math
import os
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from typing import Any, TypeVar
from urllib.parse import urlsplit

from pithauthor._core.arxiv_id import ArxivId
from pithauthor._core.checks import Report
from pithauthor._core.documents import AuthorEvent, MergedState, RecordBundle, RecordDocument
from pithauthor._core.pith_number import PithAlias, PithNumber, parse_reference
from pithauthor._core.reference import classify_reference
from pithauthor._core.registry_checks import checked_bundle, checked_record, checked_state
from pithauthor._core.subject import Subject
from pithauthor._core.trust import Trust
from pithauthor._core.web_url import is_loopback
from pithauthor._http import (
    DEFAULT_REGISTRY,
    RegistryHttp,
    RetryPolicy,
    check_url,
    origin,
)
from pithauthor._record_cache import RecordCache
from pithauthor._tokens import (
    TOKEN_ENV,
    env_token_origin,
    forget_token,
    store_token,
    stored_registries,
    token_for,
)
from pithauthor.errors import (
    DocumentError,
    InputError,
    NetworkError,
    RegistryAnswerError,
    RegistryRejected,
    RegistryResponseError,
    VerificationError,
)
from pithauthor.trust import TRUST_ENV as TRUST_ENV
from pithauthor.trust import default_trust
from pithauthor.verify import detect_kind, read_documents, verify_document

Document = TypeVar("Document")

__all__ = [
    "DEFAULT_REGISTRY",
    "MAX_TIMEOUT",
    "TOKEN_ENV",
    "RegistryAccess",
    "RegistryClient",
    "RegistryOptions",
    "RetryPolicy",
    "Subject",
    "check_number",
    "check_registry_options",
    "citing_number",
    "connect",
    "default_trust",
    "env_token_origin",
    "fetch_subject",
    "forget_token",
    "is_local_registry",
    "read_subject",
    "registry_binding",
    "registry_url",
    "resolve_arxiv",
    "store_token",
    "stored_registries",
    "subject_for",
]

REGISTRY_ENV = "PITH_REGISTRY"
ACTION_NAMES = {
    "author_attestation": "attest_author",
    "citation_signature": "sign_citation",
    "replication_record": "submit_replication",
}
MAX_TIMEOUT = 3600.0
"""The longest timeout accepted (seconds per attempt)."""
Say = Callable[[str], None]


def registry_url(registry: str | None = None) -> str:
    """`registry`, else `$PITH_REGISTRY`, else https://pith.science; checked by the URL policy.

    A registry's base URL is scheme://HOST[:PORT][/PATH]: no user info, query or fragment."""
    if registry is not None and not registry.strip():
        raise InputError("the registry URL is empty")
    url = check_url(registry or os.environ.get(REGISTRY_ENV) or DEFAULT_REGISTRY)
    parts = urlsplit(url)
    if parts.username is not None or parts.password is not None or parts.query or parts.fragment:
        raise InputError(f"{url!r} is not a registry base URL (no user, query or fragment)")
    return url


def registry_binding(registry: str | None = None) -> str:
    """The registry an outbox row is bound to, in one spelling: `registry_url(registry)` with
    its scheme and host lowercased (`HTTP://LocalHost:8787/` and `http://localhost:8787` are one
    registry; a path, if any, is kept: two registries may share a host)."""
    url = registry_url(registry)
    parts = urlsplit(url)
    return origin(url) + parts.path


def is_local_registry(registry: str) -> bool:
    """True when the registry URL's host is loopback (a local registry, for dry runs)."""
    return is_loopback(urlsplit(registry_url(registry)).hostname or "")


def _failed(report: Any) -> str:
    return ", ".join(c.name for c in report.failed)


class RegistryClient:
    """A registry and the keys trusted for it: fetch verified documents, submit events."""

    def __init__(
        self,
        registry: str | None = None,
        *,
        trust: Trust | None = None,
        token: str | None = None,
        timeout: float = 20.0,
        retry: RetryPolicy | None = None,
        max_connections: int = 16,
    ) -> None:
        self.base_url = registry_url(registry)
        if token is None:
            token = token_for(self.base_url)
        self.http = RegistryHttp(
            self.base_url,
            token=token,
            timeout=timeout,
            connect_timeout=min(timeout, 5.0),
            retry=retry,
            max_connections=max_connections,
        )
        self.trust = trust if trust is not None else default_trust()
        self._records: dict[str, RecordDocument] = {}
        self._lock = threading.Lock()

    def close(self) -> None:
        self.http.close()

    def __enter__(self) -> RegistryClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # --- trust -------------------------------------------------------------------------------

    def trust_local_registry(self) -> Trust:
        """Add the key this (loopback, local) registry publishes; returns the new trust.

        Only for a registry on this machine whose manifest calls itself local: that key
        proves nothing about pith.science, and the caller should say so to the user.
        """
        if not is_loopback(urlsplit(self.base_url).hostname or ""):
            raise InputError("--trust-local-registry works only for a registry on loopback")
        manifest = self.http.get_json("/pith-mirrors.json")
        mirrors = manifest.get("mirrors") if isinstance(manifest, Mapping) else None
        if (
            not isinstance(mirrors, list)
            or not mirrors
            or any(not isinstance(m, Mapping) or m.get("mirror_type") != "local" for m in mirrors)
        ):
            raise VerificationError("the registry's manifest does not call itself local")
        try:
            keys = Trust.from_manifest(
                manifest, local=True, source=f"local registry {self.base_url}"
            ).keys.values()
        except DocumentError as exc:
            raise RegistryResponseError(f"the local registry's manifest is broken: {exc}") from None
        self.trust = self.trust.with_keys(keys)
        return self.trust

    # --- reading -----------------------------------------------------------------------------

    def record(self, ref: str | PithNumber) -> RecordDocument:
        """The record of `ref` (number, body, alias or arXiv id), verified; else an error."""
        number = self._reference(ref)
        body = number.body if isinstance(number, PithNumber) else number.prefix
        with self._lock:
            cached = self._records.get(body)
        if cached is not None:
            return cached
        doc = self.http.get_json(f"/pith/{body}")
        record = self._verified_record(doc, number)
        with self._lock:
            self._records[body] = record
            self._records[PithNumber.parse(record["pith_number"]).body] = record
        return record

    def _verified_record(self, doc: Any, wanted: PithNumber | PithAlias) -> RecordDocument:
        if not isinstance(doc, dict) or "canonical_record" not in doc:
            raise RegistryResponseError("the registry's answer is not a record")
        report, record = checked_record(doc, self.trust)
        if [c.name for c in report.failed] == ["receipt_key"]:
            receipt = doc.get("receipt")
            kid = receipt.get("key_id") if isinstance(receipt, Mapping) else None
            raise VerificationError(
                f"the record from {self.base_url} is signed by registry key {kid!r}, which is "
                "not trusted; trust it with --trust-manifest FILE or PITH_TRUST "
                "(a local registry: --trust-local-registry)"
            )
        if record is None:
            raise VerificationError(
                f"the record from {self.base_url} does not verify ({_failed(report)}); not trusted"
            )
        got = PithNumber.parse(record["pith_number"])
        if (
            isinstance(wanted, PithNumber)
            and wanted.body == got.body
            and not got.same_paper(wanted)
        ):
            # the user's typo, not the registry's fault: name the number to use instead
            source = record["canonical_record"]["source"]
            raise InputError(
                f"{wanted.full} has the wrong year: the record of arXiv "
                f"{source['id']}v{source['version']} is {got.full}"
            )
        ok = (
            got.same_paper(wanted)
            if isinstance(wanted, PithNumber)
            else got.body.startswith(wanted.prefix)
        )
        if not ok:
            raise VerificationError(f"asked for {wanted}, the registry sent {got.full}")
        return record

    def resolve(self, arxiv_id: str) -> PithNumber:
        """The Pith Number of an arXiv paper, via the resolver; the record is verified (and is
        of the version named, when one is)."""
        aid = ArxivId.parse(arxiv_id)
        try:  # a version named is asked for: a registry keeping every version answers it
            answer = self.http.get_json(f"/api/pith-number/resolve?arxiv={aid}&json=true")
        except RegistryAnswerError as exc:
            if exc.status != 404 or aid.version is None:
                raise
            # a resolver that knows no versioned id: the latest, then checked below (which
            # names the version it resolves to when it is not the one asked for)
            answer = self.http.get_json(f"/api/pith-number/resolve?arxiv={aid.id}&json=true")
        number_text = None
        if isinstance(answer, Mapping):
            number_text = answer.get("pith_number")
            nested = answer.get("record")
            if number_text is None and isinstance(nested, Mapping):
                number_text = nested.get("pith_number")
        if not isinstance(number_text, str):
            raise RegistryResponseError("the resolver's answer names no pith_number")
        number = PithNumber.parse(number_text)
        record = self.record(number)
        source = record["canonical_record"].get("source")
        if source is None or source.get("id") != aid.id:
            raise VerificationError(f"the resolver sent {number.full}, which is not {aid.id}")
        if aid.version is not None and source.get("version") != aid.version:
            raise VerificationError(
                f"the registry resolves {aid.id} to v{source.get('version')} ({number.full}), "
                f"not to v{aid.version}"
            )
        return number

    def bundle(self, ref: str | PithNumber, *, strict: bool = True) -> RecordBundle:
        """The bundle of `ref`, verified (record_created receipt, every event); `strict`
        also refuses parts nobody can verify (registry event ids)."""
        return self._document("bundle", ref, checked_bundle, strict)

    def state(self, ref: str | PithNumber, *, strict: bool = True) -> MergedState:
        """The merged state of `ref`, verified (hash, receipt, events, local merge); `strict`
        also refuses parts nobody can verify (registry event ids, the registry's merge)."""
        return self._document("state", ref, checked_state, strict)

    def _document(
        self,
        what: str,
        ref: str | PithNumber,
        check: Callable[[Mapping[str, Any], Trust], tuple[Report, Document | None]],
        strict: bool,
    ) -> Document:
        record = self.record(ref)
        body = PithNumber.parse(record["pith_number"]).body
        doc = self.http.get_json(f"/pith/{body}/{what}.json")
        if not isinstance(doc, dict):
            raise RegistryResponseError(f"the {what} is not a JSON object")
        report, typed = check(doc, self.trust)
        if typed is None or doc.get("pith_number") != record["pith_number"]:
            raise VerificationError(f"the {what} does not verify ({_failed(report) or 'number'})")
        if strict and not report.strict_ok:
            parts = ", ".join(
                f"{c.name} ({', '.join(c.paths[:3]) or c.detail})"
                for c in report.with_status("unverifiable")
            )
            raise VerificationError(
                f"the {what} has parts nobody outside the registry can verify: {parts}; "
                "pass --allow-unverifiable to take it with them marked as such"
            )
        return typed

    def _reference(self, ref: str | PithNumber) -> PithNumber | PithAlias:
        if isinstance(ref, PithNumber):
            return ref
        text = ref.strip()
        if not text.lower().startswith("pith") and ("." in text or "/" in text):
            return self.resolve(text)
        return parse_reference(text)

    # --- writing -----------------------------------------------------------------------------

    def action_url(self, event: AuthorEvent) -> str:
        """Where `event` goes: the action link of its subject's verified record."""
        name = ACTION_NAMES.get(event["event_type"])
        if name is None:
            raise InputError(f"no action endpoint for event type {event['event_type']!r}")
        record = self.record(PithNumber.parse(event["subject_pith_number"]))
        url = record["agent_actions"]["actions"].get(name)
        if not isinstance(url, str):
            raise RegistryResponseError(f"the record names no {name} action")
        self.check_actions_here(record, name)
        return url

    def check_actions_here(self, record: RecordDocument, name: str | None = None) -> None:
        """Refuse a record whose action links (`name`'s, or all) are on another origin than
        this client's: an event bound to this base URL could never be sent there. Another
        spelling of the same server (`localhost` for `127.0.0.1`) is another origin by the URL
        rules, and stays one: the line names the address the registry calls itself."""
        actions = record["agent_actions"]["actions"]
        for action, url in actions.items():
            if name not in (None, action) or not isinstance(url, str):
                continue
            there = origin(check_url(url))
            if there != origin(self.base_url):
                raise RegistryResponseError(
                    f"the record's {action} link leaves {self.base_url}: {url}; this registry "
                    f"calls itself {there}: give --registry {there} (an event already bound to "
                    f"{self.base_url} cannot be sent: `pith outbox drop` it and sign it again)"
                )

    def submit(self, event: AuthorEvent, url: str | None = None) -> tuple[int, Any]:
        """POST one signed event to its action endpoint; (status, answer) on 200/201."""
        eid = event["event_id"]
        status, answer = self.http.post_json(
            url or self.action_url(event), event, headers={"Idempotency-Key": eid}
        )
        if (
            status not in (200, 201)
            or not isinstance(answer, Mapping)
            or answer.get("status", "accepted") != "accepted"
            or "error" in answer
        ):
            raise RegistryResponseError(
                f"the registry answered {status} for {eid} without accepting it (200 or 201 "
                "with a JSON object, no error, status accepted when given); it stays pending"
            )
        if answer.get("event_id", eid) != eid:
            raise RegistryResponseError(f"the registry acknowledged another event for {eid}")
        return status, answer


def fetch_subject(ref: str) -> Subject:
    """The verified subject (number and hash) of a Pith Number, alias or arXiv id."""
    with RegistryClient() as client:
        return Subject.from_document(client.record(ref))


def resolve_arxiv(arxiv_id: str) -> PithNumber:
    """The Pith Number of an arXiv paper, from the registry's resolver (record verified)."""
    with RegistryClient() as client:
        return client.resolve(arxiv_id)


# --- the options every command that talks to a registry shares -------------------------------


def check_registry_options(registry: str | None, trust_manifests: list[str]) -> None:
    """Refuse a bad registry URL or trust manifest even when no registry is needed: bad input
    is said, not silently ignored."""
    RegistryOptions(registry, tuple(trust_manifests)).read_trust()


@dataclass(frozen=True)
class RegistryOptions:
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
        return replace(
            self, registry=where, trust_local=self.trust_local and is_local_registry(where)
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
    ref: str, record: str | None, registry: RegistryAccess
) -> tuple[PithNumber, str | None, str | None]:
    """The citing paper's full Pith Number: given as such (checked with its record when one is
    at hand: the note says how, see `check_number`), from its record, or by look-up; and its
    arXiv id (no version) when its record was at hand, so that a citation of another version
    of the same paper can be refused (`sign_citation`)."""
    if record is None:
        named = classify_reference(ref)
        if named.number is not None and named.number.year is not None:
            note, held = _check_number(named.number, registry, offline=False)
            return named.number, note, _source_id(held)
    subject = subject_for(ref, record, registry)
    return subject.pith_number, None, subject.source_id


def _source_id(record: RecordDocument | None) -> str | None:
    source = record["canonical_record"].get("source") if record is not None else None
    found = source.get("id") if isinstance(source, Mapping) else None
    return found if isinstance(found, str) else None


def check_number(number: PithNumber, registry: RegistryAccess, *, offline: bool = False) -> str:
    """Compare a full Pith Number with its paper's record: the one in the record cache
    (`<PITH_HOME>/cache`, verified again now), or else the registry's (one look-up, then kept
    in the cache). InputError naming the right number when the year is wrong. Returns a note:
    what the number was checked against, or why it could not be (offline, unreachable, no
    record). Nothing is written when nothing was fetched."""
    return _check_number(number, registry, offline=offline)[0]


def _check_number(
    number: PithNumber, registry: RegistryAccess, *, offline: bool
) -> tuple[str, RecordDocument | None]:
    """`check_number`'s note, and the record it was checked with (None when none was)."""
    if number.year is None:
        raise InputError(f"{number}: give the full Pith Number, pith:YYYY:{number.body}")
    base = registry.base_url
    record = _cached_record(base, number, registry)
    where = f"{base}, cached"
    if record is None and offline:
        return f"note: offline and no record of {number.full} at hand: its year is unchecked", None
    if record is None:
        try:
            record = registry.client.record(number.body)
        except NetworkError:
            return (
                f"note: {base} could not be reached: the year of {number.full} is unchecked",
                None,
            )
        except RegistryRejected:
            return f"note: {base} has no record of {number.full}: its year is unchecked", None
        cache = RecordCache()
        try:
            cache.put_record(base, number.body, record)
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
        cached = cache.record(base, number.body)
        if cached is None:
            return None
        record = checked_record(cached, registry.trust())[1]
        if record is None or PithNumber.parse(str(record["pith_number"])).body != number.body:
            return None
        return record
    finally:
        cache.close()
