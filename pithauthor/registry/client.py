"""Talk to a registry: resolve, fetch and verify records, bundles and states; send events; and the
on-disk cache of verified records and arXiv resolutions that `pith cite` reads first.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import sqlite3
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any, TypedDict, TypeVar, cast
from urllib.parse import urlsplit

from pithauthor.errors import (
    ActionNotNamed,
    DocumentError,
    InputError,
    PithError,
    RegistryAnswerError,
    RegistryResponseError,
    VerificationError,
)
from pithauthor.fs import pith_home, private_dir
from pithauthor.net import DEFAULT_REGISTRY, RegistryHttp, RetryPolicy, check_url, json_answer
from pithauthor.protocol.canonical_json import JSONFault, parse_json
from pithauthor.protocol.checks.bundle import checked_bundle
from pithauthor.protocol.checks.record import checked_record
from pithauthor.protocol.checks.state import checked_state
from pithauthor.protocol.documents import (
    AuthorEvent,
    JSONObject,
    MergedState,
    RecordBundle,
    RecordDocument,
)
from pithauthor.protocol.ids import (
    ArxivId,
    PithAlias,
    PithNumber,
    parse_reference,
)
from pithauthor.protocol.subject import Subject
from pithauthor.protocol.urls import is_loopback, origin
from pithauthor.protocol.verdict import FAILED, PASSED, UNVERIFIABLE, Report, Trust
from pithauthor.registry.credentials import (
    default_trust,
    token_for,
)
from pithauthor.verify import collector_paused

__all__ = [
    "MAX_TIMEOUT",
    "RegistryClient",
    "fetch_subject",
    "is_hold",
    "is_local_registry",
    "registry_binding",
    "registry_url",
    "resolve_arxiv",
]


# Talk to a registry: resolve, fetch and verify records, bundles and states; send events.
#
# Every record is verified against the trusted registry keys before anything uses it: the key
# pinned in the package, plus the manifests named in `PITH_TRUST` (paths separated by the OS path
# separator) or passed explicitly. Events go to the action endpoint the record's `agent_actions`
# names (same origin as the registry only), with `Idempotency-Key: <event_id>`. The HTTP rules
# (URL policy, retries, error mapping) live in `pithauthor.net`; batches and the outbox in
# `pithauthor.registry.submit`.

Document = TypeVar("Document")

REGISTRY_ENV = "PITH_REGISTRY"

ACTION_NAMES = {
    "author_attestation": "attest_author",
    "citation_signature": "sign_citation",
    "replication_record": "submit_replication",
    "timestamp_anchor": "anchor_timestamp",
    "storage_attestation": "attest_storage",
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


def _passed_before(doc: object) -> RecordDocument:
    """A record read from bytes whose SHA-256, under this very trust, is kept as having passed
    `check_record` (`RecordCache.record_verdict`): the same bytes under the same trust are the
    same record and pass the same checks, so it is typed without them. Nothing else may be."""
    return cast(RecordDocument, doc)


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
            connect_timeout=min(timeout, 5.0),  # a dead host is told at once; reads may be long
            retry=retry,
            max_connections=max_connections,
        )
        self.trust = trust if trust is not None else default_trust()
        self.kept: RecordCache | None = None  # verified bundles and states, by ETag (`keep`)
        self._records: dict[str, tuple[RecordDocument, Verdict]] = {}
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

    def record(self, ref: str | PithNumber, *, attempts: int | None = None) -> RecordDocument:
        """The record of `ref` (number, body, alias or arXiv id), verified; else an error.
        `attempts` caps the retry policy's for a look-up the caller can do without."""
        return self.record_verdict(ref, attempts=attempts)[0]

    def record_verdict(
        self, ref: str | PithNumber, *, attempts: int | None = None
    ) -> tuple[RecordDocument, Verdict]:
        """`record`, and the verdict of its check (a paper's page shows it: the record is
        checked once, not once to take it and again to say how it fared).

        The record is asked of the registry every time. When the client keeps documents
        (`keep`), the verdict of a record that passed is kept too, bound to the SHA-256 of the
        bytes the registry sent and to the trust it passed under: the same bytes under the same
        trust are the same record, which passes the same checks (`check_record` is a function
        of the two), so they are not checked again (a second look at a paper, `pith status`).
        Any other bytes, another trust or a damaged row: checked in full again."""
        number = self._reference(ref)
        body = number.body if isinstance(number, PithNumber) else number.prefix
        with self._lock:
            cached = self._records.get(body)
        if cached is not None:
            return cached
        path = f"/pith/{body}"
        raw, _ = self.http.get_if_changed(path, None, attempts=attempts)
        digest = hashlib.sha256(raw).hexdigest()
        kept = (
            None
            if self.kept is None
            else self.kept.record_verdict(self.base_url, body, self.trust, digest)
        )
        # kept: the bytes the strict reader took when they passed (their hash says so), which
        # the standard reader reads as the same document
        doc = json.loads(raw) if kept is not None else json_answer(raw, self.http.url(path))
        record, verdict = self._verified_record(doc, number, kept)
        if kept is None and self.kept is not None:
            self.kept.put_record_verdict(self.base_url, body, self.trust, digest, verdict)
        # verified records only, for the client's life: a record is named by its own hash and
        # never changes, and a batch of events about one paper asks for it once per event
        with self._lock:
            self._records[body] = (record, verdict)
            self._records[PithNumber.parse(record["pith_number"]).body] = (record, verdict)
        return record, verdict

    def _verified_record(
        self, doc: Any, wanted: PithNumber | PithAlias, passed: Verdict | None = None
    ) -> tuple[RecordDocument, Verdict]:
        """`doc` checked as the record of `wanted`, and its verdict; `passed`: the verdict of
        these very bytes under this trust, kept when they passed (`record_verdict`), so the
        record's own checks are not run again (what was asked for is still compared)."""
        if not isinstance(doc, dict) or "canonical_record" not in doc:
            raise RegistryResponseError("the registry's answer is not a record")
        if passed is not None:
            return self._wanted(_passed_before(doc), wanted), passed
        report, record = checked_record(doc, self.trust)
        failed = [c.name for c in report.failed]
        # an unknown key fails the links too when the key is a local registry's (its links are
        # checked against the manifest that would trust it): the key is what to name
        if record is None and "receipt_key" in failed:
            receipt = doc.get("receipt")
            kid = receipt.get("key_id") if isinstance(receipt, Mapping) else None
            local = is_loopback(urlsplit(self.base_url).hostname or "")
            raise VerificationError(
                f"the record from {self.base_url} is signed by registry key {kid!r}, which is "
                "not trusted"
                + ("" if failed == ["receipt_key"] else f" ({', '.join(failed)} fail with it)"),
                hint=(
                    "a registry on this machine: add --trust-local-registry"
                    if local
                    else "trust its manifest with --trust-manifest FILE or PITH_TRUST"
                ),
            )
        if record is None:
            raise VerificationError(
                f"the record from {self.base_url} does not verify ({_failed(report)}); not trusted"
            )
        return self._wanted(record, wanted), verdict_of(report)

    def _wanted(self, record: RecordDocument, wanted: PithNumber | PithAlias) -> RecordDocument:
        """`record` (verified) when it is the one `wanted` names; else an error."""
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

    def resolve(self, arxiv_id: str, *, any_version: bool = False) -> PithNumber:
        """The Pith Number of an arXiv paper, via the resolver; the record is verified (and is
        of the version named, when one is). `any_version`: a registry that holds no record of
        the version named may answer with its latest (a citation names the paper; the caller
        shows which version it got)."""
        aid = ArxivId.parse(arxiv_id)
        # the resolver's URL is the one records name (section 4, OBSERVED). Its answer is signed
        # by no one, so the number it gives is trusted only once its record verifies (below)
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
        if aid.version is not None and source.get("version") != aid.version and not any_version:
            raise VerificationError(
                f"the registry resolves {aid.id} to v{source.get('version')} ({number.full}), "
                f"not to v{aid.version}"
            )
        return number

    def bundle(self, ref: str | PithNumber, *, strict: bool = True) -> RecordBundle:
        """The bundle of `ref`, verified (record_created receipt, every event); `strict`
        also refuses parts nobody can verify (registry event ids)."""
        return self._document("bundle", ref, checked_bundle, strict)[0]

    def state(
        self, ref: str | PithNumber, *, strict: bool = True, attempts: int | None = None
    ) -> MergedState:
        """The merged state of `ref`, verified (hash, receipt, events, local merge); `strict`
        also refuses parts nobody can verify (registry event ids, the registry's merge).
        `attempts` caps the retries, as for `record`."""
        return self._document("state", ref, checked_state, strict, attempts)[0]

    def checked_state(
        self, ref: str | PithNumber, *, strict: bool = True
    ) -> tuple[MergedState, Verdict]:
        """`state`, and the verdict of its checks (`pith status` shows it: the state is
        checked once, not once to take it and again to say how it fared)."""
        return self._document("state", ref, checked_state, strict)

    def state_summary(
        self,
        ref: str | PithNumber,
        kind: str,
        summarize: Callable[[Mapping[str, Any]], JSONObject],
        *,
        strict: bool = True,
        also: Mapping[str, Callable[[Mapping[str, Any]], JSONObject]] | None = None,
    ) -> tuple[JSONObject, Verdict]:
        """`summarize(state)` of the merged state of `ref`, verified as `state` verifies it,
        and its verdict. When the client keeps documents (`keep`), the summary is kept too
        (under `kind`, bound to the state's ETag and hash): a second look at an unchanged
        paper reads only the summary, not the state, and verifies nothing (`pith
        status` of a 10,000-event paper). No summary kept, or one that is damaged: the state
        is downloaded and verified in full again.

        `also` (kind -> summarize): other summaries of the same state, made and kept beside
        this one whenever the state is verified (never read here): a later look asking for
        one of them finds it kept, bound as this one is (`pith status` keeps the page's first
        rows, which a text page reads, and every row, which `--json` reads)."""
        record = self.record(ref)
        body = PithNumber.parse(record["pith_number"]).body
        kept = (
            None
            if self.kept is None
            else self.kept.summary(self.base_url, body, "state", kind, self.trust)
        )
        path = f"/pith/{body}/state.json"
        raw, etag = self.http.get_if_changed(path, kept[0] if kept else None)
        if kept is not None and not raw:  # 304: the state summarized (and verified) is current
            summary, verdict = kept[1], kept[2]
        else:
            doc, verdict = self._checked(record, "state", path, raw, checked_state)
            summary = summarize(doc)
            if self.kept is not None and etag:
                self.kept.put_document(self.base_url, body, "state", self.trust, etag, raw, verdict)
                made = {kind: summary, **{k: f(doc) for k, f in (also or {}).items()}}
                self.kept.put_summaries(
                    self.base_url, body, "state", self.trust, etag, raw, made, verdict
                )
        self._strict(strict, "state", verdict)
        return summary, verdict

    def keep(self, cache: RecordCache) -> None:
        """Keep the bundles and states this client verifies in `cache`, with their ETags, and
        revalidate them (`If-None-Match`): a second look at an unchanged paper downloads and
        verifies nothing (`pith status`, `pith fetch`)."""
        self.kept = cache

    def _document(
        self,
        what: str,
        ref: str | PithNumber,
        check: Callable[[Mapping[str, Any], Trust], tuple[Report, Document | None]],
        strict: bool,
        attempts: int | None = None,
    ) -> tuple[Document, Verdict]:
        record = self.record(ref, attempts=attempts)
        body = PithNumber.parse(record["pith_number"]).body
        path = f"/pith/{body}/{what}.json"
        held: tuple[str, Any, Verdict] | None = None
        if self.kept is not None:
            held = self.kept.document(self.base_url, body, what, self.trust)
        raw, etag = self.http.get_if_changed(path, held[0] if held else None, attempts=attempts)
        doc: Any
        if held is not None and not raw:  # 304: the copy verified before is current
            doc, verdict = held[1], held[2]
        else:
            doc, verdict = self._checked(record, what, path, raw, check)
            if self.kept is not None and etag:
                self.kept.put_document(self.base_url, body, what, self.trust, etag, raw, verdict)
        self._strict(strict, what, verdict)
        return doc, verdict  # checked above, or when it was kept

    def _checked(
        self,
        record: Mapping[str, Any],
        what: str,
        path: str,
        raw: bytes,
        check: Callable[[Mapping[str, Any], Trust], tuple[Report, Document | None]],
    ) -> tuple[Any, Verdict]:
        """The bundle or state `raw` (of `record`'s paper), verified in full, and its verdict."""
        with collector_paused():
            doc = json_answer(raw, self.http.url(path))
            if not isinstance(doc, dict):
                raise RegistryResponseError(f"the {what} is not a JSON object")
            report, typed = check(doc, self.trust)
        if typed is None or doc.get("pith_number") != record["pith_number"]:
            failed = _failed(report) or "number"
            raise VerificationError(f"the {what} does not verify ({failed})")
        return doc, verdict_of(report)

    @staticmethod
    def _strict(strict: bool, what: str, verdict: Verdict) -> None:
        if strict and not verdict["strict_ok"]:
            raise VerificationError(
                f"the {what} has parts nobody outside the registry can verify: "
                f"{verdict['unverifiable_parts']}; "
                "pass --allow-unverifiable to take it with them marked as such"
            )

    def _reference(self, ref: str | PithNumber) -> PithNumber | PithAlias:
        if isinstance(ref, PithNumber):
            return ref
        text = ref.strip()
        # an arXiv id has a `.` (2302.12445) or a `/` (hep-th/9901001); a Pith body has neither
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
            raise ActionNotNamed(
                f"the record of {event['subject_pith_number']} at {self.base_url} names no "
                f"{name} action: the registry takes no {event['event_type']} events; it stays "
                "in the outbox"
            )
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
        """POST one signed event to its action endpoint; (status, answer) on 200/201, or on
        an answer that holds it for moderation (`is_hold`: the caller tells the two apart)."""
        eid = event["event_id"]
        status, answer = self.http.post_json(
            url or self.action_url(event), event, headers={"Idempotency-Key": eid}
        )
        if is_hold(status, answer) and isinstance(answer, Mapping):
            if answer.get("event_id", eid) != eid:
                raise RegistryResponseError(f"the registry acknowledged another event for {eid}")
            return status, answer
        # anything short of a clear acceptance leaves the event pending: marked accepted on a
        # doubtful answer, it would never be sent again, and might never have arrived
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


