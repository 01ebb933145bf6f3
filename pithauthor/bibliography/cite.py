"""Sign the citations of a whole bibliography: read it, resolve every identifier to a verified
record, and sign one citation per cited paper, reporting what happened to every entry.

    reading = read_bibliographies([Path("refs.bib")])
    with RegistryClient() as client:
        report = sign_bibliography(reading, citing, key, RegistryResolver(client))

In two steps, to show what will be signed before a key is opened (as `pith cite` does):
`plan_citations` (pure) says which entries are to be signed and why each other one is not,
and `sign_plan` signs them; `CiteReport.fresh` is what was signed anew.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Protocol

from pithauthor.bibliography.reading import (
    BibEntry,
    BibReading,
    EntryRow,
    source_counts,
    status_counts,
)
from pithauthor.errors import InputError, RegistryRejected, VerificationError
from pithauthor.progress import Advance, report
from pithauthor.protocol.documents import AuthorEvent, RecordDocument
from pithauthor.protocol.events import Signer
from pithauthor.protocol.identity import fingerprint_hex
from pithauthor.protocol.ids import ArxivId, PithNumber
from pithauthor.protocol.payloads import CITATION, self_citation_problem
from pithauthor.protocol.subject import Subject
from pithauthor.protocol.utc import utc_now
from pithauthor.registry.client import RecordCache
from pithauthor.sign import citation_signer

if TYPE_CHECKING:
    from pithauthor.registry.client import RegistryClient
    from pithauthor.registry.statements import Statements

__all__ = [
    "FAILED_STATUSES",
    "CitePlan",
    "CiteReport",
    "RegistryResolver",
    "Resolver",
    "plan_citations",
    "resolve_identifiers",
    "sign_bibliography",
    "sign_plan",
]

#: Row statuses that make `pith cite` exit 1: an entry with an identifier that was not signed.
FAILED_STATUSES = ("unresolved", "invalid_identifier", "invalid_relationship", "parse_error")

Identifier = ArxivId | PithNumber


class Resolver(Protocol):
    """Turns an identifier into the verified subject it names."""

    def subject(self, identifier: Identifier) -> Subject:
        """The subject; RegistryRejected, VerificationError or InputError when there is none."""
        ...


@dataclass
class CiteReport:
    """Every entry's row, and the signed events (one per distinct cited paper)."""

    citing: PithNumber
    rows: list[EntryRow]
    events: list[AuthorEvent] = field(default_factory=list)
    reused: list[str] = field(default_factory=list)  # event ids of statements signed before
    # every (entry, cited paper) signed anew (not the reused ones): what the author is shown
    fresh: list[tuple[BibEntry, Subject]] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        """True when every entry with an identifier was signed (duplicates are fine)."""
        return not any(r.status in FAILED_STATUSES for r in self.rows)

    def counts(self) -> dict[str, int]:
        return status_counts(self.rows)

    def as_dict(self) -> dict[str, object]:
        """The report for `--json` (a report, not a protocol document)."""
        return {
            "ok": self.ok,
            "citing": self.citing.full,
            "counts": self.counts(),
            "sources": source_counts(self.rows),
            "events": len(self.events),
            "rows": [r.as_dict() for r in self.rows],
        }


