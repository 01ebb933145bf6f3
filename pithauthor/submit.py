"""Talk to a registry: resolve, fetch and verify records, bundles and states; submit events.

Every record is verified against the trusted registry keys before anything uses it: the key
pinned in the package, plus the manifests named in `PITH_TRUST` (paths separated by the OS path
separator) or passed explicitly. Events go to the action endpoint the record's `agent_actions`
names (same origin as the registry only), with `Idempotency-Key: <event_id>`.

Every event is stored in the outbox before any network I/O; `submit_pending` sends what is
pending, in parallel, and records each answer, so a batch arrives exactly once whatever fails.
Concurrent `pith submit` processes share the work: each event is sent by the one process that
holds its lease in the outbox (see `pithauthor._outbox`); the others wait for its answer.
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable, Iterable, Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from pithauthor._client import (
    DEFAULT_REGISTRY,
    RegistryAnswerError,
    RegistryHttp,
    RetryPolicy,
    check_url,
    is_loopback,
    origin,
)
from pithauthor._core.documents import AuthorEvent
from pithauthor._core.pith_number import PithAlias, PithNumber, parse_reference
from pithauthor._core.subject import Subject
from pithauthor._core.trust import Trust
from pithauthor.errors import (
    AuthError,
    DocumentError,
    InputError,
    NetworkError,
    PithError,
    RegistryResponseError,
    VerificationError,
)
from pithauthor.trust import TRUST_ENV as TRUST_ENV
from pithauthor.trust import default_trust

if TYPE_CHECKING:
    from pithauthor._outbox import Outbox, OutboxEntry

__all__ = [
    "DEFAULT_REGISTRY",
    "RegistryClient",
    "RetryPolicy",
    "SubmitResult",
    "default_trust",
    "fetch_subject",
    "registry_url",
    "resolve_arxiv",
    "store_in_outbox",
    "submit_events",
    "submit_pending",
]

REGISTRY_ENV = "PITH_REGISTRY"
ACTION_NAMES = {
    "author_attestation": "attest_author",
    "citation_signature": "sign_citation",
    "replication_record": "submit_replication",
}
Progress = Callable[[int, int], None]
LEASE_SECONDS = 600.0  # longer than one event's POST with every retry; then another may send it
WAIT_POLL = 0.2


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
            from pithauthor._tokens import token_for

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
        self._records: dict[str, dict[str, Any]] = {}
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
        from urllib.parse import urlsplit

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

    def record(self, ref: str | PithNumber) -> dict[str, Any]:
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

    def _verified_record(self, doc: Any, wanted: PithNumber | PithAlias) -> dict[str, Any]:
        from pithauthor._core.registry_checks import check_record

        if not isinstance(doc, dict) or "canonical_record" not in doc:
            raise RegistryResponseError("the registry's answer is not a record")
        report = check_record(doc, self.trust)
        if [c.name for c in report.failed] == ["receipt_key"]:
            receipt = doc.get("receipt")
            kid = receipt.get("key_id") if isinstance(receipt, Mapping) else None
            raise VerificationError(
                f"the record from {self.base_url} is signed by registry key {kid!r}, which is "
                "not trusted; trust it with --trust-manifest FILE or PITH_TRUST "
                "(a local registry: --trust-local-registry)"
            )
        if not report.ok:
            raise VerificationError(
                f"the record from {self.base_url} does not verify ({_failed(report)}); not trusted"
            )
        got = PithNumber.parse(str(doc.get("pith_number")))
        ok = (
            got.same_paper(wanted)
            if isinstance(wanted, PithNumber)
            else got.body.startswith(wanted.prefix)
        )
        if not ok:
            raise VerificationError(f"asked for {wanted}, the registry sent {got.full}")
        return doc

    def resolve(self, arxiv_id: str) -> PithNumber:
        """The Pith Number of an arXiv paper, via the resolver; the record is verified."""
        from pithauthor._core.arxiv_id import ArxivId

        aid = ArxivId.parse(arxiv_id)
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
        source = record["canonical_record"].get("source", {})
        if source.get("id") != aid.id:
            raise VerificationError(f"the resolver sent {number.full}, which is not {aid.id}")
        return number

    def bundle(self, ref: str | PithNumber, *, strict: bool = True) -> dict[str, Any]:
        """The bundle of `ref`, verified (record_created receipt, every event); `strict`
        also refuses parts nobody can verify (registry event ids)."""
        from pithauthor._core.registry_checks import check_bundle

        return self._document("bundle", ref, check_bundle, strict)

    def state(self, ref: str | PithNumber, *, strict: bool = True) -> dict[str, Any]:
        """The merged state of `ref`, verified (hash, receipt, events, local merge); `strict`
        also refuses parts nobody can verify (registry event ids, the registry's merge)."""
        from pithauthor._core.registry_checks import check_state

        return self._document("state", ref, check_state, strict)

    def _document(
        self, what: str, ref: str | PithNumber, check: Callable[..., Any], strict: bool
    ) -> dict[str, Any]:
        record = self.record(ref)
        body = PithNumber.parse(record["pith_number"]).body
        doc = self.http.get_json(f"/pith/{body}/{what}.json")
        if not isinstance(doc, dict):
            raise RegistryResponseError(f"the {what} is not a JSON object")
        report = check(doc, self.trust)
        if not report.ok or doc.get("pith_number") != record["pith_number"]:
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
        return doc

    def _reference(self, ref: str | PithNumber) -> PithNumber | PithAlias:
        if isinstance(ref, PithNumber):
            return ref
        text = ref.strip()
        if not text.lower().startswith("pith") and ("." in text or "/" in text):
            return self.resolve(text)
        return parse_reference(text)

    # --- writing -----------------------------------------------------------------------------

    def action_url(self, event: Mapping[str, Any]) -> str:
        """Where `event` goes: the action link of its subject's verified record."""
        name = ACTION_NAMES.get(str(event.get("event_type")))
        if name is None:
            raise InputError(f"no action endpoint for event type {event.get('event_type')!r}")
        record = self.record(PithNumber.parse(str(event.get("subject_pith_number"))))
        actions = (record.get("agent_actions") or {}).get("actions") or {}
        url = actions.get(name)
        if not isinstance(url, str):
            raise RegistryResponseError(f"the record names no {name} action")
        if origin(check_url(url)) != origin(self.base_url):
            raise RegistryResponseError(f"the record's {name} link leaves {self.base_url}: {url}")
        return url

    def submit(self, event: Mapping[str, Any], url: str | None = None) -> tuple[int, Any]:
        """POST one signed event to its action endpoint; (status, answer) on 200/201."""
        eid = str(event["event_id"])
        status, answer = self.http.post_json(
            url or self.action_url(event), event, headers={"Idempotency-Key": eid}
        )
        if isinstance(answer, Mapping) and answer.get("event_id", eid) != eid:
            raise RegistryResponseError(f"the registry acknowledged another event for {eid}")
        return status, answer


# --- outbox and batches ------------------------------------------------------------------------


@dataclass
class SubmitResult:
    """What a submission did. `error` is the one problem that stopped it, if any."""

    registry: str
    accepted: list[str] = field(default_factory=list)
    duplicates: list[str] = field(default_factory=list)
    rejected: dict[str, str] = field(default_factory=dict)
    pending: list[str] = field(default_factory=list)
    elsewhere: list[str] = field(default_factory=list)
    error: PithError | None = None

    @property
    def ok(self) -> bool:
        return self.error is None and not self.rejected and not self.pending

    def summary(self) -> str:
        """`accepted 3 (1 already there), rejected 0, pending 0 at URL`."""
        dup = f" ({len(self.duplicates)} already there)" if self.duplicates else ""
        other = f"; {len(self.elsewhere)} sent by another pith submit" if self.elsewhere else ""
        return (
            f"accepted {len(self.accepted)}{dup}, rejected {len(self.rejected)}, "
            f"pending {len(self.pending)} at {self.registry}{other}"
        )

    def as_dict(self) -> dict[str, object]:
        """The result for `--json` (a report, not a protocol document)."""
        return {
            "ok": self.ok,
            "registry": self.registry,
            "accepted": self.accepted,
            "duplicates": self.duplicates,
            "rejected": self.rejected,
            "pending": self.pending,
            "elsewhere": self.elsewhere,
            "error": str(self.error) if self.error else None,
        }


def store_in_outbox(events: Iterable[AuthorEvent]) -> None:
    """Store signed events in the outbox (atomically; an event already there is kept)."""
    from pithauthor._outbox import Outbox

    with Outbox() as outbox:
        outbox.store(events)


def submit_pending(
    *,
    registry: str | None = None,
    parallel: int = 8,
    client: RegistryClient | None = None,
    progress: Progress | None = None,
    outbox_path: Path | None = None,
    lease_seconds: float = LEASE_SECONDS,
) -> SubmitResult:
    """Send every pending event of the outbox; each answer is recorded as it comes.

    An event another live process is sending is left to it: this call waits (at most
    `lease_seconds`) for its answer and lists it in `elsewhere`.
    """
    from pithauthor._outbox import Outbox

    if parallel < 1:
        raise InputError("--parallel must be at least 1")
    own = client is None
    client = client or RegistryClient(registry, max_connections=max(parallel, 4))
    try:
        with Outbox(outbox_path) as outbox:
            return _send_all(client, outbox, parallel, progress, lease_seconds)
    finally:
        if own:
            client.close()


def _send_all(
    client: RegistryClient,
    outbox: Outbox,
    parallel: int,
    progress: Progress | None,
    lease_seconds: float,
) -> SubmitResult:
    from pithauthor._outbox import new_lease_owner

    owner = new_lease_owner()
    entries = outbox.entries("pending")
    result = SubmitResult(registry=client.base_url)
    mine: set[str] = set()  # events this call claimed (and so sent, or tried to)
    stop = threading.Event()
    lock = threading.Lock()
    done = 0
    urls: dict[tuple[str, str], str] = {}  # (event type, subject) -> its checked action URL

    def action_url(event: AuthorEvent) -> str:
        key = (event["event_type"], event["subject_pith_number"])
        url = urls.get(key)
        if url is None:  # once per subject and type, not once per event; failures not kept
            url = urls[key] = client.action_url(event)
        return url

    def send_claimed(entry: OutboxEntry) -> bool:
        """POST one claimed event; True when its answer was recorded (which ends the lease)."""
        posted = False
        try:
            # the record (404, not verifying...) is no verdict on the event: it stays pending
            url = action_url(entry.event)
            posted = True
            status, answer = client.submit(entry.event, url)
        except RegistryAnswerError as exc:
            if exc.from_post:
                outbox.mark_rejected(
                    entry.event_id, client.base_url, str(exc), exc.answer, attempted=True
                )
            elif posted:
                outbox.attempt(entry.event_id)
            with lock:
                if exc.from_post:
                    result.rejected[entry.event_id] = str(exc)
                else:
                    result.error = result.error or exc
            return exc.from_post
        except PithError as exc:
            if posted:
                outbox.attempt(entry.event_id)
            if isinstance(exc, AuthError | NetworkError):
                stop.set()  # every other request would fail the same way
            with lock:
                result.error = result.error or exc
            return False
        outbox.mark_accepted(entry.event_id, client.base_url, answer, attempted=True)
        with lock:
            result.accepted.append(entry.event_id)
            if status == 200:
                result.duplicates.append(entry.event_id)
        return True

    def send(entry: OutboxEntry) -> None:
        """Send `entry` if this call can claim it (another process may hold it)."""
        if stop.is_set() or not outbox.claim(entry.event_id, owner, lease_seconds):
            return
        with lock:
            mine.add(entry.event_id)
        answered = False
        try:
            answered = send_claimed(entry)
        finally:
            if not answered:
                outbox.release(entry.event_id, owner)

    def send_counted(entry: OutboxEntry) -> None:
        nonlocal done
        send(entry)
        with lock:
            done += 1
            if progress is not None:
                progress(done, len(entries))

    if parallel == 1:  # one at a time: no pool, no hand-off between threads per event
        for entry in entries:
            send_counted(entry)
    elif entries:
        with ThreadPoolExecutor(max_workers=parallel, thread_name_prefix="pith-submit") as pool:
            list(pool.map(send_counted, entries))
    others = {e.event_id for e in entries} - mine
    if others:
        _wait_for_others(outbox, owner, others, mine, stop, lease_seconds, send)
    result.pending = [e.event_id for e in outbox.entries("pending")]
    result.elsewhere = sorted({e.event_id for e in entries} - mine - set(result.pending))
    return result


def _wait_for_others(
    outbox: Outbox,
    owner: str,
    others: set[str],
    mine: set[str],
    stop: threading.Event,
    lease_seconds: float,
    send: Callable[[OutboxEntry], None],
) -> None:
    """Wait until the events other processes hold are answered; take over any whose lease
    expired or whose owner died (`send` claims before it sends, and sends each at most once)."""
    deadline = time.monotonic() + lease_seconds
    while not stop.is_set():
        waiting = [e for e in outbox.entries("pending") if e.event_id in others - mine]
        if not waiting:
            return
        for entry in waiting:
            send(entry)
        held = set(outbox.leased_elsewhere(owner)) & others
        if not held or time.monotonic() > deadline:
            return
        time.sleep(WAIT_POLL)


def submit_events(
    events: Iterable[AuthorEvent], *, registry: str | None = None, parallel: int = 8
) -> SubmitResult:
    """Store `events` in the outbox, then send everything pending (for `--submit`)."""
    store_in_outbox(events)
    return submit_pending(registry=registry, parallel=parallel)


# --- seams for other commands --------------------------------------------------------------------


def fetch_subject(ref: str) -> Subject:
    """The verified subject (number and hash) of a Pith Number, alias or arXiv id."""
    with RegistryClient() as client:
        return Subject.from_document(client.record(ref))


def resolve_arxiv(arxiv_id: str) -> PithNumber:
    """The Pith Number of an arXiv paper, from the registry's resolver (record verified)."""
    with RegistryClient() as client:
        return client.resolve(arxiv_id)