# DESIGN (docs/protocol.md, "Held for moderation"): the registry's answer to a submission not
# confirmed by a signed-in author is not published; a 202, or a status naming a hold or
# moderation ("held_for_moderation", "pending_moderation", "held"), stores the event without
# accepting it yet. Such an event is never sent again: the paper's state tells when it counts.
_HOLD_WORDS = re.compile(r"held|hold|moderat", re.IGNORECASE)


def is_hold(status: int, answer: object) -> bool:
    """True when a 2xx answer to a POST holds the event for moderation: a 202, or a JSON
    object whose `status` names a hold or moderation, without an `error`."""
    if not isinstance(answer, Mapping) or "error" in answer or not 200 <= status < 300:
        return False
    said = answer.get("status")
    if isinstance(said, str) and _HOLD_WORDS.search(said):
        return True
    return status == 202  # "accepted for processing", not done: taken, not yet in the state


def fetch_subject(ref: str) -> Subject:
    """The verified subject (number and hash) of a Pith Number, alias or arXiv id."""
    with RegistryClient() as client:
        return Subject.from_document(client.record(ref))


def resolve_arxiv(arxiv_id: str) -> PithNumber:
    """The Pith Number of an arXiv paper, from the registry's resolver (record verified)."""
    with RegistryClient() as client:
        return client.resolve(arxiv_id)