class RegistryResolver:
    """Resolve through a registry client, with an on-disk cache of verified records."""

    def __init__(self, client: RegistryClient, cache: RecordCache | None = None) -> None:
        self.client = client
        self.cache = cache

    def subject(self, identifier: Identifier) -> Subject:
        number = identifier if isinstance(identifier, PithNumber) else self._resolve(identifier)
        return Subject.from_document(self._record(number))

    def cached_records(
        self, identifiers: Sequence[Identifier]
    ) -> Iterator[tuple[str, Subject | RecordDocument]]:
        """The record `subject` would take from the record cache for each identifier the
        cache answers (its resolution and its record, checked as `_record` checks them), with
        the identifier's text, one at a time: as the subject made of it before, while its
        bytes are the same (`RecordCache.checked_subjects`), else as the record; the others
        are left to `subject`, which asks the registry. Read in a few queries for all; sends
        nothing and forgets nothing."""
        if self.cache is None:
            return
        base = self.client.base_url
        arxiv = [str(i) for i in identifiers if not isinstance(i, PithNumber)]
        resolved = self.cache.resolutions(base, arxiv) if arxiv else {}
        named: dict[str, list[tuple[str, PithNumber]]] = {}  # body -> (text, number), each
        for identifier in identifiers:
            text = str(identifier)
            if isinstance(identifier, PithNumber):
                number = identifier
            elif text in resolved:
                try:
                    number = PithNumber.parse(resolved[text])
                except InputError:  # left to `subject`, whose row then says what is wrong
                    continue
            else:
                continue
            named.setdefault(number.body, []).append((text, number))
        for body, stated, record in self.cache.checked_subjects(base, named, self.client.trust):
            for text, number in named[body]:
                if _names(stated, number):
                    yield text, record

    def _resolve(self, arxiv: ArxivId) -> PithNumber:
        base = self.client.base_url
        # The version the entry names is asked for: a registry keeping every version answers
        # with that version's record, the one the author cited. One that holds no record of it
        # answers with its latest, and the entry's row says so (`_version_note`).
        cached = self.cache.resolution(base, str(arxiv)) if self.cache else None
        if cached is not None:
            return PithNumber.parse(cached)
        number = self.client.resolve(str(arxiv), any_version=True)
        if self.cache:
            self.cache.put_resolution(base, str(arxiv), number.full)
        return number

    def _record(self, number: PithNumber) -> RecordDocument:
        base = self.client.base_url
        if self.cache:
            # verified under the client's trust (again in full unless these bytes passed)
            cached = self.cache.checked_record(base, number.body, self.client.trust)
            if cached is not None and PithNumber.parse(cached["pith_number"]).same_paper(number):
                return cached
            self.cache.forget_record(base, number.body)
        record = self.client.record(number)  # verified by the client
        if self.cache:
            self.cache.put_record(base, number.body, record, self.client.trust)
        return record


def _subject_from(record: Subject | RecordDocument) -> Callable[[Identifier], Subject]:
    """`subject`'s way with its record (or the subject made of it) at hand: the same subject,
    or the same error."""
    if isinstance(record, Subject):
        return lambda _: record
    return lambda _: Subject.from_document(record)


def _names(stated: str, number: PithNumber) -> bool:
    """`_record`'s test that a cached record, which states the number `stated`, is `number`'s
    paper (False when `stated` does not parse: `subject` then meets the same record, and its
    row says why)."""
    if number.year is not None and stated == number.full:  # the same body, without a parse
        return True
    try:
        return PithNumber.parse(stated).same_paper(number)
    except InputError:
        return False


def resolve_identifiers(
    identifiers: Iterable[Identifier], resolver: Resolver, *, parallel: int = 8
) -> dict[str, Subject | str]:
    """Each identifier (by its text) to its subject, or to the reason it has none.

    Network and authorisation errors are not an entry's fault: the first one stops everything
    and is raised.
    """
    unique = {str(i): i for i in identifiers}

    def one(
        identifier: Identifier, ask: Callable[[Identifier], Subject | None]
    ) -> Subject | str | None:
        try:
            return ask(identifier)
        except RegistryRejected as exc:
            return f"the registry has no record: {exc}"
        except VerificationError as exc:
            return str(exc)
        except InputError as exc:
            return str(exc)

    if not unique:
        return {}
    # the references are looked up in parallel; each one done is reported (`pithauthor.progress`)
    total, done, lock = len(unique), 0, threading.Lock()

    def counted(identifier: Identifier) -> Subject | str:
        nonlocal done
        outcome = one(identifier, resolver.subject)
        assert outcome is not None  # `subject` answers or raises
        with lock:
            done += 1
            report(Advance(RESOLVING, done, total))
        return outcome

    report(Advance(RESOLVING, 0, total))
    # What the record cache answers is taken in this thread first: a SQLite read and a hash
    # each, which 8 threads only slowed (their hand-offs cost more CPU than the work, and
    # varied with the machine's load). Only the rest is asked of the registry, in
    # parallel; a cached entry that fails its check is asked again there, as before.
    results: dict[str, Subject | str] = {}
    from_cache = getattr(resolver, "cached_records", None)
    if from_cache is not None:
        # one record at a time, kept no longer than its subject is made (300 parsed records
        # at once were 7 MB more of the process, and its page faults)
        for text, record in from_cache(list(unique.values())):
            outcome = one(unique[text], _subject_from(record))
            assert outcome is not None
            results[text] = outcome
            done += 1
            report(Advance(RESOLVING, done, total))
    rest = [i for t, i in unique.items() if t not in results]
    if rest:
        from concurrent.futures import ThreadPoolExecutor  # here: a warm run starts no thread

        with ThreadPoolExecutor(
            max_workers=max(1, min(parallel, len(rest))), thread_name_prefix="pith-cite"
        ) as pool:
            results.update(zip((str(i) for i in rest), pool.map(counted, rest), strict=True))
    return {text: results[text] for text in unique}


