"""Checks of a registry record: its canonical record, hash, Pith Number, aliases and paper
(pure)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, cast

from pithauthor.errors import PithError
from pithauthor.protocol.canonical_json import (
    canonical_sha256,
)
from pithauthor.protocol.checks.fields import (
    ALIAS_KINDS,
    PAPER_FIELDS,
    RECORD_CHECKED,
    RECORD_REQUIRED,
    _required,
)
from pithauthor.protocol.checks.links import _check_actions, _check_links
from pithauthor.protocol.checks.receipt import check_receipt, receipt_key
from pithauthor.protocol.documents import (
    RecordDocument,
)
from pithauthor.protocol.ids import PithNumber
from pithauthor.protocol.record import pith_number_of, text_canon_sha256
from pithauthor.protocol.verdict import (
    Report,
    Trust,
    uncovered,
)

__all__ = [
    "check_canonical",
    "check_computed",
    "check_record",
    "checked_record",
]


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


# --- typed documents -----------------------------------------------------------------------------
# Parsed JSON becomes a RecordDocument, RecordBundle or MergedState here only, once its check
# passed (the check reads every field the type names; what it cannot check is reported).


def checked_record(doc: Mapping[str, Any], trust: Trust) -> tuple[Report, RecordDocument | None]:
    """`check_record`, and `doc` typed when it passes."""
    report = check_record(doc, trust)
    return report, (cast(RecordDocument, doc) if report.ok and isinstance(doc, dict) else None)


def _parse_number(value: Any) -> PithNumber | None:
    try:
        return PithNumber.parse(value) if isinstance(value, str) else None
    except PithError:
        return None


def _check_aliases(
    report: Report, where: str, aliases: Any, number: PithNumber, canon: Mapping[str, Any]
) -> None:
    """Exactly one alias of each known kind, each the value the record gives: an alias is a
    look-up key, and a wrong or extra one would let a look-up by another paper's alias reach
    this record."""
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
    """The displayed paper matches the canonical record (title via title_canon_sha256). The
    record signs only the title's hash; checking the shown title against it keeps a record from
    showing another paper's title (which `pith cite` and `pith outbox list` print)."""
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
    # the names a link to this paper may use: its body, its 8-character alias, its arXiv id
    source = canon.get("source")
    aid = source.get("id") if isinstance(source, Mapping) else None
    return (number.body, number.alias(8), *([aid] if isinstance(aid, str) else []))