# An on-disk cache of registry answers for `pith cite`: verified records, and arXiv ids resolved.
#
# `<PITH_HOME>/cache/records.sqlite3` (folder 0700). Records are content-addressed, so a cached
# record never goes stale; it is verified again, with the trust of the moment, every time it is
# read. An arXiv id's number can change (a new version is a new record), so resolutions are kept
# for `ttl` seconds (one day by default).

DB_NAME = "records.sqlite3"

DEFAULT_TTL = 24 * 3600

# keyed by registry too: one paper's record differs between registries (its receipt's key, the
# origin of its links), and an event is sent only where the record it used came from
SCHEMA = """
CREATE TABLE IF NOT EXISTS records (
    registry TEXT NOT NULL, body TEXT NOT NULL, doc TEXT NOT NULL,
    PRIMARY KEY (registry, body));
CREATE TABLE IF NOT EXISTS resolutions (
    registry TEXT NOT NULL, arxiv_id TEXT NOT NULL, pith_number TEXT NOT NULL,
    fetched_at REAL NOT NULL, PRIMARY KEY (registry, arxiv_id));
CREATE TABLE IF NOT EXISTS documents (
    registry TEXT NOT NULL, body TEXT NOT NULL, what TEXT NOT NULL, trust TEXT NOT NULL,
    etag TEXT NOT NULL, doc BLOB NOT NULL, sha256 TEXT NOT NULL, verdict TEXT NOT NULL,
    PRIMARY KEY (registry, body, what));
CREATE TABLE IF NOT EXISTS record_checks (
    registry TEXT NOT NULL, body TEXT NOT NULL, trust TEXT NOT NULL, sha256 TEXT NOT NULL,
    PRIMARY KEY (registry, body));
CREATE TABLE IF NOT EXISTS record_subjects (
    registry TEXT NOT NULL, body TEXT NOT NULL, doc_sha256 TEXT NOT NULL, subject TEXT NOT NULL,
    sha256 TEXT NOT NULL, PRIMARY KEY (registry, body));
CREATE TABLE IF NOT EXISTS record_verdicts (
    registry TEXT NOT NULL, body TEXT NOT NULL, trust TEXT NOT NULL, doc_sha256 TEXT NOT NULL,
    verdict TEXT NOT NULL, sha256 TEXT NOT NULL, PRIMARY KEY (registry, body));
CREATE TABLE IF NOT EXISTS summaries (
    registry TEXT NOT NULL, body TEXT NOT NULL, what TEXT NOT NULL, kind TEXT NOT NULL,
    trust TEXT NOT NULL, etag TEXT NOT NULL, doc_sha256 TEXT NOT NULL, summary BLOB NOT NULL,
    verdict TEXT NOT NULL, sha256 TEXT NOT NULL, PRIMARY KEY (registry, body, what, kind));
"""
# record_checks: the record of `body` whose stored text has this SHA-256 passed `check_record`
# under this trust (`_check_key`); `RecordCache.checked_record` reads it back unchecked only
# while both still match (a warm `pith cite` re-verified every cached receipt).
# `record_subjects`: the `Subject` made from the stored record whose text has the SHA-256
# `doc_sha256` (`RecordCache.checked_subjects`), used only while that record is read back
# unchecked (its `record_checks` binding holds for those bytes); `sha256` covers the row.
# `record_verdicts`: the verdict of the record the registry sent for `body` as bytes with this
# SHA-256, which passed `check_record` under this trust (`RegistryClient.record_verdict`);
# `sha256` covers the row, so a damaged row is a miss and the record is checked again.
# `summaries`: what a command shows of a document it verified (`RegistryClient.state_summary`),
# bound to the document's ETag and hash; `sha256` covers the row (`_summary_digest`), so a
# damaged summary is a miss and the document is downloaded and verified again.