RESOLVING = "looking the references up in the registry"
"""What `resolve_identifiers` reports its progress as (`pithauthor.progress.Advance`)."""


def _version_note(entry: BibEntry, subject: Subject) -> str:
    """A note when the entry names an arXiv version other than the record's: the registry
    holds no record of that version, and the citation names the paper's record it has."""
    named = entry.identifier.version if isinstance(entry.identifier, ArxivId) else None
    if named is None or subject.source_version in (None, named):
        return ""
    return f"; cites v{subject.source_version}: the registry holds no v{named} record"


@dataclass
class CitePlan:
    """What signing a bibliography's citations comes to, before anything is signed or any key
    opened (`plan_citations`): the row of every entry not to be signed, and `pending`, the
    citations to sign (each distinct cited paper with its first entry, in entry order).
    `sign_plan` signs them."""

    reading: BibReading
    citing: PithNumber
    citing_arxiv: str | None
    # one per entry of `reading`, in order; None where a `pending` citation's row goes (the
    # n-th None is the n-th pending one's), written when it is signed
    rows: list[EntryRow | None]
    pending: list[tuple[BibEntry, Subject]]


def plan_citations(
    reading: BibReading,
    citing: PithNumber,
    resolved: Mapping[str, Subject | str],
    *,
    citing_arxiv: str | None = None,
) -> CitePlan:
    """Which entries of `reading` are to be signed, and why each other one is not: unresolved
    (`resolved`, from `resolve_identifiers`, says why), the citing paper itself or another
    version of it (`citing_arxiv`: the citing paper's arXiv id, when its record is at hand, as
    `sign_citation` refuses them), or a paper an earlier entry cites already. Pure: nothing is
    signed, looked up or opened."""
    # One pass over the entries, in order: the entries to sign (`to_sign`: status `found`) get
    # a slot for the signer's row, the others their row now. No list of pairs, no map of rows
    # by entry, no second pass: a row per entry of a large bibliography.
    rows: list[EntryRow | None] = []
    pending: list[tuple[BibEntry, Subject]] = []
    first_of: dict[str, BibEntry] = {}
    for entry in reading.entries:
        if entry.status != "found":
            rows.append(entry.row())
            continue
        outcome = resolved[str(entry.identifier)]
        if isinstance(outcome, str):
            rows.append(entry.outcome_row("unresolved", outcome))
            continue
        number = outcome.pith_number
        if number.body == citing.body or self_citation_problem(
            citing.full, number.full, citing_arxiv, outcome.source_id
        ):
            detail = (
                "this is the citing paper itself"
                if number.body == citing.body
                else (f"another version of the citing paper (arXiv {citing_arxiv})")
            )
            rows.append(entry.outcome_row("skipped", detail))
            continue
        if (first := first_of.get(number.body)) is not None:
            rows.append(
                entry.outcome_row(
                    "duplicate",
                    f"same paper as {first.key} ({first.source_file}:{first.line})",
                    number.full,
                )
            )
            continue
        first_of[number.body] = entry
        rows.append(None)
        pending.append((entry, outcome))
    return CitePlan(reading, citing, citing_arxiv, rows, pending)


