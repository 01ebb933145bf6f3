"""Checks of a registry record (pure): its receipt (trusted key, Ed25519 signature), its canonical
record, hash, Pith Number, aliases and paper, and the links and agent actions it carries.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, cast

from pithauthor.errors import PithError
from pithauthor.protocol.canonical_json import (
    b64decode,
    base32_nopad,
    canonical_sha256,
    canonical_text,
    hex_digest_bytes,
)
from pithauthor.protocol.checks.fields import (
    ALIAS_KINDS,
    PAPER_FIELDS,
    RECEIPT_ALGORITHM,
    RECEIPT_KIND,
    RECEIPT_MESSAGE,
    RECEIPT_ROW_CHECKED,
    RECORD_CHECKED,
    RECORD_REQUIRED,
    require_fields,
)
from pithauthor.protocol.documents import (
    RecordDocument,
)
from pithauthor.protocol.ids import BODY_LENGTH, PithNumber
from pithauthor.protocol.record import pith_number_of, text_canon_sha256
from pithauthor.protocol.urls import is_loopback, origin_of
from pithauthor.protocol.verdict import (
    RegistryKey,
    Report,
    Trust,
    uncovered,
)

__all__ = [
    "check_canonical",
    "check_computed",
    "check_receipt",
    "check_receipt_row",
    "check_record",
    "checked_record",
]


# Checks of the links and agent actions a record carries: each must point at the registry
# that signed the receipt and name this paper (pure).


def _url_ok(url: Any, key: RegistryKey | None, names: tuple[str, ...]) -> bool:
    """On the origin of the registry whose key signed the record, and about this paper. The
    origin and loopback tests are the network layer's one rule (`protocol.urls`); a LOCAL
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


# Checks of a registry receipt: the trusted key it names and its Ed25519 signature (pure).

# --- receipts ----------------------------------------------------------------------------------


def receipt_key(receipt: Any, trust: Trust) -> RegistryKey | None:
    """The trusted key a receipt names (by id, and by fingerprint when it gives one)."""
    if not isinstance(receipt, Mapping):
        return None
    kid = receipt.get("key_id")
    key = trust.get(kid) if isinstance(kid, str) else None
    # a trusted key id beside another key's fingerprint is no receipt of that key: a receipt
    # cannot borrow a trusted name. Optional, but when present (null included) it must match
    if key is None or receipt.get("public_key_fingerprint", key.fingerprint) != key.fingerprint:
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
    # absent from the rows of receipts.jsonl: the registry's one rule (section 3) applies
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
        # the 32 raw digest bytes, never the 64 hex characters (section 3, VERIFIED: the real
        # receipts verify over the bytes only)
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


# Checks of a registry record: its canonical record, hash, Pith Number, aliases and paper
# (pure).

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
    require_fields(report, record, RECORD_REQUIRED)
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
    number = number_or_none(record.get("pith_number"))
    if number is not None and isinstance(canon, Mapping):
        if "short_pith_number" in record:
            report.add(
                "short_form",
                record["short_pith_number"] == number.short,
                f"expected {number.short}",
            )
        if "source" in record:
            report.add(
                "source", same_json(record["source"], canon.get("source")), "= canonical source"
            )
        if "aliases" in record:
            check_aliases(report, "aliases", record["aliases"], number, canon)
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


def same_json(a: Any, b: Any) -> bool:
    """The same JSON: canonical bytes, not ==, by which `true == 1` and `1.0 == 1` in Python
    (not in what a reader is shown, nor in what is hashed)."""
    return canonical_text(a) == canonical_text(b)


def number_or_none(value: Any) -> PithNumber | None:
    """`value` as a Pith number, or None when it is not text or not a Pith number."""
    try:
        return PithNumber.parse(value) if isinstance(value, str) else None
    except PithError:
        return None


def check_aliases(
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
        if not isinstance(kind, str) or kind not in expected:  # a list or object: unhashable
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
