"""Checks on what the registry publishes: receipts, records, bundles and merged states.

Only what can be recomputed is reported as passed or failed. A registry `event_id` (its preimage
is not published) and the registry's merge (`pith-open-graph-merge-v1`, not published) are
reported as *unverifiable*, never as passed.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pithauthor._core.author_event import check_author_event
from pithauthor._core.canonical import b64decode, canonical_sha256, hex_digest_bytes
from pithauthor._core.checks import Report
from pithauthor._core.pith_number import PithNumber
from pithauthor._core.record import pith_number_of
from pithauthor._core.trust import Trust
from pithauthor.errors import PithError

RECEIPT_MESSAGE = "canonical_sha256_bytes"
LOCAL_MERGE_VERSION = "pithauthor-local-merge-v1"
AUTHOR_EVENT_LISTS = ("author_attestations", "citation_signatures", "replication_records")
REGISTRY_EVENT_LISTS = (
    "timestamp_anchors",
    "storage_attestations",
    "corrections",
    "mirror_hints",
    "graph_snapshots",
)


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
    key_id = receipt.get("key_id")
    key = trust.get(key_id) if isinstance(key_id, str) else None
    if key is None:
        report.add("receipt_key", False, f"unknown registry key {key_id!r} (not trusted)")
        return report
    fp = receipt.get("public_key_fingerprint")
    if fp is not None and fp != key.fingerprint:
        report.add("receipt_key", False, f"fingerprint {fp} is not that of {key_id}")
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


def check_canonical(record: Any, stated_hash: Any, stated_number: Any) -> Report:
    """The canonical record hashes to `stated_hash`, which gives `stated_number`."""
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
    if stated_number is not None:
        report.add("pith_number", number == stated_number, f"derived {number}")
    return report


def check_record(record: Mapping[str, Any], trust: Trust) -> Report:
    """A whole record as `GET /pith/{body}` returns it."""
    report = Report(kind="record")
    report.extend(
        check_canonical(
            record.get("canonical_record"),
            record.get("canonical_sha256"),
            record.get("pith_number"),
        )
    )
    stated = record.get("pith_number")
    number = _parse_number(stated)
    if number is not None:
        if "short_pith_number" in record:
            report.add(
                "short_form",
                record["short_pith_number"] == number.short,
                f"expected {number.short}",
            )
        _check_aliases(report, record.get("aliases"), number, record.get("canonical_record"))
        _check_actions(report, record.get("agent_actions"), number)
    canon = record.get("canonical_record")
    if isinstance(canon, Mapping) and "source" in record:
        report.add("source", record["source"] == canon.get("source"), "source = canonical source")
    report.extend(check_receipt(record.get("receipt"), str(record.get("canonical_sha256")), trust))
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
    return report


def check_bundle(bundle: Mapping[str, Any]) -> Report:
    """A portable bundle: its record, and each event (author events verified in full)."""
    report = Report(kind="bundle")
    report.extend(
        check_canonical(
            bundle.get("canonical_record"),
            bundle.get("canonical_sha256"),
            bundle.get("pith_number"),
        )
    )
    number = _parse_number(bundle.get("pith_number"))
    if number is not None and "short_pith_number" in bundle:
        report.add(
            "short_form", bundle["short_pith_number"] == number.short, f"expected {number.short}"
        )
    _check_events(report, bundle.get("events") or [], number, bundle.get("canonical_sha256"))
    return report


def check_state(state: Mapping[str, Any], trust: Trust) -> Report:
    """A merged state: its hash, its record and receipt, and the author events inside it."""
    report = Report(kind="state")
    body = {k: v for k, v in state.items() if k != "state_sha256"}
    computed = canonical_sha256(body)
    report.add(
        "state_sha256",
        state.get("state_sha256") == computed,
        f"sha256(canonical(state without state_sha256)) = {computed}",
    )
    current = state.get("current")
    if not isinstance(current, Mapping):
        report.add("current", False, "no current object")
        return report
    created = current.get("record_created")
    payload = created.get("payload") if isinstance(created, Mapping) else None
    if not isinstance(payload, Mapping):
        report.add("record_created", False, "no record_created event with a payload")
    else:
        report.extend(
            check_canonical(
                payload.get("canonical_record"),
                payload.get("canonical_sha256"),
                state.get("pith_number"),
            ),
            prefix="record.",
        )
        report.add(
            "record.current_matches",
            current.get("canonical_record") == payload.get("canonical_record"),
            "current.canonical_record = the record_created payload",
        )
        report.extend(
            check_receipt(payload.get("receipt"), str(payload.get("canonical_sha256")), trust),
            prefix="record.",
        )
    events: list[Any] = [created] if isinstance(created, Mapping) else []
    for name in (*AUTHOR_EVENT_LISTS, *REGISTRY_EVENT_LISTS):
        items = current.get(name) or []
        events.extend(items if isinstance(items, list) else [])
    digest = payload.get("canonical_sha256") if isinstance(payload, Mapping) else None
    _check_events(report, events, _parse_number(state.get("pith_number")), digest)
    merge = state.get("merge_version")
    if merge == LOCAL_MERGE_VERSION:
        _check_local_merge(report, state)
        return report
    report.unverifiable(
        "merge",
        f"{merge}: the registry's merge rules are not published; counters and order not checked",
    )
    return report


def _check_local_merge(report: Report, state: Mapping[str, Any]) -> None:
    """A local registry's state: recompute our published merge and compare, key by key."""
    from pithauthor._core.merge import remerge

    try:
        again = remerge(state)
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