def _summary_digest(etag: str, doc_sha256: str, summary: bytes, verdict: str) -> str:
    """The hash a kept summary is checked against: its ETag, its document's hash, its bytes and
    its verdict, each length-prefixed (no two rows share a digest by moving a boundary)."""
    h = hashlib.sha256()
    for part in (etag.encode(), doc_sha256.encode(), summary, verdict.encode()):
        h.update(b"%d:" % len(part))
        h.update(part)
    return h.hexdigest()


class Verdict(TypedDict):
    """How a bundle or state fared, as kept beside it (`RecordCache.put_document`)."""

    ok: bool
    passed: int  # how many checks passed
    unverifiable: list[str]  # the names of those unverifiable
    failed: list[str]
    strict_ok: bool
    unverifiable_parts: str  # their names and paths, for a refusal


def verdict_of(report: Report) -> Verdict:
    """The verdict of `report`, as kept beside a document (`RecordCache.put_document`)."""
    # the statuses counted once (a 10,000-event state holds 180,000 checks, and each
    # of `ok`, `strict_ok`, `failed`, `with_status` and `counts` read them all again: 30 ms);
    # the checks are named (and their lists made) only when some failed or are unverifiable
    counts = report.counts()
    failed, unknown = counts[FAILED], counts[UNVERIFIABLE]
    unverifiable = report.with_status(UNVERIFIABLE) if unknown else []
    return {
        "ok": not failed,
        "passed": counts[PASSED],
        "unverifiable": [c.name for c in unverifiable],
        "failed": [c.name for c in report.failed] if failed else [],
        "strict_ok": not failed and not unknown,
        "unverifiable_parts": ", ".join(
            f"{c.name} ({', '.join(c.paths[:3]) or c.detail})" for c in unverifiable
        ),
    }