def sign_plan(
    plan: CitePlan,
    signer: Signer | None,
    *,
    held: Statements | None = None,
    created_at: str | None = None,
) -> CiteReport:
    """Sign `plan.pending`, one citation each, and report every entry's row. `signer` may be
    None only when nothing is pending (a caller then opens no key for nothing).

    With `held` (what the outbox holds, `pithauthor.registry.statements`), a citation already
    signed is reused (row `already_signed`, in `reused`, not in `events`) and a changed one
    replaces the old one. The report's `fresh` is every (entry, cited paper) signed anew: what
    a caller shows the author before it stores or sends `events` (nothing here does either).
    """
    events: list[AuthorEvent] = []
    reused: list[str] = []
    fresh: list[tuple[BibEntry, Subject]] = []
    signed: list[EntryRow] = []  # the pending citations' rows, in their order
    if plan.pending:
        if signer is None:
            raise ValueError("sign_plan: the plan has citations to sign, and no signer")
        created_at = created_at or utc_now()  # one signing time for the whole bibliography
        settle = held.settle("auto") if held is not None else None
        if held is not None:  # one look-up for all the papers, not one per paper
            fingerprint = fingerprint_hex(signer.public_key)
            subjects = (subject.pith_number.full for _, subject in plan.pending)
            held.look_ahead(fingerprint, CITATION, subjects)
        # what the citations share (key, time, citing paper) is checked and written once
        sign = citation_signer(
            signer,
            plan.citing,
            created_at=created_at,
            citing_arxiv=plan.citing_arxiv,
            settle=settle,
        )
        for entry, outcome in plan.pending:
            relationship = entry.relationship
            assert relationship is not None  # `found` entries have one
            event = sign(outcome, relationship, entry.key[:200])
            settled = held.settled(event) if held is not None else None
            status, note = "signed", ""
            if settled is not None and settled.decision == "reused":
                status, note = "already_signed", " (signed before: reused)"
                reused.append(event["event_id"])
            else:
                events.append(event)
                fresh.append((entry, outcome))
                if settled is not None and settled.replaced is not None:
                    note = f", replaces {settled.replaced[:19]}…"
            note += _version_note(entry, outcome)
            signed.append(
                entry.outcome_row(
                    status,
                    f"{relationship}; {event['event_id'][:19]}…{note}",
                    outcome.pith_number.full,
                )
            )
    filled = iter(signed)
    by_entry = [row if row is not None else next(filled) for row in plan.rows]
    reading = plan.reading
    order = {str(p): i for i, p in enumerate(reading.files)}
    all_rows = sorted(
        [*by_entry, *reading.failures], key=lambda r: (order.get(r.file, len(order)), r.line or 0)
    )
    return CiteReport(citing=plan.citing, rows=all_rows, events=events, reused=reused, fresh=fresh)


def sign_bibliography(
    reading: BibReading,
    citing: PithNumber,
    signer: Signer,
    resolver: Resolver | Mapping[str, Subject | str],
    *,
    parallel: int = 8,
    created_at: str | None = None,
    held: Statements | None = None,
    citing_arxiv: str | None = None,
) -> CiteReport:
    """One signed citation per distinct cited paper of `reading`, and a row per entry: the
    entries' identifiers resolved (`resolve_identifiers`, `parallel` at a time), planned
    (`plan_citations`) and signed (`sign_plan`, where `held`, `created_at` and the report's
    `fresh` are said). `resolver` may be a Resolver or the result of `resolve_identifiers`.
    Nothing is stored or sent: the caller delivers `report.events`.
    """
    resolved = (
        resolver
        if isinstance(resolver, Mapping)
        else resolve_identifiers(
            (e.identifier for e in reading.to_sign() if e.identifier is not None),
            resolver,
            parallel=parallel,
        )
    )
    plan = plan_citations(reading, citing, resolved, citing_arxiv=citing_arxiv)
    return sign_plan(plan, signer, held=held, created_at=created_at)