def _check_events(
    report: Report, events: list[Any], subject: PithNumber | None, digest: Any = None
) -> None:
    registry_events = 0
    for index, event in enumerate(events):
        signer = event.get("signer") if isinstance(event, Mapping) else None
        if isinstance(signer, Mapping) and signer.get("signer_type") == "author":
            eid = event.get("event_id", f"#{index}")
            sub = check_author_event(event)
            if subject is not None:
                sub.add(
                    "subject_matches",
                    event.get("subject_pith_number") == subject.full,
                    f"the event is about {subject.full}",
                )
            payload = event.get("payload")
            if isinstance(digest, str) and isinstance(payload, Mapping):
                sub.add(
                    "payload_record",
                    payload.get("canonical_sha256") == digest,
                    "payload.canonical_sha256 is this record's (all 256 bits)",
                )
            report.extend(sub, prefix=f"event[{eid}].")
        else:
            registry_events += 1
    if registry_events:
        report.unverifiable(
            "registry_events",
            f"{registry_events} registry event(s): the event_id preimage is not published",
        )


def _parse_number(value: Any) -> PithNumber | None:
    try:
        return PithNumber.parse(value) if isinstance(value, str) else None
    except PithError:
        return None


def _check_aliases(report: Report, aliases: Any, number: PithNumber, canon: Any) -> None:
    if not isinstance(aliases, list):
        return
    bad = []
    source = canon.get("source", {}) if isinstance(canon, Mapping) else {}
    expected = {
        "pith_short_8": number.alias(8),
        "pith_short_12": number.alias(12),
        "pith_short_16": number.alias(16),
        "arxiv": source.get("id"),
        "arxiv_version": f"{source.get('id')}v{source.get('version')}",
        "doi": f"10.48550/arxiv.{source.get('id')}".lower(),
    }
    for alias in aliases:
        if not isinstance(alias, Mapping):
            bad.append(repr(alias))
            continue
        kind, value = alias.get("alias_kind"), alias.get("alias_value")
        if kind in expected and str(value).lower() != str(expected[kind]).lower():
            bad.append(f"{kind}={value}")
    report.add(
        "aliases", not bad, "mismatched: " + ", ".join(bad) if bad else "short forms, id, DOI"
    )


def _check_actions(report: Report, agent_actions: Any, number: PithNumber) -> None:
    if not isinstance(agent_actions, Mapping):
        return
    actions = agent_actions.get("actions")
    if not isinstance(actions, Mapping):
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
