"""What a bundle and a state carry, checked alike: record_created and its receipt, each author
event at its place, registry events, each event_id once (pure)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from functools import lru_cache
from typing import Any

from pithauthor.protocol.canonical_json import canonical_sha256
from pithauthor.protocol.checks.event import checked_author_event
from pithauthor.protocol.checks.fields import (
    CREATED_CHECKED,
    CREATED_REGISTRY_FIELDS,
    EVENT_CHECKED,
)
from pithauthor.protocol.checks.merge import CheckedEntry
from pithauthor.protocol.checks.record import check_receipt, receipt_key, same_json
from pithauthor.protocol.ids import PithNumber
from pithauthor.protocol.payloads import EVENT_TYPES
from pithauthor.protocol.subject import link_verdict
from pithauthor.protocol.verdict import (
    FAILED,
    NOT_SIGNED,
    PASSED,
    Check,
    Report,
    Segments,
    Trust,
    uncovered,
    under,
)


def check_links(
    report: Report,
    linked: Iterable[tuple[str, Any]],
    known: Mapping[str, Mapping[str, Any]],
    local: bool,
) -> None:
    """The links of the (path, event) pairs in `linked` that replace or withdraw another event,
    against the events of the document (`known`, by event_id), by the one rule a state, a
    bundle and the local registry follow (`subject.link_faults`): a check `<path>.link` for
    each, failed when the link breaks it. An event named that the document does not hold is
    unverifiable, or failed where the document says it holds every event (`local`: a local
    registry's state, whose merge is ours)."""
    for at, event in linked:
        if type(event) is not dict and not isinstance(event, Mapping):
            continue
        verdict = link_verdict(event, known)
        if verdict is None:  # the place is named only for an event with a link
            continue
        holds, detail = verdict
        if holds is None and not local:
            report.unverifiable(f"{at}.link", detail)
        else:
            report.add(f"{at}.link", bool(holds), detail)


def note_completeness(report: Report, why: str) -> None:
    """What no check of an unsigned document (a bundle, a local state) can speak for: whether
    an event was left out of it. Said as not signed, never as passed."""
    report.append(Check("completeness", NOT_SIGNED, why))


def check_created(
    report: Report,
    created: Any,
    at: str,
    canon: Any,
    digest: Any,
    trust: Trust,
) -> list[str | Segments]:
    """`record_created`: payload = this record, its receipt verifies, its signer is the
    receipt's key; returns what it covered (its own event_id: unverifiable unless it is a local
    registry's, whose event_id is the sha256 of the other fields)."""
    payload = created.get("payload") if isinstance(created, Mapping) else None
    if not isinstance(created, Mapping) or not isinstance(payload, Mapping):
        report.add("record_created", False, f"{at}: no record_created event with a payload")
        return []
    name = "record."
    report.add(
        name + "payload_record",
        same_json(payload.get("canonical_record"), canon)
        and payload.get("canonical_sha256") == digest
        and isinstance(digest, str),
        "its payload is this canonical record and canonical_sha256",
    )
    source = canon.get("source") if isinstance(canon, Mapping) else None
    if isinstance(source, Mapping):
        stated = tuple(payload.get(f"source_{k}") for k in ("id", "kind", "version"))
        expected = tuple(source.get(k) for k in ("id", "kind", "version"))
        report.add(name + "payload_source", same_json(stated, expected), "source_id/kind/version")
    receipt = payload.get("receipt")
    report.extend(check_receipt(receipt, str(digest), trust), prefix=name)
    key = receipt_key(receipt, trust)
    signer = created.get("signer")
    report.add(
        name + "signer",
        key is not None
        and isinstance(signer, Mapping)
        and signer.get("key_id") == key.key_id
        and signer.get("public_key_fingerprint") == key.fingerprint,
        "the event's signer is the key that signed the receipt",
    )
    covered: list[str | Segments] = list(under(at, CREATED_CHECKED))
    fields = tuple(f for f in CREATED_REGISTRY_FIELDS if f in created)
    if key is not None and key.local:
        rest = {k: v for k, v in created.items() if k != "event_id"}
        report.add(
            name + "event_id",
            created.get("event_id") == "sha256:" + canonical_sha256(rest),
            "a local registry's: sha256 of the other fields (a hash, not a signature)",
        )
        covered.append(f"{at}.event_id")
    else:
        report.unverifiable(
            name + "event_id",
            "a registry event_id: its preimage is not published",
            tuple(f"{at}.{f}" for f in fields),
        )
        covered += [f"{at}.{f}" for f in fields]
    return covered


def check_author_at(
    report: Report,
    event: Any,
    at: str,
    subject: PithNumber | None,
    digest: Any,
    expected_type: str | None = None,
    checked: dict[int, CheckedEntry] | None = None,
) -> None:
    """An author event inside a document, checked in full whatever signer_type it declares
    (relabelled `signer_type: registry`, it would otherwise pass as an unverifiable registry
    event, which nobody checks). `checked` (when given) keeps what `check_author_event`
    failed, for the merge, and the event's canonical text when it proved it (merge.Checked)."""
    _check_authors(report, ((event, at + "."),), subject, digest, expected_type, checked)


def check_authors_at(
    report: Report,
    events: Sequence[Any],
    where: str,
    subject: PithNumber | None,
    digest: Any,
    expected_type: str | None = None,
    checked: dict[int, CheckedEntry] | None = None,
) -> None:
    """`check_author_at` of each item of the list `events` found at `where` (item `i` at
    `where[i]`), in order: the same checks, with what depends only on the document (the
    subject's checks, the list's) decided once for the list, not once per event (a state
    lists 10,000 citations)."""
    _check_authors(
        report,
        ((event, f"{where}[{index}].") for index, event in enumerate(events)),
        subject,
        digest,
        expected_type,
        checked,
    )


def _check_authors(
    report: Report,
    placed: Iterable[tuple[Any, str]],
    subject: PithNumber | None,
    digest: Any,
    expected_type: str | None,
    checked: dict[int, CheckedEntry] | None,
) -> None:
    """`check_author_at` of each (event, its path with a final `.`) of `placed`."""
    full = subject.full if subject is not None else None
    about, not_about = _about(full is not None, full), _about(False, full)
    typed_list = expected_type is not None
    in_list, not_in_list = _in_list(True, expected_type or ""), _in_list(False, expected_type or "")
    for event, prefix in placed:
        texts: list[str] | None = None if checked is None else []  # a state's: for its hash
        sub, typed = checked_author_event(event, texts)
        # `structure` passed: the event has exactly the envelope's fields and its signature
        # block exactly its own, which is what EVENT_CHECKED names, so no field of it can be
        # uncovered
        first = sub.head()  # nothing of the event's report is read before the document's is
        structure_ok = first.name == "structure" and first.status == PASSED
        if checked is not None:
            text = texts[0] if texts else None
            # typed: every rule passed (`checked_author_event`), so no check failed
            failed = [] if typed is not None else [c.name for c in sub.failed]
            checked[id(event)] = (event, failed, typed, text)
        # `type(...) is dict` first: the ABC's isinstance costs more than the check it guards,
        # and this runs for every event of a document
        if type(event) is dict or isinstance(event, Mapping):
            # no subject (`full` None): no event is about it (`about` is then failed too)
            sub.append(about if event.get("subject_pith_number") == full else not_about)
            payload = event.get("payload")
            record = (type(payload) is dict or isinstance(payload, Mapping)) and payload.get(
                "canonical_sha256"
            ) == digest
            sub.append(_RECORD_OK if record else _RECORD_FAILED)
            if typed_list:
                sub.append(in_list if event.get("event_type") == expected_type else not_in_list)
            if not structure_ok:  # else exactly the event's fields, all covered (EVENT_CHECKED)
                sub.not_signed("not_signed", uncovered(event, EVENT_CHECKED))
        report.extend(sub, prefix=prefix, path_prefix=prefix, adopt=True)  # `sub` ends here


# The checks added to each author event of a document (above) depend only on the document's
# subject: made once per document, not once per event (a Check is an immutable tuple)
_RECORD_DETAIL = "payload.canonical_sha256 is this record's (all 256 bits)"
_RECORD_OK = Check("payload_record", PASSED, _RECORD_DETAIL)
_RECORD_FAILED = Check("payload_record", FAILED, _RECORD_DETAIL)


@lru_cache(maxsize=64)
def _in_list(ok: bool, expected_type: str) -> Check:
    return Check(
        "list",
        PASSED if ok else FAILED,
        f"an {expected_type} list holds only {expected_type} events",
    )


@lru_cache(maxsize=64)
def _about(ok: bool, full: str | None) -> Check:
    return Check(
        "subject_matches", PASSED if ok else FAILED, f"the event is about {full or 'this record'}"
    )


def check_registry_event(
    report: Report,
    event: Any,
    at: str,
    trust: Trust,
    registry: list[str],
    own_type: str | None = None,
) -> None:
    """Not an author event: unverifiable when a trusted registry key signed it, else failed.
    One declaring an author type or `record_created` is failed: those are checked elsewhere;
    but `own_type`, the type of the list it is in (a registry's own timestamp anchor, in
    `timestamp_anchors`)."""
    etype = event.get("event_type") if isinstance(event, Mapping) else None
    if etype in (*EVENT_TYPES, "record_created") and etype != own_type:
        report.add(f"{at}.event_type", False, f"a {etype} event outside its own place")
        return
    signer = event.get("signer") if isinstance(event, Mapping) else None
    kid = signer.get("key_id") if isinstance(signer, Mapping) else None
    key = trust.get(kid) if isinstance(kid, str) else None
    if (
        key is not None
        and isinstance(signer, Mapping)
        and signer.get("public_key_fingerprint") == key.fingerprint
        and signer.get("signer_type") != "author"
    ):
        registry.append(at)
    else:
        report.add(
            f"{at}.signer",
            False,
            f"neither an author event of a known type nor signed by a trusted registry key "
            f"({kid!r})",
        )


def report_registry_events(report: Report, registry: list[str]) -> None:
    """One unverifiable check naming the registry events at `registry`, when there are any."""
    if registry:
        report.unverifiable(
            "registry_events",
            f"{len(registry)} registry event(s): the event_id preimage is not published",
            tuple(registry),
        )


def check_unique_event_ids(report: Report, events: Iterable[Any]) -> None:
    """`event_ids_unique`: no event_id is listed twice among `events`."""
    # one event_id is one statement: listed twice, it would be counted twice
    seen: set[str] = set()
    repeated: list[str] = []
    for event in events:
        eid = event.get("event_id") if type(event) is dict or isinstance(event, Mapping) else None
        if isinstance(eid, str):
            if eid in seen:
                repeated.append(eid)
            seen.add(eid)
    report.add(
        "event_ids_unique",
        not repeated,
        "repeated: " + ", ".join(repeated) if repeated else "each event once",
    )