def _trust_key(trust: Trust) -> str:
    """What a kept document and its verdict were verified against: a copy is used under the
    same trust only. Every field of every key counts (not its bytes alone): a key's
    `base_url` is the origin a record's links are checked against, and its `source` is named
    in the checks it passes, which a kept verdict repeats."""
    keys = sorted((kid, repr(key)) for kid, key in trust.keys.items())
    return hashlib.sha256(repr(keys).encode()).hexdigest()


def _check_key(trust: Trust) -> str:
    """What decides whether a stored record passes `check_record` (`record_checks`, read back
    without its verdict): each key's id, bytes, locality and origin, not where it was read
    from (`source`, only named in the verdict). A `pith cite --trust-manifest FILE` and a
    `--trust-local-registry` of the same registry trust the same key, and each would
    otherwise check every cached record again after the other ran (300 receipts and a
    rewrite of their rows: a warm 300-entry cite went from about 0.2 to 0.5 s of CPU)."""
    keys = sorted(
        (kid, key.public_key.hex(), key.local, key.base_url) for kid, key in trust.keys.items()
    )
    return hashlib.sha256(repr(keys).encode()).hexdigest()


# A stored record and what bound it when it passed (`RecordCache.checked_record`).
_CHECKED_ROWS = (
    "SELECT r.body, r.doc, c.trust, c.sha256 FROM records r LEFT JOIN record_checks c "
    "ON c.registry = r.registry AND c.body = r.body"
)
# the same, with the subject kept from the record (`RecordCache.checked_subjects`)
_SUBJECT_ROWS = (
    "SELECT r.body, r.doc, c.trust, c.sha256, s.doc_sha256, s.subject, s.sha256 FROM records r "
    "LEFT JOIN record_checks c ON c.registry = r.registry AND c.body = r.body "
    "LEFT JOIN record_subjects s ON s.registry = r.registry AND s.body = r.body"
)


def _subject_digest(doc_sha256: str, subject: str) -> str:
    """The hash a kept subject's row is checked against: its record's hash (64 hex digits,
    always: no boundary to move) and its text."""
    return hashlib.sha256(f"{doc_sha256}:{subject}".encode()).hexdigest()


def _subject_text(stated: str, subject: Subject) -> str:
    """A subject as kept: the record's stated number, then the subject's fields."""
    number = subject.pith_number
    return json.dumps(
        [
            stated,
            number.body,
            number.year,
            subject.canonical_sha256,
            subject.source_id,
            subject.source_version,
            subject.title,
            list(subject.authors),
        ],
        ensure_ascii=False,
    )


def _kept_subject(text: str) -> tuple[str, Subject] | None:
    """(the record's stated number, its subject) from `_subject_text`'s text; None when it
    does not read as one. `Subject` checks the number against the digest again."""
    try:
        stated, body, year, digest, source_id, version, title, authors = json.loads(text)
        subject = Subject(
            PithNumber(body=body, year=year), digest, source_id, version, title, tuple(authors)
        )
    except (ValueError, TypeError, AttributeError, PithError):
        return None
    return (stated, subject) if isinstance(stated, str) else None


MAP_BYTES = 256 * 1024 * 1024
"""How much of the cache file SQLite reads through a memory map (`RecordCache`)."""

# values per `IN (...)` query: under SQLite's least limit of bound variables (999)
_IN_CHUNK = 500


