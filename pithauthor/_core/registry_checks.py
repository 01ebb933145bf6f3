"""Checks on what the registry publishes: receipts, records, bundles and merged states.

One rule for every verdict: a document is OK only when every part it carries that the verdict
speaks for (defined in pithauthor._core.checks) was checked. Each check function below names
what it checked (the `*_CHECKED` path patterns); every other field present is listed as
`not_signed`, never counted as verified.
Author events are verified against their own keys whatever `signer_type` they declare. Parts
signed by the registry whose preimage is unpublished (a registry `event_id`, the registry's merge
`pith-open-graph-merge-v1`) are `unverifiable`, with their paths; `Report.strict_ok` fails on them.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, cast

from pithauthor._core.author_event import checked_author_event
from pithauthor._core.canonical import b64decode, base32_nopad, canonical_sha256, hex_digest_bytes
from pithauthor._core.checks import NOT_SIGNED, PASSED, Check, Report
from pithauthor._core.corrections import link_verdict
from pithauthor._core.coverage import Segments, segments, uncovered, under
from pithauthor._core.documents import (
    EventSignature,
    MergedState,
    Receipt,
    RecordBundle,
    RecordDocument,
    fields,
    required_fields,
)
from pithauthor._core.envelope import SIGNED_FIELDS
from pithauthor._core.merge import Checked, CheckedEntry, remerge
from pithauthor._core.pith_number import BODY_LENGTH, PithNumber
from pithauthor._core.record import pith_number_of, text_canon_sha256
from pithauthor._core.trust import RegistryKey, Trust
from pithauthor._core.web_url import is_loopback, origin_of
from pithauthor.errors import PithError

RECEIPT_MESSAGE = "canonical_sha256_bytes"
RECEIPT_KIND = "pith_receipt"
RECEIPT_ALGORITHM = "ed25519"
LOCAL_MERGE_VERSION = "pithauthor-local-merge-v1"
AUTHOR_EVENT_LISTS = {
    "author_attestations": "author_attestation",
    "citation_signatures": "citation_signature",
    "replication_records": "replication_record",
}
REGISTRY_EVENT_LISTS = (
    "timestamp_anchors",
    "storage_attestations",
    "corrections",
    "mirror_hints",
    "graph_snapshots",
)
ALIAS_KINDS = ("arxiv", "arxiv_version", "doi", "pith_short_8", "pith_short_12", "pith_short_16")
PAPER_FIELDS = ("title", "primary_cat", "cross_cats", "license", "submitted_at")

# --- what each verdict checks (docs/protocol.md, "What `pith verify` checks") ------------------
# Every field matched here is checked (recomputed, or covered by a verified signature); every
# other field present is reported as not signed. `agent_actions` and `links` are checked (origin
# of the registry that signed the receipt, naming this paper) yet still listed as not signed:
# no signature covers the exact URLs.
RECEIPT_CHECKED = (
    "canonical_sha256",
    "key_id",
    "signature_b64",
    "signed_message",
    "algorithm",
    "kind",
    "public_key_fingerprint",
)
RECEIPT_ROW_CHECKED = ("pith_body", *RECEIPT_CHECKED)
EVENT_CHECKED = (*SIGNED_FIELDS, "event_id", *under("signature", fields(EventSignature)))
ALIAS_CHECKED = ("[*].alias_kind", "[*].alias_value")
RECORD_CHECKED = (
    "record_type",
    "schema_version",
    "pith_number",
    "short_pith_number",
    "canonical_sha256",
    "canonical_record",
    "source",
    *under("receipt", RECEIPT_CHECKED),
    *under("aliases", ALIAS_CHECKED),
    *under("paper", PAPER_FIELDS),
    *under("upstream_receipt", RECEIPT_CHECKED),
)
RECORD_REQUIRED = required_fields(RecordDocument)
# record_created: its payload (hashed record, receipt) and its signer (the receipt's key)
CREATED_CHECKED = (
    "signer.key_id",
    "signer.public_key_fingerprint",
    "payload.canonical_record",
    "payload.canonical_sha256",
    "payload.source_id",
    "payload.source_kind",
    "payload.source_version",
    *under("payload.receipt", RECEIPT_CHECKED),
)
CREATED_REGISTRY_FIELDS = ("event_id", "event_type", "target", "created_at", "signer")
STATE_CHECKED = (
    "state_type",
    "pith_number",
    "state_sha256",
    "current.canonical_record",
    *under("current.record_created", CREATED_CHECKED),
    *under("current.source_aliases", ALIAS_CHECKED),
)
# the parts a merge decides: recomputed for a local state, unverifiable for the registry's
MERGE_FIELDS = (
    "merge_version",
    "event_count",
    "valid_event_count",
    "invalid_event_count",
    "equivocation_count",
    "equivocations",
    "applied_event_ids",
    "superseded",
    "withdrawals",
    "duplicates",
    *under("current", tuple(AUTHOR_EVENT_LISTS)),
    *under("current", REGISTRY_EVENT_LISTS),
)
BUNDLE_CHECKED = (
    "bundle_type",
    "pith_number",
    "short_pith_number",
    "canonical_record",
    "canonical_sha256",
    "source",
    *under("source_aliases", ALIAS_CHECKED),
)
BUNDLE_REQUIRED = required_fields(RecordBundle)
STATE_REQUIRED = required_fields(MergedState)
# Fields checked when present, whose absence takes away nothing the verdict speaks for
# (a record without `paper` shows no title to contradict). Anything else checked is required.
RECEIPT_OPTIONAL = tuple(f for f in RECEIPT_CHECKED if f not in required_fields(Receipt))
OPTIONAL = {
    "record": (
        "record_type",
        "schema_version",
        "paper",
        "links",
        "links.*",
        "agent_actions.*",
        "agent_actions.actions.*",
        "upstream_receipt",
        *under("receipt", RECEIPT_OPTIONAL),
        *under("upstream_receipt", RECEIPT_OPTIONAL),
    ),
    "receipt": RECEIPT_OPTIONAL,
    "bundle": (
        "short_pith_number",
        "source_aliases",
        "events[*]",  # a bundle is not signed: an event left out cannot be detected
        *under("events[*].payload.receipt", RECEIPT_OPTIONAL),
    ),
    "state": under("current.record_created.payload.receipt", RECEIPT_OPTIONAL),
}


# --- receipts ----------------------------------------------------------------------------------


def receipt_key(receipt: Any, trust: Trust) -> RegistryKey | None:
    """The trusted key a receipt names (by id, and by fingerprint when it gives one)."""
    if not isinstance(receipt, Mapping):
        return None
    kid = receipt.get("key_id")
    key = trust.get(kid) if isinstance(kid, str) else None
    fp = receipt.get("public_key_fingerprint")
    if key is None or (fp is not None and fp != key.fingerprint):
        return None
    return key


def check_receipt(receipt: Any, canonical_sha256_hex: str, trust: Trust) -> Report:
    """A registry receipt: Ed25519 by a trusted key over the 32 raw digest bytes."""
    report = Report(kind="receipt")
    if not isinstance(receipt, Mapping):
        report.add("receipt", False, "no receipt object")
        return report
    report.add(
        "receipt_digest",
        receipt.get("canonical_sha256") == canonical_sha256_hex,
        "the receipt names the record's canonical_sha256",
    )
    message = receipt.get("signed_message", RECEIPT_MESSAGE)
    report.add("receipt_message", message == RECEIPT_MESSAGE, f"signed_message {message!r}")
    if "algorithm" in receipt or "kind" in receipt:
        algo, kind = receipt.get("algorithm", RECEIPT_ALGORITHM), receipt.get("kind", RECEIPT_KIND)
        report.add(
            "receipt_kind",
            algo == RECEIPT_ALGORITHM and kind == RECEIPT_KIND,
            f"algorithm {algo!r}, kind {kind!r}",
        )
    key_id = receipt.get("key_id")
    key = receipt_key(receipt, trust)
    if key is None:
        known = isinstance(key_id, str) and trust.get(key_id) is not None
        why = "its fingerprint is not that key's" if known else "unknown registry key (not trusted)"
        report.add("receipt_key", False, f"{key_id!r}: {why}")
        return report
    report.add("receipt_key", True, f"{key_id} ({key.source})")
    try:
        signature = b64decode(str(receipt.get("signature_b64", "")))
        digest = hex_digest_bytes(canonical_sha256_hex)
    except ValueError as exc:
        report.add("receipt_signature", False, str(exc))
        return report
    report.add(
        "receipt_signature",
        len(signature) == 64 and key.verify_digest(digest, signature),
        "Ed25519 over the 32 raw bytes of canonical_sha256",
    )
    return report


def check_receipt_row(row: Mapping[str, Any], trust: Trust) -> Report:
    """A bare receipt row (receipts.jsonl): `{pith_body, canonical_sha256, key_id,
    signature_b64}`."""
    report = Report(kind="receipt")
    digest = row.get("canonical_sha256")
    try:
        body = base32_nopad(hex_digest_bytes(str(digest)))[:BODY_LENGTH]
        report.add("pith_body", row.get("pith_body") == body, f"base32(digest)[:26] = {body}")
    except ValueError as exc:
        report.add("pith_body", False, str(exc))
    report.extend(check_receipt(row, str(digest), trust))
    report.not_signed("not_signed", uncovered(row, RECEIPT_ROW_CHECKED))
    return report


# --- records -------------------------------------------------------------------------------------


def check_canonical(record: Any, stated_hash: Any, stated_number: Any) -> Report:
    """The canonical record hashes to `stated_hash`, which gives `stated_number` (required)."""
    report = Report(kind="canonical")
    if not isinstance(record, Mapping):
        report.add("canonical_record", False, "no canonical_record object")
        return report
    computed = canonical_sha256(record)
    report.add("canonical_hash", computed == stated_hash, f"sha256(canonical) = {computed}")
    try:
        number = pith_number_of(record).full
    except (PithError, KeyError, TypeError) as exc:
        report.add("pith_number", False, f"cannot derive: {exc}")
        return report
    report.add(
        "pith_number",
        number == stated_number,
        f"derived {number}" + ("" if stated_number is not None else "; the document names none"),
    )
    return report


def check_record(record: Mapping[str, Any], trust: Trust) -> Report:
    """A whole record as `GET /pith/{body}` returns it."""
    report = Report(kind="record")
    _required(report, record, RECORD_REQUIRED)
    canon = record.get("canonical_record")
    report.extend(check_canonical(canon, record.get("canonical_sha256"), record.get("pith_number")))
    if "record_type" in record:
        report.add(
            "record_type", record["record_type"] == "pith_number_record", "pith_number_record"
        )
    if "schema_version" in record and isinstance(canon, Mapping):
        report.add(
            "schema_version",
            record["schema_version"] == canon.get("schema_version"),
            "= canonical_record.schema_version",
        )
    digest = str(record.get("canonical_sha256"))
    receipt = record.get("receipt")
    report.extend(check_receipt(receipt, digest, trust))
    key = receipt_key(receipt, trust)
    number = _parse_number(record.get("pith_number"))
    if number is not None and isinstance(canon, Mapping):
        if "short_pith_number" in record:
            report.add(
                "short_form",
                record["short_pith_number"] == number.short,
                f"expected {number.short}",
            )
        if "source" in record:
            report.add("source", record["source"] == canon.get("source"), "= canonical source")
        if "aliases" in record:
            _check_aliases(report, "aliases", record["aliases"], number, canon)
        if "paper" in record:
            _check_paper(report, record["paper"], canon)
        names = _paper_names(number, canon)
        for field in ("agent_actions", "links"):
            if field in record:
                _check_links(report, field, record[field], key, names)
        if "agent_actions" in record:
            _check_actions(report, record["agent_actions"], number)
    if "upstream_receipt" in record:
        report.extend(check_receipt(record["upstream_receipt"], digest, trust), prefix="upstream.")
    report.not_signed("not_signed", uncovered(record, RECORD_CHECKED))
    return report


def check_computed(doc: Mapping[str, Any]) -> Report:
    """The `--json` output of `pith number from-arxiv`: hash and number, no receipt."""
    report = Report(kind="computed_record")
    report.extend(
        check_canonical(
            doc.get("canonical_record"), doc.get("canonical_sha256"), doc.get("pith_number")
        )
    )
    report.unverifiable("receipt", "computed locally: no registry receipt to check")
    report.not_signed(
        "not_signed", uncovered(doc, ("canonical_record", "canonical_sha256", "pith_number"))
    )
    return report


# --- bundles and states ------------------------------------------------------------------------


def check_bundle(bundle: Mapping[str, Any], trust: Trust) -> Report:
    """A portable bundle: its record, its `record_created` receipt, and each event."""
    report = Report(kind="bundle")
    _required(report, bundle, BUNDLE_REQUIRED)
    canon = bundle.get("canonical_record")
    digest = bundle.get("canonical_sha256")
    report.extend(check_canonical(canon, digest, bundle.get("pith_number")))
    report.add(
        "bundle_type",
        bundle.get("bundle_type") == "pith_open_graph_bundle",
        "pith_open_graph_bundle",
    )
    number = _parse_number(bundle.get("pith_number"))
    if number is not None and "short_pith_number" in bundle:
        report.add(
            "short_form", bundle["short_pith_number"] == number.short, f"expected {number.short}"
        )
    if isinstance(canon, Mapping):
        report.add("source", bundle.get("source") == canon.get("source"), "= canonical source")
        if "source_aliases" in bundle and number is not None:
            _check_aliases(report, "source_aliases", bundle["source_aliases"], number, canon)
    events = bundle.get("events")
    covered: list[str | Segments] = list(BUNDLE_CHECKED)
    if not isinstance(events, list):
        report.add("events", False, "events is not a list")
        events = []
    created = [
        i
        for i, e in enumerate(events)
        if isinstance(e, Mapping)
        and (e.get("event_type") == "record_created" or e.get("target") == "record")
    ]
    if report.add(
        "record_created",
        len(created) == 1,
        f"{len(created)} record_created event(s); a bundle carries exactly one",
    ):
        at = f"events[{created[0]}]"
        covered += _check_created(report, events[created[0]], at, canon, digest, trust)
    registry: list[str] = []
    for index, event in enumerate(events):
        if index in created:
            continue
        at = f"events[{index}]"
        etype = event.get("event_type") if isinstance(event, Mapping) else None
        if etype in AUTHOR_EVENT_LISTS.values():
            covered.append(at)  # its own fields are listed by _check_author_at
            _check_author_at(report, event, at, number, digest)
        else:
            _registry_event(report, event, at, trust, registry)
    _unique_event_ids(report, events)
    _report_registry_events(report, registry)
    report.checks.append(
        Check(
            "completeness",
            NOT_SIGNED,
            "a bundle is not signed: each event in it was checked, but an event left out "
            "cannot be detected",
        )
    )
    report.not_signed("not_signed", uncovered(bundle, [*covered, *registry]))
    return report


def check_state(state: Mapping[str, Any], trust: Trust) -> Report:
    """A merged state: its hash, its record and receipt, every event, and the merge."""
    report = Report(kind="state")
    _required(report, state, STATE_REQUIRED)
    body = {k: v for k, v in state.items() if k != "state_sha256"}
    computed = canonical_sha256(body)
    report.add(
        "state_sha256",
        state.get("state_sha256") == computed,
        f"sha256(canonical(state without state_sha256)) = {computed}",
    )
    report.add(
        "state_type", state.get("state_type") == "pith_open_graph_state", "pith_open_graph_state"
    )
    current = state.get("current")
    if not isinstance(current, Mapping):
        report.add("current", False, "no current object")
        return report
    local = state.get("merge_version") == LOCAL_MERGE_VERSION
    number = _parse_number(state.get("pith_number"))
    created = current.get("record_created")
    payload = created.get("payload") if isinstance(created, Mapping) else None
    canon = payload.get("canonical_record") if isinstance(payload, Mapping) else None
    digest = payload.get("canonical_sha256") if isinstance(payload, Mapping) else None
    covered: list[str | Segments] = list(STATE_CHECKED)
    covered += _check_created(report, created, "current.record_created", canon, digest, trust)
    key = receipt_key(payload.get("receipt") if isinstance(payload, Mapping) else None, trust)
    if key is not None and key.local:
        report.add(
            "merge_version",
            local,
            f"a local registry's state is merged with {LOCAL_MERGE_VERSION}",
        )
    report.extend(check_canonical(canon, digest, state.get("pith_number")), prefix="record.")
    report.add(
        "record.current_matches",
        isinstance(canon, Mapping) and current.get("canonical_record") == canon,
        "current.canonical_record = the record_created payload",
    )
    if number is not None and isinstance(canon, Mapping):
        _check_aliases(
            report, "current.source_aliases", current.get("source_aliases"), number, canon
        )
    events: list[Any] = []
    registry: list[str] = []
    checked: dict[int, CheckedEntry] = {}  # for the merge, recomputed below
    for name, etype in AUTHOR_EVENT_LISTS.items():
        for index, event in enumerate(_list(report, current, name)):
            at = f"current.{name}[{index}]"
            covered.append(at)  # its own fields are listed by _check_author_at
            _check_author_at(report, event, at, number, digest, etype, checked)
            events.append(event)
    corrected = _corrected_events(report, state, number, digest, checked)
    _check_corrections(report, state, [*events, *(e for e, _ in corrected)], local)
    events += [e for e, _ in corrected]
    for name in REGISTRY_EVENT_LISTS:
        for index, event in enumerate(_list(report, current, name)):
            _registry_event(report, event, f"current.{name}[{index}]", trust, registry)
            events.append(event)
    _unique_event_ids(report, [created, *events])
    _report_registry_events(report, registry)
    present_merge = [p for p in MERGE_FIELDS if _has(state, p)]
    if local:
        _check_local_merge(report, state, checked)
        covered += present_merge
        for index, entry in enumerate(state.get("equivocations") or []):
            event = entry.get("conflicting_event") if isinstance(entry, Mapping) else None
            at = f"equivocations[{index}].conflicting_event"
            report.not_signed(f"{at}.not_signed", under(at, uncovered(event, EVENT_CHECKED)))
        report.checks.append(
            Check(
                "completeness",
                NOT_SIGNED,
                "a local state is not signed: its merge of the events it lists was recomputed, "
                "but an event left out of every list cannot be detected",
            )
        )
    else:
        merge = state.get("merge_version")
        if "invalid_events" in state:
            present_merge.append("invalid_events")
        report.unverifiable(
            "merge",
            f"{merge}: the registry's merge rules are not published; which events are applied, "
            "the order and the counters are not checked (each listed event is)",
            tuple(present_merge),
        )
        covered += present_merge
    covered += registry
    report.not_signed("not_signed", uncovered(state, covered))
    return report


def _corrected_events(
    report: Report,
    state: Mapping[str, Any],
    number: PithNumber | None,
    digest: Any,
    checked: dict[int, CheckedEntry] | None = None,
) -> list[tuple[Any, str]]:
    """The events a local merge took out of `current` (`superseded[].event`), the
    withdrawals that did it (`withdrawals`) and the repeats it counted once
    (`duplicates[].event`), each checked in full; with their paths."""
    found: list[tuple[Any, str]] = []
    for name in ("superseded", "duplicates"):
        for index, entry in enumerate(_top_list(report, state, name)):
            found.append((entry.get("event") if isinstance(entry, Mapping) else None,
                          f"{name}[{index}].event"))  # fmt: skip
    for index, event in enumerate(_top_list(report, state, "withdrawals")):
        found.append((event, f"withdrawals[{index}]"))
    for event, at in found:
        _check_author_at(report, event, at, number, digest, checked=checked)
    return found


def _top_list(report: Report, state: Mapping[str, Any], name: str) -> list[Any]:
    value = state.get(name, [])
    if not isinstance(value, list):
        report.add(name, False, f"{name} is not a list")
        return []
    return value


def _check_corrections(
    report: Report, state: Mapping[str, Any], events: list[Any], local: bool
) -> None:
    """Every event in `current` or `withdrawals` that replaces or withdraws another: the event
    it names is in this state, signed by the same key, of the same type and subject, not
    newer (pithauthor._core.corrections). For a registry's state whose merge is not ours, a
    named event it does not list is unverifiable, not failed."""
    by_id = {str(e.get("event_id")): e for e in events if isinstance(e, Mapping)}
    current = state.get("current")
    places: list[tuple[str, Any]] = []
    for name in AUTHOR_EVENT_LISTS:
        items = current.get(name) if isinstance(current, Mapping) else None
        places += [(f"current.{name}[{i}]", e) for i, e in enumerate(items or [])]
    withdrawals = state.get("withdrawals")
    if isinstance(withdrawals, list):
        places += [(f"withdrawals[{i}]", e) for i, e in enumerate(withdrawals)]
    for at, event in places:
        verdict = link_verdict(event, by_id) if isinstance(event, Mapping) else None
        if verdict is None:
            continue
        holds, detail = verdict
        if holds is None and not local:
            report.unverifiable(f"{at}.link", detail)
        else:
            report.add(f"{at}.link", bool(holds), detail)


def _check_local_merge(
    report: Report, state: Mapping[str, Any], checked: Checked | None = None
) -> None:
    """A local registry's state: recompute our published merge and compare, key by key.
    `checked`: the verdicts on its events, found by `check_state` just before."""
    try:
        again = remerge(state, checked)
    except (ValueError, TypeError, AttributeError, KeyError) as exc:
        report.add("merge", False, f"cannot recompute {LOCAL_MERGE_VERSION}: {exc}")
        return
    differing = sorted(k for k in set(again) | set(state) if again.get(k) != state.get(k))
    report.add(
        "merge",
        not differing,
        f"recomputed {LOCAL_MERGE_VERSION}: "
        + ("differs in " + ", ".join(differing) if differing else "order, counters, lists equal"),
    )


# --- typed documents -----------------------------------------------------------------------------
# Parsed JSON becomes a RecordDocument, RecordBundle or MergedState here only, once its check
# passed (the check reads every field the type names; what it cannot check is reported).


def checked_record(doc: Mapping[str, Any], trust: Trust) -> tuple[Report, RecordDocument | None]:
    """`check_record`, and `doc` typed when it passes."""
    report = check_record(doc, trust)
    return report, (cast(RecordDocument, doc) if report.ok and isinstance(doc, dict) else None)


def checked_bundle(doc: Mapping[str, Any], trust: Trust) -> tuple[Report, RecordBundle | None]:
    """`check_bundle`, and `doc` typed when it passes."""
    report = check_bundle(doc, trust)
    return report, (cast(RecordBundle, doc) if report.ok and isinstance(doc, dict) else None)


def checked_state(doc: Mapping[str, Any], trust: Trust) -> tuple[Report, MergedState | None]:
    """`check_state`, and `doc` typed when it passes."""
    report = check_state(doc, trust)
    return report, (cast(MergedState, doc) if report.ok and isinstance(doc, dict) else None)


# --- parts ---------------------------------------------------------------------------------------


def _check_created(
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
        payload.get("canonical_record") == canon
        and payload.get("canonical_sha256") == digest
        and isinstance(digest, str),
        "its payload is this canonical record and canonical_sha256",
    )
    source = canon.get("source") if isinstance(canon, Mapping) else None
    if isinstance(source, Mapping):
        stated = tuple(payload.get(f"source_{k}") for k in ("id", "kind", "version"))
        expected = tuple(source.get(k) for k in ("id", "kind", "version"))
        report.add(name + "payload_source", stated == expected, "source_id/kind/version")
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


def _check_author_at(
    report: Report,
    event: Any,
    at: str,
    subject: PithNumber | None,
    digest: Any,
    expected_type: str | None = None,
    checked: dict[int, CheckedEntry] | None = None,
) -> None:
    """An author event inside a document, checked in full whatever signer_type it declares.
    `checked` (when given) keeps what `check_author_event` failed, for the merge (merge.Checked)."""
    sub, typed = checked_author_event(event)
    # `structure` passed: the event has exactly the envelope's fields and its signature block
    # exactly its own, which is what EVENT_CHECKED names, so no field of it can be uncovered
    first = sub.checks[0]
    structure_ok = first.name == "structure" and first.status == PASSED
    if checked is not None:
        checked[id(event)] = (event, [c.name for c in sub.failed], typed)
    if isinstance(event, Mapping):
        sub.add(
            "subject_matches",
            subject is not None and event.get("subject_pith_number") == subject.full,
            f"the event is about {subject.full if subject else 'this record'}",
        )
        payload = event.get("payload")
        sub.add(
            "payload_record",
            isinstance(payload, Mapping) and payload.get("canonical_sha256") == digest,
            "payload.canonical_sha256 is this record's (all 256 bits)",
        )
        if expected_type is not None:
            sub.add(
                "list",
                event.get("event_type") == expected_type,
                f"an {expected_type} list holds only {expected_type} events",
            )
        if not structure_ok:  # else exactly the event's fields, all covered (EVENT_CHECKED)
            sub.not_signed("not_signed", uncovered(event, EVENT_CHECKED))
    report.extend(sub, prefix=f"{at}.", path_prefix=f"{at}.")


def _registry_event(report: Report, event: Any, at: str, trust: Trust, registry: list[str]) -> None:
    """Not an author event: unverifiable when a trusted registry key signed it, else failed.
    One declaring an author type or `record_created` is failed: those are checked elsewhere."""
    etype = event.get("event_type") if isinstance(event, Mapping) else None
    if etype in (*AUTHOR_EVENT_LISTS.values(), "record_created"):
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


def _report_registry_events(report: Report, registry: list[str]) -> None:
    if registry:
        report.unverifiable(
            "registry_events",
            f"{len(registry)} registry event(s): the event_id preimage is not published",
            tuple(registry),
        )


def _unique_event_ids(report: Report, events: Iterable[Any]) -> None:
    seen: set[str] = set()
    repeated: list[str] = []
    for event in events:
        eid = event.get("event_id") if isinstance(event, Mapping) else None
        if isinstance(eid, str):
            if eid in seen:
                repeated.append(eid)
            seen.add(eid)
    report.add(
        "event_ids_unique",
        not repeated,
        "repeated: " + ", ".join(repeated) if repeated else "each event once",
    )


def _required(report: Report, doc: Mapping[str, Any], fields: Iterable[str]) -> None:
    missing = [f for f in fields if f not in doc]
    report.add("required", not missing, "missing: " + ", ".join(missing) if missing else "present")


def _list(report: Report, current: Mapping[str, Any], name: str) -> list[Any]:
    items = current.get(name, [])
    if not isinstance(items, list):
        report.add(f"current.{name}", False, "not a list")
        return []
    return items


def _has(doc: Mapping[str, Any], pattern: str) -> bool:
    node: Any = doc
    for seg in segments(pattern):
        if not isinstance(node, Mapping) or seg not in node:
            return False
        node = node[seg]
    return True


def _parse_number(value: Any) -> PithNumber | None:
    try:
        return PithNumber.parse(value) if isinstance(value, str) else None
    except PithError:
        return None


def _check_aliases(
    report: Report, where: str, aliases: Any, number: PithNumber, canon: Mapping[str, Any]
) -> None:
    """Exactly one alias of each known kind, each the value the record gives."""
    source = canon.get("source")
    source = source if isinstance(source, Mapping) else {}
    expected = {
        "arxiv": source.get("id"),
        "arxiv_version": f"{source.get('id')}v{source.get('version')}",
        "doi": f"10.48550/arxiv.{source.get('id')}".lower(),
        "pith_short_8": number.alias(8),
        "pith_short_12": number.alias(12),
        "pith_short_16": number.alias(16),
    }
    bad: list[str] = []
    kinds: list[Any] = []
    for alias in aliases if isinstance(aliases, list) else [None]:
        if not isinstance(alias, Mapping):
            bad.append(f"{alias!r} is not an alias object")
            continue
        kind, value = alias.get("alias_kind"), alias.get("alias_value")
        kinds.append(kind)
        if kind not in expected:
            bad.append(f"unknown kind {kind!r}")
        elif value != expected[kind]:
            bad.append(f"{kind}={value!r}")
    if sorted(map(str, kinds)) != sorted(ALIAS_KINDS):
        bad.append("kinds " + ", ".join(map(str, kinds)) + f"; expected each of {ALIAS_KINDS}")
    report.add(where, not bad, "; ".join(bad) if bad else "short forms, arXiv id, DOI")


def _check_paper(report: Report, paper: Any, canon: Mapping[str, Any]) -> None:
    """The displayed paper matches the canonical record (title via title_canon_sha256)."""
    meta = canon.get("metadata")
    if not isinstance(paper, Mapping) or not isinstance(meta, Mapping):
        report.add("paper", False, "paper is not an object")
        return
    missing = [f for f in PAPER_FIELDS if f not in paper]
    title = paper.get("title")
    wrong = []
    if not isinstance(title, str) or text_canon_sha256(title) != meta.get("title_canon_sha256"):
        wrong.append("title (its hash is not title_canon_sha256)")
    for field, expected in (
        ("primary_cat", meta.get("primary_cat")),
        ("license", meta.get("license")),
        ("submitted_at", meta.get("submitted_at")),
    ):
        if paper.get(field) != expected:
            wrong.append(field)
    cats = paper.get("cross_cats")
    if not isinstance(cats, list) or sorted(map(str, cats)) != meta.get("cross_cats_sorted"):
        wrong.append("cross_cats")
    wrong = [w for w in wrong if w.split()[0] not in missing] + [f"{m} missing" for m in missing]
    report.add(
        "paper",
        not wrong,
        "differs from the canonical record: " + ", ".join(wrong)
        if wrong
        else "title (by title_canon_sha256: case and white space folded), categories, "
        "licence, date = the canonical record",
    )


def _paper_names(number: PithNumber, canon: Mapping[str, Any]) -> tuple[str, ...]:
    source = canon.get("source")
    aid = source.get("id") if isinstance(source, Mapping) else None
    return (number.body, number.alias(8), *([aid] if isinstance(aid, str) else []))


def _url_ok(url: Any, key: RegistryKey | None, names: tuple[str, ...]) -> bool:
    """On the origin of the registry whose key signed the record, and about this paper. The
    origin and loopback tests are the network layer's one rule (`_core.web_url`); a LOCAL
    registry's key also covers its other loopback spellings (`localhost` for `127.0.0.1`, any
    port), as a local registry may be reached by either."""
    if not isinstance(url, str) or key is None or key.base_url is None:
        return False
    got, want = origin_of(url), origin_of(key.base_url)
    if got is None or want is None:
        return False
    same = got == want or (
        key.local and is_loopback(got[1]) and is_loopback(want[1]) and got[0] == want[0]
    )
    return same and any(n in url for n in names)


def _check_links(
    report: Report, field: str, links: Any, key: RegistryKey | None, names: tuple[str, ...]
) -> None:
    """Every URL of `agent_actions` / `links`: on the registry's origin, naming this paper."""
    if not isinstance(links, Mapping):
        report.add(field, False, "not an object")
        return
    urls = [(k, v) for k, v in links.items() if not isinstance(v, Mapping)]
    urls += [
        (f"{k}.{n}", u) for k, v in links.items() if isinstance(v, Mapping) for n, u in v.items()
    ]
    wrong = [k for k, u in urls if not _url_ok(u, key, names)]
    where = key.base_url if key is not None and key.base_url else "(no trusted registry origin)"
    report.add(
        field,
        not wrong,
        f"not on {where} or not about this paper: " + ", ".join(wrong)
        if wrong
        else f"every link is on {where} and names this paper",
    )


def _check_actions(report: Report, agent_actions: Any, number: PithNumber) -> None:
    actions = agent_actions.get("actions") if isinstance(agent_actions, Mapping) else None
    if not isinstance(actions, Mapping):
        report.add("action_links", False, "agent_actions.actions is not an object")
        return
    wrong = [
        name
        for name, url in actions.items()
        if not (isinstance(url, str) and f"/pith/{number.body}/action/" in url)
    ]
    report.add(
        "action_links",
        not wrong,
        "links not to this record: " + ", ".join(wrong)
        if wrong
        else "every action names this body",
    )


__all__ = [
    "OPTIONAL",
    "check_bundle",
    "check_canonical",
    "check_computed",
    "check_receipt",
    "check_receipt_row",
    "check_record",
    "check_state",
    "checked_bundle",
    "checked_record",
    "checked_state",
]
