"""A paper's page, as pith.science shows it, from documents this machine verified, and the list
of the author's papers from the outbox.

>>> with connect(url, [], True) as client:
...     page = paper_status(client, "2302.12445")   # record + merged state, both verified
>>> my_papers()                                       # what this machine's keys signed

Everything here is data (JSON-ready dicts); the CLI prints it. Text that came from a registry or
from someone else's event (titles, names, summaries) is returned as sent: whoever prints it
escapes it (`pithauthor.protocol.text.escaped`).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from pithauthor.keys.author import list_keys
from pithauthor.protocol.ids import PithNumber
from pithauthor.registry.client import RegistryClient
from pithauthor.registry.submit import Outbox, OutboxEntry, paper_titles
from pithauthor.verify import verify_document

__all__ = ["COMPLETENESS", "my_papers", "paper_status"]

# The completeness items of the paper's page (pith.science: "not attested · not anchored ·
# not stored · refs pending"), each from a part of the verified merged state, never from the
# record's `verification_status` (no signature covers it; a local registry sends none).
COMPLETENESS: tuple[tuple[str, str, str, str], ...] = (
    ("author_claims", "author_attestations", "attested", "not attested"),
    ("timestamp", "timestamp_anchors", "anchored", "not anchored"),
    ("archive_copy", "storage_attestations", "stored", "not stored"),
    ("citations", "citation_signatures", "cited", "no citations"),
    ("replications", "replication_records", "replicated", "no replications"),
)

# what each event type means on a paper's page, and in `pith papers`
ROLES = {
    "author_attestation": "claimed",
    "citation_signature": "cited",
    "replication_record": "replicated",
}


def paper_status(client: RegistryClient, ref: str) -> dict[str, Any]:
    """The page of the paper `ref` (Pith Number, alias or arXiv id) on `client`'s registry.

    The record and the merged state are verified (the record's receipt, every author event
    against its own key, the merge redone here); the registry's own parts of the state (its
    event ids, which it alone can check) are counted as unverifiable, never as passed. The
    outbox part lists what this machine holds for the paper, for every registry."""
    record = client.record(ref)
    number = PithNumber.parse(record["pith_number"])
    # not strict: pith.science's states always hold parts nobody else can check (its merge);
    # a page shows them counted as unverifiable instead of showing nothing
    state = client.state(number, strict=False)
    record_report = verify_document(record, client.trust)
    state_report = verify_document(state, client.trust)
    current: Mapping[str, Any] = state.get("current", {})
    paper: Mapping[str, Any] = record.get("paper") or {}
    source = record["canonical_record"].get("source", {})
    claims = [_claim(e) for e in current.get("author_attestations", [])]
    received = [_citation(e) for e in current.get("citation_signatures", [])]
    replications = [_replication(e) for e in current.get("replication_records", [])]
    with Outbox() as outbox:
        entries = outbox.entries()
    mine = [e for e in entries if e.subject == number.full]
    made = [e for e in entries if _citing(e) == number.full]
    completeness = [
        {
            "item": item,
            "count": len(current.get(part, [])),
            "label": yes if current.get(part) else no,
        }
        for item, part, yes, no in COMPLETENESS
    ]
    refs = _references(current)
    completeness.append(
        {"item": "references", "count": refs, "label": "refs resolved" if refs else "refs pending"}
    )
    return {
        "registry": client.base_url,
        "pith_number": number.full,
        "short_pith_number": record.get("short_pith_number"),
        "arxiv": f"{source.get('id')}v{source.get('version')}" if source.get("id") else None,
        "version": source.get("version"),
        "title": paper.get("title"),
        "authors": paper.get("authors_text"),
        "verified": {
            "record": _verdict(record_report),
            "state": _verdict(state_report),
        },
        "completeness": completeness,
        "claims": claims,
        "citations_received": received,
        "citations_made": [_made(e) for e in made],
        "replications": replications,
        "outbox": _by_registry(mine + [e for e in made if e not in mine]),
    }


def my_papers(entries: Iterable[OutboxEntry] | None = None) -> list[dict[str, Any]]:
    """The papers this machine's keys claimed, cited or replicated (the outbox), each with what
    was signed about it and where each event stands, per registry; newest activity first."""
    own = {record.key_id for record in list_keys()}
    if entries is None:
        with Outbox() as outbox:
            entries = outbox.entries()
    wanted = [e for e in entries if _key_id(e) in own]
    titles = paper_titles(wanted)
    papers: dict[str, dict[str, Any]] = {}
    for e in wanted:
        page = papers.setdefault(
            e.subject,
            {"pith_number": e.subject, "title": titles.get(e.subject), "roles": [],
             "keys": [], "registries": {}, "last": ""},
        )  # fmt: skip
        role = ROLES.get(e.event_type, e.event_type)
        if role not in page["roles"]:
            page["roles"].append(role)
        if _key_id(e) not in page["keys"]:
            page["keys"].append(_key_id(e))
        counts = page["registries"].setdefault(
            e.registry, {"pending": 0, "accepted": 0, "rejected": 0}
        )
        counts[e.state] += 1
        page["last"] = max(page["last"], e.updated_at)
    return sorted(papers.values(), key=lambda p: p["last"], reverse=True)


def _references(current: Mapping[str, Any]) -> int:
    """How many references the registry's newest graph snapshot resolved (0: pending)."""
    for snapshot in reversed(current.get("graph_snapshots") or []):
        graph = (snapshot.get("payload") or {}).get("graph_snapshot") or {}
        resolved = (graph.get("references") or {}).get("resolved_work")
        if isinstance(resolved, int):
            return resolved
    return 0


