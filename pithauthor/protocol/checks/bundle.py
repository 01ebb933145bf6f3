"""Checks of a record bundle: its record and the events it carries, author and registry (pure)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, cast

from pithauthor.protocol.checks.contents import (
    check_author_at,
    check_created,
    check_links,
    check_registry_event,
    check_unique_event_ids,
    note_completeness,
    report_registry_events,
)
from pithauthor.protocol.checks.fields import (
    BUNDLE_CHECKED,
    BUNDLE_REQUIRED,
    require_fields,
)
from pithauthor.protocol.checks.record import (
    check_aliases,
    check_canonical,
    number_or_none,
    same_json,
)
from pithauthor.protocol.documents import (
    RecordBundle,
)
from pithauthor.protocol.payloads import EVENT_TYPES
from pithauthor.protocol.verdict import (
    Report,
    Segments,
    Trust,
    uncovered,
)

__all__ = [
    "check_bundle",
    "checked_bundle",
]


def check_bundle(bundle: Mapping[str, Any], trust: Trust) -> Report:
    """A portable bundle: its record, its `record_created` receipt, and each event."""
    report = Report(kind="bundle")
    require_fields(report, bundle, BUNDLE_REQUIRED)
    canon = bundle.get("canonical_record")
    digest = bundle.get("canonical_sha256")
    report.extend(check_canonical(canon, digest, bundle.get("pith_number")))
    report.add(
        "bundle_type",
        bundle.get("bundle_type") == "pith_open_graph_bundle",
        "pith_open_graph_bundle",
    )
    number = number_or_none(bundle.get("pith_number"))
    if number is not None and "short_pith_number" in bundle:
        report.add(
            "short_form", bundle["short_pith_number"] == number.short, f"expected {number.short}"
        )
    if isinstance(canon, Mapping):
        report.add(
            "source", same_json(bundle.get("source"), canon.get("source")), "= canonical source"
        )
        if "source_aliases" in bundle and number is not None:
            check_aliases(report, "source_aliases", bundle["source_aliases"], number, canon)
    events = bundle.get("events")
    covered: list[str | Segments] = list(BUNDLE_CHECKED)
    if not isinstance(events, list):
        report.add("events", False, "events is not a list")
        events = []
    # by type or by target: an event that says it is about the record under another type is
    # counted here too, so a second record_created cannot pass as a registry event
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
        covered += check_created(report, events[created[0]], at, canon, digest, trust)
    registry: list[str] = []
    for index, event in enumerate(events):
        if index in created:
            continue
        at = f"events[{index}]"
        etype = (
            event.get("event_type") if type(event) is dict or isinstance(event, Mapping) else None
        )
        if etype in EVENT_TYPES:
            covered.append(at)  # its own fields are listed by the author check (contents.py)
            check_author_at(report, event, at, number, digest)
        else:
            check_registry_event(report, event, at, trust, registry)
    check_unique_event_ids(report, events)
    # the links of its corrections, by the one rule a state and the local registry follow
    # (`subject.link_faults`): a withdrawal by another key, of another type or subject, or
    # older than what it corrects fails the bundle, as no registry keeping that rule serves it
    authors = [
        (f"events[{i}]", e)
        for i, e in enumerate(events)
        if i not in created and isinstance(e, Mapping) and e.get("event_type") in EVENT_TYPES
    ]
    check_links(report, authors, {str(e.get("event_id")): e for _, e in authors}, local=False)
    report_registry_events(report, registry)
    note_completeness(
        report,
        "a bundle is not signed: each event in it was checked, but an event left out "
        "cannot be detected",
    )
    report.not_signed("not_signed", uncovered(bundle, [*covered, *registry]))
    return report


def checked_bundle(doc: Mapping[str, Any], trust: Trust) -> tuple[Report, RecordBundle | None]:
    """`check_bundle`, and `doc` typed when it passes."""
    report = check_bundle(doc, trust)
    return report, (cast(RecordBundle, doc) if report.ok and isinstance(doc, dict) else None)