class RecordCache:
    """Records by body and arXiv resolutions, per registry base URL; safe across threads."""

    def __init__(self, path: Path | None = None, *, ttl: float = DEFAULT_TTL) -> None:
        if path is None:
            path = private_dir("cache") / DB_NAME
        self.ttl = ttl
        self._lock = threading.Lock()
        self._db = sqlite3.connect(path, check_same_thread=False, isolation_level=None)
        self._db.execute("PRAGMA journal_mode=WAL")
        # read through a memory map, not one read() per 4 KiB page: a kept summary of 10,000
        # citations (2.7 MB) spans 670 overflow pages, about 2 ms of a second look's system
        # time in a fresh process. Only reads are mapped (SQLite writes with write()), and
        # nothing here shrinks the file under another process's map (no VACUUM, no auto-vacuum)
        self._db.execute(f"PRAGMA mmap_size={MAP_BYTES}")
        self._db.executescript(SCHEMA)
        path.chmod(0o600)  # SQLite creates its file under the umask (often 0644)

    @classmethod
    def existing(cls) -> RecordCache | None:
        """The cache of this PITH_HOME if it was ever written; None (and nothing made) if not."""
        path = pith_home() / "cache" / DB_NAME
        return cls(private_dir("cache") / DB_NAME) if path.is_file() else None

    def close(self) -> None:
        self._db.close()

    def record(self, registry: str, body: str) -> JSONObject | None:
        """The record stored for `body`, as stored: unchecked (verify it before use). A cache,
        not a store: a damaged row is a miss (asked of the registry again), never an error."""
        with self._lock:
            row = self._db.execute(
                "SELECT doc FROM records WHERE registry = ? AND body = ?", (registry, body)
            ).fetchone()
        if row is None:
            return None
        try:
            doc = parse_json(row[0])
        except JSONFault:
            return None  # a damaged cache entry is a miss
        return doc if isinstance(doc, dict) else None

    def put_record(
        self, registry: str, body: str, doc: Mapping[str, object], trust: Trust | None = None
    ) -> None:
        """Store the record of `body`; with `trust`, the one it was just verified under (the
        caller's word: only for a record that passed `check_record` under `trust`), so that
        `checked_record` takes these bytes back without checking them again."""
        text = json.dumps(doc, ensure_ascii=False)
        with self._lock:
            key = (registry, body)
            self._db.execute("INSERT OR REPLACE INTO records VALUES (?, ?, ?)", (*key, text))
            self._db.execute("DELETE FROM record_checks WHERE registry = ? AND body = ?", key)
            if trust is not None:
                self._passed(registry, body, trust, text)

    def _passed(self, registry: str, body: str, trust: Trust, text: str) -> None:
        digest = hashlib.sha256(text.encode()).hexdigest()
        self._db.execute(
            "INSERT OR REPLACE INTO record_checks VALUES (?, ?, ?, ?)",
            (registry, body, _check_key(trust), digest),
        )

    def checked_record(self, registry: str, body: str, trust: Trust) -> RecordDocument | None:
        """The record stored for `body`, verified under `trust`; None when none is stored or
        it does not pass (the caller forgets it and fetches it again).

        A record that passed `check_record` under the same trust is bound to the SHA-256 of
        its stored text: while those exact bytes are read back under that trust, the check
        is not repeated (a 300-entry `pith cite` re-verified 300 receipts on every run). Any
        other bytes (a changed or damaged row) or another trust are checked in full
        again, and bound anew only if they pass."""
        with self._lock:
            row = self._db.execute(
                f"{_CHECKED_ROWS} WHERE r.registry = ? AND r.body = ?", (registry, body)
            ).fetchone()
        if row is None:
            return None
        return self._checked_row(registry, body, trust, _check_key(trust), *row[1:])

    def checked_records(
        self, registry: str, bodies: Iterable[str], trust: Trust
    ) -> Iterator[tuple[str, RecordDocument]]:
        """`checked_record` of each of `bodies`, read in a few queries (not one each: SQLite
        locks and stats the file for every statement, about 2,000 system calls for 300
        records): the body of each that is stored and passes, with its record, parsed one at a
        time (a caller that keeps only what it makes of each holds one record, not all)."""
        wanted = list(dict.fromkeys(bodies))
        key = _check_key(trust)  # one hash of the trusted keys, not one per record
        for start in range(0, len(wanted), _IN_CHUNK):
            chunk = wanted[start : start + _IN_CHUNK]
            marks = ",".join("?" * len(chunk))
            with self._lock:
                rows = self._db.execute(
                    f"{_CHECKED_ROWS} WHERE r.registry = ? AND r.body IN ({marks})",
                    (registry, *chunk),
                ).fetchall()
            for body, *row in rows:
                record = self._checked_row(registry, body, trust, key, *row)
                if record is not None:
                    yield body, record

    def checked_subjects(
        self, registry: str, bodies: Iterable[str], trust: Trust
    ) -> Iterator[tuple[str, str, Subject | RecordDocument]]:
        """`checked_records`, with what `Subject.from_document` makes of each record: (body,
        the record's stated `pith_number`, its subject), or the record itself when no subject
        is made of it here (the caller meets the same record and makes the same error).

        A subject made from a record is kept, bound to the SHA-256 of the record's stored
        text, and taken back instead of parsing the record and making it again (about 14 ms
        of CPU of a warm 300-entry `pith cite`) only while those bytes are read back unchecked
        (`checked_record`'s binding holds) and the kept row is whole (its own hash). Any
        other record is checked as `checked_record` checks it and its subject made again."""
        wanted = list(dict.fromkeys(bodies))
        key = _check_key(trust)
        made: list[tuple[str, str, str, str, str]] = []
        for start in range(0, len(wanted), _IN_CHUNK):
            chunk = wanted[start : start + _IN_CHUNK]
            marks = ",".join("?" * len(chunk))
            with self._lock:
                rows = self._db.execute(
                    f"{_SUBJECT_ROWS} WHERE r.registry = ? AND r.body IN ({marks})",
                    (registry, *chunk),
                ).fetchall()
            for body, text, kept_trust, kept_digest, subject_of, subject, row_digest in rows:
                digest = hashlib.sha256(text.encode()).hexdigest()
                if (
                    kept_trust == key
                    and digest == kept_digest
                    and subject_of == digest
                    and row_digest == _subject_digest(digest, subject)
                ):
                    kept = _kept_subject(subject)
                    if kept is not None:
                        yield body, kept[0], kept[1]
                        continue
                record = self._checked_row(
                    registry, body, trust, key, text, kept_trust, kept_digest
                )
                if record is None:
                    continue
                stated = record.get("pith_number")
                try:
                    made_subject = Subject.from_document(record)
                except Exception:  # the caller makes it again, and meets the same error
                    made_subject = None
                if made_subject is None or not isinstance(stated, str):
                    yield body, str(stated), record
                    continue
                kept_text = _subject_text(stated, made_subject)
                made.append((registry, body, digest, kept_text, _subject_digest(digest, kept_text)))
                yield body, stated, made_subject
        if made:  # one transaction for all (not one commit, and its sync, each)
            with self._lock:
                self._db.execute("BEGIN")
                try:
                    self._db.executemany(
                        "INSERT OR REPLACE INTO record_subjects VALUES (?, ?, ?, ?, ?)", made
                    )
                except BaseException:
                    self._db.execute("ROLLBACK")
                    raise
                self._db.execute("COMMIT")

    def _checked_row(
        self,
        registry: str,
        body: str,
        trust: Trust,
        trust_key: str,
        text: str,
        kept_trust: str | None,
        kept_digest: str | None,
    ) -> RecordDocument | None:
        """`checked_record`'s verdict on a stored row (see there)."""
        if kept_trust == trust_key and (hashlib.sha256(text.encode()).hexdigest() == kept_digest):
            # the bytes the strict reader took when they passed (their hash says so): the
            # standard reader gives the same document
            doc = json.loads(text)
            return cast(RecordDocument, doc) if isinstance(doc, dict) else None
        try:
            doc = parse_json(text)
        except JSONFault:
            return None  # a damaged cache entry is a miss
        if not isinstance(doc, dict):
            return None
        record = checked_record(doc, trust)[1]
        if record is not None:
            with self._lock:
                self._passed(registry, body, trust, text)
        return record

    def resolution(self, registry: str, arxiv_id: str) -> str | None:
        """The number an arXiv id resolved to, if it was fetched less than `ttl` ago."""
        with self._lock:
            row = self._db.execute(
                "SELECT pith_number, fetched_at FROM resolutions WHERE registry = ? "
                "AND arxiv_id = ?",
                (registry, arxiv_id),
            ).fetchone()
        if row is None or time.time() - float(row[1]) > self.ttl:
            return None
        return str(row[0])

    def resolutions(self, registry: str, arxiv_ids: Iterable[str]) -> dict[str, str]:
        """`resolution` of each of `arxiv_ids`, read in a few queries: the id of each with a
        number fetched less than `ttl` ago, with that number."""
        wanted, now = list(dict.fromkeys(arxiv_ids)), time.time()
        found: dict[str, str] = {}
        for start in range(0, len(wanted), _IN_CHUNK):
            chunk = wanted[start : start + _IN_CHUNK]
            marks = ",".join("?" * len(chunk))
            with self._lock:
                rows = self._db.execute(
                    "SELECT arxiv_id, pith_number, fetched_at FROM resolutions WHERE registry = ? "
                    f"AND arxiv_id IN ({marks})",
                    (registry, *chunk),
                ).fetchall()
            found.update((aid, str(n)) for aid, n, at in rows if now - float(at) <= self.ttl)
        return found

    def put_resolution(self, registry: str, arxiv_id: str, pith_number: str) -> None:
        with self._lock:
            self._db.execute(
                "INSERT OR REPLACE INTO resolutions VALUES (?, ?, ?, ?)",
                (registry, arxiv_id, pith_number, time.time()),
            )

    def document(
        self, registry: str, body: str, what: str, trust: Trust
    ) -> tuple[str, JSONObject, Verdict] | None:
        """The bundle or state (`what`) of `body` kept by `put_document`, verified then under
        the same `trust`: (its ETag, the document, its verdict); None when none is kept, or
        its bytes are not the ones kept (a damaged copy is a miss, fetched again)."""
        with self._lock:
            row = self._db.execute(
                "SELECT etag, doc, sha256, verdict, trust FROM documents WHERE registry = ? "
                "AND body = ? AND what = ?",
                (registry, body, what),
            ).fetchone()
        if row is None or row[4] != _trust_key(trust):
            return None
        etag, raw, digest, verdict = row[0], bytes(row[1]), row[2], row[3]
        if hashlib.sha256(raw).hexdigest() != digest:
            return None
        try:
            # the bytes the strict reader took when they were verified (their hash says so):
            # the standard reader gives the same document, several times faster
            doc, kept = json.loads(raw), json.loads(verdict)
        except ValueError:
            return None
        if not isinstance(doc, dict) or not isinstance(kept, dict):
            return None
        return etag, doc, cast(Verdict, kept)  # verified when it was kept

    def put_document(
        self,
        registry: str,
        body: str,
        what: str,
        trust: Trust,
        etag: str,
        raw: bytes,
        verdict: Verdict,
    ) -> None:
        """Keep a bundle or state just verified (`raw`, the bytes the registry sent)."""
        row = (
            registry,
            body,
            what,
            _trust_key(trust),
            etag,
            raw,
            hashlib.sha256(raw).hexdigest(),
            json.dumps(verdict),
        )
        with self._lock:
            self._db.execute("INSERT OR REPLACE INTO documents VALUES (?,?,?,?,?,?,?,?)", row)

    def record_verdict(
        self, registry: str, body: str, trust: Trust, doc_sha256: str
    ) -> Verdict | None:
        """The verdict kept by `put_record_verdict` for the record of `body` whose bytes hash to
        `doc_sha256`, checked under the same `trust`; None when none is kept for those bytes and
        that trust, or the row is damaged."""
        with self._lock:
            row = self._db.execute(
                "SELECT trust, doc_sha256, verdict, sha256 FROM record_verdicts "
                "WHERE registry = ? AND body = ?",
                (registry, body),
            ).fetchone()
        if row is None or row[0] != _trust_key(trust) or row[1] != doc_sha256:
            return None
        if _summary_digest("", doc_sha256, b"", row[2]) != row[3]:
            return None
        try:
            kept = json.loads(row[2])
        except ValueError:
            return None
        return cast(Verdict, kept) if isinstance(kept, dict) else None

    def put_record_verdict(
        self, registry: str, body: str, trust: Trust, doc_sha256: str, verdict: Verdict
    ) -> None:
        """Keep the verdict of a record that just passed `check_record` under `trust` (the
        caller's word), sent as bytes whose SHA-256 is `doc_sha256`."""
        said = json.dumps(verdict)
        row = (registry, body, _trust_key(trust), doc_sha256, said)
        digest = _summary_digest("", doc_sha256, b"", said)
        with self._lock:
            self._db.execute(
                "INSERT OR REPLACE INTO record_verdicts VALUES (?,?,?,?,?,?)", (*row, digest)
            )

    def summary(
        self, registry: str, body: str, what: str, kind: str, trust: Trust
    ) -> tuple[str, JSONObject, Verdict] | None:
        """The summary (`kind`) of the bundle or state (`what`) of `body` kept by
        `put_summaries`, made under the same `trust`: (the ETag of the document it summarizes,
        the summary, the document's verdict); None when none is kept or it is damaged."""
        with self._lock:
            row = self._db.execute(
                "SELECT trust, etag, doc_sha256, summary, verdict, sha256 FROM summaries "
                "WHERE registry = ? AND body = ? AND what = ? AND kind = ?",
                (registry, body, what, kind),
            ).fetchone()
        if row is None or row[0] != _trust_key(trust):
            return None
        etag, doc_sha256, raw, verdict = row[1], row[2], bytes(row[3]), row[4]
        if _summary_digest(etag, doc_sha256, raw, verdict) != row[5]:
            return None
        try:
            summary, kept = json.loads(raw), json.loads(verdict)
        except ValueError:
            return None
        if not isinstance(summary, dict) or not isinstance(kept, dict):
            return None
        return etag, summary, cast(Verdict, kept)  # made from a document verified then

    def put_summaries(
        self,
        registry: str,
        body: str,
        what: str,
        trust: Trust,
        etag: str,
        doc: bytes,
        summaries: Mapping[str, JSONObject],
        verdict: Verdict,
    ) -> None:
        """Keep what a command shows of a bundle or state just verified (`doc`, the bytes the
        registry sent under `etag`): each of `summaries` (kind -> summary), in one transaction
        (the document hashed once: a 100,000-event state is about 100 MB)."""
        said, doc_sha256 = json.dumps(verdict), hashlib.sha256(doc).hexdigest()
        trust_key = _trust_key(trust)
        rows = []
        for kind, summary in summaries.items():
            raw = json.dumps(summary, ensure_ascii=False).encode("utf-8")
            digest = _summary_digest(etag, doc_sha256, raw, said)
            rows.append(
                (registry, body, what, kind, trust_key, etag, doc_sha256, raw, said, digest)
            )
        with self._lock:
            self._db.execute("BEGIN")
            try:
                self._db.executemany(
                    "INSERT OR REPLACE INTO summaries VALUES (?,?,?,?,?,?,?,?,?,?)", rows
                )
            except BaseException:
                self._db.execute("ROLLBACK")
                raise
            self._db.execute("COMMIT")

    def forget_record(self, registry: str, body: str) -> None:
        with self._lock:
            self._db.execute(
                "DELETE FROM records WHERE registry = ? AND body = ?", (registry, body)
            )
            self._db.execute(
                "DELETE FROM record_checks WHERE registry = ? AND body = ?", (registry, body)
            )
            self._db.execute(
                "DELETE FROM record_subjects WHERE registry = ? AND body = ?", (registry, body)
            )