def _verdict(report: Any) -> dict[str, Any]:
    return {
        "ok": report.ok,
        "passed": len(report.with_status("passed")),
        "unverifiable": [c.name for c in report.with_status("unverifiable")],
        "failed": [c.name for c in report.failed],
    }


def _signer(event: Mapping[str, Any]) -> dict[str, Any]:
    signer = event.get("signer") or {}
    return {"key_id": signer.get("key_id"), "signer_id": signer.get("signer_id")}


def _claim(event: Mapping[str, Any]) -> dict[str, Any]:
    payload = event.get("payload") or {}
    author = payload.get("author") or {}
    proofs = payload.get("identity_proofs") or []
    return {
        **_signer(event),
        "event_id": event.get("event_id"),
        "name": author.get("name"),
        "position": author.get("position"),
        # identity-bound: the claim names proofs binding its key to a person (an ORCID record,
        # a web page, the paper's PDF); `pith verify --orcid` checks them over the network
        "identity_bound": bool(proofs),
        "identity_proofs": [p.get("kind") for p in proofs if isinstance(p, Mapping)],
    }


def _citation(event: Mapping[str, Any]) -> dict[str, Any]:
    payload = event.get("payload") or {}
    return {
        **_signer(event),
        "event_id": event.get("event_id"),
        "citing_pith_number": payload.get("citing_pith_number"),
        "relationship": payload.get("relationship"),
    }


def _replication(event: Mapping[str, Any]) -> dict[str, Any]:
    payload = event.get("payload") or {}
    return {
        **_signer(event),
        "event_id": event.get("event_id"),
        "kind": payload.get("kind"),
        "outcome": payload.get("outcome"),
        "summary": payload.get("summary"),
    }


def _made(entry: OutboxEntry) -> dict[str, Any]:
    payload = entry.event.get("payload") or {}
    return {
        "cited_pith_number": entry.subject,
        "relationship": payload.get("relationship"),
        "event_id": entry.event_id,
        "registry": entry.registry,
        "state": entry.state,
    }


def _citing(entry: OutboxEntry) -> str | None:
    if entry.event_type != "citation_signature":
        return None
    payload = entry.event.get("payload") or {}
    citing = payload.get("citing_pith_number")
    return citing if isinstance(citing, str) else None


def _key_id(entry: OutboxEntry) -> str | None:
    signer = entry.event.get("signer") or {}
    kid = signer.get("key_id")
    return kid if isinstance(kid, str) else None


def _by_registry(entries: Iterable[OutboxEntry]) -> list[dict[str, Any]]:
    groups: dict[str, dict[str, Any]] = {}
    for e in entries:
        group = groups.setdefault(e.registry, {"registry": e.registry, "events": []})
        group["events"].append(
            {"event_id": e.event_id, "event_type": e.event_type, "state": e.state,
             "subject": e.subject, "reason": e.reason}
        )  # fmt: skip
    return list(groups.values())
